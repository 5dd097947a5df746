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
# per run (TQDM_DISABLE, see tools/book_ext/), since their outputs become the site's.
os.environ.setdefault("TQDM_DISABLE", "1")

from tools import execution  # noqa: E402  (the execution cache and its stamp)
from tools.common import sweep_seconds  # noqa: E402  (the seed sweep's run times, for the order)

REPO = Path(__file__).resolve().parent
BUILD = execution.BUILD  # _build, or $BOOK_BUILD_DIR
_RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or os.environ.setdefault("BOOK_TEST_RUN", os.urandom(8).hex())
NBVAL_RUNS = BUILD / ".nbval-runs" / _RUN_ID  # expected.json and one marker per notebook run


# A pytest run started by a test of this run (tests/test_any_cpu.py: the unit tests again, with other
# kernels) runs no notebook and must leave this run's execution cache and records alone.
NESTED = os.environ.get("BOOK_NESTED_TEST_RUN") == "1"


def pytest_sessionstart(session) -> None:
    """Start from an empty execution cache (once, in the process that starts the workers)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and not NESTED:
        execution.clear()
        execution.write_stamp()  # the code this run's notebooks run with
        shutil.rmtree(BUILD / ".nbval-runs", ignore_errors=True)
        shutil.rmtree(TIMELINE, ignore_errors=True)
        TIMELINE.mkdir(parents=True, exist_ok=True)
        session = {"start": __import__("time").time(), "machine_start": machine_busy_seconds(), "cores": os.cpu_count()}
        (TIMELINE / "session.json").write_text(json.dumps(session))


def pytest_sessionfinish(session, exitstatus) -> None:
    """The run's end, beside its start (``python -m tools.timeline``: start-up and collection, and the tail)."""
    if not os.environ.get("PYTEST_XDIST_WORKER") and not NESTED and (TIMELINE / "session.json").exists():
        import time

        times = json.loads((TIMELINE / "session.json").read_text()) | {
            "stop": time.time(),
            "machine_stop": machine_busy_seconds(),
        }
        (TIMELINE / "session.json").write_text(json.dumps(times))


# --- Where the time goes: every test's wall time and CPU time, per worker ----------------------------
# Each process (each xdist worker, or pytest alone) writes one line per test to
# _build/.test-timeline/<worker>.jsonl (the latest run only): its start and end (wall clock) and the CPU
# seconds that the worker and the children it waited for (kernels, the site build; not Chromium) used
# meanwhile, and the whole machine's busy CPU seconds at its start and end (machine_busy_seconds);
# session.json, the run's start and end. `python -m tools.timeline` reads them: each worker's busy and
# idle time, how busy the machine's cores were, the phases, and the files that wait rather than compute.

TIMELINE = BUILD / ".test-timeline"
_STARTED: dict = {}
_CONFIG: list = []  # the run's config (pytest-xdist's controller, which hears of every worker's tests, records none)


def pytest_configure(config) -> None:
    _CONFIG.append(config)


