"""The Chinese site (`_build/html/zh/`, built by `python -m tools.site` from the catalogs of locale/zh_CN).

Read from conftest.py's one site build (no browser; tests/test_browser.py opens the Chinese pages too):

- every page of `_toc.yml` is there, at the same path as in English, marked ``lang="zh-CN"``, with a
  Chinese title and Chinese prose, and the sidebar's parts in Chinese;
- each page links to its English counterpart and the English page to it (and both files exist);
- the lecture's terms are on their chapters: every glossary term the English page uses, the Chinese
  page uses in Chinese;
- exercise titles and claim statements read in Chinese, and so do the labels of the claims' values;
- Chinese search finds words (Sphinx's Chinese index, segmented by jieba): 注意力 is a term of the index;
- the Chinese build executed no notebook (it read the English build's execution cache).
"""

from __future__ import annotations

import copy
import functools
import html
import re

import pytest
from bs4 import BeautifulSoup

from conftest import HTML, SiteBuild
from tools.common import toc_docnames
from tools.i18n_checks import glossary, prose
from tools.site import ZH_BUILD_MARKER

pytestmark = pytest.mark.site

ZH = HTML / "zh"
PAGES = toc_docnames()
CJK = re.compile(r"[\u4e00-\u9fff]")
LATIN = re.compile(r"[A-Za-z]")


@functools.cache
def _soup(path) -> BeautifulSoup:
    """A built page, parsed once for all the tests of this file (each parse took 0.2 s, and the tests
    parsed about 300): none of them may change it, a test that removes parts works on a copy."""
    return BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")


@pytest.fixture(scope="module", autouse=True)
def _forget_the_pages():
    yield
    _soup.cache_clear()  # the pages' trees are large: not kept past this file


def _prose_paragraphs(soup: BeautifulSoup) -> list[str]:
    """The text of the article's paragraphs and list items written as prose (not code, outputs, math)."""
    article = soup.select_one("article") or soup
    found = []
    for node in article.find_all(["p", "li"]):
        if node.find_parent(class_=re.compile(r"cell_output|cell_input|highlight|math|claims-ledger")):
            continue
        node = copy.copy(node)  # the cached page stays whole
        for skip in node.select("code, .math, span.math, mjx-container, .cite"):
            skip.decompose()
        text = " ".join(node.get_text(" ").split())
        if len(LATIN.findall(text)) >= 20:  # a sentence's worth of letters
            found.append(text)
    return found


@pytest.fixture(scope="module")
def built(site_build: SiteBuild) -> SiteBuild:
    site_build.require_success()
    return site_build


@pytest.mark.parametrize("docname", PAGES)
def test_every_page_is_in_chinese(docname: str, built) -> None:
    page = ZH / f"{docname}.html"
    assert page.is_file(), f"{page} was not built"
    soup = _soup(page)
    assert soup.html.get("lang") == "zh-CN"
    assert CJK.search(soup.find("h1").get_text()), (
        f"{docname}: the title is not Chinese: {soup.find('h1').get_text()!r}"
    )
    paragraphs = _prose_paragraphs(soup)
    english = [p for p in paragraphs if not CJK.search(p)]
    assert not english, f"{docname}: {len(english)} of {len(paragraphs)} paragraphs without Chinese, e.g. {english[:2]}"


@pytest.mark.parametrize("docname", PAGES)
def test_each_page_links_to_its_counterpart(docname: str, built) -> None:
    for here, there in ((HTML, ZH), (ZH, HTML)):
        soup = _soup(here / f"{docname}.html")
        switch = soup.select_one("nav.language-switch a")
        assert switch is not None, f"{here / docname}: no language switch"
        target = ((here / docname).parent / switch["href"]).resolve()
        assert target == (there / f"{docname}.html").resolve(), (switch["href"], target)
        assert target.is_file()


