"""Showing `lib`'s own source in a notebook: `show_source`, with optional elisions."""

from __future__ import annotations

import ast
import html
import inspect
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import torch

from ..model.checks import check_int

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
    elided: int = 0  # how many lines of input checks were left out (``elide_checks=True``)

    # Inline styles only (pygments' ``noclasses=True``): no CSS file is needed anywhere, and the
    # page theme (light or dark) cannot recolour the code.
    _BACKGROUND = "#f8f8f8"

    @property
    def caption(self) -> str:
        return f"{self.name} — {self.path}, lines {self.first_line}–{self.last_line}{self._elision_note}"

    @property
    def _elision_note(self) -> str:
        if not self.elided:
            return ""
        return f" ({self.elided} line{'s' * (self.elided != 1)} of input checks elided)"

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
            prestyles=(
                f"background: {self._BACKGROUND}; color: #1f1f1f; margin: 0; padding: 0.6em 0.9em;"
                " border: 1px solid #e1e4e8; border-radius: 0 0 4px 4px; overflow-x: auto;"
                " font-size: 0.85em"  # pygments appends "; line-height: 125%;"
            ),
        )
        code_html = highlight(self.code, PythonLexer(), formatter)
        caption = (
            '<div style="font-family: sans-serif; font-size: 0.8em; color: #444; background: #eef1f4;'
            " border: 1px solid #e1e4e8; border-bottom: none; border-radius: 4px 4px 0 0;"
            ' padding: 0.25em 0.9em;">'
            f'<code style="background: none; color: #0b3d91;">{html.escape(self.name)}</code>'
            f" &nbsp;·&nbsp; {html.escape(self.path)}, lines {self.first_line}–{self.last_line}"
            f"{html.escape(self._elision_note)}</div>"
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
    elide_checks: bool = False,
) -> Source:
    """Show the source of a function, class, method or module of ``lib`` (or anything else).

    Chapters call this instead of re-typing code, so the book always shows the code that runs::

        show_source(MultiHeadAttention)           # the whole class
        show_source(MultiHeadAttention.forward)   # one method
        show_source(scaled_dot_product_attention, start="scores =", end="return")

    ``start``/``end`` (optional) cut out an excerpt: from the first line that contains ``start``
    through the first line after it that contains ``end``. Docstrings are kept: they carry the
    equations. ``linenos=True`` numbers the lines as in the file.

    ``elide_checks=True`` shows the core of the code without its input validation: inside every
    function, each statement that only checks its inputs (``if ...: raise ...``, an ``assert``, a
    call to a ``check_*``/``_check*`` helper, a ``try`` whose handlers only raise) is left out, and
    each run of them is replaced by one comment, ``# … input checks elided (see the source)``.
    The caption says how many lines were elided. It cannot be combined with ``linenos=True``
    (the numbers would skip).

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
    if not isinstance(elide_checks, bool):
        raise TypeError(f"elide_checks must be a bool, got {elide_checks!r}")
    if elide_checks and linenos:
        raise ValueError("linenos=True cannot be combined with elide_checks=True: the line numbers would skip")

    begin, stop = 0, len(lines)
    if start is not None:
        begin = _find_line(lines, start, 0, "start")
    if end is not None:
        stop = _find_line(lines, end, begin, "end") + 1
    excerpt = lines[begin:stop]
    elided = 0
    if elide_checks:
        excerpt, elided = _elide_checks(lines, begin, stop)

    return Source(
        code=textwrap.dedent("".join(_without_pragmas(excerpt))).rstrip("\n"),
        name=_qualified_name(target),
        path=_display_path(file),
        first_line=first_line + begin,
        last_line=first_line + stop - 1,
        linenos=linenos,
        elided=elided,
    )


ELISION = "# … input checks elided (see the source)"

# Comments addressed to tools, not to readers: the formatter's, the linter's, the type checker's.
_PRAGMA = re.compile(r"\s*#\s*(fmt: skip|noqa\b[^#]*|type: ignore\S*)\s*$")


def _without_pragmas(lines: list[str]) -> list[str]:
    """The lines without a trailing tool pragma (``# fmt: skip``, ``# noqa: E731``, ``# type: ignore[...]``)."""
    return [_PRAGMA.sub("", line.rstrip("\n")) + "\n" if _PRAGMA.search(line) else line for line in lines]


def _is_check(node: ast.stmt) -> bool:
    """Whether a statement only validates inputs: it raises on bad input and does nothing else."""
    if isinstance(node, (ast.Raise, ast.Assert)):
        return True
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name.lstrip("_").startswith("check")
    if isinstance(node, ast.If):
        return all(_is_check(n) for n in node.body) and all(_is_check(n) for n in node.orelse)
    if isinstance(node, ast.Try):
        return (
            all(isinstance(n, ast.Expr) for n in node.body)
            and bool(node.handlers)
            and all(h.body and isinstance(h.body[-1], ast.Raise) for h in node.handlers)
            and not node.orelse
            and not node.finalbody
        )
    return False


def _elide_checks(lines: list[str], begin: int, stop: int) -> tuple[list[str], int]:
    """``lines[begin:stop]`` with the input checks of every function replaced by one comment per run.

    Returns the new lines and how many source lines were left out.
    """
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
    except SyntaxError:  # pragma: no cover - inspect returned something that is not code
        return lines[begin:stop], 0
    runs: list[tuple[int, int]] = []  # [first, last] 0-based line indices of each run of checks
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for block in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                statements = getattr(block, field, None)
                if not isinstance(statements, list) or not statements or not isinstance(statements[0], ast.stmt):
                    continue
                for statement in statements:
                    if _is_check(statement) and not isinstance(statement, ast.Raise):
                        first = statement.lineno - 1
                        runs.append((first, statement.end_lineno - 1))
    if not runs:
        return lines[begin:stop], 0
    drop: dict[int, int] = {}  # line index -> index of the first line of its run
    for first, last in sorted(runs):
        for i in range(first, last + 1):
            drop.setdefault(i, first)
    out: list[str] = []
    elided = 0
    i = begin
    while i < stop:
        if i not in drop:
            out.append(lines[i])
            i += 1
            continue
        # one run: consecutive dropped lines, and the blank lines between them
        run_start = i
        while i < stop and (i in drop or (not lines[i].strip() and _next_code(lines, i, stop) in drop)):
            i += 1
        indent = lines[run_start][: len(lines[run_start]) - len(lines[run_start].lstrip())]
        out.append(f"{indent}{ELISION}\n")
        elided += i - run_start
    return out, elided


def _next_code(lines: list[str], i: int, stop: int) -> int:
    while i < stop and not lines[i].strip():
        i += 1
    return i


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
