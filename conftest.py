"""How a plain `pytest` spreads the work over the CPU cores (with `-n 2`, as the README's test
command runs it; pytest-xdist with `--dist loadgroup`, set in pyproject.toml).

- A notebook under nbval is many test items (one per cell) sharing one kernel: all of a
  notebook's items go to the same worker (one xdist group per notebook).
- Everything that reads the one site build (the `site_build` fixture, tests/conftest.py) runs on
  one worker: the build executes every chapter once, and the tests that read it wait for it there
  while the other worker runs the notebooks, the student versions and the unit tests.
- The Colab-like tests share one fresh virtual environment: one group.
- Two torch processes on two cores must not each start two threads: every worker, and every
  kernel it starts, runs torch with one thread (`OMP_NUM_THREADS=1`).
"""

from __future__ import annotations

import os

import pytest

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups (it suffixes the node ids)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        path = item.path.as_posix()
        if path.endswith(".ipynb"):
            group = f"notebook-{item.path.stem}"
        elif "site_build" in getattr(item, "fixturenames", ()):
            group = "site"
        elif item.path.name == "test_colab.py":
            group = "colab"
        else:
            continue
        item.add_marker(pytest.mark.xdist_group(group))
