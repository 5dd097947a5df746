"""The whole book as PDF (tools/pdf.py), in both languages: built by the README's build command, linked
from every page, the whole book in order with its solutions, its fonts embedded, no interface text,
no code cell's box left empty at a page's foot, every display equation numbered within its chapter."""

from __future__ import annotations

import copy
import functools
import html
import re
import shutil
import subprocess
import unicodedata
from pathlib import Path

import pytest
from lxml import etree
from lxml import html as lxml_html

from conftest import HTML, SiteBuild, skip_or_fail
from tools.common import chapters

pytestmark = pytest.mark.site

PDFS = {"en": HTML / "book.pdf", "zh_CN": HTML / "zh" / "book.pdf"}


@pytest.fixture(scope="module")
def built(site_build: SiteBuild) -> SiteBuild:
    site_build.require_success()
    return site_build


@functools.cache
def _page(path: Path) -> lxml_html.HtmlElement:
    """A built page, parsed once for all the tests of this file (parsing was most of their time, with
    BeautifulSoup; lxml's own tree is several times faster): none of them may change it; one that
    removes parts works on a copy."""
    return lxml_html.fromstring(path.read_bytes())


def _has_class(name: str) -> str:
    """XPath's test for an element with the class ``name``."""
    return f"contains(concat(' ', normalize-space(@class), ' '), ' {name} ')"


def _xpath(selector: str) -> str:
    """A CSS selector of the simple kinds this file uses (``.class``, ``#id``, a tag name) as XPath,
    relative to the element it is asked of."""
    if selector.startswith("."):
        return f".//*[{_has_class(selector[1:])}]"
    if selector.startswith("#"):
        return f".//*[@id='{selector[1:]}']"
    return f".//{selector}"


def _select(tree, selectors) -> list:
    """The elements under ``tree`` that match any of ``selectors`` (:func:`_xpath`), in document order."""
    return tree.xpath(" | ".join(map(_xpath, selectors)))


def _strings(element) -> list[str]:
    """The text of ``element``, string by string, as a reader sees it (no script's or style's code)."""
    return element.xpath(".//text()[not(parent::script or parent::style)]")


def _words(element) -> str:
    """The text of ``element``, its strings stripped and joined by a space."""
    return " ".join(part.strip() for part in _strings(element) if part.strip())


def _pdf_links(path: Path) -> list[str]:
    """The links of the built page ``path`` to a PDF of the book (``.../book.pdf``)."""
    return _page(path).xpath("//a[substring(@href, string-length(@href) - 7) = 'book.pdf']/@href")


def _interface(page) -> set[str]:
    """The text of each element of the site's interface on ``page`` (:data:`INTERFACE`)."""
    return {_words(element) for element in _select(page, INTERFACE)}


@pytest.fixture(scope="module", autouse=True)
def _forget_the_pages():
    yield
    _page.cache_clear()  # the pages' trees are large: not kept past this file


def _text_and_fonts(language: str):
    reader, texts = _pdf(language)
    # NFKC: the extractor gives a ligature as one character (ﬃ) and some CJK glyphs as their
    # compatibility forms (⾃ for 自), as the fonts name them
    text = "\n".join(texts)
    fonts = {}
    for page in reader.pages:
        resources = page.get("/Resources") or {}
        for font in (resources.get("/Font") or {}).values():
            font = font.get_object()
            descriptor = font.get("/FontDescriptor") or {}
            for descendant in font.get("/DescendantFonts") or []:
                descriptor = descendant.get_object().get("/FontDescriptor") or descriptor
            descriptor = descriptor.get_object() if hasattr(descriptor, "get_object") else descriptor
            # a Type 3 font's glyphs are drawn by the PDF's own procedures: embedded by definition
            embedded = font.get("/Subtype") == "/Type3" or any(
                key in descriptor for key in ("/FontFile", "/FontFile2", "/FontFile3")
            )
            fonts[str(font.get("/BaseFont"))] = embedded
    return len(reader.pages), text, fonts


