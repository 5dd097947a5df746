"""Showing `lib`'s own source in a notebook: `show_source`."""

from __future__ import annotations

import html
import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

# The folder that holds the `lib` package; source paths are shown relative to it ("lib/model/attention.py").
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Source:
    """A piece of source code that displays nicely in Jupyter, Colab and the Jupyter Book site.

    ``code`` is the dedented source; ``name`` the qualified name (``lib.model.attention.MultiHeadAttention``);
    ``path`` the file (``lib/model/attention.py``); ``first_line``/``last_line`` the lines shown.
    ``str(source)`` is the bare code.
    """

    code: str
    name: str
    path: str
    first_line: int
    last_line: int
    linenos: bool = False

    # Inline styles only (pygments' ``noclasses=True``): no CSS file is needed anywhere, and the
    # page theme (light or dark) cannot recolour the code.
    _BACKGROUND = "#f8f8f8"

    @property
    def caption(self) -> str:
        return f"{self.name} — {self.path}, lines {self.first_line}–{self.last_line}"

    def _repr_html_(self) -> str:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import PythonLexer

        formatter = HtmlFormatter(
            noclasses=True,
            style="default",
            cssclass="lib-source",
            linenos="inline" if self.linenos else False,
            linenostart=self.first_line,
            linespans="L",
            prestyles=(
                f"background: {self._BACKGROUND}; color: #1f1f1f; margin: 0; padding: 0.6em 0.9em;"
                " border: 1px solid #e1e4e8; border-radius: 0 0 4px 4px; white-space: pre-wrap;"
                " font-size: 0.85em"  # pygments appends "; line-height: 125%;"
            ),
        )
        code_html = _hanging_indents(highlight(self.code, PythonLexer(), formatter), self.code, self.first_line)
        caption = (
            '<div style="font-family: sans-serif; font-size: 0.8em; color: #444; background: #eef1f4;'
            " border: 1px solid #e1e4e8; border-bottom: none; border-radius: 4px 4px 0 0;"
            ' padding: 0.25em 0.9em;">'
            f'<code style="background: none; color: #0b3d91;">{html.escape(self.name)}</code>'
            f" &nbsp;·&nbsp; {html.escape(self.path)}, lines {self.first_line}–{self.last_line}</div>"
        )
        return f'<div style="margin: 0.4em 0;">{caption}{code_html}</div>'

    def _repr_markdown_(self) -> str:
        return f"*{self.caption}*\n\n```python\n{self.code}\n```\n"

    def __repr__(self) -> str:
        return f"# {self.caption}\n{self.code}"

    def __str__(self) -> str:
        return self.code


def show_source(
    obj: object,
    *,
    start: str | None = None,
    end: str | None = None,
    linenos: bool = False,
) -> Source:
    """Show the source of a function, class, method or module of ``lib`` (or anything else).

    Chapters call this instead of re-typing code, so the book always shows the code that runs::

        show_source(MultiHeadAttention)           # the whole class
        show_source(MultiHeadAttention.forward)   # one method
        show_source(scaled_dot_product_attention, start="scores =", end="return")

    ``start``/``end`` (optional) cut out an excerpt: from the first line that contains ``start``
    through the first line after it that contains ``end``. Docstrings are kept: they carry the
    equations. ``linenos=True`` numbers the lines as in the file.

    Returns a :class:`Source`, which Jupyter, Colab and the Jupyter Book site render as
    highlighted HTML (with inline styles) and plain front ends as text.
    """
    target = obj.fget if isinstance(obj, property) else obj
    target = inspect.unwrap(target) if callable(target) else target
    try:
        lines, first_line = inspect.getsourcelines(target)
        file = inspect.getsourcefile(target)
    except (TypeError, OSError) as error:
        raise TypeError(
            f"obj={obj!r} has no Python source to show; expected a function, class, method or "
            f"module defined in a .py file ({error})"
        ) from None
    first_line = max(first_line, 1)  # a module's source starts at line 0 in inspect
    begin, stop = 0, len(lines)
    if start is not None:
        begin = _find_line(lines, start, 0, "start")
    if end is not None:
        stop = _find_line(lines, end, begin, "end") + 1
    excerpt = lines[begin:stop]

    return Source(
        code=textwrap.dedent("".join(_without_pragmas(excerpt))).rstrip("\n"),
        name=_qualified_name(target),
        path=_display_path(file),
        first_line=first_line + begin,
        last_line=first_line + stop - 1,
        linenos=linenos,
    )


def _hanging_indents(code_html: str, code: str, first_line: int) -> str:
    """Let long lines wrap inside the column instead of scrolling sideways, each continuation indented
    4 characters past its line's own indentation (so the code's structure still shows).

    Pygments wraps line ``n`` in ``<span id="L-n">``; each becomes a block whose first line starts at the
    margin (its own leading spaces indent it) and whose continuation lines hang at indent + 4.
    """
    code_html = code_html.replace("\n</span>", "</span>")  # each line is a block: no newline inside
    for n, line in enumerate(code.split("\n"), start=first_line):
        hang = len(line) - len(line.lstrip(" ")) + 4
        style = f"display: block; padding-left: {hang}ch; text-indent: -{hang}ch"
        code_html = code_html.replace(f'<span id="L-{n}">', f'<span style="{style}">', 1)
    return code_html


# Comments addressed to tools, not to readers: the formatter's, the linter's, the type checker's.
_PRAGMA = re.compile(r"\s*#\s*(fmt: skip|noqa\b[^#]*|type: ignore\S*)\s*$")


def _without_pragmas(lines: list[str]) -> list[str]:
    """The lines without a trailing tool pragma (``# fmt: skip``, ``# noqa: E731``, ``# type: ignore[...]``)."""
    return [_PRAGMA.sub("", line.rstrip("\n")) + "\n" if _PRAGMA.search(line) else line for line in lines]


def _find_line(lines: list[str], text: str, begin: int, argument: str) -> int:
    for i in range(begin, len(lines)):
        if text in lines[i]:
            return i
    raise ValueError(f"{argument}={text!r} does not occur in the source (from line {begin + 1} of the object)")


def _qualified_name(obj: object) -> str:
    if inspect.ismodule(obj):
        return obj.__name__
    module = getattr(obj, "__module__", None)
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", repr(obj))
    return f"{module}.{name}" if module else name


def _display_path(file: str | None) -> str:
    if file is None:
        return "<unknown file>"
    path = Path(file).resolve()
    try:
        return path.relative_to(_ROOT).as_posix()
    except ValueError:
        return path.name
