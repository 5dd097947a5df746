"""The Colab editions (colab/, tools/editions.py) against the built site: every link of an edition
names a page and an anchor the site build wrote, and every chapter page's Colab button opens its
edition at the ref that the edition installs `lib` from.

Apart from tests/tools/test_editions.py, which reads no build: pytest-xdist hands out whole files
(conftest.py), and that file's other tests need not wait for the site build.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urldefrag

import nbformat
import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from conftest import HTML, REPO, SiteBuild
from tools import editions
from tools.common import load_config, notebooks, repository
from tools.myst import Book

PAGES = notebooks()


@pytest.fixture(scope="module")
def book() -> Book:
    return Book.load()


@pytest.mark.site
def test_every_link_of_the_editions_is_on_the_built_site(site_build: SiteBuild, book: Book) -> None:
    """The anchors the editions link to (exercises, #cite-KEY on the References page, targets)
    exist in the pages that the site build wrote."""
    site_build.require_success()
    ids: dict[str, set[str]] = {}
    checked = 0
    for page in PAGES:
        edition = editions.edition_path(page)
        nb = nbformat.read(edition, as_version=4)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            for token in MarkdownIt("commonmark").parse(cell.source):
                for child in token.children or []:
                    href = child.attrGet("href") if child.type == "link_open" else None
                    if not href or not str(href).startswith(book.site):
                        continue
                    url, anchor = urldefrag(str(href))
                    target = HTML / url[len(book.site) :]
                    assert target.is_file(), f"{edition.name}: {href}: no such page in the built site"
                    if anchor:
                        if str(target) not in ids:
                            soup = BeautifulSoup(target.read_text(encoding="utf-8"), "html.parser")
                            ids[str(target)] = {t["id"] for t in soup.find_all(id=True)}
                        assert anchor in ids[str(target)], f"{edition.name}: {href}: no such anchor in the built site"
                    checked += 1
    assert checked > 0


@pytest.mark.site
@pytest.mark.parametrize("page", PAGES, ids=[p.stem for p in PAGES])
def test_the_built_pages_colab_button_opens_the_edition(page: Path, site_build: SiteBuild) -> None:
    site_build.require_success()
    url, ref = repository()
    colab = load_config()["launch_buttons"]["colab_url"].rstrip("/")
    edition = editions.edition_path(page).relative_to(REPO).as_posix()
    expected = f"{colab}/github/{url.split('github.com/', 1)[1]}/blob/{ref}/{edition}"
    soup = BeautifulSoup((HTML / "book" / f"{page.stem}.html").read_text(encoding="utf-8"), "html.parser")
    links = {a["href"] for a in soup.find_all("a", href=True) if "colab.research.google.com" in a["href"]}
    assert links == {expected}, f"{page.name}: Colab link(s) {sorted(links)}; expected {expected}"
