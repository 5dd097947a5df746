"""The Colab editions (colab/, tools/editions.py) and the student versions, as Jupyter renders them.

- every notebook of the book has an edition, and it is up to date (`python -m tools.editions`);
- an edition's code cells are the chapter's, cell for cell (so nbval need not run them twice);
- the Colab button of every notebook page opens the edition at `repository.branch`, the ref that
  the edition's setup cell installs `lib` from;
- rendered with nbconvert's HTML exporter (Jupyter's own markdown rendering), no edition and no
  student version shows raw MyST (a role, a directive fence, an option line), every exercise shows
  its title and its number, and every link into the site names a page of the book and an anchor
  that page has (the same links checked against the built site: test_editions_site.py).
"""

from __future__ import annotations

import json
import re
import types
from pathlib import Path
from urllib.parse import urldefrag

import nbformat
import pytest
from bs4 import BeautifulSoup
from markdown_it import MarkdownIt

from conftest import REPO
from tools import editions
from tools.book_ext import header_buttons
from tools.common import SPEC_LINE, chapter_number, first_code_cell, load_config, notebooks, repository
from tools.myst import Book, raw_myst, without_solution_markers
from tools.student_versions import write_student_versions

PAGES = notebooks()


def _ids(paths):
    return [p.stem for p in paths]


@pytest.fixture(scope="module")
def book() -> Book:
    return Book.load()


@pytest.fixture(scope="module")
def student_dir(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("student-render")
    write_student_versions([p for p in PAGES if p.name[:2].isdigit()], out)
    return out


def _render(path: Path) -> BeautifulSoup:
    from nbconvert import HTMLExporter

    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nbformat.read(path, as_version=4))
    return BeautifulSoup(body, "html.parser")


def test_every_edition_is_up_to_date(book: Book) -> None:
    problems = editions.problems(REPO, book)
    assert not problems, "run `python -m tools.editions`:\n" + "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_an_editions_code_cells_are_the_chapters(page: Path) -> None:
    """Cell for cell, but for nbgrader's solution markers (comments), which the edition leaves out."""
    chapter = nbformat.read(page, as_version=4)
    edition = nbformat.read(editions.edition_path(page), as_version=4)
    assert [c.source for c in edition.cells if c.cell_type == "code"] == [
        without_solution_markers(c.source) for c in chapter.cells if c.cell_type == "code"
    ], f"{page.name}: the edition's code differs from the chapter's"
    assert edition.metadata.kernelspec == chapter.metadata.kernelspec
    assert "### BEGIN SOLUTION" not in json.dumps(edition.cells), f"{page.name}: nbgrader markers in the edition"


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_colab_hides_the_code_of_solutions(page: Path) -> None:
    """Colab ignores ``jupyter.source_hidden``; it hides a cell's code with ``cellView: form``."""
    edition = nbformat.read(editions.edition_path(page), as_version=4)
    for cell in edition.cells:
        if cell.cell_type == "code" and cell.metadata.get("jupyter", {}).get("source_hidden"):
            assert cell.metadata.get("cellView") == "form", f"{page.name}: a hidden solution Colab would show"


def test_editions_are_not_pages_nor_tests() -> None:
    """The site build with -W would fail on a stray notebook; pytest must not run them under nbval."""
    assert editions.FOLDER in load_config()["exclude_patterns"]
    import tomllib

    with open(REPO / "pyproject.toml", "rb") as f:
        ini = tomllib.load(f)["tool"]["pytest"]["ini_options"]
    assert editions.FOLDER not in ini["testpaths"]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_the_colab_button_opens_the_edition_at_the_ref_it_installs(page: Path) -> None:
    url, ref = repository()
    org_repo = url.split("github.com/", 1)[1]
    pagename = f"book/{page.stem}"
    # The launch button as sphinx-book-theme builds it (header_buttons/launch.py), then tools/book_ext/header_buttons.py's hook.
    theme_url = f"https://colab.research.google.com/github/{org_repo}/blob/{ref}/{pagename}.ipynb"
    context = {"header_buttons": [{"label": "launch-buttons", "buttons": [{"text": "Colab", "url": theme_url}]}]}
    app = types.SimpleNamespace(
        srcdir=str(REPO), config=types.SimpleNamespace(html_theme_options={"repository_branch": ref})
    )
    header_buttons.colab_button_opens_the_edition(app, pagename, "page.html", context, None)
    opened = context["header_buttons"][0]["buttons"][0]["url"]
    edition = editions.edition_path(page)
    assert (
        opened
        == f"https://colab.research.google.com/github/{org_repo}/blob/{ref}/{edition.relative_to(REPO).as_posix()}"
    )
    nb = nbformat.read(edition, as_version=4)
    m = SPEC_LINE.search(nb.cells[first_code_cell(nb)].source)
    assert m and (m["url"], m["ref"]) == (url, ref), f"{edition.name} installs lib from another repository or ref"


