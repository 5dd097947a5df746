"""A whole notebook, converted (:func:`notebook_to_jupyter`): every markdown cell in plain Jupyter
markdown, each figure's caption in a cell below it (numbered as on the site), and, in the reader
edition, a gated solution's code cells collapsed and without nbgrader's solution markers."""

from __future__ import annotations

import copy
import re

import nbformat

from tools.myst.blocks import convert, join
from tools.myst.book import Book, Context
from tools.myst.parsing import _chapter

# the same lines that the site hides (tools/book_ext/page_content.py, hide_solution_markers)
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def without_solution_markers(source: str) -> str:
    """A code cell's source without nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines."""
    code = SOLUTION_MARKER.sub("", source)
    return code if source.endswith("\n") else code.rstrip("\n")


def caption_cell(figure: nbformat.NotebookNode, caption: str) -> nbformat.NotebookNode:
    """The markdown cell that shows ``caption`` below the code cell ``figure``, with an id derived from
    the figure cell's (the same on every run: an edition written twice is the same file)."""
    cell = nbformat.v4.new_markdown_cell(caption)
    if "id" in figure:
        cell["id"] = f"{figure['id'][:56]}-caption"
    else:
        cell.pop("id", None)
    return cell


def figure_captions(nb: nbformat.NotebookNode, *, book: Book, docname: str, edition: str) -> dict[int, str]:
    """The caption of every figure the notebook's code cells draw (their ``mystnb.figure.caption``), as
    plain Jupyter markdown by the cell's index: ``**Figure 4.2.** caption`` (the site's number; 图 4.2 in
    Chinese), to show below the cell, where the site shows it."""
    chapter = _chapter(docname)
    found, k = {}, 0
    for i, cell in enumerate(nb.cells):
        caption = ((cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}).get("caption")
        if cell.cell_type != "code" or not caption:
            continue
        k += 1
        number = f"{chapter}.{k}" if chapter is not None else str(k)
        context = Context(book, docname, edition, f"{docname}.ipynb, cell {i} (caption)")
        text = join(convert(book.translate(caption, docname), context=context), edition).strip()
        name = ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name")
        anchor = f'<a id="{name}"></a>' if name else ""  # where {numref} links to, in the notebook itself
        found[i] = f"{anchor}{book.words['caption'].format(number=number)}{text}"
    return found


def notebook_to_jupyter(
    nb: nbformat.NotebookNode, *, book: Book, docname: str, edition: str = "reader", where: str | None = None
) -> nbformat.NotebookNode:
    """A copy of `nb` with every markdown cell converted (into `book`'s language); code cells keep their sources.

    A markdown cell that converts to nothing (a ``solution-end`` gate, a comment) is dropped. In the
    reader edition, the code cells of a gated solution (between ``solution-start`` and
    ``solution-end``) are collapsed, for JupyterLab (``metadata.jupyter.source_hidden``) and for Colab
    (``metadata.cellView = "form"``: Colab ignores the former), and lose nbgrader's
    ``### BEGIN/END SOLUTION`` marker lines, which only the student versions need.
    """
    out = copy.deepcopy(nb)
    where = where or f"{docname}.ipynb"
    captions = figure_captions(out, book=book, docname=docname, edition=edition)
    cells = []
    in_solution = False
    for i, cell in enumerate(out.cells):
        if cell.cell_type != "markdown":
            if cell.cell_type == "code" and in_solution and edition == "reader":
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
                cell.metadata["cellView"] = "form"
                cell.source = without_solution_markers(cell.source)
            cells.append(cell)
            if i in captions:
                cells.append(caption_cell(cell, captions[i]))
            continue
        context = Context(book, docname, edition, f"{where}, cell {i}")
        parts = convert(book.translate(cell.source, docname), context=context)
        for part in parts:
            if part.kind == "solution-start":
                in_solution = True
            elif part.kind == "solution-end":
                in_solution = False
        text = join(parts, edition)
        if not text.strip():
            continue
        cell.source = text
        cells.append(cell)
    out.cells = cells
    return out
