"""MyST as the book's parser reads it: markdown-it configured by myst-parser from `_config.yml` (its
inline rules noting where each token came from), what a cell's tokens are (directives parsed as
myst-parser parses them, the plain text of a heading) and what the converter refuses
(:class:`MystError`: anything Jupyter would show raw), and the inverse check, :func:`raw_myst`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from tools.common import REPO, chapter_number, load_config

# The admonitions of docutils/Sphinx, with the heading each gets.
ADMONITIONS = {
    "note": "Note",
    "tip": "Tip",
    "hint": "Hint",
    "important": "Important",
    "warning": "Warning",
    "caution": "Caution",
    "attention": "Attention",
    "danger": "Danger",
    "error": "Error",
    "seealso": "See also",
    "admonition": "",  # the title is the argument
}
EXERCISE_DIRECTIVES = ("exercise", "solution", "solution-start", "solution-end")
ROLES = ("doc", "ref", "numref", "cite:p", "cite:t", "math")
_SPAN = "tools.myst.span"  # token.meta key: (start, end) of the token in its block's inline text

# Block tokens Jupyter renders like the site (or that this module rewrites itself).
_PLAIN_BLOCKS = {
    "paragraph_open", "paragraph_close", "heading_open", "heading_close", "inline", "hr", "html_block",
    "bullet_list_open", "bullet_list_close", "ordered_list_open", "ordered_list_close", "list_item_open",
    "list_item_close", "blockquote_open", "blockquote_close", "code_block", "fence", "colon_fence",
    "table_open", "table_close", "thead_open", "thead_close", "tbody_open", "tbody_close", "tr_open",
    "tr_close", "th_open", "th_close", "td_open", "td_close", "math_block", "amsmath",
    "myst_target", "myst_line_comment", "myst_block_break",
}  # fmt: skip
_PLAIN_INLINE = {
    "text", "softbreak", "hardbreak", "code_inline", "em_open", "em_close", "strong_open", "strong_close",
    "link_open", "link_close", "image", "html_inline", "math_inline", "math_inline_double", "s_open", "s_close",
    "myst_role",
}  # fmt: skip
# What Jupyter would show raw, by token type, in words for the error message.
_UNSUPPORTED = {
    "front_matter": "front matter (a YAML block at the top of a cell)",
    "footnote_ref": "a footnote reference [^...]",
    "footnote_reference_open": "a footnote definition [^...]:",
    "footnote_block_open": "a footnote definition [^...]:",
    "dl_open": "a definition list (deflist)",
    "substitution_block": "a substitution {{ ... }}",
    "substitution_inline": "a substitution {{ ... }}",
    "math_block_label": "a labelled equation $$...$$ (label)",
    "math_block_eqno": "a labelled equation $$...$$ (label)",
}


class MystError(ValueError):
    """MyST that the converter does not know: never passed through to Jupyter as raw text."""

    def __init__(self, where: str, construct: str, problem: str = "is not supported by tools/myst/"):
        self.where, self.construct = where, construct
        super().__init__(f"{where}: {construct} {problem}")


def parser(repo: Path = REPO) -> MarkdownIt:
    """markdown-it as myst-parser configures it for this book (`_config.yml`'s MyST extensions).

    Its inline rules also note, on every token they make, where it came from (`_SPAN`): the
    converter rewrites roles and links where the parser found them, never where a search of the
    raw text would (a role quoted in a code span is code)."""
    extensions = set((load_config(repo).get("parse") or {}).get("myst_enable_extensions") or [])
    md = create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)
    ruler = md.inline.ruler
    for name, rule in zip(ruler.get_active_rules(), ruler.getRules(""), strict=True):
        ruler.at(name, _noting_spans(rule))
    return md


def _noting_spans(rule):
    """An inline rule that also notes, on each token it makes, the span of the inline text it read."""

    def rule_noting_spans(state: StateInline, silent: bool) -> bool:
        start, before, pending = state.pos, len(state.tokens), bool(state.pending)
        ok = rule(state, silent)
        if ok and not silent:
            made = state.tokens[before:]
            if pending and made and made[0].type == "text":
                made = made[1:]  # the text read before this rule, flushed by its first push
            for token in made:
                token.meta.setdefault(_SPAN, (start, state.pos))  # tokens of a link's text keep their own
        return ok

    return rule_noting_spans


def raw_myst(markdown: str) -> list[str]:
    """Raw MyST left in a (converted) markdown text: roles, directive fences, option lines.

    The tests run it on what nbconvert rendered too; it is the converter's inverse check, so it
    looks at the text as a reader sees it, not at a parse.
    """
    found = []
    for name in (*ROLES, "cite", "eq", "term", "glue", "glue:text", "download", "numref"):
        if f"{{{name}}}`" in markdown:
            found.append(f"the role {{{name}}}`...`")
    for fence in ("```{", ":::{", "````{"):
        if fence in markdown:
            found.append(f"a directive fence {fence}...}}")
    for line in markdown.splitlines():
        if line.strip().startswith((":label:", ":class:")):
            found.append(f"an option line {line.strip()!r}")
    return found


def _chapter(docname: str) -> int | None:
    name = PurePosixPath(docname).name
    return chapter_number(name) if name[:2].isdigit() and name[2:3] == "_" else None


def _walk(tokens: list[Token], md: MarkdownIt) -> Iterator[Token]:
    """Every token, exercise bodies included (they are MyST too), in reading order."""
    for token in tokens:
        yield token
        if token.type in ("fence", "colon_fence") and _directive_class(_directive(token)[0]) is not None:
            yield from _walk(md.parse(_directive_parts(token)[3]), md)


def _plain(inline: Token) -> str:
    """The text of an inline token as markdown-ish plain text (math kept as $...$)."""
    out = []
    for child in inline.children or []:
        if child.type == "math_inline":
            out.append(f"${child.content}$")
        elif child.type == "code_inline":
            out.append(f"`{child.content}`")
        elif child.type in ("text", "myst_role"):
            out.append(child.content)
        elif child.type == "softbreak":
            out.append(" ")
    return "".join(out).strip()


def _directive(token: Token) -> tuple[str, str]:
    """(name, argument) of a directive fence: ```{name} argument."""
    info = token.info.strip()
    if not info.startswith("{") or "}" not in info:
        return "", info
    name, _, argument = info[1:].partition("}")
    return name.strip(), argument.strip()


def _directive_class(name: str):
    import sphinx_exercise.directive as sx
    from docutils.parsers.rst.directives import admonitions

    classes = {
        "exercise": sx.ExerciseDirective,
        "solution": sx.SolutionDirective,
        "solution-start": sx.SolutionStartDirective,
        "solution-end": sx.SolutionEndDirective,
        "admonition": admonitions.Admonition,
    }
    if name in classes:
        return classes[name]
    if name in ADMONITIONS:
        return getattr(admonitions, "SeeAlso" if name == "seealso" else name.capitalize(), admonitions.Note)
    return None


def _directive_parts(token: Token, where: str = "") -> tuple[str, str, dict, str]:
    """(name, argument, options, body) of a directive fence, parsed as myst-parser parses it."""
    from myst_parser.parsers.directives import parse_directive_text

    name, argument = _directive(token)
    cls = _directive_class(name)
    if cls is None:
        raise MystError(where, f"the directive {{{name}}}")
    if name == "seealso":  # Sphinx's seealso takes its body from the argument too; docutils' class does not
        from docutils.parsers.rst.directives.admonitions import Note as cls  # noqa: N813
    try:
        result = parse_directive_text(cls, argument, token.content)
    except Exception as error:  # noqa: BLE001 - MarkupError and option errors alike
        raise MystError(where, f"the directive {{{name}}}", f"cannot be parsed: {error}") from error
    if result.warnings:
        raise MystError(where, f"the directive {{{name}}}", f"has problems: {[w.msg for w in result.warnings]}")
    arg = " ".join(result.arguments)
    return name, arg, dict(result.options), "\n".join(result.body)


def _reject_unsupported(tokens: list[Token], md: MarkdownIt, where: str) -> None:
    for token in tokens:
        if token.type in _UNSUPPORTED:
            raise MystError(where, _UNSUPPORTED[token.type])
        if token.type not in _PLAIN_BLOCKS:
            raise MystError(where, f"the markdown construct {token.type!r}")
        if token.type in ("fence", "colon_fence") and token.info.startswith("{") and token.level != 0:
            raise MystError(where, f"the directive {token.info.split()[0]} inside a list or blockquote")
        if token.type in ("myst_target", "myst_line_comment", "myst_block_break") and token.level != 0:
            raise MystError(where, f"the MyST block {token.type!r} inside a list or blockquote")
        for child in token.children or []:
            if child.type in _UNSUPPORTED:
                raise MystError(where, _UNSUPPORTED[child.type])
            if child.type not in _PLAIN_INLINE:
                raise MystError(where, f"the inline markdown construct {child.type!r}")
            if child.type == "myst_role" and child.meta.get("name") not in ROLES:
                raise MystError(where, f"the role {{{child.meta.get('name')}}}`{child.content}`")
