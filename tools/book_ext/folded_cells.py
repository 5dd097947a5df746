"""Folded cells (``hide-input``): on the site, myst-nb's drawing with a prompt named by what it shows;
in the one-page book of the PDF, left out."""

from __future__ import annotations

from sphinx.application import Sphinx


def visit_folded_cell(self, node) -> None:
    """A folded cell (``hide-input``) as myst-nb draws it, but its prompt named by what it shows ("Show
    code cell source"), not by an aria-label that says something else ("Toggle hidden content"; axe-core:
    label-content-name-mismatch)."""
    from html import escape

    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n</summary>\n')


def visit_folded_for_print(self, node) -> None:
    """A folded cell's part in the one-page book of the PDF: left out, as the site first shows it."""
    self.body.append('<div class="book-folded" hidden>\n')


def depart_folded_for_print(self, node) -> None:
    self.body.append("</div>\n")


def setup(app: Sphinx) -> dict:
    # myst-nb draws a folded cell (`hide-input`) for the `html` builder only; the one-page book of
    # the PDF (tools/pdf.py) is built by `singlehtml`, which would fail on the node: there, what the
    # site folds is left out (the page prints as the site first shows it, with no "show" prompt).
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_folded_cell, depart_HideCellInput),
                 singlehtml=(visit_folded_for_print, depart_folded_for_print))  # fmt: skip
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
