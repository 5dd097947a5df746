"""What the built pages contain (read from conftest.py's one site build; no browser needed).

- every chapter notebook (book/NN_*.ipynb) is a page of the book (listed in `_toc.yml`);
- every figure a chapter's notebook produced when the build ran it is on the page, and its file is there;
- exercises are numbered per chapter (chapter 2's are "Exercise 2.1", "Exercise 2.2", ...), and each
  has its solution in a dropdown;
- every claim a chapter checked (the data of `lib.claim`'s and `lib.check`'s bundles, read with
  `lib.book.claims.read_claims`) is in the Claims appendix, in the table of its kind (claims, checks),
  with the values this build measured, linked to the place it was checked;
- training progress bars are one clean line per run: no tqdm widget (it cannot render on a static
  page), and no half-finished bar;
- the intro's chapter table and the instructors' page show each chapter's run time as this build
  measured it (`_build/html/_static/chapter-runtimes.json`), not a number typed by hand.
"""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup

from conftest import EXECUTED, HTML, REPO, SiteBuild
from lib.book.claims import CHECK, CLAIM, CheckedClaim, read_claims
from tools.book_ext.runtimes import NO_CHAPTER, RUNTIMES_JSON, format_minutes, format_seconds
from tools.common import chapters

pytestmark = pytest.mark.site

CHAPTERS = chapters()
IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
REMOVED = {"remove-output", "remove-cell"}
# A tqdm bar: "desc: 100%|██████████| 300/300 [00:05<00:00, 58.1it/s, loss=0.0123]"
BAR = re.compile(r"\d{1,3}%\|[^|]*\|\s*\d+/\d+")


def _ids(paths):
    return [p.stem for p in paths]


class _Page:
    """The bits of a built page the tests look at (parsed with BeautifulSoup)."""

    def __init__(self, text: str):
        soup = BeautifulSoup(text, "html.parser")
        outputs = [out for out in soup.select(".cell_output") if out.find_parent(class_="cell_output") is None]
        self.output_images: list[str] = [img.get("src") or "" for out in outputs for img in out.find_all("img")]
        self.output_texts: list[str] = [pre.get_text() for out in outputs for pre in out.find_all("pre")]
        self.scripts: list[str] = [script.get("type") or "" for script in soup.find_all("script")]
        self.exercises: list[dict] = []
        for div in soup.select("div.exercise"):
            caption = div.select_one("span.caption-number")
            self.exercises.append({"id": div.get("id"), "number": caption.get_text().strip() if caption else None})
        self.solutions: list[dict] = [
            {
                "id": div.get("id"),
                "classes": div.get("class", []),
                "refs": [a["href"][1:] for a in div.find_all("a", href=True) if a["href"].startswith("#")],
            }
            for div in soup.select("div.solution")
        ]
        chapter_time = soup.select_one("p.chapter-time")
        self.chapter_time: str | None = " ".join(chapter_time.get_text().split()) if chapter_time else None
        before = chapter_time.find_previous_sibling() if chapter_time else None  # the line of lecture slides
        self.before_chapter_time: str = " ".join(before.get_text().split()) if before else ""
        self.runtime_rows: list[list[str]] = [
            [" ".join(cell.get_text().split()) for cell in row.find_all(["td", "th"])] for row in soup.find_all("tr")
        ]
        # tables with an id (the Claims appendix: claims-ledger-claims, claims-ledger-checks): caption, rows
        self.tables: dict[str, tuple[str, list[list[str]]]] = {
            table["id"]: (
                " ".join(table.caption.get_text().split()) if table.caption else "",
                [[" ".join(c.get_text().split()) for c in row.find_all(["td", "th"])] for row in table.find_all("tr")],
            )
            for table in soup.find_all("table", id=True)
        }


@functools.cache
def _page(docname: str) -> _Page:
    """A built page, read once for all the tests of this file (what _Page keeps is never changed)."""
    return _Page((HTML / f"{docname}.html").read_text(encoding="utf-8"))


