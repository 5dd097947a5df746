"""The roles (``{doc}``, ``{ref}``, ``{numref}``, ``{cite:p}``, ``{cite:t}``, ``{math}``) and the relative
links of a cell, rewritten as Jupyter markdown where the parser found them (never where a search of
the raw text would: a role quoted in a code span is code): links to the published site, or to an
anchor of the notebook itself."""

from __future__ import annotations

from pathlib import PurePosixPath

from markdown_it.token import Token

from tools.myst.book import Book, Context
from tools.myst.parsing import _SPAN, MystError


def _inline_edits(
    source: str, tokens: list[Token], starts: list[int], context: Context, where: str
) -> list[tuple[int, int, str]]:
    """(start, end, replacement) for every role and relative link of `source`'s blocks (directive
    bodies are converted on their own). Where each is comes from the parser: its span in the inline
    text of its block (`_SPAN`), mapped back onto the source lines by `_line_offsets`; so a role's
    text quoted in a code span, math or a code block is never touched."""
    lines = source.split("\n")
    columns: dict[int, int] = {}  # line -> where the next inline text on it may start (a table row's cells)
    edits = []
    for token in tokens:
        if token.type != "inline":
            continue
        offsets = _line_offsets(token, lines, starts, columns)
        for child in token.children or []:
            relative_link = child.type in ("link_open", "image") and _is_relative(_href(child))
            if child.type != "myst_role" and not relative_link:
                continue
            if offsets is None or _SPAN not in child.meta:
                what = f"the role {{{child.meta.get('name')}}}`{child.content}`" if not relative_link else _href(child)
                raise MystError(where, what, "could not be located in the cell's source")
            start, end = (_source_offset(token.content, offsets, i) for i in child.meta[_SPAN])
            if child.type == "myst_role":
                edits.append((start, end, _role(child.meta["name"], child.content, context, where)))
                continue
            # A link to another page of the book ([the references](references.md)): to the site.
            href = _href(child)
            at = source.rfind(f"]({href}", start, end)
            if at < 0:
                raise MystError(where, f"the link target {href!r}", "could not be located (a reference-style link?)")
            edits.append((at + 2, at + 2 + len(href), _page_link(href, child.type, context, where)))
    return edits


def _line_offsets(token: Token, lines: list[str], starts: list[int], columns: dict[int, int]) -> list[int] | None:
    """Where each line of an inline token's text starts in the source (None: not found).

    A block's inline text is its source lines less their markers (``> ``, a list item's indent,
    ``## ``, a table's pipes) and the outer white space: each line is found in its source line,
    as the line's end (a paragraph) or else at or after the column of the previous cell."""
    if token.map is None:
        return None
    offsets = []
    for i, text in enumerate(token.content.split("\n")):
        n = token.map[0] + i
        if n >= len(lines):
            return None
        line, after = lines[n], columns.get(n, 0)
        col = len(line.rstrip()) - len(text.rstrip())
        if col < after or line[col:].rstrip() != text.rstrip():
            col = line.find(text, after)
        if col < 0:
            return None
        columns[n] = col + len(text)
        offsets.append(starts[n] + col)
    return offsets


def _source_offset(content: str, offsets: list[int], i: int) -> int:
    """The source offset of character `i` of an inline text whose lines start at `offsets`."""
    line_start = content.rfind("\n", 0, i) + 1
    return offsets[content.count("\n", 0, i)] + i - line_start


def _href(token: Token) -> str:
    return str(token.attrGet("href") or token.attrGet("src") or "")


def _is_relative(href: str) -> bool:
    return bool(href) and not href.startswith(("#", "/", "mailto:")) and "://" not in href


def _page_link(href: str, kind: str, context: Context, where: str) -> str:
    """A relative link to a page of the book (`references.md#x`), as the page's address on the site."""
    path, _, anchor = href.partition("#")
    docname = _resolve_doc(path, context)
    if kind == "image" or not path.endswith((".md", ".ipynb")) or docname not in context.book.titles:
        what = "image" if kind == "image" else "link"
        raise MystError(where, f"the relative {what} {href!r}", "points at no page of the book (Colab cannot open it)")
    return context.book.page_url(docname, anchor)


def _title_and_target(content: str) -> tuple[str | None, str]:
    """`title <target>` -> (title, target); `target` -> (None, target): roles' explicit titles."""
    content = content.strip()
    if content.endswith(">") and " <" in content:
        title, _, target = content[:-1].rpartition(" <")
        return title.strip(), target.strip()
    return None, content


def _resolve_doc(target: str, context: Context) -> str:
    target = target.removesuffix(".md").removesuffix(".ipynb")
    if target.startswith("/"):
        return target.lstrip("/")
    return str(PurePosixPath(context.docname).parent / target)


def _role(name: str, content: str, context: Context, where: str) -> str:
    book = context.book
    if name == "math":
        return f"${content}$"
    if name == "doc":
        title, target = _title_and_target(content)
        docname = _resolve_doc(target, context)
        if docname not in book.titles:
            raise MystError(where, f"the role {{doc}}`{content}`", f"names {docname!r}, which is not a page of the toc")
        return f"[{title or book.titles[docname]}]({book.page_url(docname)})"
    if name in ("ref", "numref"):
        title, label = _title_and_target(content)
        if label in book.exercises:
            ex = book.exercises[label]
            text = title or ex.name
            if name == "numref" and title:
                text = title.replace("%s", ex.number).replace("{number}", ex.number)
            return f"[{text}]({_anchor_url(book, context, ex.docname, label)})"
        if label in book.targets and name == "ref":
            docname, heading = book.targets[label]
            return f"[{title or heading}]({_anchor_url(book, context, docname, label)})"
        if label in book.figures:  # a figure: "Figure 4.2" (the caption cell below it carries the anchor)
            docname, number = book.figures[label]
            text = title.replace("%s", number) if title else book.words["figure"].format(number=number)
            return f"[{text}]({_anchor_url(book, context, docname, label)})"
        raise MystError(where, f"the role {{{name}}}`{content}`", "names a label that no page defines")
    if name in ("cite:p", "cite:t"):
        keys = [k.strip() for k in content.split(",") if k.strip()]
        unknown = [k for k in keys if k not in book.citations]
        if unknown:
            raise MystError(where, f"the role {{{name}}}`{content}`", f"cites {unknown}, not in references.bib")
        links = []
        for key in keys:
            c = book.citations[key]
            text = f"{c.authors}, {c.year}" if name == "cite:p" else f"{c.authors} ({c.year})"
            links.append(f"[{text}]({book.page_url(book.references_doc, f'cite-{key}')})")
        return f"({'; '.join(links)})" if name == "cite:p" else ", ".join(links)
    raise MystError(where, f"the role {{{name}}}`{content}`")


def _anchor_url(book: Book, context: Context, docname: str, label: str) -> str:
    """``#label`` within the notebook itself (its editions carry the anchor), else the page on the site."""
    return f"#{label}" if docname == context.docname else book.page_url(docname, label)