def machine_busy_seconds() -> float | None:
    """The CPU seconds the whole machine has been busy since it started, all cores and processes
    together (Chromium's too, which a worker's own count misses): Linux's /proc/stat; None elsewhere."""
    try:
        with open("/proc/stat", encoding="ascii") as stat:
            fields = [int(x) for x in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, idle, iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def _cpu_seconds() -> float:
    import resource

    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def pytest_runtest_logstart(nodeid, location) -> None:
    import time

    _STARTED[nodeid] = (time.time(), _cpu_seconds(), machine_busy_seconds())


def pytest_runtest_logfinish(nodeid, location) -> None:
    import time

    if NESTED or nodeid not in _STARTED or _CONFIG[-1].pluginmanager.hasplugin("dsession"):
        return
    start, cpu, machine = _STARTED.pop(nodeid)
    line = {"test": nodeid, "start": start, "stop": time.time(), "cpu": _cpu_seconds() - cpu}
    line |= {"machine_start": machine, "machine_stop": machine_busy_seconds()}
    TIMELINE.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    with open(TIMELINE / f"{worker}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


# --- nbval's run becomes the site's: outputs into the execution cache -------------------------------

_CELLS: dict = {}  # notebook path -> {code cell number: (outputs, seconds, ran and passed)}

# nbval keeps a cell's outputs as they arrive and ignores the messages that change them afterwards
# (`clear_output`, `update_display_data`): outputs after one of those are not what a real run shows.
_CHANGES_OUTPUTS = {"clear_output", "update_display_data"}


def _is_nbval_cell(item) -> bool:
    return type(item).__name__ == "IPyNbCell"


def pytest_runtest_makereport(item, call) -> None:
    if call.when == "call" and _is_nbval_cell(item):
        ran = call.excinfo is None  # a skipped cell (nbval-skip) did not run: its outputs are not a run's
        _CELLS.setdefault(item.path, {})[item.cell_num] = (item.test_outputs or [], call.duration, ran)


def _watch_messages(notebook_item) -> None:
    """Record the type of every message nbval reads from the notebook's kernel (``_book_message_types``)."""
    if hasattr(notebook_item, "_book_message_types"):
        return
    seen: set = set()
    read = notebook_item.get_kernel_message

    def get_kernel_message(*args, **kwargs):
        message = read(*args, **kwargs)
        seen.add(message["msg_type"])
        return message

    notebook_item.get_kernel_message = get_kernel_message
    notebook_item._book_message_types = seen


def pytest_runtest_teardown(item, nextitem) -> None:
    if _is_nbval_cell(item) and (nextitem is None or nextitem.path != item.path):
        _cache_notebook(item.parent, _CELLS.pop(item.path, {}))


def _cache_notebook(notebook_item, cells: dict) -> None:
    """Put the notebook, with the outputs nbval saw, into the execution cache: only if every cell ran
    and passed, and no output was cleared or updated (nbval's outputs would not be the run's)."""
    import copy

    import nbformat

    nb = copy.deepcopy(notebook_item.nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    faithful = not (getattr(notebook_item, "_book_message_types", set()) & _CHANGES_OUTPUTS)
    complete = faithful and len(cells) == len(code) and all(passed for _, _, passed in cells.values())
    if complete and not NESTED:
        for number, cell in enumerate(code):
            outputs, _, _ = cells[number]
            cell.execution_count = number + 1
            cell.outputs = [nbformat.from_dict(dict(o)) for o in outputs]
            for output in cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = number + 1
        execution.cache_notebook(nb, notebook_item.path, seconds=sum(duration for _, duration, _ in cells.values()))
    NBVAL_RUNS.mkdir(parents=True, exist_ok=True)
    (NBVAL_RUNS / f"{notebook_item.path.name}.done").write_text("cached" if complete else "failed")


# --- The student versions run where nbval reaches the exercises ---------------------------------------
# A chapter's student version is the chapter up to its first exercise, then the exercises with every
# solution replaced by a stub. nbval's kernel, just before the chapter's first exercise cell, is
# exactly where a fresh kernel running the student version would be (no solution has run yet): the
# student version's exercise cells run there, each check cell must fail on its stub
# (tests/test_student.py reads the outcome), then the kernel's names and random state are restored
# and nbval goes on with the solutions. The chapter runs once instead of twice.

_STUDENT_PLANS: dict = {}
_RESTORE = """
def _book_restore(saved=_book_saved):
    import random, numpy, torch
    names, python_state, numpy_state, torch_state = saved
    g = globals()
    for name in [n for n in g if n not in names]:
        del g[name]
    g.update(names)
    random.setstate(python_state)
    numpy.random.set_state(numpy_state)
    torch.random.set_rng_state(torch_state)
_book_restore()
"""
_SAVE = """
import random as _book_random, numpy as _book_numpy, torch as _book_torch
_book_saved = (dict(globals()), _book_random.getstate(), _book_numpy.random.get_state(),
               _book_torch.random.get_rng_state())
"""


def _student_plan(path: Path):
    """(code cells before the exercises, the student version's exercise code cells, its check cells)."""
    if path not in _STUDENT_PLANS:
        import re

        plan = None
        if path.parent.name == "book" and re.match(r"\d\d_", path.name):
            import nbformat

            from tools.myst import Book
            from tools.student_versions import check_cell_indices, first_exercise_index, student_version

            book = _STUDENT_PLANS.setdefault("book", Book.load(REPO))
            student = student_version(nbformat.read(path, as_version=4), book=book, docname=f"book/{path.stem}")
            first = first_exercise_index(student, book)
            checks = [i for i in check_cell_indices(student) if first is not None and i > first]
            if checks:
                before = sum(1 for c in student.cells[:first] if c.cell_type == "code")
                cells = [
                    (i, c.source)
                    for i, c in enumerate(student.cells)
                    if first <= i <= max(checks) and c.cell_type == "code"
                ]
                plan = (before, cells, set(checks))
        _STUDENT_PLANS[path] = plan
    return _STUDENT_PLANS[path]


def _execute(kernel, source: str, timeout: float = 600) -> str:
    """Run `source` in nbval's kernel; its status, "ok" or "error" (its outputs are dropped)."""
    msg_id = kernel.execute_cell_input(source, allow_stdin=False)
    while True:
        reply = kernel.get_message(stream="shell", timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            break
    kernel.await_idle(msg_id, timeout)
    return reply["content"]["status"]


def pytest_runtest_setup(item) -> None:
    if not _is_nbval_cell(item):
        return
    _watch_messages(item.parent)
    if os.environ.get("BOOK_EXECUTE_ONLY") == "1":  # the site build (tools/site.py): the notebooks alone
        return
    plan = _student_plan(item.path)
    if plan is None or item.cell_num != plan[0]:
        return
    kernel = item.parent.kernel
    outcome = {"saved": _execute(kernel, _SAVE), "passed_on_stubs": [], "cells": len(plan[1])}
    for index, source in plan[1]:
        status = _execute(kernel, source)
        if index in plan[2] and status == "ok":
            outcome["passed_on_stubs"].append(source.splitlines()[0] if source.strip() else f"cell {index}")
    outcome["restored"] = _execute(kernel, _RESTORE)
    NBVAL_RUNS.mkdir(parents=True, exist_ok=True)
    (NBVAL_RUNS / f"student-{item.path.stem}.json").write_text(json.dumps(outcome))


# --- The order of the work: no core waits for the site build ---------------------------------------
# pytest-xdist hands each worker one file at a time, in the order below (`--no-loadscope-reorder`
# in pyproject.toml keeps it; by default xdist sorts files by their number of tests, which put the
# site's many small tests first, so that the second worker sat waiting for the build for minutes):
#   1. the notebooks under nbval, on both workers (each fills the execution cache), the longest first
#      (as long as the seed sweep measured them, `book/claims_sweep.json`; a notebook it does not
#      sweep last), so that the two workers finish together: the last notebook handed out is short;
#   2. tests/test_site.py: a worker builds the site from the cache (it waits for the notebooks the
#      other worker is still running), while the other runs the tests that do not read the site;
#   3. the other tests that do not read the site, the Colab-like run among them (it picks its chapter
#      by the seed sweep's run times, not the build's), the longest first;
#   4. last, the tests that read the build (marker `site`): the two browser files first (one language
#      each, so that both workers have one), then the others, the longest first, so that the two
#      workers finish together (the last file handed out is short).
# "The longest first" within a group: as long as FILE_SECONDS says (by file name), a file it does not
# name last.
# Within a browser file a page's tests run one after another, in the file's order: they share one
# load of the page (tests/test_browser.py).

# The files of more than about 20 s: their wall time in the clean-clone run of 699bcbb (quiet 2-core
# machine, beside the other worker). Only their order matters.
FILE_SECONDS = {
    "test_colab.py": 94,
    "test_any_cpu.py": 71,
    "test_pdf.py": 55,
    "test_site_zh.py": 54,
    "test_editions.py": 48,
    "test_setup_cells.py": 42,
    "test_assignments.py": 38,
    "test_site_content.py": 23,
    "test_plots_svg.py": 20,
}


def _work_order(item) -> int:
    path = str(item.path)
    if path.endswith(".ipynb"):
        return 0
    if path.endswith("test_site.py"):
        return 1
    if item.get_closest_marker("browser"):
        return 3
    if item.get_closest_marker("site"):
        return 4
    return 2


def _page(item) -> str | None:
    """The page a browser test checks (its `docname` parameter), or None."""
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("docname") if callspec and item.get_closest_marker("browser") else None


def pytest_collection_modifyitems(session, config, items) -> None:
    # xdist schedules a whole file where its first test stands: a file with any test that reads the
    # build (tests/test_student.py has both kinds) goes where its latest test belongs
    by_file: dict = {}
    for item in items:
        by_file[item.path] = max(by_file.get(item.path, 0), _work_order(item))
    seconds = sweep_seconds()
    file_rank = {path: rank for rank, path in enumerate(dict.fromkeys(item.path for item in items))}
    page_rank: dict = {}  # (file, page) -> the page's first place in the file
    for item in items:
        page_rank.setdefault((item.path, _page(item)), len(page_rank))

    def order(item) -> tuple[int, float, int, int]:
        group = by_file[item.path]
        longest_first = -(seconds.get(item.path.name, 0.0) if group == 0 else FILE_SECONDS.get(item.path.name, 0.0))
        return group, longest_first, file_rank[item.path], page_rank[(item.path, _page(item))]

    items.sort(key=order)  # stable: a file's tests (of one page) in the collection order
    # The notebooks this run executes: the site build waits for them (tests/conftest.py).
    if NESTED:
        return
    notebooks = sorted({item.path.name for item in items if _is_nbval_cell(item)})
    NBVAL_RUNS.mkdir(parents=True, exist_ok=True)
    (NBVAL_RUNS / "expected.json").write_text(json.dumps(notebooks))
