"""What a cell may refer to: every page of the toc with its title, its exercises (numbered as the site
numbers them), its ``(label)=`` targets and figures, and the bibliography labelled as the References
page labels it (:class:`Book`); where a cell is and which edition is written (:class:`Context`); and the
words the converter writes itself, in each language (:data:`WORDS`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path, PurePosixPath

import nbformat
from markdown_it import MarkdownIt

from tools.common import REPO, site_url, toc_docnames
from tools.myst.parsing import ADMONITIONS, _chapter, _directive, _directive_parts, _plain, _walk, parser

EDITIONS = ("reader", "student")

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