def test_the_sidebar_is_in_chinese(built) -> None:
    soup = _soup(ZH / "book" / "intro.html")
    captions = [
        c.get_text().strip() for c in soup.select(".bd-sidebar-primary p.caption, .bd-sidebar-primary .caption-text")
    ]
    assert captions and all(CJK.search(c) for c in captions), captions
    search = soup.find("input", attrs={"name": "q"})
    assert search is not None and CJK.search(search.get("placeholder", "")), search


@pytest.mark.parametrize("docname", PAGES)
def test_the_lecture_terms_are_on_their_pages(docname: str, built) -> None:
    english = " ".join(_prose_paragraphs(_soup(HTML / f"{docname}.html")))
    chinese = _soup(ZH / f"{docname}.html").get_text()
    missing = [t.zh for t in glossary() if t.pattern.search(prose(english)) and t.zh not in chinese]
    assert not missing, f"{docname}: the English uses these terms, the Chinese page lacks {missing}"


@pytest.mark.parametrize("docname", [d for d in PAGES if re.match(r"book/\d\d_", d)])
def test_exercises_and_claims_read_in_chinese(docname: str, built) -> None:
    soup = _soup(ZH / f"{docname}.html")
    titles = [t.get_text(" ").strip() for t in soup.select("div.exercise p.admonition-title")]
    assert titles and all(t.startswith("练习") for t in titles), titles
    untranslated = [t for t in titles if "(" in t and not CJK.search(t.split("(", 1)[1])]
    assert not untranslated, f"exercise titles still English: {untranslated}"
    boxes = [
        div.get_text(" ").strip()
        for div in soup.select(".cell_output div")
        if "论断" in div.get_text() or "核验" in div.get_text()
    ]
    english = [b for b in soup.select(".cell_output strong") if b.get_text().strip() in ("Claim:", "Check:")]
    assert not english, f"{len(english)} claim box(es) still English"
    assert boxes, "no claim box on the Chinese page"
    # each measured value under its Chinese label (claim-values.po): "标签：值 单位", never "name=value"
    values = [v.get_text() for box in soup.select("div.book-claim") for v in box.select("div[style*=opacity] > span")]
    unlabelled = [v for v in values if "：" not in v or not CJK.search(v.split("：", 1)[0])]
    assert not unlabelled, f"values without a Chinese label: {unlabelled[:5]}"


def test_chinese_search_finds_words(built) -> None:
    import json

    text = (ZH / "searchindex.js").read_text(encoding="utf-8")
    index = json.loads(text[text.index("(") + 1 : text.rindex(")")])
    assert "注意力" in index["terms"], "the Chinese search index has no term 注意力 (is jieba installed?)"


def test_a_chinese_page_is_pickled_without_the_environment(built) -> None:
    """A translated node belongs to its page (tools/i18n_ext/build_speed.py, translated_nodes_at_home): the Chinese
    doctrees hold no build environment (each was 5 MB of it, and the builds spent a third of their
    time pickling it), and a short page's doctree is as small as the English one."""
    from conftest import BUILD

    doctrees = sorted((BUILD / ".doctrees-zh_CN-html").rglob("*.doctree"))
    assert len(doctrees) == len(PAGES), [path.name for path in doctrees]
    holding = [path.name for path in doctrees if b"BuildEnvironment" in path.read_bytes()]
    assert holding == [], f"Chinese doctrees that pickled the build environment: {holding}"
    assert (BUILD / ".doctrees-zh_CN-html" / "book" / "run_locally.doctree").stat().st_size < 200_000


@pytest.mark.parametrize("site", [HTML, ZH], ids=["en", "zh"])
def test_each_figure_is_one_link(site, built) -> None:
    """A figure is a link to itself once (tools/book_ext/phone_figures.py): the English build,
    finishing while the Chinese site is copied into its folder, wrapped the Chinese figures a second
    time (axe-core: link-name, a link with no text around the link with the image)."""
    link = re.compile(r'<a class="book-figure-link"[^>]*>\s*<a class="book-figure-link"')
    pages = sorted(site.rglob("*.html"))
    nested = [page.relative_to(site).as_posix() for page in pages if link.search(page.read_text(encoding="utf-8"))]
    assert nested == [], f"pages whose figures are links inside links: {nested}"


