"""How long a chapter takes to read: its prose counted while Sphinx reads the page, at a stated pace.

Counted: the words a reader reads (paragraphs, headings, lists, tables, captions, exercises and their
solutions), in the page's language, as translated; not counted: code, printed outputs, figures and
display equations. English counts words, at :data:`PACE` ``["en"]`` a minute; Chinese counts each
Chinese character and each Latin word as one, at ``PACE["zh_CN"]`` a minute (the pace of careful
reading of technical prose: slower than of a novel). The run-time table (``{chapter-runtimes}``)
shows the result beside each chapter's run time, rounded up to 5 minutes.
"""

from __future__ import annotations

import math
import re

from docutils import nodes
from sphinx.application import Sphinx

#: Units (English words; Chinese characters and Latin words) a minute.
PACE = {"en": 200, "zh_CN": 300}
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’.-][A-Za-z0-9]+)*")
_CJK = re.compile(r"[\u3400-\u9fff]")
#: Nodes whose text is not read as prose: code, outputs, math, raw HTML (explorers, figures).
_SKIPPED = (nodes.literal_block, nodes.math_block, nodes.raw, nodes.image, nodes.comment)


def units(text: str) -> int:
    """Words of ``text``: each Latin word (numbers included) and each Chinese character counts one."""
    return len(_WORD.findall(text)) + len(_CJK.findall(text))


def _is_code_cell_output(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and bool({"cell_output", "cell_input"} & set(node.get("classes", [])))


def prose_units(doctree: nodes.Node) -> int:
    """The words of ``doctree`` that a reader reads (see the module): a walk that does not enter code,
    outputs, math or raw HTML (whose text nodes need not even know their parent)."""
    if isinstance(doctree, nodes.Text):
        return units(doctree.astext())
    if isinstance(doctree, _SKIPPED) or _is_code_cell_output(doctree):
        return 0
    return sum(prose_units(child) for child in doctree.children)


def reading_units(env) -> dict[str, int]:
    """Docname -> the words of its prose, for every page read."""
    if not hasattr(env, "book_reading_units"):
        env.book_reading_units = {}
    return env.book_reading_units


def reading_minutes(env, docname: str, language: str) -> int | None:
    """Minutes to read ``docname``, rounded up to 5; ``None`` if it was not read."""
    count = reading_units(env).get(docname)
    if count is None:
        return None
    return max(5, 5 * math.ceil(count / PACE.get(language, PACE["en"]) / 5))


def count(app: Sphinx, doctree: nodes.document) -> None:
    reading_units(app.env)[app.env.docname] = prose_units(doctree)


def purge(app: Sphinx, env, docname: str) -> None:
    reading_units(env).pop(docname, None)


def merge(app: Sphinx, env, docnames, other) -> None:
    reading_units(env).update({d: n for d, n in reading_units(other).items() if d in docnames})


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", count)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}