@pytest.mark.parametrize("language", list(PDFS))
def test_the_whole_book_is_one_pdf_with_every_chapter_and_its_fonts(language: str, built) -> None:
    pages, text, fonts = _text_and_fonts(language)
    assert pages >= 60, f"{pages} pages: not the whole book"
    squeezed = re.sub(r"\s+", "", text)
    for title, _ in _chapter_pages(language):
        assert re.sub(r"\s+", "", title) in squeezed, f"{language}: no chapter {title!r} in the PDF"
    assert fonts and all(fonts.values()), f"fonts not embedded: {[f for f, e in fonts.items() if not e]}"
    for interface in ("Show code cell", "Click to show", "显示代码", "点击显示", "Toggle"):
        assert interface not in text, f"{language}: the PDF prints the interface: {interface!r}"
    if language == "zh_CN":
        assert "练习" in text and "解答" in text and "图" in text
    else:
        assert "Solution to Exercise" in text and "Figure " in text


@pytest.mark.parametrize("language", list(PDFS))
def test_every_page_links_to_its_languages_pdf(language: str, built) -> None:
    site = HTML if language == "en" else HTML / "zh"
    for page in (site / "book").glob("*.html"):
        links = _pdf_links(page)
        assert links and (page.parent / links[0]).resolve() == PDFS[language].resolve(), page.name


# --- The PDF as a reader opens it (issue 57): every figure drawn, the math typeset, no interface, ---
# --- a new page for each chapter, page numbers, running heads, an outline, the edition's paper.   ---

SITES = {"en": HTML, "zh_CN": HTML / "zh"}
PAPER_PT = {"en": (612, 792), "zh_CN": (595, 842)}  # US Letter and A4 (tools/pdf.py, PAPER)
# What the site shows around the book and a printed book leaves out (the theme's elements, each of
# whose text on the site's own page must not reach the PDF).
INTERFACE = (".skip-link", "#pst-skip-link", "#pst-back-to-top", ".search-button-field", ".article-header-buttons",
             ".bd-header", ".prev-next-area", ".language-switch")  # fmt: skip
MATH_SOURCE = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$")  # (code listings show TeX commands as code)
WORD = re.compile(r"[^\W\d_]{2,}")  # a label with a word: two letters (or CJK characters) in a row


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def _printed(label: str) -> re.Pattern:
    """``label`` as a PDF's text layer may give it: a CJK font may name a character's glyph by its
    radical (U+2E80-2EFF: ⻓ for 长), which no Unicode normalisation maps back."""
    return re.compile("".join(
        f"(?:{re.escape(c)}|[\u2e80-\u2eff])" if "\u4e00" <= c <= "\u9fff" else re.escape(c) for c in label
    ))  # fmt: skip


@functools.cache
def _pdf(language: str):
    """The PDF of ``language`` as a reader's tools see it: its reader and each page's text (poppler's
    ``pdftotext``, where installed: a second a book, where pypdf's extractor takes a minute)."""
    from pypdf import PdfReader

    reader = PdfReader(PDFS[language])
    if shutil.which("pdftotext"):
        text = subprocess.run(["pdftotext", "-enc", "UTF-8", str(PDFS[language]), "-"],
                              capture_output=True, text=True, check=True).stdout  # fmt: skip
        texts = text.split("\f")[: len(reader.pages)]
    else:
        texts = [page.extract_text() or "" for page in reader.pages]
    return reader, [unicodedata.normalize("NFKC", text) for text in texts]


def _chapter_pages(language: str) -> list[tuple[str, Path]]:
    """Each chapter's title and its page on the site, in the book's order."""
    found = []
    for chapter in chapters():
        page = SITES[language] / "book" / f"{chapter.stem}.html"
        (h1, *_) = _page(page).xpath("//article//h1")
        title = _words(h1).rstrip("#¶").strip()
        found.append((unicodedata.normalize("NFKC", title), page))
    return found


