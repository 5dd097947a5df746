"""The nbgrader course that tools/assignments.py writes (book/grading.yml, book/instructors.md).

- every assignment (ch01 … ch11, capstone) generates with nbgrader, with no warning;
- the gradebook's maximum scores are grading.yml's, and every assignment has a positive one;
- no release holds a solution, a hidden test, a model answer or a rubric (nor the capstone's gpt.py
  a line of the reference);
- on the capstone, nbgrader autograde + export score simulated submissions as grading.yml says:
  the reference gets every autograded point, the untouched release 0; each mutant (a classic
  mistake) loses exactly its exercise's points; a check cell the student tampered with is restored
  by nbgrader and still fails; a shortcut that passes the visible check fails the hidden tests only
  (the chapters go through the same nbgrader machinery; autograding one of them too would only run
  a whole chapter four more times);
- the shortcuts that fool the chapters' visible checks (a bias that breaks chapter 2's XOR layer only
  at small scales, ``mha(x, x, x)[0]`` in chapter 4, ``lib``'s sinusoidal table in chapter 6,
  ``F.cross_entropy(label_smoothing=...)`` and a ``pad_id`` hard-coded to 0 in chapters 7 and 1)
  fail the hidden tests, and the book's solutions pass them (run in-process on the check and
  hidden-test cells, without the chapters);
- the instructors' planning table is ``book/grading.yml``'s, and the site builds without solutions
  with ``tools/term_site.py`` (one chapter, execution off).

The autograde test executes the capstone four times (``slow``: about a minute on a 2-core CPU).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from tools.assignments import (
    BEGIN,
    END,
    autograded_score,
    load_grading,
    max_score,
    strip_solutions,
    write_course,
)
from tools.common import REPO

GRADING = load_grading()
NAMES = list(GRADING["assignments"])
BIN = Path(sys.executable).parent  # nbgrader runs `alembic` as a command: it must be on PATH


def nbgrader(course: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    env = dict(os.environ, PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return subprocess.run(
        [str(BIN / "nbgrader"), *args], cwd=course, env=env, capture_output=True, text=True, timeout=timeout
    )


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    """The course, written and generated once: ``nbgrader generate_assignment "*"`` (all assignments)."""
    root = tmp_path_factory.mktemp("course")
    write_course(root, GRADING)
    run = nbgrader(root, "generate_assignment", "*")
    root.joinpath("generate.log").write_text(run.stdout + run.stderr)
    assert run.returncode == 0, run.stdout + run.stderr
    return root


def _notebook(folder: Path) -> Path:
    (path,) = folder.glob("*.ipynb")
    return path


def test_every_assignment_generates_without_warning(course):
    log = course.joinpath("generate.log").read_text()
    assert not re.search(r"\b(WARNING|ERROR)\b", log), log
    for name in NAMES:
        assert _notebook(course / "release" / name).exists(), name
    assert (course / "release" / "capstone" / "gpt.py").exists()
    for name in NAMES:  # for the students' `nbgrader validate`
        assert (
            f"c.Execute.timeout = {GRADING['cell_timeout']}"
            in (course / "release" / name / "nbgrader_config.py").read_text()
        )
    config = course.joinpath("nbgrader_config.py").read_text()
    assert f"c.Execute.timeout = {GRADING['cell_timeout']}" in config
    assert "{'capstone': ['gpt.py']}" in config


def test_max_scores_match_the_grading_data(course):
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for name in NAMES:
            assignment = gb.find_assignment(name)
            expected = GRADING["assignments"][name]
            assert assignment.max_score == max_score(expected) > 0, name
            assert assignment.max_code_score == autograded_score(expected) > 0, name
            for ex in expected["exercises"].values():  # one graded cell per part of each exercise
                notebook = assignment.notebooks[0]
                if ex.coding:
                    assert gb.find_grade_cell(f"{ex.label}-check", notebook.name, name).max_score == ex.check
                    assert gb.find_grade_cell(f"{ex.label}-hidden", notebook.name, name).max_score == ex.hidden
                if ex.points:
                    assert gb.find_grade_cell(f"{ex.label}-answer", notebook.name, name).max_score == ex.points


def _secret_lines(source: nbformat.NotebookNode, grading: dict) -> set[str]:
    """Every non-trivial line that must not reach students: solution regions, hidden tests, written
    answers (model answer and rubric), unless the same line also occurs in a released cell."""
    secret, public = set(), set()
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        lines = [line.strip() for line in cell.source.splitlines()]
        if meta.get("solution") and cell.cell_type == "markdown":
            secret.update(lines)
        elif BEGIN in cell.source or "### BEGIN HIDDEN TESTS" in cell.source:
            inside = False
            for line in lines:
                if line in (BEGIN, "### BEGIN HIDDEN TESTS"):
                    inside = True
                elif line in (END, "### END HIDDEN TESTS"):
                    inside = False
                elif inside:
                    secret.add(line)
                else:
                    public.add(line)
        else:
            public.update(lines)
    for ex in grading["exercises"].values():
        secret.update(line.strip() for line in ex.rubric.splitlines())
    return {line for line in secret - public if len(line) >= 12}


@pytest.mark.parametrize("name", NAMES)
def test_releases_leak_nothing(course, name):
    source = nbformat.read(_notebook(course / "source" / name), as_version=4)
    release = _notebook(course / "release" / name).read_text()
    assert "BEGIN SOLUTION" not in release and "HIDDEN TESTS" not in release and "Rubric" not in release
    released = nbformat.reads(release, as_version=4)
    text = "\n".join(cell.source for cell in released.cells)
    leaked = [line for line in _secret_lines(source, GRADING["assignments"][name]) if line in text]
    assert not leaked, leaked
    for module in GRADING["assignments"][name].get("modules", []):
        reference = (course / "reference" / name / module).read_text()
        shipped = (course / "release" / name / module).read_text()
        assert shipped == strip_solutions(reference) and "BEGIN SOLUTION" not in shipped
        assert (course / "source" / name / module).read_text() == shipped  # what autograde falls back to


def test_strip_solutions():
    assert strip_solutions("def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n") == (
        "def f():\n    # YOUR CODE HERE\n    raise NotImplementedError()\n"
    )
    with pytest.raises(ValueError, match="without"):
        strip_solutions("### BEGIN SOLUTION\nx = 1\n")


# ---------------------------------------------------------------------------------------------
# Autograding simulated submissions


def _replace(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, f"expected exactly one {old!r} (has the chapter changed?)"
    return text.replace(old, new)


def _tamper(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    """What a student might do to a failing check: replace it with a print."""
    nb = nbformat.from_dict(nb)
    (cell,) = [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("grade_id") == grade_id]
    cell.source = 'print("Correct!")'
    return nb


def _submit(
    course: Path, name: str, student: str, nb: nbformat.NotebookNode, files: dict[str, str] | None = None
) -> None:
    folder = course / "submitted" / student / name
    folder.mkdir(parents=True)
    nbformat.write(nb, folder / _notebook(course / "release" / name).name)
    for file, text in (files or {}).items():
        (folder / file).write_text(text)


def _autograde(course: Path, name: str) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Autograde and export every submission of ``name``: per student the score of each graded
    cell (autograded ones), and the exported total."""
    from nbgrader.api import Gradebook

    run = nbgrader(course, "autograde", name, "--create")
    assert run.returncode == 0, run.stdout + run.stderr
    export = nbgrader(course, "export")
    assert export.returncode == 0, export.stdout + export.stderr
    with (course / "grades.csv").open() as f:
        submitted = {path.parent.name for path in (course / "submitted").glob(f"*/{name}")}
        rows = csv.DictReader(f)
        totals = {row["student_id"]: float(row["score"]) for row in rows if row["assignment"] == name}
    totals = {student: score for student, score in totals.items() if student in submitted}
    cells = {}
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in totals:
            (notebook,) = gb.find_submission(name, student).notebooks
            cells[student] = {g.name: g.score for g in notebook.grades if g.name.endswith(("-check", "-hidden"))}
    return cells, totals


