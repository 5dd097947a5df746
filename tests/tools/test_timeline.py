"""tools/timeline.py: the test command's timeline, read back (synthetic runs; the real one is written by
the repository's conftest.py)."""

from __future__ import annotations

import json

from tools import timeline


def _write(folder, worker, tests):
    with open(folder / f"{worker}.jsonl", "w", encoding="utf-8") as out:
        for test, start, stop, cpu in tests:
            out.write(json.dumps({"test": test, "start": start, "stop": stop, "cpu": cpu}) + "\n")


def test_report_finds_the_waiting_worker_and_the_phases(tmp_path) -> None:
    _write(
        tmp_path, "gw0", [("book/01_x.ipynb::Cell 0", 100, 160, 58), ("tests/test_site.py::test_build", 160, 400, 200)]
    )
    _write(
        tmp_path, "gw1", [("book/02_y.ipynb::Cell 0", 100, 150, 49), ("tests/test_browser.py::test_page", 200, 410, 20)]
    )
    (tmp_path / "session.json").write_text(json.dumps({"start": 80, "stop": 415}))
    tests = timeline.load(tmp_path)
    assert [t.worker for t in tests] == ["gw0", "gw1", "gw0", "gw1"]  # by start time
    text = timeline.report(tests, top=3, times=timeline.session(tmp_path))
    assert "4 tests, 310 s from the first test's start" in text
    assert "before the first test (workers starting, collection): 20 s" in text
    assert "after the last test (the end of the session): 5 s" in text
    assert "gw1: tests 260 s (CPU 69 s, 27 %), between tests 50 s, done 0 s before the end" in text
    assert "gw0: tests 300 s (CPU 258 s, 86 %), between tests 0 s, done 10 s before the end" in text
    assert "notebooks (nbval): 0-60 s" in text and "site build (test_site.py): 60-300 s" in text
    assert "tests that read the build: 100-310 s, tests 210 s, CPU 20 s" in text
    longest = text.split("longest files")[1].splitlines()[1]
    assert "tests/test_site.py" in longest and "83 %" in longest  # 200 of 240 s


def test_no_timeline_is_a_clear_message(tmp_path, capsys) -> None:
    import pytest

    with pytest.raises(SystemExit, match="run the tests first"):
        timeline.main([str(tmp_path / "none")])


def test_report_says_how_busy_the_machine_was(tmp_path) -> None:
    """The whole machine's busy CPU seconds (/proc/stat, every process: a worker's count misses its
    Chromium) over the session and over each phase; a run that did not record them says nothing."""
    lines = [
        {"test": "book/01_x.ipynb::Cell 0", "start": 100, "stop": 200, "cpu": 98, "machine_start": 1000, "machine_stop": 1195},
        {"test": "tests/test_browser.py::test_page", "start": 200, "stop": 300, "cpu": 15, "machine_start": 1195, "machine_stop": 1345},
    ]  # fmt: skip
    (tmp_path / "gw0.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    session = {"start": 90, "stop": 310, "machine_start": 990, "machine_stop": 1375, "cores": 2}
    (tmp_path / "session.json").write_text(json.dumps(session))
    text = timeline.report(timeline.load(tmp_path), times=timeline.session(tmp_path))
    assert "the machine (2 cores): busy 385 CPU-s in the session's 220 s, 175 %" in text
    assert "notebooks (nbval): 0-100 s, tests 100 s, CPU 98 s; the machine 195 % busy meanwhile" in text
    assert "tests that read the build: 100-200 s, tests 100 s, CPU 15 s; the machine 150 % busy meanwhile" in text
    _write(tmp_path, "gw0", [("book/01_x.ipynb::Cell 0", 100, 200, 98)])  # an older run: no machine figures
    (tmp_path / "session.json").write_text(json.dumps({"start": 90, "stop": 310}))
    assert "machine" not in timeline.report(timeline.load(tmp_path), times=timeline.session(tmp_path))


def test_the_machine_busy_seconds_grow(pytestconfig) -> None:
    """conftest.machine_busy_seconds reads Linux's /proc/stat (None elsewhere)."""
    import os

    import pytest

    from tools.common import REPO

    if not os.path.exists("/proc/stat"):
        pytest.skip("no /proc/stat: not Linux")
    conftest = pytestconfig.pluginmanager.get_plugin(str(REPO / "conftest.py"))  # the root one, not tests/'s
    before = conftest.machine_busy_seconds()
    sum(i * i for i in range(2_000_000))  # a few tens of milliseconds of work
    after = conftest.machine_busy_seconds()
    assert before is not None and after >= before > 0
