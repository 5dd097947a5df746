"""Write the student version of every chapter: plain Jupyter markdown, one cell per exercise and per
answer, solutions stripped, outputs cleared.

    python -m tools.student_versions                       # every chapter -> student/NN_slug.ipynb
    python -m tools.student_versions --out handout book/02_self_attention.ipynb

Every markdown cell goes through `tools/myst/` (the student edition), so Jupyter and Colab show
numbered exercises ("Exercise 3.2 · Title"), links and citations to the site, and no raw MyST.
Then (CONTRIBUTING.md, "Writing an exercise"):

- every exercise statement is a markdown cell of its own (prose around it goes to cells before and
  after), so a student never edits the cell that states the task;
- a written exercise (one without a gated code solution; its answer is a ``{solution}`` block) gets, right below its statement, an
  answer cell ``YOUR ANSWER HERE`` (nbgrader's text stub) and a code cell to run things in (many ask
  to change an experiment and look); its ``{solution}`` is removed; an exercise that asks for code
  *and* an answer (a gated code solution and a ``{solution}`` block) gets the answer cell, then its code;
- a coding exercise keeps its code cells: nbgrader's ``ClearSolutions`` replaces the code between
  ``### BEGIN SOLUTION`` and ``### END SOLUTION`` with ``# YOUR CODE HERE`` /
  ``raise NotImplementedError()``, so the check cell after it says whether the answer is right; the
  gates ``{solution-start}`` / ``{solution-end}`` are removed;
- every output and execution count is cleared (nbconvert's ``ClearOutputPreprocessor``).

Every code cell keeps its source (the setup cell included, so a student version opens in Colab like
the chapter), apart from the solutions. The cells this tool adds or splits off carry
``metadata.book = {"exercise": label, "role": "statement" | "answer" | "scratch"}``.
No nbgrader course database or configuration is needed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbgrader.preprocessors import ClearSolutions

from tools.common import REPO, chapters
from tools.myst import Book, Context, Part, caption_cell, convert, directives, figure_captions

TEXT_STUB = ClearSolutions.text_stub.default_value  # "YOUR ANSWER HERE"
CODE_STUB = ClearSolutions().code_stub["python"]  # "# YOUR CODE HERE\nraise NotImplementedError()"
SCRATCH = "# Exercise {number}: run your experiments here."


def role(cell) -> str | None:
    """What this tool made a cell: "statement", "answer", "scratch" (None: a cell of the chapter)."""
    return (cell.get("metadata", {}).get("book") or {}).get("role")


def first_exercise_index(nb, book: Book | None = None) -> int | None:
    """The first cell of the exercises: the first markdown cell with an {exercise} directive (a
    chapter), or the first exercise statement (a student version)."""
    book = book or Book.load()
    for i, cell in enumerate(nb.cells):
        if role(cell) == "statement":
            return i
        if cell.cell_type == "markdown" and any(d.name == "exercise" for d in directives(cell.source, book=book)):
            return i
    return None


def check_cell_indices(nb) -> list[int]:
    """The check cell of each coding exercise: the first code cell after a solution cell (one
    with `### BEGIN SOLUTION`, or, in a student version, with the stub that replaced it)."""
    found = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and (
            "### BEGIN SOLUTION" in cell.source or CODE_STUB.split("\n")[0] in cell.source
        ):
            nxt = next((j for j in range(i + 1, len(nb.cells)) if nb.cells[j].cell_type == "code"), None)
            if nxt is not None:
                found.append(nxt)
    return found


def _cell(kind: str, source: str, template, k: int, metadata: dict | None = None):
    """A new cell, with an id derived from the cell it came from (`template`) when ids are in use."""
    make = nbformat.v4.new_markdown_cell if kind == "markdown" else nbformat.v4.new_code_cell
    cell = make(source)
    cell.metadata = nbformat.from_dict(metadata if metadata is not None else dict(template.metadata))
    if "id" in template:
        cell["id"] = template["id"] if k == 0 else f"{template['id'][:56]}-{k}"
    else:
        cell.pop("id", None)
    return cell


def _split(cell, parts: list[Part], written: set[str], coding: set[str], book: Book) -> list:
    """A markdown cell's parts as student cells: prose, each exercise in its own cell, answer cells
    (below every exercise answered in words), scratch cells (below those answered in words only)."""
    out: list = []
    text: list[str] = []

    def add(kind: str, source: str, metadata: dict | None = None) -> None:
        out.append(_cell(kind, source, cell, len(out), metadata))

    def flush() -> None:
        if text:
            add("markdown", "\n\n".join(text))
            text.clear()

    for part in parts:
        if part.kind == "text":
            text.append(part.markdown)
        elif part.kind == "exercise":
            flush()
            tag = {"exercise": part.label}
            add("markdown", part.markdown, {"book": {**tag, "role": "statement"}})
            if part.label in written:
                add("markdown", TEXT_STUB, {"book": {**tag, "role": "answer"}})
            if part.label not in coding:
                number = book.exercises[part.label].number
                add("code", SCRATCH.format(number=number), {"book": {**tag, "role": "scratch"}})
    flush()
    return out


def student_version(
    nb: nbformat.NotebookNode, *, book: Book | None = None, docname: str | None = None, where: str | None = None
) -> nbformat.NotebookNode:
    """The student version of a chapter notebook (a new notebook; `nb` is left as it is).

    `docname` is the chapter's page ("book/03_scaling"); it numbers the exercises as the site does.
    """
    book = book or Book.load()
    if docname is None:
        raise ValueError("docname: the chapter's page, e.g. 'book/03_scaling', is needed to number its exercises")
    nb = nbformat.from_dict(nb)  # a deep copy
    where = where or f"{docname}.ipynb"
    converted = []
    for i, cell in enumerate(nb.cells):
        parts = (
            convert(
                book.translate(cell.source, docname), context=Context(book, docname, "student", f"{where}, cell {i}")
            )
            if cell.cell_type == "markdown"
            else None
        )
        converted.append(parts)
    # A coding exercise is answered by code (a gated solution, solution-start); an exercise with a
    # {solution} block (or no gated one) is answered in words; one with both asks for code and an answer.
    found = [p for parts in converted if parts for p in parts]
    coding = {p.label for p in found if p.kind == "solution-start"}
    written = ({p.label for p in found if p.kind == "exercise"} - coding) | {
        p.label for p in found if p.kind == "solution"
    }
    captions = figure_captions(nb, book=book, docname=docname, edition="student")
    cells = []
    for i, (cell, parts) in enumerate(zip(nb.cells, converted)):
        cells += [cell] if parts is None else _split(cell, parts, written, coding, book)
        if i in captions:
            cells.append(caption_cell(cell, captions[i]))
    nb.cells = cells
    resources: dict = {}
    nb, resources = ClearSolutions(enforce_metadata=False).preprocess(nb, resources)
    nb, resources = ClearOutputPreprocessor().preprocess(nb, resources)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
    nbformat.validate(nb)
    return nb


def write_student_versions(notebooks: list[Path], out: Path, repo: Path = REPO, language: str = "en") -> list[Path]:
    """Write the student version of each chapter into `out`, in `language` ("zh_CN": the Chinese
    prose of locale/zh_CN, exercises numbered "练习 N.k", links to the Chinese site)."""
    out.mkdir(parents=True, exist_ok=True)
    book = Book.load(repo, language)
    written = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        docname = Path(path).resolve().relative_to(repo.resolve()).with_suffix("").as_posix()
        target = out / Path(path).name
        nbformat.write(student_version(nb, book=book, docname=docname), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.student_versions", description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapter notebooks (default: every book/NN_*.ipynb)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "student",
        help="output folder (default: student/, outside book/ and ignored by git)",
    )
    parser.add_argument("--language", choices=["en", "zh_CN"], default="en", help="zh_CN: the Chinese edition")
    args = parser.parse_args(argv)
    notebooks = args.notebooks or chapters()
    if not notebooks:
        print("no chapters found (book/NN_*.ipynb)", file=sys.stderr)
        return 1
    for target in write_student_versions(notebooks, args.out, language=args.language):
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
