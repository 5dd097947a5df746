"""The whole book as PDF (tools/pdf.py), in both languages: built by the README's build command, linked
from every page, the whole book in order with its solutions, its fonts embedded, no interface text."""

from __future__ import annotations

import re
import unicodedata

import pytest
from bs4 import BeautifulSoup

from conftest import HTML, SiteBuild
from tools.common import chapters

pytestmark = pytest.mark.site

PDFS = {"en": HTML / "book.pdf", "zh_CN": HTML / "zh" / "book.pdf"}


@pytest.fixture(scope="module")
def built(site_build: SiteBuild) -> SiteBuild:
    site_build.require_success()
    return site_build


def _text_and_fonts(path):
    from pypdf import PdfReader

    reader = PdfReader(path)
    # NFKC: the extractor gives a ligature as one character (ﬃ) and some CJK glyphs as their
    # compatibility forms (⾃ for 自), as the fonts name them
    text = unicodedata.normalize("NFKC", "\n".join(page.extract_text() or "" for page in reader.pages))
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
    pages, text, fonts = _text_and_fonts(PDFS[language])
    assert pages >= 60, f"{pages} pages: not the whole book"
    squeezed = re.sub(r"\s+", "", text)
    for chapter in chapters():
        soup = BeautifulSoup((HTML / ("zh/" if language != "en" else "") / f"book/{chapter.stem}.html").read_text(
            encoding="utf-8"), "html.parser")  # fmt: skip
        title = soup.select_one("article h1").get_text(" ", strip=True).rstrip("#").strip()
        title = unicodedata.normalize("NFKC", title)
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
        soup = BeautifulSoup(page.read_text(encoding="utf-8"), "html.parser")
        links = [a["href"] for a in soup.select("a[href$='book.pdf']")]
        assert links and (page.parent / links[0]).resolve() == PDFS[language].resolve(), page.name
