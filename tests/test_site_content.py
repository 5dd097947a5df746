"""What the built pages contain (read from conftest.py's one site build; no browser needed).

- every chapter notebook (book/NN_*.ipynb) is a page of the book (listed in `_toc.yml`);
- every figure a chapter's notebook produced when the build ran it is on the page, and its file is there;
- exercises are numbered, and each has its solution in a dropdown;
- training progress bars are one clean line per run: no tqdm widget (it cannot render on a static
  page), and no half-finished bar;
- the intro's chapter table and the instructors' page show each chapter's run time as this build
  measured it (`_build/html/_static/chapter-runtimes.json`), not a number typed by hand.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import nbformat
import pytest
import yaml
from conftest import EXECUTED, HTML, REPO, SiteBuild

from tools.book_ext import NO_CHAPTER, RUNTIMES_JSON, format_seconds
from tools.common import chapters

pytestmark = pytest.mark.site

CHAPTERS = chapters()
IMAGE_MIMES = ("image/png", "image/jpeg", "image/svg+xml", "image/gif")
REMOVED = {"remove-output", "remove-cell"}
# A tqdm bar: "desc: 100%|██████████| 300/300 [00:05<00:00, 58.1it/s, loss=0.0123]"
BAR = re.compile(r"^(?P<prefix>.*?)(?::\s*)?\s*(?P<pct>\d{1,3})%\|[^|]*\|\s*(?P<n>\d+)/(?P<total>\d+)")


def _ids(paths):
    return [p.stem for p in paths]


class _Page(HTMLParser):
    """The bits of a built page the tests look at."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self._stack: list[tuple[str, str]] = []  # (tag, class) of the open elements
        self.output_images: list[str] = []
        self.output_texts: list[str] = []
        self.exercises: list[dict] = []
        self.solutions: list[dict] = []
        self.scripts: list[str] = []
        self.runtime_rows: list[list[str]] = []
        self._text_target: list[str] | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None
        self._caption: list[str] | None = None
        self.feed(text)

    def _inside(self, cls: str) -> bool:
        return any(cls in c.split() for _, c in self._stack)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = a.get("class") or ""
        if tag == "img" and self._inside("cell_output"):
            self.output_images.append(a.get("src") or "")
        if tag == "script":
            self.scripts.append(a.get("type") or "")
        if tag == "div" and "exercise" in cls.split():
            self.exercises.append({"id": a.get("id"), "number": None})
        if tag == "div" and "solution" in cls.split():
            self.solutions.append({"id": a.get("id"), "classes": cls.split(), "refs": []})
        if tag == "a" and self.solutions and self._inside("solution") and a.get("href", "").startswith("#"):
            self.solutions[-1]["refs"].append(a["href"][1:])
        if tag == "span" and "caption-number" in cls.split() and self._inside("exercise"):
            self._caption = []
        if tag == "pre" and self._inside("cell_output"):
            self._text_target = []
        if tag == "tr":
            self._row = []
        if tag in ("td", "th") and self._row is not None:
            self._cell = []
        if tag not in ("img", "br", "meta", "link", "input", "hr"):
            self._stack.append((tag, cls))

    def handle_endtag(self, tag):
        if tag == "pre" and self._text_target is not None:
            self.output_texts.append("".join(self._text_target))
            self._text_target = None
        if tag == "span" and self._caption is not None:
            self.exercises[-1]["number"] = "".join(self._caption).strip()
            self._caption = None
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tr" and self._row is not None:
            self.runtime_rows.append(self._row)
            self._row = None
        while self._stack:
            if self._stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        for target in (self._text_target, self._caption, self._cell):
            if target is not None:
                target.append(data)


def _page(docname: str) -> _Page:
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
def test_exercises_are_numbered_with_solutions_in_dropdowns(chapter: Path, built) -> None:
    docname = f"book/{chapter.stem}"
    page = _page(docname)
    assert page.exercises, f"{docname}: no exercises on the page (CONTRIBUTING: at least three)"
    numbers = [e["number"] for e in page.exercises]
    assert all(n and re.fullmatch(r"Exercise \d+(\.\d+)*", n) for n in numbers), (
        f"{docname}: unnumbered exercises: {numbers}"
    )
    assert len(set(numbers)) == len(numbers), f"{docname}: exercise numbers repeat: {numbers}"
    for sol in page.solutions:
        assert "dropdown" in sol["classes"], f"{docname}: solution {sol['id']} is not a dropdown (:class: dropdown)"
    solved = {ref for sol in page.solutions for ref in sol["refs"]}
    unsolved = [e["id"] for e in page.exercises if e["id"] not in solved]
    assert not unsolved, f"{docname}: exercises without a solution: {unsolved}"


@pytest.mark.parametrize("chapter", CHAPTERS, ids=_ids(CHAPTERS))
def test_progress_bars_are_one_clean_line_per_run(chapter: Path, built) -> None:
    docname = f"book/{chapter.stem}"
    page = _page(docname)
    widgets = [t for t in page.scripts if "jupyter.widget" in t]
    assert not widgets, (
        f"{docname}: the page embeds {len(widgets)} Jupyter widget(s), which a static page "
        "cannot render (a tqdm bar outside lib.train?)"
    )
    for text in page.output_texts:
        bars = [m for m in map(BAR.match, text.splitlines()) if m]
        for m in bars:
            assert int(m["n"]) > 0, f"{docname}: a progress bar in its initial state: {m.group(0)!r}"
        for a, b in zip(bars, bars[1:]):  # a live bar's refreshes: the same bar again, further on
            same_bar = (a["prefix"], a["total"]) == (b["prefix"], b["total"])
            assert not (same_bar and int(a["n"]) < int(a["total"]) and int(b["n"]) > int(a["n"])), (
                f"{docname}: a progress bar is printed more than once:\n{a.group(0)}\n{b.group(0)}"
            )


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


def test_instructors_page_tabulates_every_chapter(built) -> None:
    page = HTML / "book" / "instructors.html"
    assert page.is_file(), "book/instructors.md (the appendix 'For instructors') was not built"
    rows = _page("book/instructors").runtime_rows
    measured = _runtimes()["chapters"]
    for data in measured.values():
        assert [data["title"], format_seconds(data["seconds"])] in rows, (
            f"instructors page: no row for {data['title']!r} with its measured time"
        )