def _figures(page: Path) -> list[tuple[str, list[str]]]:
    """The figures of a chapter page drawn from SVG (an image's file, or an explorer's inline drawing),
    each with the labels that name something (a word) and that the page's prose does not also say;
    not those the site folds away (the PDF leaves them out)."""
    article = copy.deepcopy(_page(page).xpath("//article")[0])  # the cached page stays whole
    # the PDF prints a page as the site first shows it: without what the site folds away
    for folded in article.xpath(f".//details[{_has_class('hide')}]"):
        folded.drop_tree()
    drawings = []
    for src in article.xpath(".//img[substring(@src, string-length(@src) - 3) = '.svg']/@src"):
        svg = etree.parse(page.parent / src)
        drawings.append((src, ["".join(text.itertext()) for text in svg.iter("{*}text")]))
    for i, svg in enumerate(article.xpath(f".//*[{_has_class('lib-explorer')}]//svg")):
        drawings.append((f"explorer {i + 1}", ["".join(text.itertext()) for text in svg.iter("text")]))
    for svg in article.xpath(".//svg"):
        svg.drop_tree()
    prose = _squeeze(" ".join(_strings(article)))
    figures = []
    for name, texts in drawings:
        labels = sorted({label for label in map(_squeeze, texts) if WORD.search(label) and label not in prose})
        figures.append((name, labels))
    return figures