def _check_rendered(path: Path, soup: BeautifulSoup, book: Book, docname: str) -> list[tuple[str, str]]:
    """Raw MyST and exercise headings in one rendered notebook; returns its links into the site."""
    text = soup.get_text()
    raw = raw_myst(text)
    for code in soup.find_all("code"):  # MyST in a <pre><code class="language-{exercise}"> block
        if any(c.startswith("language-{") for c in code.get("class", [])):
            raw.append(f"a directive rendered as code: {code.get('class')}")
    assert not raw, f"{path.name}: raw MyST as Jupyter shows it: {sorted(set(raw))}"
    # Every exercise: a visible "Exercise N.k · Title" (or "Exercise N.k") in bold, with its anchor.
    expected = [ex for ex in book.exercises.values() if ex.docname == docname]
    shown = [a.find_parent("strong") or a.find_next("strong") for a in soup.select('a[id^="ex-"]')]
    headings = [" ".join(s.get_text().split()) for s in shown if s is not None]
    for ex in expected:
        prefix = ex.name  # "Exercise 4.2" ("练习 4.2" in the Chinese editions)
        assert any(h.startswith(prefix) for h in headings), f"{path.name}: no visible heading {prefix!r}"
    if docname.split("/")[-1][:2].isdigit():
        n = chapter_number(docname.split("/")[-1])
        assert all(ex.number.startswith(f"{n}.") for ex in expected)
    return [urldefrag(a["href"]) for a in soup.find_all("a", href=True) if a["href"].startswith(book.site)]


def _check_links(path: Path, links: list, book: Book) -> int:
    for url, anchor in links:
        page = url[len(book.site) :].removesuffix(".html")
        assert page in book.titles, f"{path.name}: a link to {url}, which is not a page of the book"
        assert not anchor or anchor in book.anchors[page], f"{path.name}: a link to {url}#{anchor}: no such anchor"
    return len(links)


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_editions_render_without_raw_myst_and_with_numbered_exercises(page: Path, book: Book) -> None:
    edition = editions.edition_path(page)
    soup = _render(edition)
    links = _check_rendered(edition, soup, book, f"book/{page.stem}")
    _check_links(edition, links, book)
    assert soup.find_all("details"), f"{edition.name}: no solution in a <details> block"


@pytest.fixture(scope="module")
def zh_book() -> Book:
    return Book.load(language="zh_CN")


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_the_chinese_editions_have_the_chapters_code_and_chinese_prose(page: Path, zh_book: Book) -> None:
    """colab/zh/: the same code cells, the prose from the catalogs, no raw MyST, links to the Chinese site."""
    chapter = nbformat.read(page, as_version=4)
    path = editions.edition_path(page, language="zh_CN")
    edition = nbformat.read(path, as_version=4)
    assert [c.source for c in edition.cells if c.cell_type == "code"] == [
        without_solution_markers(c.source) for c in chapter.cells if c.cell_type == "code"
    ], f"{path.name}: the Chinese edition's code differs from the chapter's"
    english = [
        c.source[:80]
        for c in edition.cells
        if c.cell_type == "markdown"
        and len(re.findall(r"[A-Za-z]", c.source)) > 40
        and not re.search(r"[\u4e00-\u9fff]", c.source)
    ]
    assert not english, f"{path.name}: markdown cells without Chinese: {english[:3]}"
    soup = _render(path)
    links = _check_rendered(path, soup, zh_book, f"book/{page.stem}")
    _check_links(path, links, zh_book)
    assert all(url.startswith(zh_book.site) for url, _ in links)


STUDENT = [p for p in PAGES if p.name[:2].isdigit()]


@pytest.mark.parametrize("page", STUDENT, ids=_ids(STUDENT))
def test_student_versions_render_without_raw_myst_and_with_numbered_exercises(
    page: Path, book: Book, student_dir: Path
) -> None:
    path = student_dir / page.name
    soup = _render(path)
    links = _check_rendered(path, soup, book, f"book/{page.stem}")
    _check_links(path, links, book)
    assert not soup.find_all("details"), f"{path.name}: a solution survives in a <details> block"


def test_chinese_student_versions_render_in_chinese(zh_book: Book, tmp_path: Path) -> None:
    """`python -m tools.student_versions --language zh_CN`: the same checks, in Chinese."""
    for path in write_student_versions(STUDENT, tmp_path, language="zh_CN"):
        soup = _render(path)
        links = _check_rendered(path, soup, zh_book, f"book/{path.stem}")
        _check_links(path, links, zh_book)
        assert not soup.find_all("details"), f"{path.name}: a solution survives in a <details> block"
        assert re.search(r"[\u4e00-\u9fff]", soup.get_text()), path.name


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
def test_links_within_an_edition_go_to_its_own_anchors(page: Path) -> None:
    """A reference to an exercise (or target) of the same notebook is ``#label``, and the edition has it."""
    nb = nbformat.read(editions.edition_path(page), as_version=4)
    text = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', text))
    local = {
        str(child.attrGet("href"))[1:]
        for token in MarkdownIt("commonmark").parse(text)
        for child in token.children or []
        if child.type == "link_open" and str(child.attrGet("href")).startswith("#")
    }
    assert local <= anchors, f"{page.name}: links to anchors the edition lacks: {sorted(local - anchors)}"
    here = f"{editions.docname(page)}.html#"
    assert here not in text, f"{page.name}: a link to the site for an anchor of this very notebook"
