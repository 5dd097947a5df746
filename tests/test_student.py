"""The student versions (tools/student_versions.py) and the chapters' check cells.

For every chapter:

- no solution text survives in the student version: no code from between the `### BEGIN SOLUTION`
  markers, no line of a `{solution}` block, no marker, no output;
- the student version is a valid notebook, and everything but the solutions is intact: same cells,
  same sources, same metadata, in the same order;
- every coding exercise has a check cell after it, and the instructor version passes its check cells
  (read from the notebook as the site build executed it);
- the student version runs up to its exercises: its cells before the first exercise are exactly the
  instructor's, which the site build has just run without an error.

The student version's exercises are also executed: tests/test_colab.py runs them in the Colab-like
runtime right after the chapter itself (the state they need is then there, and the chapter does not
have to run a third time in CI), and checks that every check cell fails until the student answers.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from conftest import EXECUTED, SiteBuild

from tools.common import chapters
from tools.student_versions import (
    TEXT_STUB,
    check_cell_indices,
    directive_blocks,
    first_exercise_index,
    is_solution_wrapper,
    write_student_versions,
)

CHAPTERS = chapters()
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"


def _ids(paths):
    return [p.stem for p in paths]


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student")
    write_student_versions(CHAPTERS, out)
    return out


def _solution_lines(nb) -> set[str]:
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
            src = cell.source.splitlines()
            for name, a, b in directive_blocks(cell.source):
                if name == "solution":
                    lines += [l for l in src[a + 1 : b] if not l.lstrip().startswith(":")]
    # Lines that also occur outside the solutions (e.g. `return out`) prove nothing.
    elsewhere = set()
    for cell in nb.cells:
        if BEGIN not in cell.source and not any(n == "solution" for n, _, _ in directive_blocks(cell.source)):
            elsewhere.update(l.strip() for l in cell.source.splitlines())
    return {l.strip() for l in lines if len(l.strip()) >= 8 and l.strip() not in elsewhere}


def _exercise_index(nb) -> int:
    i = first_exercise_index(nb)
    if i is None:
        pytest.fail("no {exercise} in the notebook")
    return i


def _check_cells(nb) -> list[int]:
    found = check_cell_indices(nb)
    for i in found:
        assert BEGIN not in nb.cells[i].source, f"cell {i}: a coding exercise without a check cell after it"
    return found


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_no_solution_text_survives(chapter: Path, student_dir: Path) -> None:
    instructor = nbformat.read(chapter, as_version=4)
    text = (student_dir / chapter.name).read_text(encoding="utf-8")
    student = nbformat.reads(text, as_version=4)
    sources = "\n".join(c.source for c in student.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "{solution}", "{solution-start}", "{solution-end}"):
        assert marker not in sources, f"{chapter.name}: {marker!r} survives in the student version"
    leaked = sorted(l for l in _solution_lines(instructor) if l in sources)
    assert not leaked, f"{chapter.name}: solution text survives in the student version:\n" + "\n".join(leaked)
    assert all(
        not c.get("outputs") and c.get("execution_count") is None for c in student.cells if c.cell_type == "code"
    ), f"{chapter.name}: outputs were not cleared"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_student_version_is_valid_and_otherwise_intact(chapter: Path, student_dir: Path) -> None:
    instructor = nbformat.read(chapter, as_version=4)
    student = nbformat.read(student_dir / chapter.name, as_version=4)
    nbformat.validate(student)
    kept = [c for c in instructor.cells if not is_solution_wrapper(c)]
    assert len(student.cells) == len(kept), f"{chapter.name}: cells were added or lost"
    assert student.metadata == instructor.metadata
    solutions = 0
    for src, dst in zip(kept, student.cells):
        assert (src.cell_type, src.metadata, src.get("id")) == (dst.cell_type, dst.metadata, dst.get("id"))
        has_solution = BEGIN in src.source or any(n == "solution" for n, _, _ in directive_blocks(src.source))
        if has_solution:
            solutions += 1
            stub = "raise NotImplementedError()" if src.cell_type == "code" else TEXT_STUB
            assert stub in dst.source, f"{chapter.name}: a solution was not replaced by {stub!r}"
        else:
            assert dst.source == src.source, f"{chapter.name}: a cell without a solution changed:\n{src.source[:300]}"
    assert solutions > 0, f"{chapter.name}: no solutions found (CONTRIBUTING: exercises with solutions)"


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
    assert [c.source for c in student.cells[:n]] == [c.source for c in executed.cells[:n]], (
        f"{chapter.name}: the student version differs from the chapter before its exercises"
    )
    for i, cell in enumerate(executed.cells[:n]):
        errors = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        assert not errors, f"{chapter.name}: cell {i} raised {errors[0].get('ename')} when the site was built"