@pytest.mark.parametrize("language", list(PDFS))
def test_every_chapter_figure_is_drawn_in_the_pdf(language: str, built) -> None:
    """A figure drawn from SVG keeps its labels as text; a broken image prints its alt text and an
    icon instead. Every figure with labels of its own has half of them, or three, in the PDF's text
    (a label set with math or super- and subscripts comes out of the text layer in another order)."""
    reader, texts = _pdf(language)
    text = _squeeze("\n".join(texts))
    checked, missing = 0, []
    for _, page in _chapter_pages(language):
        for name, labels in _figures(page):
            if not labels:
                continue
            checked += 1
            found = [label for label in labels if _printed(label).search(text)]
            if len(found) < min(3, (len(labels) + 1) // 2):
                missing.append(f"{page.stem}: {name}: {len(found)}/{len(labels)} labels, e.g. {labels[:3]}")
    assert checked >= 20, f"{language}: only {checked} figures with labels of their own"
    assert not missing, f"{language}: {len(missing)} of {checked} figures not drawn in the PDF:\n" + "\n".join(missing)
    icons = [
        (number + 1, xobject.get("/Width"), xobject.get("/Height"))
        for number, pdf_page in enumerate(reader.pages)
        for reference in ((pdf_page.get("/Resources") or {}).get("/XObject") or {}).values()
        if (xobject := reference.get_object()).get("/Subtype") == "/Image"
        and xobject.get("/Width", 99) <= 24
        and xobject.get("/Height", 99) <= 24
    ]
    assert not icons, f"{language}: broken-image icons printed (page, width, height): {icons[:5]}"


@pytest.mark.parametrize("language", list(PDFS))
def test_the_pdfs_math_is_typeset_and_it_prints_no_interface(language: str, built) -> None:
    reader, texts = _pdf(language)
    text = "\n".join(texts)
    sources = MATH_SOURCE.findall(text)
    assert not sources, f"{language}: {len(sources)} MathJax source delimiters in the PDF, e.g. {sources[:5]}"
    interface = _interface(_page(_chapter_pages(language)[0][1]))
    interface = {phrase for phrase in interface if len(_squeeze(phrase)) >= 4}
    assert interface, f"{language}: found no interface text on the site's page to look for"
    # A phrase of the interface may be the book's own words too (the Chinese site's language switch says
    # "English", and chapter 12's code prints English sentences): printed, the interface adds to their count.
    squeezed, content = _squeeze(text), _squeeze(_book_text(language))
    printed = sorted(p for p in interface if squeezed.count(_squeeze(p)) > content.count(_squeeze(p)))
    assert not printed, f"{language}: the PDF prints the site's interface: {printed}"


def _book_text(language: str) -> str:
    """The text of the one-page book that tools/pdf.py printed, without the site's interface, scripts and styles."""
    page = HTML.parent / f"pdf-{language}" / "html" / "book.html"
    body = lxml_html.fromstring(page.read_bytes()).body
    for element in _select(body, (*INTERFACE, "script", "style", "noscript")):
        element.drop_tree()
    return " ".join(_strings(body))


@pytest.mark.parametrize("language", list(PDFS))
def test_each_chapter_starts_a_page_with_its_outline_entry_and_running_head(language: str, built) -> None:
    reader, texts = _pdf(language)
    entries = {}

    def walk(items):
        for item in items:
            if isinstance(item, list):
                walk(item)
            else:
                entries.setdefault(_squeeze(item.title).rstrip("#¶"), item)

    walk(reader.outline)
    assert entries, f"{language}: the PDF has no outline (bookmarks)"
    destinations = reader.named_destinations
    broken = [(number + 1, str(annotation["/Dest"])) for number, page in enumerate(reader.pages)
              for annotation in (a.get_object() for a in page.get("/Annots") or [])
              if "/Dest" in annotation and str(annotation["/Dest"]) not in destinations]  # fmt: skip
    assert not broken, f"{language}: links inside the PDF that go nowhere (page, name): {broken[:5]}"
    for title, _ in _chapter_pages(language):
        entry = entries.get(_squeeze(title))
        assert entry is not None, f"{language}: no outline entry for chapter {title!r}"
        number = reader.get_destination_page_number(entry)
        page_height = float(reader.pages[number].mediabox.height)
        top = float(entry.get("/Top") or entry.top or 0)
        assert top > page_height - 160, f"{language}: chapter {title!r} starts {page_height - top:.0f} pt down its page"
        assert _squeeze(title) in _squeeze(texts[number]), (
            f"{language}: the outline sends {title!r} to a page without it"
        )
        if number + 1 < len(texts):  # the chapter's next page carries its title as running head
            assert _squeeze(title) in _squeeze(texts[number + 1]), f"{language}: no running head {title!r}"


@pytest.mark.parametrize("language", list(PDFS))
def test_the_pdfs_pages_are_numbered_on_the_editions_paper(language: str, built) -> None:
    reader, texts = _pdf(language)
    unnumbered = [n for n, text in enumerate(texts, 1) if not re.search(rf"(?m)^\s*{n}\s*$", text)]
    assert not unnumbered, f"{language}: {len(unnumbered)} pages without their number, e.g. {unnumbered[:5]}"
    width, height = PAPER_PT[language]
    sizes = {(round(float(p.mediabox.width)), round(float(p.mediabox.height))) for p in reader.pages}
    assert all(abs(w - width) <= 1 and abs(h - height) <= 1 for w, h in sizes), f"{language}: paper {sizes}"


# A code cell's box as printed: myst-nb draws its left edge in green (--mystnb-source-margin-color).
GREEN = 30  # how much greener than red and blue a pixel of that edge is, at least (0-255)
EDGE_ROWS = 5  # a stretch of the edge is this tall at least at 30 dpi (a green keyword's letters are not)
INK = 140  # a pixel darker than this in every channel is ink: text or a drawing


def _empty_code_boxes(pdf: Path, folder: Path) -> list[int]:
    """The pages of ``pdf`` (rendered at 30 dpi by poppler's ``pdftoppm``) where a code cell's box holds
    nothing: along some stretch of its green left edge there is no ink beside it."""
    import numpy as np
    from PIL import Image

    subprocess.run(["pdftoppm", "-r", "30", str(pdf), str(folder / "page")], check=True)
    empty = []
    for path in folder.glob("page-*.ppm"):
        rgb = np.asarray(Image.open(path).convert("RGB")).astype(int)
        green = rgb[:, :, 1] - np.maximum(rgb[:, :, 0], rgb[:, :, 2]) > GREEN
        # the edge: green down EDGE_ROWS rows in a row (an opening by a vertical line), in the left fifth
        tall = np.logical_and.reduce([green[k : len(green) - EDGE_ROWS + 1 + k] for k in range(EDGE_ROWS)])
        margin = tall[:, : rgb.shape[1] // 5]
        if not margin.any():
            continue
        edge = int(margin.sum(axis=0).argmax())  # the edge's column
        rows = np.flatnonzero(tall[:, edge])
        ink = (rgb.min(axis=2) < INK) & ~green
        for run in np.split(rows, np.flatnonzero(np.diff(rows) > 1) + 1):  # each stretch of the edge
            if not ink[run[0] : run[-1] + EDGE_ROWS, edge + 2 :].any():
                empty.append(int(path.stem.rsplit("-", 1)[1]))
                break
    return sorted(empty)


@pytest.mark.parametrize("language", list(PDFS))
def test_no_page_ends_on_an_empty_code_box(language: str, built, tmp_path) -> None:
    # A code block that the print style sheet keeps whole goes to the next page when it does not fit,
    # and leaves its cell's empty box on this one (_static/book.css lets code run across pages).
    if shutil.which("pdftoppm") is None:
        skip_or_fail("poppler's pdftoppm is not installed (apt-get install poppler-utils)")
    empty = _empty_code_boxes(PDFS[language], tmp_path)
    assert not empty, f"{language}: {len(empty)} pages with an empty code cell's box, e.g. pages {empty[:10]}"


# The print style sheet's page margin at the sides (_static/book.css, @page), in pt: the text column's edge.
SIDE_MARGIN_PT = 16 / 25.4 * 72
WORD_BOX = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>')
EQUATION_NUMBER = re.compile(r"^\((\d+)\)$")


def _words_on_pages(pdf: Path) -> list[tuple[float, list[tuple[float, float, float, float, str]]]]:
    """Each page's width and its words with their boxes (poppler's ``pdftotext -bbox``), in pt."""
    out = subprocess.run(["pdftotext", "-bbox", "-enc", "UTF-8", str(pdf), "-"], capture_output=True, text=True,
                         check=True).stdout  # fmt: skip
    pages = []
    for page in out.split("<page ")[1:]:
        width = float(re.search(r'width="([\d.]+)"', page).group(1))
        words = [(float(a), float(b), float(c), float(d), html.unescape(w)) for a, b, c, d, w in WORD_BOX.findall(page)]
        pages.append((width, words))
    return pages


BOX_PADDING_PT = 24  # how far a solution's or a note's box sets its content in from the column's right edge


def _equation_numbers(width: float, words: list) -> list[tuple[int, tuple]]:
    """The equation numbers on a page, with their boxes: ``(n)`` ending at the right edge of the text
    column, or of a box within it, where the print style sheet sets them (a figure's ``(0)`` or a
    ``(1)`` in prose ends elsewhere)."""
    edge = width - SIDE_MARGIN_PT
    return [(int(found.group(1)), box) for box in words
            if (found := EQUATION_NUMBER.match(box[4])) and edge - BOX_PADDING_PT - 1 < box[2] < edge + 1]  # fmt: skip


def _printed_over(a: tuple, b: tuple) -> bool:
    """Whether two words' boxes share ink: they meet across, and the middle of one lies in the other's
    height (poppler's boxes of CJK words are taller than their glyphs, and touch the line above)."""
    across = a[0] < b[2] and b[0] < a[2]
    return across and (b[1] < (a[1] + a[3]) / 2 < b[3] or a[1] < (b[1] + b[3]) / 2 < a[3])


@pytest.mark.parametrize("language", list(PDFS))
def test_display_equations_are_numbered_per_chapter_beside_and_not_over_them(language: str, built) -> None:
    """Every display equation of a chapter carries its number, (1), (2), … from the chapter's first page
    (as many as the chapter's page on the site has equations), at the right edge of the text column (not
    in the margin), and no other word is printed over it."""
    if shutil.which("pdftotext") is None:
        skip_or_fail("poppler's pdftotext is not installed (apt-get install poppler-utils)")
    reader, _ = _pdf(language)
    pages = _words_on_pages(PDFS[language])
    entries = {_squeeze(item.title).rstrip("#¶"): reader.get_destination_page_number(item)
               for item in reader.outline if not isinstance(item, list)}  # fmt: skip
    starts = sorted(entries.values())
    problems = []
    for title, site_page in _chapter_pages(language):
        start = entries[_squeeze(title)]
        end = next((s for s in starts if s > start), len(pages))
        seen = []
        for number in range(start, end):
            width, words = pages[number]
            for value, box in _equation_numbers(width, words):
                seen.append(value)
                if over := [w[4] for w in words if w is not box and _printed_over(w, box)]:
                    problems.append(f"page {number + 1}: {box[4]} printed over {over}")
        equations = len(_page(site_page).xpath(f"//article//div[{_has_class('math')}]"))
        if seen != list(range(1, equations + 1)):
            problems.append(f"{title}: equation numbers {seen}, for its {equations} display equations")
    assert not problems, f"{language}: " + "; ".join(problems[:8])
