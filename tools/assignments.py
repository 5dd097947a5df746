"""Write a ready nbgrader course from the chapters, ``book/grading.yml`` and the capstone.

    python -m tools.assignments --course DIR
    cd DIR && nbgrader generate_assignment ch02     # then release, collect, autograde, export

What it writes (``book/instructors.md``, "Assigning and grading with nbgrader"):

- ``DIR/nbgrader_config.py``: the course, a cell timeout sized for the slowest chapter, and
  ``Autograde.exclude_overwriting`` for the files a student edits besides the notebook (the
  capstone's ``gpt.py``); and in every assignment folder a small ``nbgrader_config.py`` with the same
  timeout, for students' ``nbgrader validate``;
- ``DIR/source/chNN/NN_slug.ipynb`` for every chapter: the chapter with nbgrader's metadata.
  Each exercise statement is a locked, read-only cell; each coding solution (``### BEGIN SOLUTION``)
  is a solution cell; each check cell is a locked autograded test cell worth ``check`` points, followed
  by a locked test cell worth ``hidden`` points whose tests (``### BEGIN HIDDEN TESTS``) vary the
  inputs and take the reference away from the student's call; each written answer is a manually
  graded cell worth ``points``, holding the model answer and the rubric (the instructor's copy only:
  nbgrader replaces it with ``YOUR ANSWER HERE`` in the release). The wrappers that gate a solution
  on the site (``{solution-start}`` / ``{solution-end}``) are dropped, and every markdown cell is
  converted from the book's MyST to plain Jupyter markdown;
- ``DIR/source/capstone/``: the capstone notebook (``assignments/capstone/``), treated the same way,
  with the student module ``gpt.py`` as stubs; the reference ``gpt.py`` goes to
  ``DIR/reference/capstone/``, outside what nbgrader releases.

The chapters are read as they are; nothing in ``book/`` is changed.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat
import yaml

from tools.common import REPO
from tools.myst import Book, Context, convert, directives
from tools.myst import Exercise as BookExercise

GRADING = REPO / "book" / "grading.yml"
CAPSTONE = REPO / "assignments" / "capstone"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
BEGIN_HIDDEN, END_HIDDEN = "### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS"
SCHEMA_VERSION = 3


# --------------------------------------------------------------------------------------------
# The grading data


@dataclass
class Exercise:
    """One exercise of ``book/grading.yml``.

    A coding exercise has ``check`` points (its visible check cell) and ``hidden`` points (the hidden
    tests after it, given as ``hidden_test``); a written one has ``points`` and a ``rubric``. A coding
    exercise may also ask for a written answer (``points`` + ``rubric`` beside ``check``).
    """

    label: str
    minutes: int
    check: int = 0
    hidden: int = 0
    hidden_test: str = ""
    points: int = 0
    rubric: str = ""

    @property
    def coding(self) -> bool:
        return self.check > 0

    @property
    def total(self) -> int:
        return self.check + self.hidden + self.points


def load_grading(path: Path = GRADING) -> dict:
    """``book/grading.yml``, with every exercise as an :class:`Exercise` (checked: clear errors)."""
    data = yaml.safe_load(path.read_text())
    for name, assignment in data["assignments"].items():
        exercises = {}
        for label, spec in (assignment.get("exercises") or {}).items():
            unknown = set(spec) - {"minutes", "check", "hidden", "hidden_test", "points", "rubric"}
            if unknown:
                raise ValueError(f"{path.name}: {name}/{label} has unknown keys {sorted(unknown)}")
            ex = Exercise(label, **spec)
            if ex.coding and (ex.hidden <= 0 or not ex.hidden_test.strip()):
                raise ValueError(f"{path.name}: coding exercise {label} needs hidden > 0 and a hidden_test")
            if not ex.coding and (ex.points <= 0 or not ex.rubric.strip()):
                raise ValueError(f"{path.name}: written exercise {label} needs points > 0 and a rubric")
            exercises[label] = ex
        assignment["exercises"] = exercises
    return data


def max_score(assignment: dict) -> int:
    return sum(ex.total for ex in assignment["exercises"].values())


def autograded_score(assignment: dict) -> int:
    return sum(ex.check + ex.hidden for ex in assignment["exercises"].values())


# --------------------------------------------------------------------------------------------
# nbgrader metadata


def _meta(cell, grade_id: str, *, grade: bool, solution: bool, locked: bool = False, points: int | None = None):
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": SCHEMA_VERSION}
    meta["solution"] = solution
    if points is not None:
        meta["points"] = points
    cell.metadata["nbgrader"] = meta
    return cell


def statement_cell(label: str, statement: str, ex: Exercise):
    """The exercise as the converter renders it (a blockquote headed "Exercise 4.2 · Title"), with its worth."""
    parts = [f"{ex.check} for the check", f"{ex.hidden} for hidden tests"] if ex.coding else []
    if ex.points:
        parts.append(f"{ex.points} for the written answer" if ex.coding else "graded by hand")
    worth = f"{ex.total} point{'s' * (ex.total != 1)} ({', '.join(parts)}); about {ex.minutes} minutes"
    text = f"{statement}\n>\n> *{worth}*"
    return _meta(nbformat.v4.new_markdown_cell(text), f"{label}-text", grade=False, solution=False, locked=True)


def answer_cell(label: str, answer: str, ex: Exercise):
    """A manually graded answer: in the instructor's copy the book's answer and the rubric."""
    text = (
        f"{answer}\n\n**Rubric ({ex.points} point{'s' * (ex.points != 1)}).**\n\n{ex.rubric.strip()}\n\n"
        "*(The book's answer and the rubric are in the instructor's copy only; students get "
        "`YOUR ANSWER HERE`.)*"
    )
    return _meta(nbformat.v4.new_markdown_cell(text), f"{label}-answer", grade=True, solution=True, points=ex.points)


def hidden_cell(label: str, ex: Exercise):
    source = (
        f"# Hidden tests of this exercise ({ex.hidden} point{'s' * (ex.hidden != 1)}): they run when your "
        "notebook is graded.\n"
        f"{BEGIN_HIDDEN}\n{ex.hidden_test.strip()}\n{END_HIDDEN}"
    )
    return _meta(
        nbformat.v4.new_code_cell(source), f"{label}-hidden", grade=True, solution=False, locked=True, points=ex.hidden
    )


def assignment_notebook(
    nb: nbformat.NotebookNode, exercises: dict[str, Exercise], name: str, book: Book, docname: str
) -> nbformat.NotebookNode:
    """The nbgrader source notebook of a chapter (or the capstone), its markdown converted by
    tools/myst/ (the Colab editions' converter) as page ``docname`` of ``book``: a new notebook.

    Code cells tagged ``check:LABEL`` are check cells (the capstone's, whose solutions live in a
    module); otherwise the check cell of a coding exercise is the first code cell after its
    solution cell.
    """
    out = nbformat.v4.new_notebook(metadata=nb.metadata)
    seen: set[str] = set()
    titles: dict[str, str] = {}
    pending: str | None = None  # the label whose solution cell came last: its check cell comes next
    label: str | None = None  # the label of the last {solution-start}
    written: dict[str, str] = {}  # the written solutions of coding exercises, by label
    n_locked = 0

    def need(lbl: str) -> Exercise:
        if lbl not in exercises:
            raise ValueError(f"{name}: exercise {lbl!r} is not in {GRADING.name}")
        return exercises[lbl]

    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            context = Context(book, docname, "reader", f"{docname}.ipynb, cell {i}")
            for part in convert(book.translate(cell.source, docname), context=context):
                if part.kind == "text":
                    out.cells.append(nbformat.v4.new_markdown_cell(part.markdown))
                elif part.kind == "exercise":
                    titles[part.label] = book.exercises[part.label].heading
                    out.cells.append(statement_cell(part.label, part.markdown, need(part.label)))
                elif part.kind == "solution":
                    ex = need(part.label)
                    if ex.coding:  # a coding exercise's written answer: the model answer of its question
                        written[part.label] = part.markdown
                        continue
                    out.cells.append(answer_cell(part.label, part.markdown, ex))
                    seen.add(part.label)
                elif part.kind == "solution-start":  # the code cell after it is the solution
                    label = part.label
            continue
        cell = nbformat.v4.new_code_cell(cell.source, metadata=dict(cell.metadata))
        tags = cell.metadata.get("tags", [])
        check_tag = next((t.split(":", 1)[1] for t in tags if t.startswith("check:")), None)
        if "locked" in tags:  # a read-only cell (the capstone's setup): restored at grading
            cell.metadata["tags"] = [t for t in tags if t != "locked"]
            if not cell.metadata["tags"]:
                del cell.metadata["tags"]
            n_locked += 1
            out.cells.append(_meta(cell, f"{name}-locked-{n_locked}", grade=False, solution=False, locked=True))
        elif BEGIN in cell.source:
            if label is None or label in seen:
                raise ValueError(f"{name}: a `{BEGIN}` cell without its own {{solution-start}} label")
            out.cells.append(_meta(cell, label, grade=False, solution=True))
            pending = label
        elif check_tag or pending:
            lbl = check_tag or pending
            ex = need(lbl)
            cell.metadata["tags"] = [t for t in tags if not t.startswith("check:")]
            if not cell.metadata["tags"]:
                del cell.metadata["tags"]
            out.cells.append(_meta(cell, f"{lbl}-check", grade=True, solution=False, locked=True, points=ex.check))
            out.cells.append(hidden_cell(lbl, ex))
            if ex.points:  # a coding exercise that also asks a question
                answer = nbformat.v4.new_markdown_cell(
                    f"**Your answer to the question of {titles.get(lbl, lbl)}:**\n\n"
                    f"**Rubric ({ex.points} point{'s' * (ex.points != 1)}).**\n\n{ex.rubric.strip()}"
                )
                out.cells.append(_meta(answer, f"{lbl}-answer", grade=True, solution=True, points=ex.points))
            seen.add(lbl)
            pending = None
        else:
            out.cells.append(cell)
    for lbl, answer in written.items():  # into the instructor's copy of the question's answer cell, if any
        cells = [c for c in out.cells if c.metadata.get("nbgrader", {}).get("grade_id") == f"{lbl}-answer"]
        if cells:
            cells[0].source = answer_cell(lbl, answer, exercises[lbl]).source
    missing = set(exercises) - seen
    if missing:
        raise ValueError(f"{name}: {GRADING.name} lists exercises the notebook does not grade: {sorted(missing)}")
    return out


def register_exercises(book: Book, nb: nbformat.NotebookNode, docname: str) -> None:
    """Number the exercises of a notebook that is not a page of the site (the capstone): 1, 2, ..."""
    if any(ex.docname == docname for ex in book.exercises.values()):
        return
    found = [d for c in nb.cells if c.cell_type == "markdown" for d in directives(c.source, book=book)]
    for k, d in enumerate((d for d in found if d.name == "exercise"), start=1):
        if d.options.get("label") not in book.exercises:
            book.exercises[d.options["label"]] = BookExercise(
                d.options["label"], docname, str(k), d.argument, book.language
            )


# --------------------------------------------------------------------------------------------
# The student module of the capstone


def strip_solutions(source: str) -> str:
    """A module's source with every ``### BEGIN SOLUTION … ### END SOLUTION`` region replaced by
    ``raise NotImplementedError`` at the region's indentation (what nbgrader does to a code cell)."""
    out, inside = [], False
    for line in source.split("\n"):
        if line.strip() == BEGIN:
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}# YOUR CODE HERE")
            out.append(f"{indent}raise NotImplementedError()")
        elif line.strip() == END:
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError(f"a `{BEGIN}` without its `{END}`")
    return "\n".join(out)


