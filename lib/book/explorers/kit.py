"""The one door into an explorer's page: every string and every number enters the HTML here, escaped.

An explorer's output is built from :class:`Html` pieces only. A plain ``str`` is text: wherever it
goes (an element's content, an attribute) :func:`escape` writes it as text, so a label such as
``<img onerror=...>`` shows as those characters. :class:`Html` is markup this package wrote; it is made
by :func:`el` (an element from its tag, content and attributes), :func:`script` and :func:`style`, or
from a constant of the package's own (``Html("d<sub>k</sub> = ")``), never from a caller's string.

Inside ``<script>`` nothing is escaped by the HTML parser, so what goes there is written so that it
cannot end the element, open a comment or enter the parser's "double-escaped" script state:
:func:`script_json` (the data) and :func:`js` (a JavaScript literal, via ``json.dumps``) write ``<``,
``>``, ``&``, U+2028 and U+2029 as ``\\u003c``, ``\\u003e``, ``\\u0026``, ``\\u2028``, ``\\u2029``, which
JSON and JavaScript read back as the same characters; :func:`script` refuses a body that still holds
``<!--``, ``<script`` or ``</``. :func:`number` writes every number; :func:`check_name` admits the
explorer's ``name`` (which becomes its element's id, its CSS selectors and a JavaScript string).
"""

from __future__ import annotations

import html
import json
import numbers
import re

# What each character becomes inside a <script>: JSON's and JavaScript's escape of the same character.
_SCRIPT_SAFE = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}
_NOT_IN_SCRIPT = re.compile(r"<!--|<script|</", re.IGNORECASE)
_NAME = re.compile(r"[A-Za-z0-9_-]+")


class Html(str):
    """Markup, to be written as it is (anything else is text, and escaped). Concatenating two ``Html``
    gives ``Html``; concatenating ``Html`` and a plain ``str`` escapes the ``str``."""

    __slots__ = ()

    def __add__(self, other: str) -> Html:
        return Html(str.__add__(self, escape(other)))

    def __radd__(self, other: str) -> Html:
        return Html(str.__add__(escape(other), self))


def escape(content: str) -> Html:
    """``content`` as HTML: ``Html`` as it is; a ``str`` escaped (``&``, ``<``, ``>``, ``"`` and ``'``),
    so that it is the same text in an element and in a quoted attribute."""
    if isinstance(content, Html):
        return content
    if not isinstance(content, str):
        raise TypeError(f"content must be a str, got {content!r} ({type(content).__name__})")
    return Html(html.escape(content, quote=True))


def join(pieces, separator: str = "") -> Html:
    """``pieces`` one after the other (each escaped unless ``Html``), ``separator`` between them."""
    return Html(escape(separator).join(escape(p) for p in pieces))


def number(x: float, spec: str | None = None) -> str:
    """Every number on the page, written by one function: with ``spec`` (a format spec, ``".2f"``) as
    ``format`` writes it; without, an integer as it is and any other as an SVG length (at most two
    decimals, no trailing zeros: ``12.0`` is ``"12"``, ``0.125`` is ``"0.12"``)."""
    if isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"a number on the page must be a real number, got {x!r} ({type(x).__name__})")
    if spec is not None:
        return format(x, spec)
    if isinstance(x, numbers.Integral):
        return str(int(x))
    return f"{float(x):.2f}".rstrip("0").rstrip(".")


def _attribute(key: str, value: object) -> str:
    name = key.rstrip("_").replace("_", "-")
    if isinstance(value, str):
        text = escape(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, bool):
        text = number(value)
    else:
        raise TypeError(f"attribute {name} must be a str or a number, got {value!r} ({type(value).__name__})")
    return f' {name}="{text}"'


def el(tag: str, *content: str, **attributes: object) -> Html:
    """One SVG or HTML element: ``content`` one piece after the other (text escaped, ``Html`` as it is),
    its attributes escaped (``class_`` for ``class``, ``data_index`` for ``data-index``; ``None`` and
    ``False`` left out; a float written by :func:`number`)."""
    attrs = "".join(_attribute(k, v) for k, v in attributes.items() if v is not None and v is not False)
    return Html(f"<{tag}{attrs}>{join(content)}</{tag}>")


def script_json(data: object) -> str:
    """``data`` as compact JSON that may stand inside ``<script>``: no NaN, and ``<``, ``>``, ``&``,
    U+2028 and U+2029 escaped (``json.loads`` and ``JSON.parse`` read back the same data)."""
    return json.dumps(data, separators=(",", ":"), allow_nan=False).translate(_SCRIPT_SAFE)


def js(value: object) -> str:
    """``value`` (a string, a number, a list or dict of them) as a JavaScript literal that may stand
    inside ``<script>``: ``json.dumps``, then the same escapes as :func:`script_json`."""
    return json.dumps(value, allow_nan=False).translate(_SCRIPT_SAFE)


def script(body: str, **attributes: object) -> Html:
    """A ``<script>`` element around ``body``, which must not hold ``<!--``, ``<script`` or ``</``
    (:func:`script_json` and :func:`js` write data that does not)."""
    found = _NOT_IN_SCRIPT.search(body)
    if found:
        raise ValueError(f"a script body must not hold {found.group()!r}: write data with script_json or js")
    return el("script", Html(body), **attributes)


def style(css: str) -> Html:
    """A ``<style>`` element around ``css`` (the package's own rules; it must not hold ``<``)."""
    if "<" in css:
        raise ValueError("a style sheet must not hold '<'")
    return el("style", Html(css))


def check_name(name: object) -> str:
    """An explorer's ``name``: a non-empty ``str`` of ASCII letters, digits, ``_`` and ``-``, as it goes
    into the element's id, its CSS selectors and its script."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a str, got {name!r} ({type(name).__name__})")
    if not _NAME.fullmatch(name):
        raise ValueError(f"name={name!r} must be ASCII letters, digits, '_' and '-', at least one: [A-Za-z0-9_-]+")
    return name
