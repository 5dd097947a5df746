"""Where the test command's time goes: ``python -m tools.timeline`` reads the timeline of the latest
pytest run (``_build/.test-timeline/<worker>.jsonl``, written by the repository's conftest.py:
each test's start, end and the CPU seconds its worker and the children it waited for used meanwhile)
and prints

- the run's wall time and, per worker, how long it ran tests, how long it sat between them, and the
  CPU it used (a worker whose tests run without using a core is waiting: for the site build's lock,
  for a notebook the other worker runs, for a browser);
- the phases, in the order conftest.py hands out the work: the notebooks under nbval, the site build,
  the other tests, the tests that read the build;
- the files that took longest, with the share of their wall time that was CPU (a low share is a wait).

The CPU of a notebook's kernel is counted when the process that started it has waited for it (at the
notebook's end), so only a whole file's share is meaningful, not a cell's. Chromium's is not counted
at all (its renderers are not reaped through the worker): the browser files show under 20 % while
their Chromiums keep the cores busy. What the whole machine did is counted apart, from Linux's
/proc/stat at each test's start and end: how busy its cores were over the session and in each phase
(so also what else ran on the machine meanwhile).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from tools.execution import BUILD

TIMELINES = BUILD / ".test-timeline"


@dataclass
class Test:
    worker: str
    test: str
    start: float
    stop: float
    cpu: float
    machine_start: float | None = None  # the whole machine's busy CPU seconds (conftest.machine_busy_seconds)
    machine_stop: float | None = None

    @property
    def file(self) -> str:
        return self.test.split("::")[0]

    @property
    def wall(self) -> float:
        return self.stop - self.start


def session(run: Path) -> dict[str, float]:
    """When the run started (before the workers and the collection) and ended, if it recorded them."""
    try:
        return json.loads((run / "session.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def load(run: Path) -> list[Test]:
    """Every test of one run, by start time."""
    tests = []
    for path in sorted(run.glob("*.jsonl")):  # one file per worker
        for line in path.read_text(encoding="utf-8").splitlines():
            tests.append(Test(worker=path.stem, **json.loads(line)))
    return sorted(tests, key=lambda t: t.start)


def phase(test: Test) -> str:
    """The phase of conftest.py's work order a test belongs to (by its file)."""
    if test.file.endswith(".ipynb"):
        return "notebooks (nbval)"
    if test.file.endswith("test_site.py"):
        return "site build (test_site.py)"
    if Path(test.file).name in ("test_site_content.py", "test_site_zh.py", "test_browser.py", "test_browser_zh.py",
                                "test_pdf.py", "test_student.py", "test_editions_site.py",
                                "test_claims.py"):  # fmt: skip
        return "tests that read the build"
    return "other tests"


def machine_busy(tests: list[Test]) -> float | None:
    """The CPU seconds the whole machine was busy from the first of ``tests``' starts to the last of
    their ends (every process, Chromium's too), or None if the run did not record it."""
    starts = [t.machine_start for t in tests if t.machine_start is not None]
    stops = [t.machine_stop for t in tests if t.machine_stop is not None]
    return max(stops) - min(starts) if starts and stops else None


def report(tests: list[Test], top: int = 15, times: dict[str, float] | None = None) -> str:
    start, stop = min(t.start for t in tests), max(t.stop for t in tests)
    lines = [f"{len(tests)} tests, {stop - start:.0f} s from the first test's start to the last one's end"]
    times = times or {}
    if times.get("machine_start") is not None and times.get("machine_stop") is not None and "stop" in times:
        busy, wall = times["machine_stop"] - times["machine_start"], times["stop"] - times["start"]
        lines.append(
            f"  the machine ({times.get('cores', '?')} cores): busy {busy:.0f} CPU-s in the session's {wall:.0f} s, "
            f"{100 * busy / max(wall, 1e-9):.0f} % (every process, Chromium's too)"
        )
    if times and "start" in times:
        lines.append(f"  before the first test (workers starting, collection): {start - times['start']:.0f} s")
    if times and "stop" in times:
        lines.append(f"  after the last test (the end of the session): {times['stop'] - stop:.0f} s")
    by_worker: dict[str, list[Test]] = defaultdict(list)
    for t in tests:
        by_worker[t.worker].append(t)
    for worker, mine in sorted(by_worker.items()):
        busy, cpu = sum(t.wall for t in mine), sum(t.cpu for t in mine)
        gaps = [b.start - a.stop for a, b in zip(mine, mine[1:])]
        lines.append(
            f"  {worker}: tests {busy:.0f} s (CPU {cpu:.0f} s, {100 * cpu / max(busy, 1e-9):.0f} %), "
            f"between tests {sum(gaps):.0f} s, done {stop - mine[-1].stop:.0f} s before the end"
        )
    lines.append("phases (wall: first start to last end; tests: the sum of their times; CPU):")
    by_phase: dict[str, list[Test]] = defaultdict(list)
    for t in tests:
        by_phase[phase(t)].append(t)
    for name, mine in sorted(by_phase.items(), key=lambda kv: min(t.start for t in kv[1])):
        first, last = min(t.start for t in mine), max(t.stop for t in mine)
        busy = machine_busy(mine)
        lines.append(
            f"  {name}: {first - start:.0f}-{last - start:.0f} s, tests {sum(t.wall for t in mine):.0f} s, "
            f"CPU {sum(t.cpu for t in mine):.0f} s"
            + (f"; the machine {100 * busy / max(last - first, 1e-9):.0f} % busy meanwhile" if busy is not None else "")
        )
    by_file: dict[str, list[Test]] = defaultdict(list)
    for t in tests:
        by_file[t.file].append(t)
    lines.append(f"the {top} longest files (wall, CPU share, worker, start):")
    files = sorted(by_file.items(), key=lambda kv: -sum(t.wall for t in kv[1]))[:top]
    for name, mine in files:
        wall, cpu = sum(t.wall for t in mine), sum(t.cpu for t in mine)
        lines.append(
            f"  {wall:6.0f} s  {100 * cpu / max(wall, 1e-9):4.0f} %  {mine[0].worker}  "
            f"at {min(t.start for t in mine) - start:4.0f} s  {name}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", type=Path, default=TIMELINES, help=f"a run's folder (default: {TIMELINES})")
    parser.add_argument("--top", type=int, default=15, help="how many files to list (default 15)")
    args = parser.parse_args(argv)
    run = args.run
    tests = load(run) if run.is_dir() else []
    if not tests:
        raise SystemExit(f"no timeline in {run}: run the tests first (the README's test command)")
    print(report(tests, args.top, session(run)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
