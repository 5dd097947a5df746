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
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

import nbformat
from markdown_it import MarkdownIt
from markdown_it.renderer import RendererHTML
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token
from myst_parser.config.main import MdParserConfig
from myst_parser.parsers.mdit import create_md_parser

from tools.common import REPO, chapter_number, load_config, site_url, toc_docnames

EDITIONS = ("reader", "student")

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
# The words the converter writes itself, per language (the Chinese edition: tools/i18n.py translates
# the prose; these are what the site's themes and sphinx-exercise write in each language).
WORDS = {
    "en": {
        "exercise": "Exercise {number}",
        "figure": "Figure {number}",
        "caption": "**Figure {number}.** ",
        "solution": "Solution to Exercise {number}",
        "solution_code": "The code cell below is one solution (collapsed): try the exercise before you open it.",
        "stop": ".",
        "admonitions": ADMONITIONS,
    },
    "zh_CN": {
        "exercise": "练习 {number}",
        "figure": "图 {number}",
        "caption": "**图 {number}**　",
        "solution": "练习 {number} 的解答",
        "solution_code": "下面的代码单元是一种解答（已折叠）：先自己做，再打开它。",
        "stop": "。",
        "admonitions": {
            "note": "注意", "tip": "提示", "hint": "提示", "important": "重要", "warning": "警告",
            "caution": "小心", "attention": "注意", "danger": "危险", "error": "错误", "seealso": "另请参阅",
            "admonition": "",
        },
    },
}  # fmt: skip
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

    def __init__(self, where: str, construct: str, problem: str = "is not supported by tools/myst.py"):
        self.where, self.construct = where, construct
        super().__init__(f"{where}: {construct} {problem}")


@dataclass(frozen=True)
class Exercise:
    """An exercise as the site shows it: ``number`` is "4.2" (chapter 4's second), ``title`` markdown."""

    label: str
    docname: str
    number: str
    title: str
    language: str = "en"

    @property
    def name(self) -> str:
        """ "Exercise 4.2" ("练习 4.2" in Chinese)."""
        return WORDS[self.language]["exercise"].format(number=self.number)

    @property
    def heading(self) -> str:
        return self.name + (f" · {self.title}" if self.title else "")


@dataclass(frozen=True)
class Citation:
    key: str
    authors: str  # "Vaswani et al."
    year: str  # "2017", or "2020a" where two entries share author and year, as on the References page


@dataclass(frozen=True)
class Part:
    """A top-level piece of a converted cell: prose ("text"), or one exercise-directive block."""

    kind: str  # "text" | "exercise" | "solution" | "solution-start" | "solution-end"
    markdown: str
    label: str | None = None  # the exercise's label (for the solution kinds: the exercise solved)


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


