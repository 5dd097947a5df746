"""The one-page book as tools/pdf.py prepares it for print: its links made right for a PDF, each
chapter's headings at the site's levels with anchors of its own, the outline's entries."""

from __future__ import annotations

from bs4 import BeautifulSoup

from tools import pdf

# What Sphinx's singlehtml writes, in small: the first page's section holds every other page, one
# level down, each after its marker; two pages have a section of the same id; one figure is folded.
PAGE = """<html><head><title>The Book</title>
<link rel="canonical" href="https://example.org/site/book/intro.html"/>
<link rel="stylesheet" href="_static/book.css"/><script src="searchindex.js"></script></head><body>
<div id="jb-print-docs-body"><h1>Intro</h1><div id="jb-print-toc"><a href="#one">1. One</a></div></div>
<article class="bd-article"><section id="intro"><h1>Intro<a class="headerlink" href="#intro">#</a></h1>
<p><a href="book/intro.html#cite-x">x</a> <a href="../zh/book/intro.html">zh</a>
<a href="../_downloads/all.zip">zip</a> <a href="#document-book/02_two">two</a></p>
<span id="document-book/01_one"></span><section id="one"><h2>1. One<a class="headerlink" href="#one">#</a></h2>
<section id="summary"><h3>Summary</h3><p><a href="#summary">here</a></p></section></section>
<span id="document-book/02_two"></span><section id="two"><h2>2. Two with \\(d_k\\)</h2>
<section id="summary"><h3>Summary</h3><p><a href="#summary">here</a> <a href="#fig">fig</a></p></section>
<div class="book-folded" hidden><figure id="fig"></figure></div></section>
<p id="cite-x">ref</p></section></article></body></html>"""


def _prepared() -> BeautifulSoup:
    soup = BeautifulSoup(PAGE, "html.parser")
    pdf.retarget(soup)
    assert pdf.promote_chapters(soup) == 2
    assert pdf.link_what_is_left_out(soup) == 1
    pdf.title_page(soup)
    return soup


def test_links_go_inside_the_book_or_to_the_site() -> None:
    hrefs = [a["href"] for a in _prepared().select("p a")]
    assert hrefs[:4] == ["#cite-x", "https://example.org/site/zh/book/intro.html",
                         "https://example.org/site/_downloads/all.zip", "#two"]  # fmt: skip
    assert hrefs[4] == "#summary" and hrefs[5] == "#summary--2", "each chapter's Summary its own"
    assert hrefs[6] == "https://example.org/site/book/02_two.html#fig", "a folded figure: on the site"
    assert not _prepared().select("script[src='searchindex.js']")


def test_chapters_have_the_sites_heading_levels_and_no_marker() -> None:
    soup = _prepared()
    assert [h.get_text(strip=True).rstrip("#") for h in soup.select("article h1")] == [
        "Intro",
        "1. One",
        "2. Two with \\(d_k\\)",
    ]
    assert not soup.select("span[id^='document-']")
    assert soup.select_one("#jb-print-docs-body h1").get_text() == "The Book"
    assert "book-pdf" in soup.body["class"]
    assert pdf.headings(soup) == [
        (1, "Intro", "intro"), (1, "1. One", "one"), (2, "Summary", "summary"),
        (1, "2. Two with d_k", "two"), (2, "Summary", "summary--2"),
    ]  # fmt: skip


def test_a_page_that_needs_a_missing_file_is_not_printed(tmp_path) -> None:
    (tmp_path / "index.html").write_text('<meta http-equiv="refresh" content="0; url=book/intro.html" />')
    (tmp_path / "book").mkdir()
    (tmp_path / "book" / "intro.html").write_text(PAGE)
    try:
        pdf.place_page(tmp_path)
    except FileNotFoundError as error:
        assert "_static/book.css" in str(error)
    else:
        raise AssertionError("printed a page whose style sheet is missing")
    (tmp_path / "_static").mkdir()
    (tmp_path / "_static" / "book.css").write_text("")
    assert pdf.place_page(tmp_path) == tmp_path / pdf.PRINTED_PAGE