# --------------------------------------------------------------------------------------------
# The course


CONFIG = '''\
"""nbgrader configuration of the course, written by tools/assignments.py (book/instructors.md)."""

c = get_config()  # noqa: F821

c.CourseDirectory.course_id = "{course_id}"

# Cell timeout: every chapter runs start to finish in under {slowest} s on a 2-core CPU (the book's
# CI checks it), so no cell of any assignment needs longer; {timeout} s leaves room for a slow laptop.
c.Execute.timeout = {timeout}

# Files a student edits besides the notebook: autograde keeps the student's copy instead of
# overwriting it with the source's (the capstone's gpt.py, whose source copy is the stubs).
c.Autograde.exclude_overwriting = {exclude!r}
'''


STUDENT_CONFIG = '''\
"""For `nbgrader validate` in this folder: the course's cell timeout (written by tools/assignments.py)."""

c = get_config()  # noqa: F821
c.Execute.timeout = {timeout}
'''


def write_course(course: Path, grading: dict | None = None, language: str = "en") -> list[str]:
    """Write the course into ``course`` (its prose in `language`, e.g. "zh_CN"); return the assignment names."""
    grading = grading or load_grading()
    book = Book.load(REPO, language)
    course.mkdir(parents=True, exist_ok=True)
    names = []
    exclude = {}
    for name, assignment in grading["assignments"].items():
        folder = course / "source" / name
        if folder.exists():
            shutil.rmtree(folder)
        folder.mkdir(parents=True)
        path = REPO / assignment["notebook"]
        nb = nbformat.read(path, as_version=4)
        docname = str(path.relative_to(REPO).with_suffix(""))
        register_exercises(book, nb, docname)
        nbformat.write(assignment_notebook(nb, assignment["exercises"], name, book, docname), folder / path.name)
        # students run `nbgrader validate` in the assignment's folder: without this, 30 s per cell
        (folder / "nbgrader_config.py").write_text(STUDENT_CONFIG.format(timeout=grading["cell_timeout"]))
        for module in assignment.get("modules", []):
            reference = (path.parent / module).read_text()
            (folder / module).write_text(strip_solutions(reference))
            ref_dir = course / "reference" / name
            ref_dir.mkdir(parents=True, exist_ok=True)
            (ref_dir / module).write_text(reference)
            exclude.setdefault(name, []).append(module)
        names.append(name)
    (course / "nbgrader_config.py").write_text(
        CONFIG.format(
            course_id=grading.get("course_id", "transformers-executed"),
            slowest=grading["slowest_chapter_seconds"],
            timeout=grading["cell_timeout"],
            exclude=exclude,
        )
    )
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.assignments", description=__doc__.split("\n\n")[0])
    parser.add_argument("--course", type=Path, required=True, help="the nbgrader course folder to write")
    parser.add_argument("--language", choices=["en", "zh_CN"], default="en", help="zh_CN: the Chinese edition")
    args = parser.parse_args(argv)
    grading = load_grading()
    for name in write_course(args.course, grading, args.language):
        a = grading["assignments"][name]
        print(f"{name}: {max_score(a)} points ({autograded_score(a)} autograded)")
    print(f"then: cd {args.course} && nbgrader generate_assignment ch01  (... ch09, capstone)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
