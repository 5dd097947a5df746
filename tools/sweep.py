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
``book/claims_sweep.json`` (committed), which the Claims appendix reads:

- per chapter: the SHA-256 of its code cells when it was swept (a later change of the code makes the
  entry stale: ``--check`` and ``tests/test_sweep.py`` fail until the chapter is swept again), the
  seeds, and the run time of each seed;
- per claim (in the order the chapter checks them): its kind, its statement, the seeds on which it
  held (``held``) and failed (``failed``), and every value it showed, over the seeds
  (:func:`record_values`): ``values`` maps a name to the ``[min, max]`` of its numbers (a list's
  elements pooled, nested lists too; a dict's entries as ``name.key``), ``seen`` (only when there
  are any) to the other values seen: bools, strings (``"nan"``, ``"inf"`` included: the bundle's
  encoding of non-finite floats) and ``null``. Ledgers written before the bundle (numbers only,
  read from the printed line at 3 digits) have the same ``values`` and no ``seen``. ``by_seed`` keeps
  each seed's values as they were recorded, so the values of one run can be paired; and, where the
  condition can be evaluated from the recorded values (``tools/conditions.py``), ``worst`` names the
  seed that came closest to failing, its margin to the threshold and the comparison it belongs to;
- per run: ``training_seeds``, every seed the run gave a random number generator, by kind (``torch``:
  ``torch.manual_seed``, which ``lib.seed_everything`` calls, and ``torch.Generator().manual_seed``, the
  same generator, each seed as torch uses it: its low 32 bits; ``random``: Python's ``random.seed`` and
  ``random.Random``; ``numpy``), as ranges ``[first, last]``. A kernel start-up file
  records them (:data:`SEED_RECORDER`), so nothing in the chapter changes. The runs of one chapter must
  draw from disjoint seeds of each kind: ten runs are ten independent experiments (run ``SEED`` of an
  experiment with k models trains seeds ``k·SEED … k·SEED + k − 1``: ``lib.seed_block``).

Claims are matched across seeds by their statement (and its occurrence in the chapter), so a
statement must not contain a measured number: the values belong in ``lib.claim``'s keywords.

Runs are independent processes, ``--jobs`` of them at a time (default: one per core; every chapter
uses one torch thread). Papermill's kernels get ``TQDM_DISABLE=1``, as the site build's do.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock

from lib.book.claims import CheckedClaim, read_claims  # the data lib.claim / lib.check display
from tools.conditions import conditions, find

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "book"
SWEEP_FILE = BOOK / "claims_sweep.json"
CHAPTER_FILE = re.compile(r"^(\d\d)_[a-z0-9_]+\.ipynb$")
#: The appendices that are swept too (a ``SEED`` parameter, claims or checks), by their ledger key.
APPENDICES = {"distributed": "distributed.ipynb", "performance": "performance.ipynb"}
DEFAULT_SEEDS = 10


def chapters() -> dict[str, Path]:
    """Every swept notebook by its ledger key: the chapters by their two-digit number, then the
    appendices of :data:`APPENDICES` by name: ``{"01": book/01_rnn_bottleneck.ipynb, …,
    "distributed": book/distributed.ipynb}``."""
    found = {}
    for path in sorted(BOOK.glob("*.ipynb")):
        m = CHAPTER_FILE.match(path.name)
        if m:
            found[m[1]] = path
    for key, name in APPENDICES.items():
        if (BOOK / name).is_file():
            found[key] = BOOK / name
    return found


def label(key: str) -> str:
    """How messages name a swept notebook: ``chapter 04``, ``appendix distributed``."""
    return f"chapter {key}" if key.isdigit() else f"appendix {key}"


def code_sha256(notebook: Path) -> str:
    """SHA-256 of a notebook's code, the cells a reader runs (the Colab setup cell excluded).

    The setup cell (tagged ``remove-cell``) only installs ``lib`` in Colab and changes when the book
    is moved to another branch (``tools/retarget.py``); it cannot change a claim.
    """
    return hashlib.sha256("\n# ---- cell ----\n".join(code_cells(notebook)).encode()).hexdigest()