@dataclass
class Book:
    """What a cell may refer to: every page of the toc, its title, its exercises, the bibliography."""

    repo: Path
    site: str  # the published site, with a trailing slash
    md: MarkdownIt
    titles: dict[str, str]  # docname -> page title ("2. Self-attention")
    exercises: dict[str, Exercise]  # label -> exercise
    targets: dict[str, tuple[str, str]]  # (label)= targets: label -> (docname, text of the heading after it)
    figures: dict[str, tuple[str, str]] = field(default_factory=dict)  # figure name -> (docname, "4.2")
    citations: dict[str, Citation] = field(default_factory=dict)
    references_doc: str = "book/references"
    language: str = "en"  # "zh_CN": the Chinese edition (prose from locale/zh_CN, links to the Chinese site)

    @classmethod
    def load(cls, repo: Path = REPO, language: str = "en") -> Book:
        if language not in WORDS:
            raise ValueError(f"language must be one of {sorted(WORDS)}, got {language!r}")
        site = site_url(repo) + ("" if language == "en" else "zh/")
        book = cls(repo, site, parser(repo), {}, {}, {}, language=language)
        for docname in toc_docnames(repo):
            book._read_page(docname)
        book.citations = _citations(repo)
        return book

    @property
    def words(self) -> dict:
        return WORDS[self.language]

    def translate(self, markdown: str, docname: str) -> str:
        """A markdown cell of page `docname` in the book's language (tools/i18n_catalogs.py)."""
        if self.language == "en":
            return markdown
        from tools.i18n_catalogs import translate_markdown, translations

        return translate_markdown(markdown, translations(docname, self.language, self.repo))

    def _read_page(self, docname: str) -> None:
        path = self.repo / f"{docname}.ipynb"
        if path.exists():
            nb = nbformat.read(path, as_version=4)
            sources = [c.source for c in nb.cells if c.cell_type == "markdown"]
            self._read_figures(nb, docname)
        else:
            sources = [(self.repo / f"{docname}.md").read_text(encoding="utf-8")]
        sources = [self.translate(source, docname) for source in sources]
        chapter = _chapter(docname)
        k = 0
        pending: str | None = None
        for source in sources:
            for token in _walk(self.md.parse(source), self.md):
                if token.type == "heading_open" and docname not in self.titles:
                    pending = "title"
                elif token.type == "myst_target":
                    pending = token.content
                elif token.type == "inline" and pending is not None:
                    text = _plain(token)
                    if pending == "title":
                        self.titles[docname] = text
                    else:
                        self.targets[pending] = (docname, text)
                    pending = None
                elif token.type in ("fence", "colon_fence") and _directive(token)[0] == "exercise":
                    k += 1
                    _, title, options, _ = _directive_parts(token)
                    label = options.get("label")
                    number = f"{chapter}.{k}" if chapter is not None else str(k)
                    if label:
                        self.exercises[label] = Exercise(label, docname, number, title, self.language)
        self.titles.setdefault(docname, PurePosixPath(docname).name)

    def _read_figures(self, nb: nbformat.NotebookNode, docname: str) -> None:
        """The names of the page's figures (their cells' ``mystnb.figure.name``), numbered as the site
        numbers them: the k-th captioned figure of chapter N is N.k."""
        chapter, k = _chapter(docname), 0
        for cell in nb.cells:
            figure = (cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}
            if cell.cell_type == "code" and figure.get("caption"):
                k += 1
                if figure.get("name"):
                    self.figures[figure["name"]] = (docname, f"{chapter}.{k}" if chapter is not None else str(k))

    def page_url(self, docname: str, anchor: str = "") -> str:
        return f"{self.site}{docname}.html" + (f"#{anchor}" if anchor else "")

    @cached_property
    def anchors(self) -> dict[str, set[str]]:
        """Every page of the site and the anchors this module links to on it (for the tests)."""
        found: dict[str, set[str]] = {doc: set() for doc in self.titles}
        for ex in self.exercises.values():
            found[ex.docname].add(ex.label)
        for label, (doc, _) in self.targets.items():
            found[doc].add(label)
        found.setdefault(self.references_doc, set()).update(f"cite-{key}" for key in self.citations)
        return found


@dataclass(frozen=True)
class Context:
    """Where a cell is (its page, and a name for error messages) and which edition is written."""

    book: Book
    docname: str
    edition: str = "reader"
    where: str = ""  # e.g. "book/04_multi_head.ipynb, cell 12"

    def __post_init__(self) -> None:
        if self.edition not in EDITIONS:
            raise ValueError(f"edition must be one of {EDITIONS}, got {self.edition!r}")


# --------------------------------------------------------------------------------------- converting


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


# the same lines that the site hides (tools/book_ext/page_content.py, hide_solution_markers)
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def without_solution_markers(source: str) -> str:
    """A code cell's source without nbgrader's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines."""
    code = SOLUTION_MARKER.sub("", source)
    return code if source.endswith("\n") else code.rstrip("\n")


