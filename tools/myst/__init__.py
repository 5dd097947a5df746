"""The book's MyST, converted to the plain Jupyter markdown that Colab, JupyterLab and nbconvert render.

The chapters are written in MyST (exercises and solutions as sphinx-exercise directives, ``{doc}``,
``{ref}``, ``{cite:p}`` and ``{cite:t}`` roles, admonitions), which only the site build understands.
This module parses a cell with the parser MyST itself uses (markdown-it-py with mdit-py-plugins,
configured by myst-parser from `_config.yml`'s ``parse.myst_enable_extensions``) and rewrites what
Jupyter cannot show; everything else (prose, math, figures, HTML, code) is left byte for byte.

=====================================  =================================================================
MyST                                   Jupyter markdown
=====================================  =================================================================
```` ```{exercise} Title ````          a blockquote headed ``Exercise 4.2 · Title`` (the site's number:
  ``:label: ex-04-x``                  chapter N's k-th exercise is N.k) with an anchor ``ex-04-x``
```` ```{solution} ex-04-x ````        reader: ``<details><summary>Solution to Exercise 4.2</summary>``;
                                       student: removed
```` ````{solution-start} ex-04-x ```` reader: a line "Solution to Exercise 4.2" (the code cells up to
```` ````{solution-end} ````          ``solution-end`` are the solution); student: removed
```` ```{note} ```` (any admonition)   a blockquote headed **Note** (or the admonition's title)
``{doc}`04_multi_head```              a link to the page on the published site, titled as on the site
``{ref}`ex-04-x```                    a link to the page and anchor on the site ("Exercise 4.2"); within
                                       its own notebook, to the anchor ``#ex-04-x`` there
``{cite:p}`key```, ``{cite:t}`key```  "(Vaswani et al., 2017)", "Vaswani et al. (2017)", linked to the
                                       References page; the labels are the site's (2020a, 2020b, ...)
``(label)=``                          an anchor ``<a id="label"></a>``
``% comment``, ``+++``                removed
=====================================  =================================================================

Anything else that Jupyter would show raw (another directive or role, front matter, footnotes,
definition lists, substitutions, labelled equations, a directive inside a list or blockquote) raises
:class:`MystError`, which names the notebook, the cell and the construct: nothing passes silently.

API (stable; `tools/student_versions.py`, `tools/editions.py` and nbgrader tooling use it)::

    from tools.myst import Book, Context, to_jupyter, convert, notebook_to_jupyter, directives, raw_myst

    book = Book.load()                                  # the toc's pages, exercises, bibliography
    ctx = Context(book, docname="book/04_multi_head", edition="reader")   # or "student"
    text = to_jupyter(cell_source, context=ctx)         # one markdown cell -> Jupyter markdown
    parts = convert(cell_source, context=ctx)           # the same, as a list of Part(kind, markdown,
                                                        #   label): kind is "text", "exercise",
                                                        #   "solution", "solution-start" or "solution-end"
    nb2 = notebook_to_jupyter(nb, book=book, docname="book/04_multi_head", edition="reader")
    book.exercises["ex-04-x"]                           # Exercise(label, docname, number="4.2", title)
    directives(cell_source, book=book)                  # [Directive(name, argument, options, body)]
    raw_myst(text)                                      # raw MyST left in a text, as messages

`notebook_to_jupyter` converts every markdown cell and leaves every code cell's source as it is; in
the reader edition a gated solution's code cells are collapsed (``metadata.jupyter.source_hidden`` for
JupyterLab, ``metadata.cellView = "form"`` for Colab) and lose nbgrader's solution markers.
The student edition (one cell per exercise, an answer cell below it) is `tools/student_versions.py`.

The converter's rooms: `parsing` (the parser, and what a cell's tokens are: directives, unsupported
constructs), `book` (what a cell may refer to: pages, exercises, figures, citations; the converter's own
words), `roles` (roles and relative links, rewritten where the parser found them), `blocks` (a cell:
prose, admonitions, exercises and solutions), `notebooks` (a whole notebook: captions, collapsed
solutions). This package's names below are its API.
"""

from tools.myst.blocks import Directive, Part, convert, directives, join, to_jupyter
from tools.myst.book import EDITIONS, WORDS, Book, Citation, Context, Exercise
from tools.myst.notebooks import caption_cell, figure_captions, notebook_to_jupyter, without_solution_markers
from tools.myst.parsing import MystError, parser, raw_myst

__all__ = [
    "EDITIONS",
    "WORDS",
    "Book",
    "Citation",
    "Context",
    "Directive",
    "Exercise",
    "MystError",
    "Part",
    "caption_cell",
    "convert",
    "directives",
    "figure_captions",
    "join",
    "notebook_to_jupyter",
    "parser",
    "raw_myst",
    "to_jupyter",
    "without_solution_markers",
]