def test_the_chinese_build_executed_nothing(built) -> None:
    log = built.stdout
    assert ZH_BUILD_MARKER in log, "the build log has no Chinese part"
    chinese = log.split(ZH_BUILD_MARKER, 1)[1]
    assert "Executing notebook" not in chinese, "the Chinese build executed a notebook (a cache miss)"


@pytest.mark.parametrize(("site", "folder"), [(HTML, "colab"), (ZH, "colab/zh")], ids=["en", "zh"])
def test_each_site_offers_its_notebooks_to_run_locally(site, folder, built) -> None:
    """The "Run it on your laptop" page links to a zip of the site's own notebooks, `lib` and requirements."""
    import zipfile

    from tools.common import REPO
    from tools.notebook_downloads import ZIP_NAME

    page = _soup(site / "book" / "run_locally.html")
    link = page.select_one("a.notebook-downloads")
    assert link is not None, "no download link on the page"
    target = ((site / "book") / link["href"]).resolve()
    assert target == (site / "_downloads" / ZIP_NAME).resolve() and target.is_file()
    names = set(zipfile.ZipFile(target).namelist())
    notebooks = {f"transformers-executed/notebooks/{p.name}" for p in (REPO / folder).glob("*.ipynb")}
    assert notebooks and notebooks <= names
    for needed in ("lib/__init__.py", "pyproject.toml", "README.md", "requirements.txt"):
        assert f"transformers-executed/{needed}" in names, needed
    requirements = zipfile.ZipFile(target).read("transformers-executed/requirements.txt").decode()
    assert "torch==" in requirements and "jupyterlab" in requirements and "-e ." in requirements


def _content_counts(soup: BeautifulSoup) -> dict[str, int]:
    """What a page shows, by kind, that a translation must keep: display equations (and that none is
    empty or a stray ``::``), figures, code cells, explorers, claim boxes, exercises and solutions."""
    article = soup.select_one("article") or soup
    displays = article.select("div.math")
    return {
        "display equations": len(displays),
        "empty or broken display equations": sum(d.get_text().strip() in ("", r"\[\]", r"\[::\]") for d in displays),
        "figures": len(article.select(".cell_output img, figure img")),
        "code cells": len(article.select("div.cell")),
        "explorers": len(article.select("[data-explorer]")),
        "claim boxes": len(article.select(".book-claim")),
        "exercises": len(article.select(".exercise")),
        "solutions": len(article.select(".solution")),
    }


@pytest.mark.parametrize("docname", PAGES)
def test_a_chinese_page_shows_everything_its_english_twin_shows(docname: str, built) -> None:
    """No lost content: the same equations, figures, code cells, explorers, claim boxes and exercises
    (three display equations of the Chinese site were once a lone ``::``)."""
    english = _content_counts(_soup(HTML / f"{docname}.html"))
    chinese = _content_counts(_soup(ZH / f"{docname}.html"))
    assert chinese["empty or broken display equations"] == 0
    assert chinese == english


# Words a Chinese page may show in Latin letters: names, file types, keys.
LATIN_NAMES = {"Colab", "GitHub", "English", "Ctrl", ".ipynb", ".pdf", ".md", "PyTorch", "Transformer", "MathJax"}


