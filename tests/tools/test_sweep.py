"""The seed sweep (tools/sweep.py): its parsing, a real papermill run, and the freshness of book/claims_sweep.json."""

from __future__ import annotations

import json

import nbformat
import pytest

from tools import sweep


def test_values_split_at_top_level_commas_only() -> None:
    assert sweep.split_values("a=0.5, b=[1, 2], c={x: 1, y: 2}, d=True") == [
        ("a", "0.5"),
        ("b", "[1, 2]"),
        ("c", "{x: 1, y: 2}"),
        ("d", "True"),
    ]
    assert sweep.split_values("") == []
    assert [sweep.as_number(v) for v in ("0.973", "3.1e-06", "12", "[1, 2]", "True", "nan")] == [
        0.973,
        3.1e-06,
        12.0,
        None,
        None,
        None,
    ]


def _notebook(*cells: nbformat.NotebookNode) -> dict:
    nb = nbformat.v4.new_notebook(cells=list(cells))
    return json.loads(nbformat.writes(nb))


def test_claim_lines_come_from_streams_displays_and_the_error_that_stopped_the_run() -> None:
    cell = nbformat.v4.new_code_cell("")
    cell.outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="noise\n✔ Claim: printed — n=1\n"),
        nbformat.v4.new_output("display_data", data={"text/plain": "✔ Check: displayed — x=2", "text/html": "<b/>"}),
        nbformat.v4.new_output("error", ename="AssertionError", evalue="✘ Claim: failed — acc=0.4", traceback=[]),
    ]
    lines = sweep.claim_lines(_notebook(cell))
    assert [(m["mark"], m["kind"], m["statement"]) for m in lines] == [
        ("✔", "Claim", "printed"),
        ("✔", "Check", "displayed"),
        ("✘", "Claim", "failed"),
    ]


def test_summary_counts_the_seeds_each_claim_held_on_and_the_range_of_its_values(tmp_path) -> None:
    path = tmp_path / "05_x.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("SEED = 0")]), path)

    def run(seed, *lines):
        return sweep.Run("05", seed, seconds=1.0, lines=[sweep.CLAIM_LINE.match(line) for line in lines])

    runs = [
        run(0, "✔ Claim: same twice — acc=0.9", "✔ Claim: same twice — acc=0.8"),
        run(1, "✔ Claim: same twice — acc=0.95", "✘ Claim: same twice — acc=0.5"),
        run(2, "✔ Claim: same twice — acc=0.7"),  # stopped before the second: not reached
    ]
    entry = sweep.summarise(path, runs)
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
    assert not held.error and [(m["mark"], m["values"]) for m in held.lines] == [("✔", "seed=3")]
    failed = sweep.run_chapter("07", path, 4, tmp_path)
    assert failed.error and [(m["mark"], m["values"]) for m in failed.lines] == [("✘", "seed=4")]


def test_the_code_hash_ignores_markdown_and_the_colab_setup_cell(tmp_path) -> None:
    setup = nbformat.v4.new_code_cell("%pip install lib @ git+https://example.org/x@main")
    setup.metadata["tags"] = ["remove-cell"]
    cells = [nbformat.v4.new_markdown_cell("# A"), setup, nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "01_a.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    before = sweep.code_sha256(path)
    cells[0].source, setup.source = "# B", "%pip install lib @ git+https://example.org/x@v2"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert sweep.code_sha256(path) == before
    cells[2].source = "x = 2"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    assert sweep.code_sha256(path) != before


def test_shifted_seeds_go_to_another_file_never_to_the_ledger(capsys) -> None:
    """--first moves the seeds (SEED = first … first+N-1); the committed ledger records 0 … N-1, so
    such a sweep must name its own --out file."""
    with pytest.raises(SystemExit):
        sweep.main(["06", "--first", "100"])
    assert "give --out" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        sweep.main(["06", "--first", "-1", "--out", "x.json"])
    assert "--first must be a seed >= 0, got -1" in capsys.readouterr().err


def test_every_chapter_is_swept_fresh_and_every_claim_held_on_every_seed() -> None:
    """book/claims_sweep.json is fresh: every chapter swept over >= 10 seeds since its code last changed,
    and every claim and check held on every seed. If this fails, run `python tools/sweep.py NN`."""
    found = sweep.problems(sweep.load())
    assert not found, "the seed sweep is stale or failing:\n" + "\n".join(found)


@pytest.mark.parametrize("number", sorted(sweep.chapters()))
def test_every_chapter_has_a_parameters_cell_that_sets_only_its_seed(number: str) -> None:
    nb = json.loads(sweep.chapters()[number].read_text(encoding="utf-8"))
    tagged = [c for c in nb["cells"] if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"chapter {number}: {len(tagged)} cells tagged parameters"
    code = [line for line in "".join(tagged[0]["source"]).splitlines() if line.split("#")[0].strip()]
    assert len(code) == 1 and code[0].startswith("SEED = "), f"chapter {number}: the parameters cell is {code}"
