"""The seed sweep: run chapters over N seeds and record, for every claim, on how many it held.

    python -m tools.sweep                  # every chapter, SEED = 0 … 9, one job per core
    python -m tools.sweep 04 06 --seeds 10 # only chapters 4 and 6 (the others' entries are kept)
    python -m tools.sweep distributed      # the appendix "Beyond one machine" (book/distributed.ipynb)
    python -m tools.sweep --check          # changes nothing; fails if the sweep file is stale
    python -m tools.sweep 06 --first 100 --out _build/shifted-seeds.json   # SEED = 100 … 109, elsewhere

The swept notebooks are the chapters, ``book/NN_slug.ipynb`` keyed by their number ("04"), and the
appendices that have a ``SEED`` parameter and claims of their own (:data:`APPENDICES`), keyed by
name ("distributed"); "chapter" below means either. Each chapter is executed exactly as a reader runs it, with papermill setting its ``SEED`` (the cell
tagged ``parameters``) to each seed in turn; nothing else changes. Every claim and check the run
displays (`lib.claim`, `lib.check`) is read from the executed notebook's outputs as data, the
bundle's ``application/vnd.transformers-book.claim+json`` (``lib.book.claims.read_claims``; no
printed text is parsed). A claim that fails is displayed before it raises, so it is recorded too
(papermill stops the run there; the claims after it count as not reached). The results go to
``book/claims_sweep.json`` (committed), which the Claims appendix reads; what it holds is ``tools/sweep_ledger.py``'s
(the ledger: summarised, written, checked), and this module runs the chapters.

Runs are independent processes, ``--jobs`` of them at a time (default: one per core; every chapter
uses one torch thread). Papermill's kernels get ``TQDM_DISABLE=1``, as the site build's do. A kernel
start-up file records every seed a run gives its random number generators (:data:`SEED_RECORDER`),
so nothing in the chapter changes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock

from lib.book.claims import read_claims  # the data lib.claim / lib.check display
from tools.sweep_ledger import (
    DEFAULT_SEEDS,
    ROOT,
    SWEEP_FILE,
    Run,
    chapters,
    dumps,
    label,
    load,
    problems,
    summarise,
)

#: A kernel start-up file (IPython runs it before the notebook's first cell): it records every seed
#: given to torch's, Python's and NumPy's generators into the file ``$BOOK_SEED_LOG``, one JSON pair
#: ``[kind, seed]`` a line, and changes nothing else they do.
SEED_RECORDER = """\
import json as _json, os as _os, random as _random
import numpy as _np
import torch as _torch

_seed_log = open(_os.environ["BOOK_SEED_LOG"], "a")


def _record(kind, seed):
    try:
        seed = int(seed) % 2**32 if kind == "torch" else int(seed)  # torch keeps a seed's low 32 bits
        _seed_log.write(_json.dumps([kind, seed]) + "\\n")
        _seed_log.flush()
    except (TypeError, ValueError, OverflowError):
        pass


def _recording(kind, seed_fn):
    def seed(value, *args, **kwargs):
        _record(kind, value)
        return seed_fn(value, *args, **kwargs)
    return seed


_torch.manual_seed = _torch.random.manual_seed = _recording("torch", _torch.manual_seed)
_np.random.seed = _recording("numpy", _np.random.seed)


class _Generator(_torch.Generator):
    def manual_seed(self, seed):
        _record("torch", seed)  # the same generator as torch.manual_seed's: one kind
        return super().manual_seed(seed)


_torch.Generator = _Generator
_random_seed = _random.Random.seed


def _seed_random(self, a=None, version=2):
    if a is not None:
        _record("random", a)
    return _random_seed(self, a, version)


