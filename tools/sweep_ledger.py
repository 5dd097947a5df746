"""The seed sweep's ledger, ``book/claims_sweep.json`` (committed; ``python -m tools.sweep`` runs the
chapters, ``tools/sweep.py``): which notebooks are swept, what one run of one is (:class:`Run`), and
what the ledger records of them, writes and checks:

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
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from lib.book.claims import CheckedClaim  # the data lib.claim / lib.check display
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


@dataclass
class Run:
    """One chapter executed at one seed."""

    chapter: str
    seed: int
    seconds: float = 0.0
    error: str = ""  # the exception papermill reported, if the run stopped early
    claims: list[CheckedClaim] = field(default_factory=list)
    seeds: dict[str, set[int]] = field(default_factory=dict)  # every seed the run gave a generator, by kind


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
