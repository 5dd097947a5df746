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
