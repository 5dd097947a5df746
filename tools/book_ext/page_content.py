"""What a page shows, tidied while Sphinx reads and resolves it: the code cells without nbgrader's
solution markers, every figure's image described by its caption (alt text), and inline math kept on
one line with the punctuation after it."""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

# nbgrader's solution markers: they tell the student-version tools where a solution starts and ends;
# a reader of the site only needs the solution.
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def hide_solution_markers(app: Sphinx, doctree: nodes.document) -> None:
    """Drop the ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines from the code cells the page shows."""
    for block in list(doctree.findall(nodes.literal_block)):
        if not _inside(block, "cell_input") or not SOLUTION_MARKER.search(block.astext()):
            continue
        code = SOLUTION_MARKER.sub("", block.astext())
        block.clear()
        block += nodes.Text(code)
        block.rawsource = code


def _inside(node: nodes.Node, css_class: str) -> bool:
    parent = node.parent
    while parent is not None:
        if css_class in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


def alt_from_caption(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A figure's image is described by its caption (what a screen reader reads, and what shows if the
    image cannot): myst-nb gives an output's image its file path as ``alt``."""
    for figure in doctree.findall(nodes.figure):
        captions = list(figure.findall(nodes.caption))
        if not captions:
            continue
        text = " ".join(captions[0].astext().split())
        for image in figure.findall(nodes.image):
            if not image.get("alt") or "_images/" in image.get("alt", "") or image["alt"] == image.get("uri"):
                image["alt"] = text


_TRAILING_PUNCTUATION = re.compile(r"[.,;:!?)\]，。；：！？）、]+")


def keep_math_with_its_punctuation(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Inline math and the punctuation right after it stay on one line ("$T$." never breaks before the
    full stop): both go into one ``<span class="math-nowrap">`` (``_static/book.css``), in every language."""
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None:
            continue
        index = parent.index(math)
        after = parent[index + 1] if index + 1 < len(parent) else None
        if not isinstance(after, nodes.Text) or not (m := _TRAILING_PUNCTUATION.match(after.astext())):
            continue
        wrapper = nodes.inline("", "", classes=["math-nowrap"])
        parent.replace(math, wrapper)
        wrapper += math
        wrapper += nodes.Text(m[0])
        rest = after.astext()[len(m[0]) :]
        if rest:
            parent.replace(after, nodes.Text(rest))
        else:
            parent.remove(after)


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", hide_solution_markers)
    app.connect("doctree-resolved", alt_from_caption)
    app.connect("doctree-resolved", keep_math_with_its_punctuation)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