def _interface_strings(soup: BeautifulSoup) -> set[str]:
    """The words of a page's interface: the text and the tooltips, labels and alt texts of everything
    around the chapter's prose (header, sidebars, footer, buttons) and the page's own buttons
    (show-code and show-solution prompts); HTML comments, scripts and styles are no words."""
    from bs4 import Comment, Declaration, Doctype

    soup = copy.copy(soup)  # the cached page stays whole
    for node in soup(["script", "style", "noscript", "code"]):  # code is a name, in any language
        node.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, (Comment, Declaration, Doctype))):
        comment.extract()
    article = soup.select_one("article")
    buttons = []
    if article is not None:
        buttons = [*article.select("summary, .toggle-button, button, .collapsed, .expanded")]
        for part in article.find_all(recursive=False):
            part.extract()
    found = {s.strip() for s in soup.find_all(string=True) if s.strip()}
    for element in [*soup.find_all(True), *buttons]:
        found |= {
            element.get(a).strip()
            for a in ("title", "aria-label", "data-bs-title", "placeholder", "alt")
            if element.get(a)
        }
    found |= {b.get_text(" ", strip=True) for b in buttons if b.get_text(strip=True)}
    return found


@pytest.mark.parametrize("docname", PAGES)
def test_a_chinese_page_has_no_english_interface_word(docname: str, built) -> None:
    """Everything a Chinese reader sees around the prose is Chinese: the theme's buttons and tooltips,
    the show-code and show-solution prompts, the footer (locale/zh_CN/site.yml), but names."""
    english = sorted(
        s
        for s in _interface_strings(_soup(ZH / f"{docname}.html"))
        if re.search(r"[A-Za-z]{3}", s) and not CJK.search(s) and s not in LATIN_NAMES and not s.startswith("©")
    )
    assert not english, f"English interface words on the Chinese page: {english}"


def _runtime_catalog(domain: str) -> dict[str, str]:
    from tools.i18n_ext.outputs import runtime_words

    runtime_words.cache_clear()
    return runtime_words(str(HTML.parents[1]), "zh_CN", domain)


@pytest.mark.parametrize("docname", PAGES)
def test_a_chinese_pages_explorers_speak_chinese(docname: str, built) -> None:
    """Each explorer is drawn again in Chinese (from how it was drawn, with explorers.po): its figure,
    controls and readout hold no English words of lib's explorers."""
    from lib.book.explorers.words import WORDS

    fragments = {
        piece.strip()
        for template in WORDS.values()
        for piece in re.split(r"\{\w+\}", str(template))
        if len(LATIN.findall(piece)) >= 6
    }
    for explorer in _soup(ZH / f"{docname}.html").select("[data-explorer]"):
        explorer = copy.copy(explorer)  # the cached page stays whole
        for node in explorer.select("script"):
            node.decompose()
        shown = explorer.get_text(" ")
        english = sorted(f for f in fragments if f in shown)
        assert not english, f"{explorer['data-explorer']}: English words {english}"


@pytest.mark.parametrize("docname", PAGES)
def test_every_label_of_a_chinese_pages_figures_is_translated(docname: str, built) -> None:
    """Every plain label of every figure of the Chinese page (its SVG's text) is Chinese, or a word that
    figures.po keeps as it is (a name, a symbol): none is left untranslated."""
    from lib.book.explorers.words import pattern_of
    from tools.i18n_ext.outputs import _SVG_TEXT

    kept = {english for english, chinese in _runtime_catalog("figures").items() if english == chinese}
    page = _soup(ZH / f"{docname}.html")
    untranslated = set()
    for image in page.select("article img[src$='.svg']"):
        svg = (ZH / docname).parent.joinpath(image["src"]).resolve().read_text(encoding="utf-8")
        for match in _SVG_TEXT.finditer(svg):
            label = html.unescape(match[2]).strip()
            # a word of English (two letters in a row, as tools.i18n harvests them), no Chinese
            english = re.search(r"[A-Za-z]{2}", label) and not CJK.search(label)
            if english and pattern_of(label) not in kept:
                untranslated.add(label)
        # a line with math is drawn by mathtext a glyph at a time (matplotlib notes its source in a
        # comment): no words may stand beside the math there, for they could not be translated
        for source in re.findall(r"<!-- (.*?) -->", svg):
            if "$" in source and re.search(r"[A-Za-z]{2}", re.sub(r"\$[^$]*\$", "", source)):
                untranslated.add(source)
    assert not untranslated, f"untranslated figure labels: {sorted(untranslated)[:20]}"