def caption_cell(figure: nbformat.NotebookNode, caption: str) -> nbformat.NotebookNode:
    """The markdown cell that shows ``caption`` below the code cell ``figure``, with an id derived from
    the figure cell's (the same on every run: an edition written twice is the same file)."""
    cell = nbformat.v4.new_markdown_cell(caption)
    if "id" in figure:
        cell["id"] = f"{figure['id'][:56]}-caption"
    else:
        cell.pop("id", None)
    return cell


def figure_captions(nb: nbformat.NotebookNode, *, book: Book, docname: str, edition: str) -> dict[int, str]:
    """The caption of every figure the notebook's code cells draw (their ``mystnb.figure.caption``), as
    plain Jupyter markdown by the cell's index: ``**Figure 4.2.** caption`` (the site's number; 图 4.2 in
    Chinese), to show below the cell, where the site shows it."""
    chapter = _chapter(docname)
    found, k = {}, 0
    for i, cell in enumerate(nb.cells):
        caption = ((cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}).get("caption")
        if cell.cell_type != "code" or not caption:
            continue
        k += 1
        number = f"{chapter}.{k}" if chapter is not None else str(k)
        context = Context(book, docname, edition, f"{docname}.ipynb, cell {i} (caption)")
        text = join(convert(book.translate(caption, docname), context=context), edition).strip()
        name = ((cell.metadata.get("mystnb") or {}).get("figure") or {}).get("name")
        anchor = f'<a id="{name}"></a>' if name else ""  # where {numref} links to, in the notebook itself
        found[i] = f"{anchor}{book.words['caption'].format(number=number)}{text}"
    return found


def notebook_to_jupyter(
    nb: nbformat.NotebookNode, *, book: Book, docname: str, edition: str = "reader", where: str | None = None
) -> nbformat.NotebookNode:
    """A copy of `nb` with every markdown cell converted (into `book`'s language); code cells keep their sources.

    A markdown cell that converts to nothing (a ``solution-end`` gate, a comment) is dropped. In the
    reader edition, the code cells of a gated solution (between ``solution-start`` and
    ``solution-end``) are collapsed, for JupyterLab (``metadata.jupyter.source_hidden``) and for Colab
    (``metadata.cellView = "form"``: Colab ignores the former), and lose nbgrader's
    ``### BEGIN/END SOLUTION`` marker lines, which only the student versions need.
    """
    out = copy.deepcopy(nb)
    where = where or f"{docname}.ipynb"
    captions = figure_captions(out, book=book, docname=docname, edition=edition)
    cells = []
    in_solution = False
    for i, cell in enumerate(out.cells):
        if cell.cell_type != "markdown":
            if cell.cell_type == "code" and in_solution and edition == "reader":
                cell.metadata.setdefault("jupyter", {})["source_hidden"] = True
                cell.metadata["cellView"] = "form"
                cell.source = without_solution_markers(cell.source)
            cells.append(cell)
            if i in captions:
                cells.append(caption_cell(cell, captions[i]))
            continue
        context = Context(book, docname, edition, f"{where}, cell {i}")
        parts = convert(book.translate(cell.source, docname), context=context)
        for part in parts:
            if part.kind == "solution-start":
                in_solution = True
            elif part.kind == "solution-end":
                in_solution = False
        text = join(parts, edition)
        if not text.strip():
            continue
        cell.source = text
        cells.append(cell)
    out.cells = cells
    return out


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


# --------------------------------------------------------------------------------------- internals


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


def _citations(repo: Path) -> dict[str, Citation]:
    """Every entry of the bibliography, labelled as the site's References page labels it."""
    from pybtex.database import parse_file

    from tools.book_ext.bibliography import author_year_labels, sort_entries

    bib = parse_file(str(repo / "book" / "references.bib"), bib_format="bibtex")
    entries = sort_entries(list(bib.entries.values()))
    found = {}
    for entry, label in zip(entries, author_year_labels(entries)):
        authors, _, year = label.rpartition(", ")
        found[entry.key] = Citation(entry.key, authors, year)
    return found