def code_cells(notebook: Path) -> list[str]:
    """The sources of a notebook's code cells, but the Colab setup cell (tagged ``remove-cell``)."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    return [
        "".join(cell["source"])
        for cell in nb["cells"]
        if cell["cell_type"] == "code" and "remove-cell" not in cell.get("metadata", {}).get("tags", [])
    ]


def flatten(name: str, value: object) -> Iterator[tuple[str, object]]:
    """A claim's value as ``(name, scalar)`` pairs: a dict's entries as ``name.key``, a list's elements
    (nested lists too) each under the list's name; a scalar as itself."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            yield from flatten(f"{name}.{key}", item)
    elif isinstance(value, list):
        for item in value:
            yield from flatten(name, item)
    else:
        yield name, value


def is_number(value: object) -> bool:
    """An int or a float, but not a bool (JSON's true is not 1)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def record_values(entry: dict, claim: CheckedClaim) -> None:
    """Add one run's values of `claim` to its ledger `entry`: numbers widen ``values[name]`` (``[min,
    max]``), anything else (bool, string, null) joins ``seen[name]``."""
    for name, value in claim.values:
        for key, item in flatten(name, value):
            if is_number(item):
                low, high = entry["values"].get(key, (item, item))
                entry["values"][key] = (min(low, item), max(high, item))
            else:
                seen = entry.setdefault("seen", {}).setdefault(key, [])
                if item not in seen:
                    seen.append(item)


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


@dataclass
class Run:
    """One chapter executed at one seed."""

    chapter: str
    seed: int
    seconds: float = 0.0
    error: str = ""  # the exception papermill reported, if the run stopped early
    claims: list[CheckedClaim] = field(default_factory=list)
    seeds: dict[str, set[int]] = field(default_factory=dict)  # every seed the run gave a generator, by kind


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


def summarise(path: Path, runs: list[Run]) -> dict:
    """The sweep entry of one chapter: per claim, the seeds it held on, each value's min–max, each
    seed's values and the seed closest to failing; per run, the seeds it drew from."""
    seeds = sorted(run.seed for run in runs)
    claims: dict[tuple[str, int], dict] = {}
    order: list[tuple[str, int]] = []
    calls = conditions(code_cells(path))
    for run in sorted(runs, key=lambda r: r.seed):
        seen: Counter[str] = Counter()
        for c in run.claims:
            key = (c.statement, seen[c.statement])
            seen[c.statement] += 1
            if key not in claims:
                entry = {
                    "kind": c.kind,
                    "statement": c.statement,
                    "held": [],
                    "failed": [],
                    "values": {},
                    "by_seed": {},
                }
                claims[key], entry["condition"] = entry, find(calls, c.kind, c.statement, key[1])
                order.append(key)
            entry = claims[key]
            entry["held" if c.holds else "failed"].append(run.seed)
            record_values(entry, c)
            entry["by_seed"][str(run.seed)] = dict(c.values)
    for entry in claims.values():
        _worst(entry)
    return {
        "notebook": path.name,
        "code_sha256": code_sha256(path),
        "seeds": seeds,
        "seconds": {str(run.seed): round(run.seconds, 1) for run in sorted(runs, key=lambda r: r.seed)},
        "errors": {str(run.seed): run.error for run in runs if run.error},
        "training_seeds": {str(run.seed): _ranges(run.seeds) for run in sorted(runs, key=lambda r: r.seed)},
        "claims": [_ledger_claim(claims[key]) for key in order],
    }


def _worst(entry: dict) -> None:
    """Set ``entry["worst"]``: the seed whose values come closest to failing the condition (smallest
    relative margin), its margin and the comparison, where the condition can be evaluated."""
    condition = entry.pop("condition")
    if condition is None:
        return
    margins = {seed: condition.margin(values) for seed, values in entry["by_seed"].items()}
    if not margins or any(m is None for m in margins.values()):
        return
    seed, margin = min(margins.items(), key=lambda item: (item[1].relative, int(item[0])))
    entry["worst"] = {"seed": int(seed), "margin": margin.value, "comparison": margin.comparison}