def _expected(name: str, lost: dict[str, tuple[str, ...]] | None = None) -> dict[str, float]:
    """The autograded score of each cell when the exercises in ``lost`` lose the given parts."""
    out, lost = {}, lost or {}
    for ex in GRADING["assignments"][name]["exercises"].values():
        if ex.coding:
            out[f"{ex.label}-check"] = 0 if "check" in lost.get(ex.label, ()) else ex.check
            out[f"{ex.label}-hidden"] = 0 if "hidden" in lost.get(ex.label, ()) else ex.hidden
    return out


def _check_scores(cells, totals, student, name, lost=None):
    expected = _expected(name, lost)
    assert cells[student] == expected, f"{student}: {cells[student]} != {expected}"
    assert totals[student] == sum(expected.values()), student


@pytest.mark.slow
def test_autograde_capstone(course):
    name = "capstone"
    release = nbformat.read(_notebook(course / "release" / name), as_version=4)
    reference = (course / "reference" / name / "gpt.py").read_text()
    stubs = (course / "release" / name / "gpt.py").read_text()
    no_scale = _replace(reference, " / math.sqrt(q.size(-1))", "")
    leaky = _replace(no_scale, ".tril()\n", ".tril(1)\n")  # off by one: each query also sees the next key
    shortcut = _replace(
        leaky,
        "    log_p = logits.log_softmax(dim=-1)\n",
        "    return F.cross_entropy(logits, target, ignore_index=pad_id, label_smoothing=epsilon)\n",
    )
    mask_after = _replace(reference, 'scores = scores.masked_fill(~mask, float("-inf"))', "pass")
    no_offset = _replace(mask_after, "offset=P)", "offset=0)")  # the cache forgets where it is
    _submit(course, name, "reference", release, {"gpt.py": reference})
    _submit(course, name, "untouched", release, {"gpt.py": stubs})
    _submit(course, name, "noscale-leaky-shortcut", _tamper(release, "cap-attention-check"), {"gpt.py": shortcut})
    _submit(course, name, "maskafter-nooffset", release, {"gpt.py": no_offset})

    cells, totals = _autograde(course, name)
    both = ("check", "hidden")
    _check_scores(cells, totals, "reference", name)
    assert totals["reference"] == autograded_score(GRADING["assignments"][name])
    everything = {label: both for label, ex in GRADING["assignments"][name]["exercises"].items() if ex.coding}
    _check_scores(cells, totals, "untouched", name, everything)
    assert totals["untouched"] == 0
    lost = {"cap-attention": both, "cap-masks": both, "cap-loss": ("hidden",)}
    _check_scores(cells, totals, "noscale-leaky-shortcut", name, lost)
    _check_scores(cells, totals, "maskafter-nooffset", name, {"cap-attention": both, "cap-generate": both})
    graded = (
        course / "autograded" / "noscale-leaky-shortcut" / name / _notebook(course / "release" / name).name
    ).read_text()
    assert 'print("Correct!")' not in graded  # the tampered check cell was restored from the source


