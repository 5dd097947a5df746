"""One markdown cell, converted: the prose between directives (its roles and links rewritten), and each
directive block: an admonition as a blockquote with its heading, an exercise as a blockquote headed
"Exercise 4.2 · Title", a solution as ``<details>`` (or the gate of a solution's code cells)."""

from __future__ import annotations

from dataclasses import dataclass

from markdown_it.token import Token

from tools.myst.book import Book, Context
from tools.myst.parsing import ADMONITIONS, MystError, _directive_parts, _reject_unsupported
from tools.myst.roles import _inline_edits


@dataclass(frozen=True)
class Part:
    """A top-level piece of a converted cell: prose ("text"), or one exercise-directive block."""

    kind: str  # "text" | "exercise" | "solution" | "solution-start" | "solution-end"
    markdown: str
    label: str | None = None  # the exercise's label (for the solution kinds: the exercise solved)


def convert(markdown: str, *, context: Context) -> list[Part]:
    """One markdown cell as a list of parts: prose between directives, and each exercise-directive block.

    Every part's markdown is already plain Jupyter markdown; solutions are kept (as ``<details>``)
    whatever the edition: `to_jupyter` drops them from the student edition.
    """
    where = context.where or context.docname
    md = context.book.md
    tokens = md.parse(markdown)
    _reject_unsupported(tokens, md, where)
    lines = markdown.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    edits = _inline_edits(markdown, tokens, starts, context, where)
    parts: list[Part] = []
    text_from = 0  # first line of the current stretch of prose

    def flush(until: int) -> None:
        a, b = starts[text_from], min(starts[until], len(markdown) + 1)
        chunk = _apply(markdown, edits, a, b).strip("\n")
        if chunk.strip():
            parts.append(Part("text", chunk))

    for token in tokens:
        if token.level != 0 or token.map is None:
            continue
        first, last = token.map
        if token.type in ("fence", "colon_fence") and token.info.startswith("{"):
            flush(first)
            parts.append(_directive_part(token, context, where))
            text_from = last
        elif token.type == "colon_fence":
            raise MystError(where, f"a colon fence ':::{token.info}' without a directive name")
        elif token.type in ("myst_line_comment", "myst_block_break", "myst_target"):
            replacement = f'<a id="{token.content}"></a>' if token.type == "myst_target" else ""
            edits.append((starts[first], starts[last] - 1, replacement))
    flush(len(lines))
    return _merge_text(parts)


def to_jupyter(markdown: str, *, context: Context) -> str:
    """One markdown cell in plain Jupyter markdown (the student edition leaves out the solutions)."""
    return join(convert(markdown, context=context), context.edition)


def join(parts: list[Part], edition: str = "reader") -> str:
    """The parts of a cell as one markdown text; the student edition keeps only prose and exercises."""
    keep = [p for p in parts if edition == "reader" or p.kind in ("text", "exercise")]
    return "\n\n".join(p.markdown for p in keep if p.markdown)


@dataclass(frozen=True)
class Directive:
    """A top-level directive block of a cell, parsed as myst-parser parses it."""

    name: str
    argument: str
    options: dict
    body: str


def directives(markdown: str, *, book: Book, where: str = "") -> list[Directive]:
    """The top-level directive blocks of a MyST text (``{exercise}``, ``{solution}``, ...), in order."""
    return [
        Directive(*_directive_parts(token, where))
        for token in book.md.parse(markdown)
        if token.level == 0 and token.type in ("fence", "colon_fence") and token.info.startswith("{")
    ]


def _apply(source: str, edits: list[tuple[int, int, str]], a: int, b: int) -> str:
    chunk = source[a:b]
    for start, end, replacement in sorted((e for e in edits if a <= e[0] < b), reverse=True):
        chunk = chunk[: start - a] + replacement + chunk[end - a :]
    return chunk


def _merge_text(parts: list[Part]) -> list[Part]:
    merged: list[Part] = []
    for part in parts:
        if part.kind == "text" and merged and merged[-1].kind == "text":
            merged[-1] = Part("text", merged[-1].markdown + "\n\n" + part.markdown)
        else:
            merged.append(part)
    return merged


def _blockquote(heading: str, body: str) -> str:
    lines = [f"> {heading}"]
    if body.strip():
        lines.append(">")
        lines += [f"> {line}" if line else ">" for line in body.split("\n")]
    return "\n".join(lines)


def _directive_part(token: Token, context: Context, where: str) -> Part:
    name, argument, options, body = _directive_parts(token, where)
    inner = Context(context.book, context.docname, context.edition, where)
    converted = to_jupyter(body, context=inner) if body.strip() else ""
    if name in ADMONITIONS:
        heading = argument if name == "admonition" else context.book.words["admonitions"][name]
        if name != "admonition" and argument:  # e.g. ```{note} The first line is body text
            converted = to_jupyter(argument, context=inner) + ("\n\n" + converted if converted else "")
        heading = _inline(heading, inner) if heading else ""
        return Part("text", _blockquote(f"**{heading}**" if heading else "", converted))
    if name == "exercise":
        label = options.get("label")
        ex = context.book.exercises.get(label) if label else None
        if ex is None:
            raise MystError(where, f"the exercise {argument!r}", "has no :label: (every exercise needs one)")
        heading = f'<a id="{label}"></a>**{_inline(ex.heading, inner)}**'
        return Part("exercise", _blockquote(heading, converted), label)
    label = argument
    if name == "solution-end":
        return Part("solution-end", "", None)
    ex = context.book.exercises.get(label)
    if ex is None:
        raise MystError(where, f"the directive {{{name}}} {label}", "names no exercise of the book")
    summary = context.book.words["solution"].format(number=ex.number)
    if name == "solution-start":
        text = f"**{summary}{context.book.words['stop']}** {context.book.words['solution_code']}"
        return Part("solution-start", text, label)
    return Part("solution", f"<details>\n<summary>{summary}</summary>\n\n{converted}\n\n</details>", label)


def _inline(text: str, context: Context) -> str:
    """Inline markdown (a title) with its roles converted."""
    return to_jupyter(text, context=context).strip()
