"""The student versions (tools/student_versions.py) and the chapters' check cells.

For every chapter:

- no solution text survives in the student version: no code from between the `### BEGIN SOLUTION`
  markers, no line of a `{solution}` block, no marker, no output;
- the student version is a valid notebook whose code is the chapter's, cell for cell, but for the
  solutions; every exercise statement is a cell of its own (so a student never edits the task), a
  written exercise has an answer cell (`YOUR ANSWER HERE`) and a code cell right below it, and a
  coding exercise its code cells; (tests/tools/test_editions.py renders them: no raw MyST, numbered
  exercises, links into the site);
- every coding exercise has a check cell after it, and the instructor version passes its check cells
  (read from the notebook as the site build executed it);
- the student version runs up to its exercises: its cells before the first exercise are exactly the
  instructor's, which the site build has just run without an error.

- the student version, executed from its first cell in a FRESH kernel (nothing left behind by a
  solution can help it), fails in every check cell: a check that passes on the stub
  `raise NotImplementedError()` cannot tell a student anything. Together with the test above (the
  same check cells pass on the solutions), this proves for every chapter that each check cell
  separates a right answer from none. It runs the chapter's cells up to its last check cell, so it
  costs about one run of each chapter; pytest-xdist spreads the chapters over the workers.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from conftest import EXECUTED, REPO, SiteBuild
from tools.common import chapters
from tools.myst import Book, directives
from tools.student_versions import (
    TEXT_STUB,
    check_cell_indices,
    first_exercise_index,
    role,
    write_student_versions,
)

CHAPTERS = chapters()
BOOK = Book.load()
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _ids(paths):
    return [p.stem for p in paths]


@pytest.fixture(scope="module")
def book() -> Book:
    return BOOK


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    write_student_versions(CHAPTERS, out)
    return out


def _markdown_solutions(source: str, book: Book) -> list[str]:
    return [d.body for d in directives(source, book=book) if d.name == "solution"]


def _solution_lines(nb, book: Book) -> set[str]:
    """Every non-trivial line of every solution of an instructor notebook."""
    lines = []
    for cell in nb.cells:
        if cell.cell_type == "code" and BEGIN in cell.source:
            inside = False
            for line in cell.source.splitlines():
                if BEGIN in line:
                    inside = True
                elif END in line:
                    inside = False
                elif inside:
                    lines.append(line)
        elif cell.cell_type == "markdown":
            for body in _markdown_solutions(cell.source, book):
                lines += body.splitlines()
    # Lines that also occur outside the solutions (e.g. `return out`) prove nothing.
    elsewhere = set()
    for cell in nb.cells:
        if BEGIN not in cell.source and not (cell.cell_type == "markdown" and _markdown_solutions(cell.source, book)):
            elsewhere.update(l.strip() for l in cell.source.splitlines())
    return {l.strip() for l in lines if len(l.strip()) >= 8 and l.strip() not in elsewhere}


def _exercise_index(nb) -> int:
    i = first_exercise_index(nb, BOOK)
    if i is None:
        pytest.fail("no {exercise} in the notebook")
    return i


def _check_cells(nb) -> list[int]:
    found = check_cell_indices(nb)
    for i in found:
        assert BEGIN not in nb.cells[i].source, f"cell {i}: a coding exercise without a check cell after it"
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_no_solution_text_survives(chapter: Path, student_dir: Path, book: Book) -> None:
    instructor = nbformat.read(chapter, as_version=4)
    text = (student_dir / chapter.name).read_text(encoding="utf-8")
    student = nbformat.reads(text, as_version=4)
    sources = "\n".join(c.source for c in student.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "{solution}", "{solution-start}", "{solution-end}"):
        assert marker not in sources, f"{chapter.name}: {marker!r} survives in the student version"
    leaked = sorted(l for l in _solution_lines(instructor, book) if l in sources)
    assert not leaked, f"{chapter.name}: solution text survives in the student version:\n" + "\n".join(leaked)
    assert all(
        not c.get("outputs") and c.get("execution_count") is None for c in student.cells if c.cell_type == "code"
    ), f"{chapter.name}: outputs were not cleared"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_student_version_keeps_the_code_and_the_metadata(chapter: Path, student_dir: Path) -> None:
    instructor = nbformat.read(chapter, as_version=4)
    student = nbformat.read(student_dir / chapter.name, as_version=4)
    nbformat.validate(student)
    assert student.metadata == instructor.metadata
    src = [c for c in instructor.cells if c.cell_type == "code"]
    dst = [c for c in student.cells if c.cell_type == "code" and role(c) != "scratch"]
    assert len(dst) == len(src), f"{chapter.name}: code cells were added or lost"
    solutions = 0
    for a, b in zip(src, dst):
        assert (a.metadata, a.get("id")) == (b.metadata, b.get("id"))
        if BEGIN in a.source:
            solutions += 1
            assert "raise NotImplementedError()" in b.source, f"{chapter.name}: a solution was not replaced by the stub"
        else:
            assert b.source == a.source, f"{chapter.name}: a cell without a solution changed:\n{a.source[:300]}"
    assert solutions > 0, f"{chapter.name}: no coding exercise (CONTRIBUTING: one coding exercise)"
    ids = [c.get("id") for c in student.cells if "id" in c]
    assert len(ids) == len(set(ids)), f"{chapter.name}: cell ids are not unique"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_one_cell_per_exercise_and_per_answer(chapter: Path, student_dir: Path, book: Book) -> None:
    """Every exercise statement is a cell of its own; below it, a written exercise has its answer
    cell and a code cell to run things in, a coding exercise its code. No cell states a task and
    asks for an answer at once."""
    instructor = nbformat.read(chapter, as_version=4)
    student = nbformat.read(student_dir / chapter.name, as_version=4)
    labels = [
        d.options["label"]
        for c in instructor.cells
        if c.cell_type == "markdown"
        for d in directives(c.source, book=book)
        if d.name == "exercise"
    ]
    coding = {
        d.argument
        for c in instructor.cells
        if c.cell_type == "markdown"
        for d in directives(c.source, book=book)
        if d.name == "solution-start"
    }
    in_words = {  # exercises with a {solution} block: answered in words
        d.argument
        for c in instructor.cells
        if c.cell_type == "markdown"
        for d in directives(c.source, book=book)
        if d.name == "solution"
    }
    statements = [i for i, c in enumerate(student.cells) if role(c) == "statement"]
    assert [student.cells[i].metadata["book"]["exercise"] for i in statements] == labels
    for i in statements:
        cell, label = student.cells[i], student.cells[i].metadata["book"]["exercise"]
        ex = book.exercises[label]
        assert cell.cell_type == "markdown" and cell.source.startswith(f'> <a id="{label}"></a>**Exercise {ex.number}')
        assert cell.source.count("**Exercise ") == 1, f"{chapter.name}: two exercises in one cell"
        below = student.cells[i + 1 : i + 3]
        if label in coding and label in in_words:  # code and an answer: the answer cell, then the code
            assert [(c.cell_type, role(c)) for c in below] == [("markdown", "answer"), ("code", None)], (
                f"{chapter.name}: exercise {ex.number} asks for code and an answer: no answer cell, then code"
            )
        elif label in coding:
            assert below[0].cell_type == "code", f"{chapter.name}: exercise {ex.number} has no code cell below it"
        else:
            assert [(c.cell_type, role(c)) for c in below] == [("markdown", "answer"), ("code", "scratch")], (
                f"{chapter.name}: exercise {ex.number} has no answer cell and code cell below it"
            )
            assert below[0].source == TEXT_STUB
    for i, cell in enumerate(student.cells):
        if cell.cell_type == "markdown" and role(cell) != "answer":
            assert TEXT_STUB not in cell.source, f"{chapter.name}: cell {i} asks for an answer inside other text"


@pytest.mark.site
@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_instructor_version_passes_its_check_cells(chapter: Path, site_build: SiteBuild) -> None:
    site_build.require_success()
    executed = nbformat.read(EXECUTED / "book" / chapter.name, as_version=4)
    checks = _check_cells(executed)
    assert checks, f"{chapter.name}: no coding exercise with a check cell (CONTRIBUTING: one coding exercise)"
    for i in checks:
        errors = [o for o in executed.cells[i].get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, (
            f"{chapter.name}: the check cell {i} fails on the instructor's solution: {errors[0].get('ename')}"
        )


@pytest.mark.site
@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_student_version_runs_up_to_its_exercises(chapter: Path, student_dir: Path, site_build: SiteBuild) -> None:
    """The cells before the exercises are the instructor's, and the site build ran them without error."""
    site_build.require_success()
    student = nbformat.read(student_dir / chapter.name, as_version=4)
    executed = nbformat.read(EXECUTED / "book" / chapter.name, as_version=4)
    n = _exercise_index(student)
    code = [c.source for c in student.cells[:n] if c.cell_type == "code"]
    assert code == [c.source for c in executed.cells if c.cell_type == "code"][: len(code)], (
        f"{chapter.name}: the student version's code differs from the chapter's before its exercises"
    )
    m = _exercise_index(executed)
    for i, cell in enumerate(executed.cells[:m]):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{chapter.name}: cell {i} raised {errors[0].get('ename')} when the site was built"


