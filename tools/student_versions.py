#!/usr/bin/env python3
"""Write the student version of every chapter: solutions stripped, outputs cleared, all else intact.

    python tools/student_versions.py                       # every chapter -> student/NN_slug.ipynb
    python tools/student_versions.py --out handout book/02_self_attention.ipynb

What is removed (CONTRIBUTING.md, "Writing an exercise"):

- code between ``### BEGIN SOLUTION`` and ``### END SOLUTION``: nbgrader's ``ClearSolutions``
  replaces it with ``# YOUR CODE HERE`` / ``raise NotImplementedError()``, so the check cell after
  it tells the student whether their answer is right;
- every ``{solution}`` block of a markdown cell (the conceptual answers): replaced with nbgrader's
  text stub, ``YOUR ANSWER HERE``;
- the markdown cells that only open or close a gated solution (``{solution-start}`` /
  ``{solution-end}``), which would show as raw directives in Jupyter;
- every output and execution count (nbconvert's ``ClearOutputPreprocessor``).

Every other cell, the setup cell included, is left exactly as it is, so a student version opens in
Colab like the chapter it came from. No nbgrader course database or configuration is needed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat
from nbconvert.preprocessors import ClearOutputPreprocessor
from nbgrader.preprocessors import ClearSolutions

if __package__ in (None, ""):  # run as a script: python tools/student_versions.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.common import REPO, chapters  # noqa: E402

TEXT_STUB = ClearSolutions.text_stub.default_value  # "YOUR ANSWER HERE"

# A MyST fence opening a directive: ```{name} or :::{name} (colon_fence), 3 or more fence chars.
_FENCE_OPEN = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[\w:-]+)\}")


def _fence_closes(line: str, fence: str, indent: str) -> bool:
    stripped = line.strip()
    return (
        stripped
        and set(stripped) == {fence[0]}
        and len(stripped) >= len(fence)
        and len(line) - len(line.lstrip()) <= len(indent) + 3
    )


def directive_blocks(source: str) -> list[tuple[str, int, int]]:
    """Top-level MyST directive blocks of a markdown source: (name, first line, last line)."""
    lines = source.split("\n")
    blocks, i = [], 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if not m:
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not _fence_closes(lines[j], m["fence"], m["indent"]):
            j += 1
        blocks.append((m["name"], i, min(j, len(lines) - 1)))
        i = j + 1
    return blocks


def is_solution_wrapper(cell) -> bool:
    """A markdown cell that only opens or closes a gated solution."""
    if cell.cell_type != "markdown":
        return False
    blocks = directive_blocks(cell.source)
    rest = cell.source.split("\n")
    for _, a, b in blocks:
        rest[a : b + 1] = [""] * (b + 1 - a)
    return (
        bool(blocks)
        and all(name in ("solution-start", "solution-end") for name, _, _ in blocks)
        and not "".join(rest).strip()
    )


def strip_markdown_solutions(source: str) -> tuple[str, bool]:
    """Replace every {solution} block with the text stub; return the new source and whether any was found."""
    lines = source.split("\n")
    found = False
    for name, a, b in reversed(directive_blocks(source)):
        if name == "solution":
            lines[a : b + 1] = [TEXT_STUB]
            found = True
    return "\n".join(lines), found


def first_exercise_index(nb) -> int | None:
    """The first cell of the exercises: the first markdown cell with an {exercise} directive."""
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown" and any(n == "exercise" for n, _, _ in directive_blocks(cell.source)):
            return i
    return None


CODE_STUB = ClearSolutions().code_stub["python"]  # "# YOUR CODE HERE\nraise NotImplementedError()"


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


def student_version(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The student version of a chapter notebook (a new notebook; `nb` is left as it is)."""
    nb = nbformat.from_dict(nb)  # a deep copy
    nb.cells = [c for c in nb.cells if not is_solution_wrapper(c)]
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source, _ = strip_markdown_solutions(cell.source)
    resources: dict = {}
    nb, resources = ClearSolutions(enforce_metadata=False).preprocess(nb, resources)
    nb, resources = ClearOutputPreprocessor().preprocess(nb, resources)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.execution_count = None
    nbformat.validate(nb)
    return nb


def write_student_versions(notebooks: list[Path], out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        target = out / path.name
        nbformat.write(student_version(nb), target)
        written.append(target)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="*", type=Path, help="chapter notebooks (default: every book/NN_*.ipynb)")
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "student",
        help="output folder (default: student/, outside book/ and ignored by git)",
    )
    args = parser.parse_args(argv)
    notebooks = args.notebooks or chapters()
    if not notebooks:
        print("no chapters found (book/NN_*.ipynb)", file=sys.stderr)
        return 1
    for target in write_student_versions(notebooks, args.out):
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