def _toc_files() -> set[str]:
    text = (REPO / "_toc.yml").read_text(encoding="utf-8")
    toc = yaml.safe_load(text)
    found = set()

    def walk(node):
        if isinstance(node, dict):
            if "file" in node:
                found.add(str(Path(node["file"]).with_suffix("")))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(toc)
    return found


def test_every_chapter_is_a_page_of_the_book() -> None:
    missing = [
        p.relative_to(REPO).as_posix()
        for p in CHAPTERS
        if p.relative_to(REPO).with_suffix("").as_posix() not in _toc_files()
    ]
    assert not missing, f"chapter notebooks not listed in _toc.yml (so not on the site): {missing}"


@pytest.fixture(scope="module")
def built(site_build: SiteBuild) -> SiteBuild:
    site_build.require_success()
    return site_build


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_every_figure_is_on_the_page(chapter: Path, built) -> None:
    docname = f"book/{chapter.stem}"
    executed = nbformat.read(EXECUTED / f"{docname}.ipynb", as_version=4)
    figures = sum(
        1
        for cell in executed.cells
        if cell.cell_type == "code" and not REMOVED & set(cell.metadata.get("tags", []))
        for out in cell.get("outputs", [])
        if out.get("output_type") in ("display_data", "execute_result")
        and any(m in out.get("data", {}) for m in IMAGE_MIMES)
    )
    page = _page(docname)
    assert len(page.output_images) == figures, (
        f"{docname}: the notebook made {figures} figure(s); the page shows {len(page.output_images)}"
    )
    for src in page.output_images:
        assert (HTML / "book" / src).resolve().is_file(), f"{docname}: figure file {src} is missing"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_every_figure_has_a_number_a_caption_and_alt_text_from_it(chapter: Path, built) -> None:
    """A chapter's figures are "Figure N.k", each with a caption that says what to see in it (its
    cell's ``mystnb.figure.caption``) and that caption as its alt text (not the image's file path)."""
    docname = f"book/{chapter.stem}"
    number = int(chapter.stem[:2])
    soup = BeautifulSoup((HTML / f"{docname}.html").read_text(encoding="utf-8"), "html.parser")
    images = soup.select("article .cell_output img, article figure img")
    assert images, f"{docname} shows no figure"
    for k, image in enumerate(images, start=1):
        figure = image.find_parent("figure")
        assert figure is not None and figure.figcaption is not None, f"{docname}: image {k} has no caption"
        for link in figure.figcaption.select("a.headerlink"):  # the caption's permalink (#)
            link.decompose()
        caption = " ".join(figure.figcaption.get_text(" ").split())
        assert caption.startswith(f"Figure {number}.{k}"), f"{docname}: image {k} is numbered {caption[:20]!r}"
        text = caption.split(" ", 2)[2].strip()
        alt = image.get("alt", "")
        assert "_images/" not in alt and _plain(alt) == _plain(text), (
            f"{docname}: image {k}'s alt text is {alt!r}, not its caption {text!r}"
        )


