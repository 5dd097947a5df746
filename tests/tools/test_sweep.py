"""The seed sweep (tools/sweep.py): reading claims, a real papermill run, and the freshness of book/claims_sweep.json."""

from __future__ import annotations

import ast
import json

import nbformat
import pytest

from lib.book.claims import CheckedClaim, read_claims
from tools import sweep, sweep_ledger
from tools.conditions import conditions, find


def test_values_flatten_to_names_and_scalars() -> None:
    assert list(sweep_ledger.flatten("a", 0.5)) == [("a", 0.5)]
    assert list(sweep_ledger.flatten("b", [1, [2, 3]])) == [("b", 1), ("b", 2), ("b", 3)]
    assert list(sweep_ledger.flatten("c", {"x": 1, "y": {"z": True}})) == [("c.x", 1), ("c.y.z", True)]
    assert list(sweep_ledger.flatten("d", [])) == []
    assert [sweep_ledger.is_number(v) for v in (0.973, 12, True, "nan", None)] == [True, True, False, False, False]


def _notebook(*cells: nbformat.NotebookNode) -> dict:
    nb = nbformat.v4.new_notebook(cells=list(cells))
    return json.loads(nbformat.writes(nb))


def test_claims_come_from_the_displayed_data_the_failed_one_included() -> None:
    """Claims are read from the bundle's data (never from printed text); a failed claim was displayed
    before it raised, so it is read too; the error itself carries no claim."""
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="noise\n✔ Claim: printed — n=1\n"),
        nbformat.v4.new_output(
            "display_data", data=CheckedClaim.of("displayed", True, {"x": 2}, "Check")._repr_mimebundle_()
        ),
        nbformat.v4.new_output("display_data", data=CheckedClaim.of("failed", False, {"acc": 0.4})._repr_mimebundle_()),
        nbformat.v4.new_output("error", ename="AssertionError", evalue="✘ Claim: failed — acc=0.4", traceback=[]),
    ]
    claims = read_claims(_notebook(cell))
    assert [(c.holds, c.kind, c.statement) for c in claims] == [
        (True, "Check", "displayed"),
        (False, "Claim", "failed"),
    ]


def test_summary_counts_the_seeds_each_claim_held_on_and_the_range_of_its_values(tmp_path) -> None:
    path = tmp_path / "05_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("SEED = 0")]), path)

    def run(seed, *shown):
        claims = [CheckedClaim.of("same twice", holds, {"acc": acc}) for holds, acc in shown]
        return sweep_ledger.Run("05", seed, seconds=1.0, claims=claims)

    runs = [
        run(0, (True, 0.9), (True, 0.8)),
        run(1, (True, 0.95), (False, 0.5)),
        run(2, (True, 0.7)),  # stopped before the second: not reached
    ]
    entry = sweep_ledger.summarise(path, runs)
    assert entry["seeds"] == [0, 1, 2]
    first, second = entry["claims"]
    assert first["held"] == [0, 1, 2] and first["values"] == {"acc": [0.7, 0.95]}
    assert second["held"] == [0] and second["failed"] == [1] and second["values"] == {"acc": [0.5, 0.8]}


