"""tools/book_ext/claim_groups.py: on the site the claims a cell displays one after another share one box,
each line with its mark, its anchor and its labelled values; in both languages; a lone claim keeps its box."""

from __future__ import annotations

import re

import nbformat
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po
from bs4 import BeautifulSoup

from conftest import build_claims_book, write_claims_book
from lib.book.claims import CheckedClaim

STATEMENT = "the cache is faster, and its advantage grows with the length (O(T²) → O(T))"  # chapter 5's
CLAIMS = [  # one cell: three claims, a printed line, a fourth claim; then a cell with one claim
    CheckedClaim.of(STATEMENT, True, {"speedup_16": 1.9, "speedup_64": 4.2}),
    CheckedClaim.of("a second claim", True, {"acc": 0.93}),
    CheckedClaim.of("a check that failed", False, {"gap": 0.5}, "Check"),
    CheckedClaim.of("after a printed line", True, {"n": 3}),
    CheckedClaim.of("alone in its cell", True, {"n": 4}),
]


def _catalog(path, translations: dict[str, str]) -> None:
    catalog = Catalog(locale="zh_Hans_CN", charset="utf-8")
    for english, chinese in translations.items():
        catalog.add(english, chinese)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        write_po(f, catalog, width=0)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """A small book built in English and in Chinese: a chapter whose cells display CLAIMS, and the Claims appendix."""

    tmp = tmp_path_factory.mktemp("claim_groups")
    src = tmp / "src"
    write_claims_book(src, "locale_dirs = ['locale/']\ngettext_compact = False\n")
    (src / "book" / "claims_sweep.json").write_text('{"chapters": {}}', encoding="utf-8")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Chapter 5")])
    outputs = [nbformat.v4.new_output("display_data", data=c._repr_mimebundle_()) for c in CLAIMS]
    outputs.insert(3, nbformat.v4.new_output("stream", name="stdout", text="a printed line\n"))
    first, second = nbformat.v4.new_code_cell("lib.claim(...)"), nbformat.v4.new_code_cell("lib.claim(...)")
    first.outputs, second.outputs = outputs[:5], outputs[5:]
    nb.cells += [first, second]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, src / "book" / "05_x.ipynb")
    messages = src / "locale" / "zh_CN" / "LC_MESSAGES"
    _catalog(messages / "claim-statements.po", {STATEMENT: "缓存更快，且其优势随长度增长（O(T²) → O(T)）"})
    _catalog(messages / "claim-values.po", {"time without the cache over time with it, 16 tokens": "十六", "×": "倍"})
    pages = {}
    for language in ("en", "zh_CN"):
        out = tmp / language
        status, warnings = build_claims_book(src, out, language=language)
        assert not warnings and status == 0, warnings
        pages[language] = {
            name: BeautifulSoup((out / "html" / "book" / f"{name}.html").read_text(encoding="utf-8"), "html.parser")
            for name in ("05_x", "claims")
        }
    return pages


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_a_cells_consecutive_claims_share_one_box(site, language) -> None:
    page = site[language]["05_x"]
    boxes = page.select("div.book-claim")
    assert [box.get("data-claims") for box in boxes] == ["3", None, None]  # the printed line ends the run
    group = boxes[0]
    assert [line["id"] for line in group.find_all(id=re.compile("^claim-"))] == ["claim-1", "claim-2", "claim-3"]
    assert [mark.get_text() for mark in group.select("span[title]") if mark.get_text() in "✔✘"] == ["✔", "✔", "✘"]
    assert "rgb(218, 54, 51)" in group["style"]  # one of them failed: the box is red
    ids = [tag["id"] for tag in page.find_all(id=re.compile("^claim-"))]
    assert ids == ["claim-1", "claim-2", "claim-3", "claim-4", "claim-5"]  # each once, in order
    assert "a printed line" in page.get_text()
    assert "application/vnd.transformers-book.claim+json" not in str(page)


def test_the_lines_show_labels_and_units_in_each_language(site) -> None:
    english = site["en"]["05_x"].select("div.book-claim")[0].get_text(" ")
    assert "time without the cache over time with it, 16 tokens: 1.9×" in english and "speedup_16" not in english
    assert "acc=0.93" in english  # no label: shown as in the line
    names = [s["title"] for s in site["en"]["05_x"].select("div.book-claim")[0].select("div[style*=opacity] > span")]
    assert names == ["speedup_16", "speedup_64", "acc", "gap"]  # each value's name in the code, as its tooltip
    chinese = site["zh_CN"]["05_x"].select("div.book-claim")[0]
    text = chinese.get_text(" ")
    assert "缓存更快" in text and "十六：1.9 倍" in text  # statement, label and unit from the catalogs
    assert [s.get_text() for s in chinese.find_all("strong")] == ["论断：", "论断：", "核验："]


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_the_claims_appendix_links_every_claim_of_a_group(site, language) -> None:
    links = [a["href"] for a in site[language]["claims"].select("table.claims-ledger a") if "#claim-" in a["href"]]
    assert links == [f"05_x.html#claim-{n}" for n in (1, 2, 4, 5)] + ["05_x.html#claim-3"]  # claims, then checks