_random.Random.seed = _seed_random
_random.seed = _random._inst.seed
"""


def run_chapter(chapter: str, path: Path, seed: int, workdir: Path) -> Run:
    """Execute `path` with ``SEED = seed`` under papermill; collect the claims it displayed and the
    seeds it gave its random number generators (:data:`SEED_RECORDER`)."""
    out = workdir / f"{path.stem}.seed{seed}.ipynb"
    startup = workdir / f"ipython-{path.stem}-{seed}" / "profile_default" / "startup"
    startup.mkdir(parents=True, exist_ok=True)
    (startup / "00-record-seeds.py").write_text(SEED_RECORDER, encoding="utf-8")
    log = workdir / f"{path.stem}.seed{seed}.seeds"
    env = {**os.environ, "TQDM_DISABLE": "1", "MPLBACKEND": "Agg", "OMP_NUM_THREADS": "1"}
    env |= {"IPYTHONDIR": str(startup.parents[1]), "BOOK_SEED_LOG": str(log)}
    command = [sys.executable, "-m", "papermill", str(path), str(out), "-p", "SEED", str(seed)]
    command += ["--cwd", str(path.parent), "-k", "python3", "--no-progress-bar", "--log-level", "ERROR"]
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    run = Run(chapter, seed, seconds=time.perf_counter() - start)
    if out.exists():
        run.claims = read_claims(json.loads(out.read_text(encoding="utf-8")))
    if log.exists():
        for line in log.read_text(encoding="utf-8").splitlines():
            kind, value = json.loads(line)
            run.seeds.setdefault(kind, set()).add(value)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()
        run.error = next((line for line in reversed(tail) if line.strip()), f"exit status {done.returncode}")
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "chapters", nargs="*", help="chapter numbers (01 … 10) or appendices (distributed); default: all of them"
    )
    parser.add_argument("--seeds", type=int, default=DEFAULT_SEEDS, help="how many seeds (default 10)")
    parser.add_argument("--first", type=int, default=0, help="the first seed (default 0: SEED = 0 … N-1)")
    parser.add_argument(
        "--out",
        type=Path,
        default=SWEEP_FILE,
        help="the file to write (default: the committed book/claims_sweep.json, which must hold SEED = 0 … N-1)",
    )
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time (default: cores)")
    parser.add_argument("--check", action="store_true", help="change nothing; fail if the sweep is stale")
    args = parser.parse_args(argv)
    sweep = load()
    if args.check:
        found = problems(sweep)
        print("\n".join(found) if found else f"{SWEEP_FILE.relative_to(ROOT)} is fresh: every claim held N/N")
        return 1 if found else 0
    book = chapters()
    wanted = [c.zfill(2) for c in args.chapters] or list(book)
    unknown = [c for c in wanted if c not in book]
    if unknown:
        parser.error(f"no chapter {', '.join(unknown)}; the swept notebooks are {', '.join(book)}")
    if args.seeds < 1 or args.jobs < 1:
        parser.error("--seeds and --jobs must be positive")
    if args.first < 0:
        parser.error(f"--first must be a seed >= 0, got {args.first}")
    out = args.out.resolve()
    if args.first != 0 and out == SWEEP_FILE:
        parser.error("--first moves the seeds away from 0 … N-1, which the committed ledger records: give --out")
    seeds = list(range(args.first, args.first + args.seeds))
    # Longest runs first (as last swept), so that the last job to start is a short one.
    previous = sweep.get("chapters", {})
    cost = {c: max(map(float, previous.get(c, {}).get("seconds", {"0": 60}).values())) for c in wanted}
    tasks = sorted(((c, s) for c in wanted for s in seeds), key=lambda t: (-cost[t[0]], t[1]))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="sweep-") as tmp, ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_chapter, c, book[c], s, Path(tmp)) for c, s in tasks]
        runs: list[Run] = []
        for future in futures:
            run = future.result()
            runs.append(run)
            failed = [c.statement for c in run.claims if not c.holds]
            status = f"✘ {failed[0]}" if failed else (f"stopped: {run.error}" if run.error else "ok")
            print(f"{label(run.chapter)} seed {run.seed}: {run.seconds:5.1f} s, {len(run.claims)} claims, {status}")
    wall = time.perf_counter() - started
    out.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{out}.lock"):  # re-read: another sweep (of other chapters) may have written since
        sweep = load(out)
        for c in wanted:
            sweep.setdefault("chapters", {})[c] = summarise(book[c], [r for r in runs if r.chapter == c])
        sweep["chapters"] = dict(sorted(sweep["chapters"].items()))
        sweep["last_run"] = {
            "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "chapters": wanted,
            "seeds": len(seeds),
            "jobs": args.jobs,
            "cores": os.cpu_count(),
            "wall_seconds": round(wall),
        }
        out.write_text(dumps(sweep), encoding="utf-8")
    print(f"{len(runs)} runs in {wall:.0f} s wall ({args.jobs} jobs); wrote {out}")
    found = problems(sweep, wanted, min_seeds=len(seeds))
    print("\n".join(found) if found else "every claim held on every seed")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