def test_a_chapter_runs_with_its_seed_set_by_papermill(tmp_path) -> None:
    """End to end: papermill injects SEED after the `parameters` cell; the claims are collected."""
    parameters = nbformat.v4.new_code_cell("SEED = 0")
    parameters.metadata["tags"] = ["parameters"]
    nb = nbformat.v4.new_notebook(
        cells=[
            parameters,
            nbformat.v4.new_code_cell("import lib\nlib.claim('the seed is odd', SEED % 2 == 1, seed=SEED)"),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = tmp_path / "07_seeded.ipynb"
    nbformat.write(nb, path)
    held = sweep.run_chapter("07", path, 3, tmp_path)
    assert not held.error and [(c.holds, c.values) for c in held.claims] == [(True, (("seed", 3),))]
    assert held.seeds == {}, "the notebook seeded nothing"
    failed = sweep.run_chapter("07", path, 4, tmp_path)
    assert failed.error and [(c.holds, c.values) for c in failed.claims] == [(False, (("seed", 4),))]


def test_a_run_records_every_seed_it_gives_a_generator(tmp_path) -> None:
    """The kernel start-up file records the seeds of torch.manual_seed (lib.seed_everything),
    torch.Generator, random.seed and random.Random, and numpy, without changing the numbers they give."""
    parameters = nbformat.v4.new_code_cell("SEED = 0")
    parameters.metadata["tags"] = ["parameters"]
    code = (
        "import random, torch, lib\n"
        "lib.seed_everything(SEED)\n"
        "a = torch.rand(2)\n"
        "g = torch.Generator().manual_seed(2**40 + 1000 + SEED)\n"
        "b = torch.rand(2, generator=g)\n"
        "r = random.Random(2000 + SEED).random()\n"
        "torch.manual_seed(SEED); assert torch.equal(torch.rand(2), a)\n"
        "assert torch.equal(torch.rand(2, generator=torch.Generator().manual_seed(1000 + SEED)), b)\n"
        "lib.check('the recorder changes no number', r == random.Random(2000 + SEED).random(), r=r)"
    )
    nb = nbformat.v4.new_notebook(
        cells=[parameters, nbformat.v4.new_code_cell(code)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    path = tmp_path / "07_seeds.ipynb"
    nbformat.write(nb, path)
    run = sweep.run_chapter("07", path, 5, tmp_path)
    assert not run.error and [c.holds for c in run.claims] == [True]
    # torch.Generator is torch's generator, and torch keeps a seed's low 32 bits: 2**40 + 1005 is 1005
    assert run.seeds == {"torch": {5, 1005}, "numpy": {5}, "random": {5, 2005}}


def test_the_ledger_keeps_every_seeds_values_the_worst_seed_and_the_seeds_of_each_run(tmp_path) -> None:
    code = "lib.claim('accurate', lowest > 0.9, lowest=lowest)\nlib.check('fixed', n == 3, n=n)"
    path = tmp_path / "05_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]), path)
    runs = [
        sweep_ledger.Run("05", seed, 1.0, claims=[CheckedClaim.of("accurate", True, {"lowest": low}),
                                           CheckedClaim.of("fixed", True, {"n": 3}, "Check")],
                  seeds={"torch": {5 * seed + i for i in range(5)}, "random": {10**6 + seed}})
        for seed, low in ((0, 0.95), (1, 0.92), (2, 0.97))
    ]  # fmt: skip
    entry = sweep_ledger.summarise(path, runs)
    accurate, fixed = entry["claims"]
    assert accurate["by_seed"] == {"0": {"lowest": 0.95}, "1": {"lowest": 0.92}, "2": {"lowest": 0.97}}
    assert accurate["worst"]["seed"] == 1 and accurate["worst"]["comparison"] == "lowest > 0.9"
    assert abs(accurate["worst"]["margin"] - 0.02) < 1e-12
    assert fixed["by_seed"]["2"] == {"n": 3} and "worst" not in fixed  # == is no order: no margin
    assert entry["training_seeds"]["1"] == {"random": [[1000001, 1000001]], "torch": [[5, 9]]}
    assert sweep_ledger.overlapping_runs(entry) == []
    runs[2].seeds["torch"].add(7)  # run 2 seeds a model of run 1's block
    assert sweep_ledger.overlapping_runs(sweep_ledger.summarise(path, runs)) == ["runs 1 and 2 both seed torch with 7"]


def test_the_code_hash_ignores_markdown_and_the_colab_setup_cell(tmp_path) -> None:
    setup = nbformat.v4.new_code_cell("%pip install lib @ git+https://example.org/x@main")
    setup.metadata["tags"] = ["remove-cell"]
    cells = [nbformat.v4.new_markdown_cell("# A"), setup, nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "01_a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    before = sweep_ledger.code_sha256(path)
    cells[0].source, setup.source = "# B", "%pip install lib @ git+https://example.org/x@v2"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert sweep_ledger.code_sha256(path) == before
    cells[2].source = "x = 2"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert sweep_ledger.code_sha256(path) != before


def test_shifted_seeds_go_to_another_file_never_to_the_ledger(capsys) -> None:
    """--first moves the seeds (SEED = first … first+N-1); the committed ledger records 0 … N-1, so
    such a sweep must name its own --out file."""
    with pytest.raises(SystemExit):
        sweep.main(["06", "--first", "100"])
    assert "give --out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sweep.main(["06", "--first", "-1", "--out", "x.json"])
    assert "--first must be a seed >= 0, got -1" in capsys.readouterr().err


def test_the_appendix_beyond_one_machine_is_swept_under_its_name(tmp_path, monkeypatch, capsys) -> None:
    """Besides the chapters (book/NN_slug.ipynb, keyed by number), the appendices of APPENDICES, which
    have a SEED and checks of their own, are swept, keyed by name: book/distributed.ipynb is
    "distributed" (`python -m tools.sweep distributed`), book/performance.ipynb "performance"; other
    notebooks of book/ are not swept."""
    book = tmp_path / "book"
    book.mkdir()
    for name in ("03_x.ipynb", "distributed.ipynb", "performance.ipynb", "notes.ipynb", "10_no.txt"):
        (book / name).write_text("{}", encoding="utf-8")
    monkeypatch.setattr(sweep_ledger, "BOOK", book)
    assert sweep_ledger.chapters() == {
        "03": book / "03_x.ipynb",
        "distributed": book / "distributed.ipynb",
        "performance": book / "performance.ipynb",
    }
    assert [sweep_ledger.label(key) for key in ("03", "distributed")] == ["chapter 03", "appendix distributed"]
    assert sweep_ledger.problems({"chapters": {}}, ["distributed"]) == [
        "appendix distributed (distributed.ipynb) has no sweep entry: run python -m tools.sweep distributed"
    ]
    with pytest.raises(SystemExit):
        sweep.main(["notes"])
    assert "no chapter notes; the swept notebooks are 03, distributed, performance" in capsys.readouterr().err
    monkeypatch.undo()
    assert sweep_ledger.chapters()["distributed"] == sweep_ledger.BOOK / "distributed.ipynb"


def test_every_chapter_is_swept_fresh_and_every_claim_held_on_every_seed() -> None:
    """book/claims_sweep.json is fresh: every chapter swept over >= 10 seeds since its code last changed,
    and every claim and check held on every seed. If this fails, run `python -m tools.sweep NN`."""
    found = sweep_ledger.problems(sweep_ledger.load())
    assert not found, "the seed sweep is stale or failing:\n" + "\n".join(found)


@pytest.mark.parametrize("number", sorted(sweep_ledger.chapters()))
def test_every_chapter_has_a_parameters_cell_that_sets_only_its_seed(number: str) -> None:
    nb = json.loads(sweep_ledger.chapters()[number].read_text(encoding="utf-8"))
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"chapter {number}: {len(tagged)} cells tagged parameters"
    code = [line for line in "".join(tagged[0]["source"]).splitlines() if line.split("#")[0].strip()]
    assert len(code) == 1 and code[0].startswith("SEED = "), f"chapter {number}: the parameters cell is {code}"


def _ledger_claims():
    for number, entry in sweep_ledger.load()["chapters"].items():
        calls = conditions(sweep_ledger.code_cells(sweep_ledger.chapters()[number]))
        seen: dict[str, int] = {}
        for claim in entry["claims"]:
            occurrence = seen.get(claim["statement"], 0)
            seen[claim["statement"]] = occurrence + 1
            yield number, claim, find(calls, claim["kind"], claim["statement"], occurrence)


def test_every_claim_records_what_its_condition_reads_and_nothing_beside_it() -> None:
    """A claim's condition, written over the values it records (tools/conditions.py), reads each of
    them and nothing else: so the ledger holds what decided it, and its margin can be computed."""
    wrong = []
    for number, claim, call in _ledger_claims():
        if claim["kind"] != "Claim":
            continue
        if call is None or call.rewritten is None:
            wrong.append(f"{number}: reads something it does not record: {claim['statement']}")
        elif unread := set(call.recorded) - {n.id for n in ast.walk(call.rewritten) if isinstance(n, ast.Name)}:
            wrong.append(f"{number}: records {sorted(unread)} beside what it reads: {claim['statement']}")
    assert not wrong, "\n".join(wrong)


def test_every_check_records_only_what_its_condition_reads() -> None:
    """The rule of claims holds for checks too: a check whose condition is written over the values it
    records reads each of them; a value that only explains the check is printed beside it, not
    recorded. (A condition that also reads what it does not record, a dict whose entries it records
    one by one, can read a recorded value without naming it: no syntax tells, so it is left out.)"""
    wrong = [
        f"{number}: records {sorted(unread)} beside what it reads: {claim['statement']}"
        for number, claim, call in _ledger_claims()
        if claim["kind"] == "Check"
        and call is not None
        and call.rewritten is not None
        and (unread := set(call.recorded) - call.reads)
    ]
    assert not wrong, "\n".join(wrong)


#: A value "to float precision" (every seed's at most this in size: the widest tolerance a chapter's
#: identities use) varies with the inputs a seed draws, but no seed decides the check it belongs to.
FLOAT_RESIDUE = 1e-4
#: Nor does a recorded control: a value the check requires to exceed a positive threshold (an effect
#: exists: the unmasked model does change), and that exceeds it this many times over on every seed.
CONTROL_FACTOR = 2


def _numbers(value: object) -> list[float]:
    return [float(v) for _, v in sweep_ledger.flatten("", value) if sweep_ledger.is_number(v)]


def _is_control(name: str, condition: ast.expr, seeds: list[object]) -> bool:
    """`name` is read only as `name > c` (or `>=`, or `c < name`), c > 0, and every seed's value of it
    is at least CONTROL_FACTOR·c."""
    thresholds, reads = [], 0
    for node in ast.walk(condition):
        if isinstance(node, ast.Name) and node.id == name:
            reads += 1
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            left, op, right = node.left, node.ops[0], node.comparators[0]
            if isinstance(op, (ast.Lt, ast.LtE)):
                left, right = right, left
            elif not isinstance(op, (ast.Gt, ast.GtE)):
                continue
            if isinstance(left, ast.Name) and left.id == name and isinstance(right, ast.Constant):
                thresholds.append(right.value)
    if not thresholds or len(thresholds) != reads or not all(sweep_ledger.is_number(c) and c > 0 for c in thresholds):
        return False
    return all(v >= CONTROL_FACTOR * max(thresholds) for seed in seeds for v in _numbers(seed))


def test_no_check_is_decided_by_values_that_vary_from_seed_to_seed() -> None:
    """A check states what no seed can change: the values its condition reads are the same on every
    seed of the ledger, float residue and recorded controls aside. A check decided by a value that
    varies (a timing, what a trained model does) is a finding: a claim, with a margin and a statement
    derived from its words."""
    wrong = []
    for number, claim, call in _ledger_claims():
        if claim["kind"] != "Check":
            continue
        by_seed = claim["by_seed"].values()
        deciding = (call.reads if call is not None else set()) or {name for values in by_seed for name in values}
        for name in sorted(deciding):
            seeds = [values.get(name) for values in by_seed]
            if len({json.dumps(v, sort_keys=True) for v in seeds}) == 1:
                continue
            if all(abs(v) <= FLOAT_RESIDUE for seed in seeds for v in _numbers(seed)):
                continue
            if call is not None and call.over_names is not None and _is_control(name, call.over_names, seeds):
                continue
            low, high = min(n for s in seeds for n in _numbers(s)), max(n for s in seeds for n in _numbers(s))
            wrong.append(f"{number}: {name} varies from {low:.4g} to {high:.4g} over the seeds: {claim['statement']}")
    assert not wrong, "checks decided by values that vary from seed to seed:\n" + "\n".join(wrong)


def test_no_claim_reads_values_that_no_seed_changes() -> None:
    """A finding that no seed can change is a check (lib.check), not a claim."""
    fixed = [
        f"{number}: {claim['statement']}"
        for number, claim, _ in _ledger_claims()
        if claim["kind"] == "Claim" and len({json.dumps(v, sort_keys=True) for v in claim["by_seed"].values()}) == 1
    ]
    assert not fixed, "claims whose values are the same on every seed:\n" + "\n".join(fixed)


def test_every_claim_has_a_seed_closest_to_failing() -> None:
    missing = [f"{n}: {c['statement']}" for n, c, _ in _ledger_claims() if c["kind"] == "Claim" and "worst" not in c]
    assert not missing, "\n".join(missing)
