"""How a plain `pytest -n 2` (the README's test command) shares the work between the two cores.

pytest-xdist runs with `--dist loadfile` (pyproject.toml): every test file, and every notebook, is
one unit of work that stays on one worker. A notebook under nbval is many test items (one per cell)
sharing one kernel, so it must not be split. (`--dist loadgroup` would group finer, but it cannot
regroup items under pytest 9, whose node ids pytest-xdist 3.8 can no longer suffix.)

**Every notebook runs once.** nbval runs each notebook of book/ cell by cell; when a notebook has
run through, its outputs go into the site's execution cache (`_build/.jupyter_cache`, the one
`python -m tools.site` reads), as if the site build had executed it. The site (both languages) is
then built from that cache (tests/conftest.py, `site_build`) and executes nothing that nbval ran:
the pages, their claims and the chapter run times are this run's. A notebook that fails under
nbval is not cached; the site build then executes it itself, and fails on it too.

Two torch processes on two cores must not each start two threads: every worker, and every kernel
and site build it starts, runs torch with one thread (`OMP_NUM_THREADS=1`).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

if os.environ.get("PYTEST_XDIST_WORKER"):
    os.environ.setdefault("OMP_NUM_THREADS", "1")
# The kernels nbval starts print lib.train's progress as the site build's kernels do: one plain line
# per run (TQDM_DISABLE, see tools/book_ext.py), since their outputs become the site's.
os.environ.setdefault("TQDM_DISABLE", "1")

REPO = Path(__file__).resolve().parent
BUILD = REPO / "_build"
CACHE = BUILD / ".jupyter_cache"  # _config.yml's execute.cache
_RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or os.environ.setdefault("BOOK_TEST_RUN", os.urandom(8).hex())
NBVAL_RUNS = BUILD / ".nbval-runs" / _RUN_ID  # expected.json and one marker per notebook run


def pytest_sessionstart(session) -> None:
    """Start from an empty execution cache (once, in the process that starts the workers)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        shutil.rmtree(CACHE, ignore_errors=True)
        shutil.rmtree(BUILD / ".nbval-runs", ignore_errors=True)


# --- nbval's run becomes the site's: outputs into the execution cache -------------------------------

_CELLS: dict = {}  # notebook path -> {code cell number: (outputs, seconds, passed)}


def _is_nbval_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell"


def pytest_runtest_makereport(item, call) -> None:
    if call.when == "call" and _is_nbval_cell(item):
        passed = call.excinfo is None or call.excinfo.errisinstance(__import__("pytest").skip.Exception)
        _CELLS.setdefault(item.path, {})[item.cell_num] = (item.test_outputs or [], call.duration, passed)


def pytest_runtest_teardown(item, nextitem) -> None:
    if _is_nbval_cell(item) and (nextitem is None or nextitem.path != item.path):
        _cache_notebook(item.parent, _CELLS.pop(item.path, {}))


def _cache_notebook(notebook_item, cells: dict) -> None:
    """Put the notebook, with the outputs nbval saw, into the execution cache (if every cell passed)."""
    import copy

    import nbformat
    from filelock import FileLock

    nb = copy.deepcopy(notebook_item.nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    complete = len(cells) == len(code) and all(passed for _, _, passed in cells.values())
    if complete:
        for number, cell in enumerate(code):
            outputs, _, _ = cells[number]
            cell.execution_count = number + 1
            cell.outputs = [nbformat.from_dict(dict(o)) for o in outputs]
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = number + 1
        from jupyter_cache import get_cache
        from jupyter_cache.base import CacheBundleIn

        seconds = sum(duration for _, duration, _ in cells.values())
        with FileLock(str(BUILD / ".jupyter_cache.lock")):
            get_cache(str(CACHE)).cache_notebook_bundle(
                CacheBundleIn(nb, str(notebook_item.path), data={"execution_seconds": seconds}),
                check_validity=False,
                overwrite=True,
            )
    NBVAL_RUNS.mkdir(parents=True, exist_ok=True)
    (NBVAL_RUNS / f"{notebook_item.path.name}.done").write_text("cached" if complete else "failed")


# --- The order of the work: no core waits for the site build ---------------------------------------
# pytest-xdist hands each worker one file at a time, in the order below (`--no-loadscope-reorder`
# in pyproject.toml keeps it; by default xdist sorts files by their number of tests, which put the
# site's many small tests first, so that the second worker sat waiting for the build for minutes):
#   1. the notebooks under nbval, on both workers (each fills the execution cache);
#   2. tests/test_site.py: a worker builds the site from the cache (it waits for the notebooks the
#      other worker is still running), while the other runs the tests that do not read the site;
#   3. the other tests that do not read the site;
#   4. last, the tests that read the build (marker `site`) and the Colab-like run (which picks its
#      chapter from the build's measured run times).


def _work_order(item) -> int:
    path = str(item.path)
    if path.endswith(".ipynb"):
        return 0
    if path.endswith("test_site.py"):
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
    # The notebooks this run executes: the site build waits for them (tests/conftest.py).
    notebooks = sorted({item.path.name for item in items if _is_nbval_cell(item)})
    NBVAL_RUNS.mkdir(parents=True, exist_ok=True)
    (NBVAL_RUNS / "expected.json").write_text(json.dumps(notebooks))