def test_capstone_is_outside_the_site_and_the_notebook_tests():
    import tomllib

    import yaml

    config = yaml.safe_load((REPO / "_config.yml").read_text())
    assert "assignments" in config["exclude_patterns"]
    pytest_ini = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert "assignments" in pytest_ini["norecursedirs"] and "assignments" not in pytest_ini["testpaths"]
    assert shutil.which("nbgrader", path=str(BIN)), "nbgrader is in requirements.txt"


# ---------------------------------------------------------------------------------------------
# A term's site without solutions (tools/term_site.py)


@pytest.mark.slow
def test_term_site_hides_solutions(tmp_path):
    """The build option of book/instructors.md, on one chapter with execution off (cheap): the build
    succeeds where plain `hide_solutions` crashes, the exercises stay, no solution (written or code) shows."""
    import yaml

    from tools.term_site import main as term_site_main

    chapter = REPO / "book" / "05_masking_decoding.ipynb"
    shutil.copytree(REPO / "tools", tmp_path / "tools")
    (tmp_path / "book").mkdir()
    shutil.copy(chapter, tmp_path / "book")
    shutil.copy(REPO / "book" / "references.bib", tmp_path / "book")
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    config["execute"]["execute_notebooks"] = "off"
    config["sphinx"]["config"].pop("html_extra_path", None)  # the vendored MathJax: not needed here
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "_toc.yml").write_text(f"format: jb-book\nroot: book/{chapter.stem}\n")
    term = tmp_path / "_config.term.yml"
    assert term_site_main(["--source", str(tmp_path / "_config.yml"), "--out", str(term)]) == 0
    assert yaml.safe_load(term.read_text())["sphinx"]["config"]["hide_solutions"] is True
    run = subprocess.run(
        [str(BIN / "jupyter-book"), "build", str(tmp_path), "--config", str(term)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = run.stdout + run.stderr
    assert run.returncode == 0 and "solution_end_node" not in log, log[-3000:]
    html = (tmp_path / "_build" / "html" / "book" / f"{chapter.stem}.html").read_text()
    nb = nbformat.read(chapter, as_version=4)
    assert "The mask for a cache plus a chunk" in html and "Beam search by hand" in html
    assert "tril(diagonal=P)" not in html  # the coding solution (between solution-start and -end)
    assert "keeps one diagonal" not in html  # a written solution ({solution})
    assert "P + C" in html and any("def chunk_causal_mask" in c.source for c in nb.cells)


def test_the_instructors_table_is_the_grading_data():
    """book/instructors.md's course plan: minutes, points and weeks as book/grading.yml has them."""
    page = (REPO / "book" / "instructors.md").read_text()
    rows = {}
    for line in page.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0].isdigit():
            m = re.search(r"\{doc\}`(\d\d)_", cells[1])
            rows["ch" + m[1] if m else "capstone"] = cells
    assert set(rows) == set(NAMES)
    for name, cells in rows.items():
        a = GRADING["assignments"][name]
        exercises = a["exercises"].values()
        auto, total = autograded_score(a), max_score(a)
        assert int(cells[0]) == a["week"], name
        assert int(cells[2]) == sum(ex.minutes for ex in exercises), name
        assert cells[3] == f"{auto} + {total - auto} = {total}", name


# ---------------------------------------------------------------------------------------------
# The shortcuts of the issue, without running the chapters: each passes the visible check and
# fails the hidden tests; the book's own solution passes both.

SHORTCUTS = {
    # a bias of 5e-4 flips the sign for ~0.02% of standard normal points: the visible check (99.9%)
    # passes, the hidden test at scale 1e-3 does not
    "ex-02-xor-ffn": (
        "ch02",
        "def xor_feed_forward():\n"
        "    ffn = FeedForward(d_model=2, d_ff=4)\n"
        "    with torch.no_grad():\n"
        "        ffn.linear1.weight.copy_(torch.tensor([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]]))\n"
        "        ffn.linear1.bias.zero_()\n"
        "        ffn.linear2.weight.copy_(torch.tensor([[1.0, 1.0, -1.0, -1.0], [0.0] * 4]))\n"
        "        ffn.linear2.bias.fill_(5e-4)\n"
        "    return ffn\n",
        True,
    ),
    "ex-04-by-hand": ("ch04", "def multi_head_by_hand(mha, x):\n    return mha(x, x, x)[0]\n", True),
    "ex-06-table": (
        "ch06",
        "def my_sinusoidal_table(n_positions, d):\n    return SinusoidalPositionalEncoding(d, max_len=n_positions).pe\n",
        True,
    ),
    "ex-07-label-smoothing": (
        "ch07",
        "def smoothed_cross_entropy(logits, target, epsilon, pad_id):\n"
        "    return F.cross_entropy(logits, target, ignore_index=pad_id, label_smoothing=epsilon)\n",
        True,
    ),
    "ex-07-label-smoothing/pad": (  # the book's solution with pad_id hard-coded to 0
        "ch07",
        "def smoothed_cross_entropy(logits, target, epsilon, pad_id):\n"
        "    log_p = logits.log_softmax(dim=-1)\n"
        "    V = logits.shape[-1]\n"
        "    q = torch.full_like(log_p, epsilon / V)\n"
        "    q.scatter_(1, target[:, None], 1 - epsilon + epsilon / V)\n"
        "    return -(q * log_p).sum(dim=-1)[target != 0].mean()\n",
        True,
    ),
    "ex-10-span": (  # the visible check needs the chapter's world: hidden tests only
        "ch10",
        "def corrupt_span(tokens, start, length, sentinel):\n    return lib.corrupt_span(tokens, start, length, sentinel)\n",
        False,
    ),
    "ex-10-span/in-place": (  # right rows, but the caller's list is cut
        "ch10",
        "def corrupt_span(tokens, start, length, sentinel):\n"
        "    span = tokens[start:start + length]\n"
        "    del tokens[start:start + length]\n"
        "    tokens[start:start] = [sentinel]\n"
        "    return tokens + [sentinel] + span\n",
        False,
    ),
    "ex-01-luong/pad": (  # the visible check needs the chapter's trained model: hidden tests only
        "ch01",
        "def luong_attention(s, h, src, pad_id=0):\n"
        "    weights = (s @ h.transpose(1, 2)).masked_fill((src == 0)[:, None, :], float('-inf')).softmax(-1)\n"
        "    return weights @ h, weights\n",
        False,
    ),
}


def _namespace() -> dict:
    import math

    import torch
    import torch.nn.functional as F
    from torch import nn

    import lib

    return dict(
        torch=torch, nn=nn, F=F, math=math, lib=lib, device="cpu",
        MultiHeadAttention=lib.MultiHeadAttention, SinusoidalPositionalEncoding=lib.SinusoidalPositionalEncoding,
        FeedForward=lib.FeedForward, SEED=0, SEEDS=lib.seed_block(0, 5),  # as a chapter's setup cells
    )  # fmt: skip


def _cells(course: Path, name: str, label: str) -> tuple[str, str, str]:
    """(solution, check, hidden tests) of an exercise, from the course's source notebook."""
    nb = nbformat.read(_notebook(course / "source" / name), as_version=4)
    by_id = {c.metadata.get("nbgrader", {}).get("grade_id"): c.source for c in nb.cells}
    hidden = by_id[f"{label}-hidden"].split("### BEGIN HIDDEN TESTS")[1].split("### END HIDDEN TESTS")[0]
    return by_id[label], by_id[f"{label}-check"], hidden


@pytest.fixture(scope="module")
def source_only(tmp_path_factory) -> Path:
    """The course's source notebooks only (no nbgrader run)."""
    root = tmp_path_factory.mktemp("source")
    write_course(root, GRADING)
    return root


@pytest.mark.parametrize("case", SHORTCUTS)
def test_a_shortcut_fails_the_hidden_tests_only(case, source_only):
    label = case.split("/")[0]
    name, shortcut, check_visible = SHORTCUTS[case]
    solution, check, hidden = _cells(source_only, name, label)
    book = _namespace()
    exec(solution, book)  # the book's solution: passes both
    if check_visible:
        exec(check, book)
    exec(hidden, book)
    cheat = _namespace()
    exec(shortcut, cheat)
    if check_visible:
        exec(check, cheat)  # the visible check is fooled ...
    with pytest.raises((AssertionError, RuntimeError)):
        exec(hidden, cheat)  # ... the hidden tests are not
    _lib_left_as_found()


def _lib_left_as_found() -> None:
    """A hidden test that puts lib's own function out of reach (mock.patch) leaves lib as it found it: every
    name lib has loaded is its module's (lib loads names on first use, which a patch can get wrong)."""
    import importlib

    import lib

    for name, where in lib._WHERE.items():
        if name in vars(lib):
            assert vars(lib)[name] is getattr(importlib.import_module(f"lib.{where}"), name), name