def _errors(cell) -> list[dict]:
    return [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]


@pytest.mark.slow
@pytest.mark.student
@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_check_cells_fail_on_the_stubs_in_a_fresh_kernel(chapter: Path, student_dir: Path) -> None:
    from nbclient import NotebookClient

    student = nbformat.read(student_dir / chapter.name, as_version=4)
    first = _exercise_index(student)
    checks = [i for i in _check_cells(student) if i > first]
    assert checks, f"{chapter.name}: no check cell after its first exercise"
    student.cells = student.cells[: max(checks) + 1]  # nothing after the last check is needed
    for cell in student.cells[first:]:
        if cell.cell_type == "code":  # stubs raise; so may what uses them
            cell.metadata["tags"] = [*cell.metadata.get("tags", []), "raises-exception"]
    client = NotebookClient(
        student,
        kernel_name="python3",
        timeout=600,
        allow_errors=False,
        resources={"metadata": {"path": str(REPO / "book")}},
    )
    client.execute()
    for i, cell in enumerate(student.cells[:first]):
        assert not _errors(cell), f"{chapter.name}: cell {i} (before the exercises) raised {_errors(cell)[0]['ename']}"
    passed = [student.cells[i].source.splitlines()[0] for i in checks if not _errors(student.cells[i])]
    assert not passed, (
        f"{chapter.name}: check cells pass in the student version, run in a fresh kernel "
        f"with the stubs instead of the solutions (checks that cannot fail): {passed}"
    )