def _ranges(seeds: dict[str, set[int]]) -> dict[str, list[list[int]]]:
    """Each kind's seeds as sorted ranges ``[first, last]`` of consecutive seeds."""
    out = {}
    for kind, values in sorted(seeds.items()):
        spans: list[list[int]] = []
        for value in sorted(values):
            if spans and value == spans[-1][1] + 1:
                spans[-1][1] = value
            else:
                spans.append([value, value])
        out[kind] = spans
    return out


def overlapping_runs(entry: dict) -> list[str]:
    """The pairs of runs of a chapter's ledger entry that gave one kind of generator a common seed."""
    found = []
    runs = entry.get("training_seeds", {})
    for kind in sorted({k for seeds in runs.values() for k in seeds}):
        owner: dict[int, str] = {}
        for run, seeds in runs.items():
            for first, last in seeds.get(kind, []):
                for value in range(first, last + 1):
                    if value in owner and owner[value] != run:
                        found.append(f"runs {owner[value]} and {run} both seed {kind} with {value}")
                        break
                    owner[value] = run
    return found


def _ledger_claim(entry: dict) -> dict:
    """A claim's ledger entry as JSON: each ``[min, max]`` a list, each ``seen`` sorted."""
    out = {**entry, "values": {name: list(span) for name, span in entry["values"].items()}}
    if "seen" in entry:
        out["seen"] = {name: sorted(seen, key=json.dumps) for name, seen in entry["seen"].items()}
    return out


def dumps(sweep: dict) -> str:
    """JSON, one key per line, but every list of numbers on one line (a short, reviewable diff)."""
    text = json.dumps(sweep, indent=1, ensure_ascii=False)
    numbers = re.compile(r"\[\s*(-?[\d.eE+-]+(?:,\s*-?[\d.eE+-]+)*)\s*\]")
    return numbers.sub(lambda m: "[" + ", ".join(x.strip() for x in m[1].split(",")) + "]", text) + "\n"


def load(path: Path = SWEEP_FILE) -> dict:
    if path.exists():
        return json.loads(path.read_text(encoding="utf-8"))
    return {"chapters": {}}


def problems(sweep: dict, numbers: list[str] | None = None, min_seeds: int = DEFAULT_SEEDS) -> list[str]:
    """What makes the sweep stale or failing (for `numbers`, default every chapter); empty if all is N/N."""
    found = []
    for number, path in chapters().items():
        if numbers is not None and number not in numbers:
            continue
        entry = sweep.get("chapters", {}).get(number)
        name = label(number)
        if entry is None:
            found.append(f"{name} ({path.name}) has no sweep entry: run python -m tools.sweep {number}")
            continue
        if entry["code_sha256"] != code_sha256(path):
            found.append(f"{name}: its code changed since it was swept: run python -m tools.sweep {number}")
        n = len(entry["seeds"])
        if n < min_seeds:
            found.append(f"{name}: swept over {n} seeds, fewer than {min_seeds}")
        if entry.get("errors"):
            found.append(f"{name}: runs stopped early: {entry['errors']}")
        if sorted(entry.get("training_seeds", {}), key=int) != [str(seed) for seed in entry["seeds"]]:
            found.append(f"{name}: the ledger has no training_seeds for every run: run python -m tools.sweep {number}")
        found += [
            f"{name}: {overlap} (runs must not share a model or a data set)" for overlap in overlapping_runs(entry)
        ]
        for c in entry["claims"]:
            if len(c["held"]) != n:
                found.append(f"{name}: held on {len(c['held'])}/{n} seeds: {c['statement']}")
            if len(c.get("by_seed", {})) != n:
                found.append(f"{name}: no values by seed for every run: {c['statement']}")
    return found


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
