"""How a plain `pytest -n 2` (the README's test command) shares the work between the two cores.

pytest-xdist runs with `--dist loadfile` (pyproject.toml): every test file, and every notebook, is
one unit of work that stays on one worker. A notebook under nbval is many test items (one per cell)
sharing one kernel, so it must not be split. (`--dist loadgroup` would group finer, but it cannot
regroup items under pytest 9, whose node ids pytest-xdist 3.8 can no longer suffix.)

The site is built once per run (tests/conftest.py, `site_build`): the first worker builds it,
executing every chapter, while the other worker runs the notebooks and the tests that do not read
the build (the order of the work is at the end of this file); a file lock makes a worker that needs
the site wait for that build.

Two torch processes on two cores must not each start two threads: every worker, and every kernel
and site build it starts, runs torch with one thread (`OMP_NUM_THREADS=1`).
"""

from __future__ import annotations

import os

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


# --- The order of the work: no core waits for the site build ---------------------------------------
# pytest-xdist hands each worker one file at a time, in the order below (`--no-loadscope-reorder`
# in pyproject.toml keeps it; by default xdist sorts files by their number of tests, which put the
# site's many small tests first, so that the second worker sat waiting for the build for minutes):
#   1. tests/test_site.py: the first worker builds the site (every chapter executed, ~10 minutes);
#   2. the notebooks under nbval, then the other tests that do not read the site: the second
#      worker runs them meanwhile, and the first joins when the build is done;
#   3. last, the tests that read the build (marker `site`) and the Colab-like run (which picks its
#      chapter from the build's measured run times).


def _work_order(item) -> int:
    path = str(item.path)
    if path.endswith("test_site.py"):
        return 0
    if path.endswith(".ipynb"):
        return 1
    if item.get_closest_marker("site") or item.get_closest_marker("colab"):
        return 3
    return 2


def pytest_collection_modifyitems(session, config, items) -> None:
    # xdist schedules a whole file where its first test stands: a file with any test that reads the
    # build (tests/test_student.py has both kinds) goes where its latest test belongs
    by_file: dict = {}
    for item in items:
        by_file[item.path] = max(by_file.get(item.path, 0), _work_order(item))
    items.sort(key=lambda item: by_file[item.path])  # stable: within a group, the collection order