def _plain(text: str) -> str:
    """A caption as words: its inline math without MathJax's delimiters, no space before punctuation."""
    text = " ".join(text.replace("\\(", " ").replace("\\)", " ").split())
    return re.sub(r"\( ", "(", re.sub(r" ([,.;:)])", r"\1", text))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_exercises_are_numbered_with_solutions_in_dropdowns(chapter: Path, built) -> None:
    docname = f"book/{chapter.stem}"
    page = _page(docname)
    assert page.exercises, f"{docname}: no exercises on the page (CONTRIBUTING: at least three)"
    numbers = [e["number"] for e in page.exercises]
    n = int(chapter.name[:2])
    expected = [f"Exercise {n}.{k}" for k in range(1, len(numbers) + 1)]
    assert numbers == expected, f"{docname}: exercises must be numbered per chapter, {expected}; found {numbers}"
    for sol in page.solutions:
        assert "dropdown" in sol["classes"], f"{docname}: solution {sol['id']} is not a dropdown (:class: dropdown)"
    solved = {ref for sol in page.solutions for ref in sol["refs"]}
    unsolved = [e["id"] for e in page.exercises if e["id"] not in solved]
    assert not unsolved, f"{docname}: exercises without a solution: {unsolved}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_no_progress_bar_on_the_page(chapter: Path, built) -> None:
    """A static page shows what a run did in one plain line (lib.train under TQDM_DISABLE=1), never a bar."""
    docname = f"book/{chapter.stem}"
    page = _page(docname)
    widgets = [t for t in page.scripts if "jupyter.widget" in t]
    assert not widgets, (
        f"{docname}: the page embeds {len(widgets)} Jupyter widget(s), which a static page "
        "cannot render (a tqdm bar outside lib.train?)"
    )
    bars = [m.group(0) for text in page.output_texts for m in map(BAR.search, text.splitlines()) if m]
    assert not bars, f"{docname}: progress-bar lines on the page: {bars[:3]}"


def _runtimes() -> dict:
    return json.loads((HTML / "_static" / RUNTIMES_JSON).read_text(encoding="utf-8"))


def test_every_chapter_run_time_was_measured(built) -> None:
    measured = _runtimes()["chapters"]
    for chapter in CHAPTERS:
        docname = f"book/{chapter.stem}"
        assert docname in measured, f"{docname}: no run time recorded by the build"
        assert (measured[docname]["seconds"] or 0) > 0, f"{docname}: the build did not measure its run time"


def test_intro_table_shows_the_measured_run_times(built) -> None:
    measured = {v["number"]: v["seconds"] for v in _runtimes()["chapters"].values()}
    rows = _page("book/intro").runtime_rows
    header = next(r for r in rows if r and r[0] == "Chapter")
    col = header.index("Run time")
    table = {int(r[0]): r[col] for r in rows if r and r[0].isdigit() and len(r) > col}
    assert table, "the intro has no chapter table with a 'Run time' column"
    for number, shown in table.items():
        expected = format_seconds(measured[number]) if number in measured else NO_CHAPTER
        assert shown == expected, f"intro, chapter {number}: shows {shown!r}, the build measured {expected!r}"
    missing = sorted(set(measured) - set(table))
    assert not missing, f"chapters {missing} exist but have no row in the intro's table"


def test_every_chapter_says_on_its_first_screen_how_long_it_takes(built) -> None:
    """Under its line of lecture slides, each chapter says how long it takes to read and to run, as
    this build measured both (the same numbers as the intro's and the instructors' tables)."""
    for docname, data in _runtimes()["chapters"].items():
        page = _page(docname)
        assert page.chapter_time, f"{docname}: no reading and run time on its first screen (p.chapter-time)"
        assert page.before_chapter_time.startswith("CS224N Lecture 8"), (
            f"{docname}: the time is not under the line of lecture slides but under {page.before_chapter_time[:60]!r}"
        )
        for shown in (format_minutes(data["reading_minutes"]), format_seconds(data["seconds"])):
            assert shown in page.chapter_time, f"{docname}: {page.chapter_time!r} does not say {shown!r}"


def test_instructors_page_tabulates_every_chapter(built) -> None:
    page = HTML / "book" / "instructors.html"
    assert page.is_file(), "book/instructors.md (the appendix 'For instructors') was not built"
    rows = _page("book/instructors").runtime_rows
    measured = _runtimes()["chapters"]
    for data in measured.values():
        # how long it takes to read (its prose at 200 words a minute) and to run, both measured by the build
        assert 10 <= data["reading_minutes"] <= 60, data
        assert [data["title"], format_minutes(data["reading_minutes"]), format_seconds(data["seconds"])] in rows, (
            f"instructors page: no row for {data['title']!r} with its reading time and measured time"
        )


