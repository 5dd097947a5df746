"""The Chinese build's speed: pages pickled without the whole environment, and a search index whose
Latin terms are a set."""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.search import languages as search_languages
from sphinx.search import zh as search_zh


def translated_nodes_at_home(app: Sphinx, doctree: nodes.document) -> None:
    """Every node of a page belongs to the page's document, translated ones too.

    Sphinx translates a message by parsing its translation as a document of its own and moving the
    nodes into the page; they keep a reference to that document, whose settings hold the build
    environment. Pickled with the page, that was the whole environment in every page's doctree: 5 MB
    for a page of 1 KB, and a third of the Chinese builds' time spent pickling and unpickling it.
    """
    for node in doctree.findall():
        if node.document is not doctree:
            node.document = doctree


class SearchChinese(search_zh.SearchChinese):
    """Sphinx's Chinese search index, its Latin terms kept in a set.

    Sphinx 7.4 keeps every Latin word of every page in one list and, to stem a word, looks it up in
    that list: quadratic in the book's length (13 of the Chinese site's 59 s were that lookup). A
    set answers the same question, so the index is the same.
    """

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = set()  # per index (Sphinx's is one list on the class, shared by all)

    def split(self, input: str) -> list[str]:
        chinese = list(search_zh.jieba.cut_for_search(input)) if search_zh.JIEBA else []
        latin = [term.strip() for term in self.latin1_letters.findall(input)]
        self.latin_terms.update(latin)
        return chinese + latin


def setup(app: Sphinx) -> dict:
    search_languages["zh"] = SearchChinese
    app.connect("doctree-read", translated_nodes_at_home, priority=900)  # last: before the page is pickled
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
