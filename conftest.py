"""How a plain `pytest -n 2` (the README's test command) shares the work between the two cores.

pytest-xdist runs with `--dist loadfile` (pyproject.toml): every test file, and every notebook, is
one unit of work that stays on one worker. A notebook under nbval is many test items (one per cell)
sharing one kernel, so it must not be split. (`--dist loadgroup` would group finer, but it cannot
regroup items under pytest 9, whose node ids pytest-xdist 3.8 can no longer suffix.)

The site is built once per run (tests/conftest.py, `site_build`): the first worker that needs it
builds it, executing every chapter, while the other worker runs notebooks, student versions and unit
tests; a file lock makes a second worker that needs the site wait for that build.

Two torch processes on two cores must not each start two threads: every worker, and every kernel
and site build it starts, runs torch with one thread (`OMP_NUM_THREADS=1`).
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