def _claims(notebook: Path) -> list[CheckedClaim]:
    """The claims and checks `lib.claim` / `lib.check` displayed when the build executed `notebook` (their data)."""
    return read_claims(nbformat.read(notebook, as_version=4))


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_every_chapter_checks_claims(chapter: Path, built) -> None:
    claims = _claims(EXECUTED / "book" / chapter.name)
    assert len(claims) >= 3, f"{chapter.name}: only {len(claims)} lib.claim call(s) displayed in its executed notebook"
    assert all(c.holds for c in claims), [c.line for c in claims if not c.holds]


def _in_name_order(shown_values: str) -> str:
    """``"b=2, a=[1, 2]"`` as ``"a=[1, 2], b=2"``: whitespace-normalised, items sorted by name.

    A claim's values are a JSON object: the site shows them in the caller's order, but nbformat
    writes the executed notebooks with sorted keys, so only the set of items can be compared.
    """
    items = re.split(r", (?=[A-Za-z_][\w.]*=)", " ".join(shown_values.split()))
    return ", ".join(sorted(items))


def test_claims_ledger_lists_every_claim_with_its_values(built) -> None:
    """The appendix's two tables, claims and checks, list exactly what the build's notebooks displayed."""
    tables = _page("book/claims").tables
    expected: dict[str, list[tuple[str, str]]] = {CLAIM: [], CHECK: []}
    for notebook in sorted((EXECUTED / "book").glob("*.ipynb")):
        for c in _claims(notebook):
            expected[c.kind].append((" ".join(c.statement.split()), _in_name_order(c.shown_values)))
    assert expected[CLAIM], "no notebook checked a claim"
    for kind in (CLAIM, CHECK):
        table_id = f"claims-ledger-{kind.lower()}s"
        if not expected[kind]:
            assert table_id not in tables
            continue
        caption, rows = tables[table_id]
        assert caption.startswith(f"{kind}s ({len(expected[kind])})"), caption
        assert rows[0][:2] == ["Chapter", kind]
        found = [(r[1], _in_name_order(r[2])) for r in rows[1:]]
        assert sorted(found) == sorted(expected[kind]), (
            f"the appendix's {kind.lower()}s are not the ones the build checked"
        )
        assert all(len(r) == 5 and r[3] == "✔" for r in rows[1:])


def test_claims_ledger_shows_every_chapter_claim_held_on_every_seed_of_the_sweep(built) -> None:
    """Every claim a chapter checked in this build has a sweep entry with the same statement, held N/N.

    A claim whose statement changed, or a claim added since the sweep, shows "no sweep entry":
    run `python -m tools.sweep NN` for its chapter (tests/tools/test_sweep.py checks the code hashes).
    """
    rows = [r for r in _page("book/claims").runtime_rows if len(r) == 5 and r[0] != "Chapter"]
    chapter_rows = [r for r in rows if r[0][:1].isdigit()]
    assert chapter_rows, "no chapter claims in the Claims appendix"
    for chapter, statement, _values, _held, over_seeds in chapter_rows:
        m = re.match(r"^(\d+)/(\d+)\b", over_seeds)
        assert m, f"{chapter}: {statement!r} has no sweep result ({over_seeds!r}): run python -m tools.sweep"
        assert m[1] == m[2] and int(m[2]) >= 10, f"{chapter}: {statement!r} held on {m[0]} seeds of the sweep"
    text = (HTML / "book" / "claims.html").read_text(encoding="utf-8")
    for chapter in CHAPTERS:
        if _claims(EXECUTED / "book" / chapter.name):
            assert f'href="{chapter.stem}.html#claim-1"' in text, f"no link to {chapter.stem}'s first claim"
            assert 'id="claim-1"' in (HTML / "book" / f"{chapter.stem}.html").read_text(encoding="utf-8")
