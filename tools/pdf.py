"""The whole book as one PDF, in English (``_build/html/book.pdf``) and in Chinese (``_build/html/zh/book.pdf``).

    python -m tools.pdf            # both, from the execution cache of the last build
    python -m tools.pdf zh_CN      # one language

``python -m tools.site`` (the README's build command) makes both, and every page of the site links
to its language's PDF (the download menu: ``tools/book_ext/header_buttons.py``). Four steps:

1. **Render**: Sphinx's ``singlehtml`` builder writes the book as one HTML page, from the execution
   cache (nothing runs again), with the solutions open (no dropdowns).
2. **Place**: that page (``book/intro.html``) links its style sheets, images, scripts and fonts as if
   it sat at the build's root (``_static/…``, ``_images/…``, ``mathjax/…``), so a copy of it is written
   there (``book.html``), and every file it links must exist (:func:`unresolved`), or nothing is printed;
   its chapters get their site's heading levels and anchors of their own (:func:`promote_chapters`),
   its links are made right for a PDF (:func:`retarget`, :func:`link_what_is_left_out`).
3. **Print**: a headless Chromium (Selenium, the page served on localhost) opens it, loads every image,
   waits for the fonts and for MathJax's typesetting promise, names each chapter's pages (the running
   head in the top margin), and prints with DevTools' ``Page.printToPDF``, links kept.
4. **Bookmarks**: the outline of the chapters and their sections, from the headings (:func:`write_outline`).

The print style sheet (``_static/book.css``, ``@media print`` and ``@page``) leaves out the interface
(header, sidebars, buttons, the show-code and show-solution prompts, the explorers' controls: an
explorer prints in its first state), starts every chapter on a new page, keeps figures whole, wraps
code at the column and lets it run on across pages, numbers the display equations within each chapter
(beside them, never over them) and the pages. English on US Letter (the course's own paper), Chinese
on A4.

The same engine as the browser tests, with no TeX to install; fonts embedded (Noto CJK for the Chinese).
"""

from __future__ import annotations

import argparse
import base64
import re
import shutil
import sys
import time
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from bs4 import BeautifulSoup

from tools.common import REPO
from tools.sphinx_build import build_sphinx_language

BUILD = REPO / "_build"
TARGETS = {"en": BUILD / "html" / "book.pdf", "zh_CN": BUILD / "html" / "zh" / "book.pdf"}
# Sphinx settings of the one-page book: solutions open (sphinx-togglebutton folds nothing it cannot match).
OVERRIDES = {"togglebutton_selector": ".book-pdf-nothing-to-fold"}
# Paper, in inches: US Letter for the English edition (CS224N's readers print on it), A4 for the Chinese.
PAPER = {"en": (8.5, 11.0), "zh_CN": (8.27, 11.69)}
PRINTED_PAGE = "book.html"  # the one-page book, at the build's root where its links resolve
PRINT_TIMEOUT_S = 300
DOCUMENT_ID = re.compile(r"^document-")  # Sphinx's marker of a page in the one-page book
TO_DOCUMENT = re.compile(r"^#document-")  # a link to it
IN_PAGE = re.compile(r"^#")  # a link within the one page

# Runs in the page (async) before it is printed: every image loaded (none is lazy), the fonts ready,
# MathJax's typesetting finished; each chapter (a top-level section with an <h1>) printed on pages
# named after it, whose top margin shows its title (Chromium draws @page margin boxes, but not
# string-set: a named page per chapter carries its running head). Returns what it found.
_PREPARE = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const images = [...document.images];
  for (const img of images) { img.loading = "eager"; img.decoding = "sync"; }
  await Promise.all(images.map((img) => img.complete ? null
    : new Promise((resolve) => { img.addEventListener("load", resolve); img.addEventListener("error", resolve); })));
  await document.fonts.ready;
  let typeset = false;
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) { await MathJax.startup.promise; typeset = true; }
  const quote = (text) => '"' + text.replace(/\\/g, "\\\\").replace(/"/g, '\\"') + '"';
  const rules = [];
  const chapters = [...document.querySelectorAll("article section")].filter((s) => s.querySelector(":scope > h1"));
  chapters.forEach((section, i) => {
    const heading = section.querySelector(":scope > h1").cloneNode(true);
    heading.querySelectorAll(".headerlink").forEach((link) => link.remove());
    const title = heading.textContent.trim();
    section.style.page = "book-chapter-" + i;
    rules.push("@page book-chapter-" + i + " { @top-center { content: " + quote(title) + "; } }");
  });
  const style = document.createElement("style");
  style.textContent = "@media print { " + rules.join("\n") + " }";
  document.head.appendChild(style);
  await document.fonts.ready;
  done({
    images: images.length,
    broken: images.filter((img) => !(img.naturalWidth > 0)).map((img) => img.getAttribute("src")),
    typeset,
    math: document.querySelectorAll("mjx-container").length,
    chapters: chapters.length,
  });
})().catch((error) => done({error: String(error)}));
"""


def browser() -> str | None:
    """A Chromium or Chrome to print with, or ``None``."""
    from tools.browser import CHROMIUM, DRIVER, find_executable

    if find_executable(DRIVER) is None:
        return None
    return find_executable(CHROMIUM)


def render(language: str, environment_of: str | None = None) -> Path | None:
    """The book as one HTML page in ``language``, placed where its links resolve
    (``_build/pdf-<language>/html/book.html``), or ``None`` if the Sphinx build failed (its warnings
    are errors, as the site's).

    One folder down: myst-nb writes its notebooks beside the output folder (``jupyter_execute``), and
    ``_build/jupyter_execute`` holds the site's executed notebooks, with their outputs."""
    out = BUILD / f"pdf-{language}" / "html"
    shutil.rmtree(out.parent, ignore_errors=True)
    code = build_sphinx_language(
        language, out, builder="singlehtml", overrides=OVERRIDES, environment_of=environment_of
    )
    return place_page(out) if code == 0 else None


def place_page(out: Path) -> Path:
    """Write the one-page book that ``out/index.html`` redirects to beside ``_static/`` (the folder its
    resources are linked from) as :data:`PRINTED_PAGE`, its links made right for a PDF
    (:func:`retarget`); raise if a file it needs to be drawn is missing there (:func:`unresolved`)."""
    redirect = (out / "index.html").read_text(encoding="utf-8")
    found = re.search(r"""url=([^"'>\s]+)""", redirect)
    source = out / (found.group(1) if found else "index.html")
    soup = BeautifulSoup(source.read_text(encoding="utf-8"), "html.parser")
    retarget(soup)
    promote_chapters(soup)
    link_what_is_left_out(soup)
    title_page(soup)
    page = out / PRINTED_PAGE
    if missing := unresolved(soup, out):
        raise FileNotFoundError(f"{page} needs {len(missing)} files that are not there, e.g. {missing[:5]}")
    page.write_text(str(soup), encoding="utf-8")
    return page


def retarget(soup) -> None:
    """Make the links of the one-page book right for a PDF, in place: a link into the book itself
    (``book/intro.html#x``) becomes ``#x``, a link to anything else of the site (the other language,
    the chapters' zip, a figure's full size) its address on the web (the page's canonical URL); the
    search's script goes (the one-page book has no search index)."""
    canonical = soup.select_one("link[rel=canonical]")["href"]  # <site>/book/intro.html
    root = urljoin(canonical, "../")
    for script in soup.select("script[src='searchindex.js']"):
        script.decompose()
    for anchor in soup.find_all("a", href=True):
        href = anchor["href"]
        if urlsplit(href).scheme or href.startswith("#"):
            continue
        # the page's own content is written from the build's root; the theme's links from book/
        url = urljoin(canonical if href.startswith("../") else root, href)
        page, _, fragment = url.partition("#")
        anchor["href"] = f"#{fragment}" if page == canonical else url


def promote_chapters(soup) -> int:
    """Give each page of the book its site's heading levels and its own anchors back, in place.

    ``singlehtml`` nests every page inside the first (its toctree), one level down, so a chapter's
    title is an ``<h2>``: each page (a ``<section>`` after Sphinx's ``<span id="document-…">``) has its
    headings raised one level, so that the chapter titles are ``<h1>`` (each on a new page) and their
    sections ``<h2>``. Sphinx's marker goes (an empty box between two chapters would print a blank
    page) and links to it go to the chapter's section; an id that an earlier page already has (every
    chapter has its "Exercises", "Summary", "References") is made the page's own, with the page's
    links to it. Returns the number of pages raised."""
    # (find_all, not CSS selectors: soupsieve took seconds over the whole book's page)
    markers = [(marker, marker.find_next_sibling("section")) for marker in soup.find_all("span", id=DOCUMENT_ID)]
    markers = [(marker, page) for marker, page in markers if page is not None]
    inside = {id(tag) for _, page in markers for tag in (page, *page.find_all(id=True))}
    seen = {tag["id"] for tag in soup.find_all(id=True) if id(tag) not in inside}
    seen -= {marker["id"] for marker, _ in markers}
    to_marker = {}  # the links to each marker, found in one pass
    for link in soup.find_all("a", href=TO_DOCUMENT):
        to_marker.setdefault(link["href"][1:], []).append(link)
    raised = 0
    for marker, page in markers:
        for heading in page.find_all(re.compile(r"^h[2-6]$")):
            heading.name = f"h{int(heading.name[1]) - 1}"
        renamed = {}
        for tag in [page, *page.find_all(id=True)]:
            if tag["id"] in seen:
                renamed[tag["id"]] = tag["id"] = f"{tag['id']}--{raised + 1}"
            seen.add(tag["id"])
        for link in page.find_all("a", href=IN_PAGE):
            if (anchor := link["href"][1:]) in renamed:
                link["href"] = f"#{renamed[anchor]}"
        # (Chromium writes a destination for a section's id, but for no id with a slash in it)
        for link in to_marker.get(marker["id"], []):
            link["href"] = f"#{page['id']}"
        page["data-document"] = marker["id"].removeprefix("document-")
        marker.decompose()
        raised += 1
    return raised


def link_what_is_left_out(soup) -> int:
    """A link to what the one-page book leaves out (a folded cell's figure: ``hidden``) goes to its
    page on the site instead, in place; returns how many links were changed."""
    root = urljoin(soup.select_one("link[rel=canonical]")["href"], "../")
    hidden = {tag["id"]: tag for folded in soup.find_all(hidden=True) for tag in folded.find_all(id=True)}
    changed = 0
    for link in soup.find_all("a", href=IN_PAGE):
        target = hidden.get(link["href"][1:])
        if target is None:
            continue
        page = target.find_parent(attrs={"data-document": True})
        link["href"] = urljoin(root, f"{page['data-document']}.html{link['href']}")
        changed += 1
    return changed


def heading_text(heading) -> str:
    """A heading's words, without its permalink (``#``), its spaces collapsed."""
    words = (text for text in heading.find_all(string=True) if not text.find_parent(class_="headerlink"))
    return " ".join(" ".join(words).split())


def title_page(soup) -> None:
    """The theme's print header, on the book's first page, in place: the book's title (the page's
    ``<title>``) over its contents, whose entries go to the chapters (as :func:`promote_chapters`
    left their sections' ids); the body marked ``book-pdf`` for the print style sheet."""
    soup.body["class"] = [*soup.body.get("class", []), "book-pdf"]
    header = soup.select_one("#jb-print-docs-body")
    if header is None:
        return
    header.h1.string = soup.head.title.get_text(strip=True)
    chapters = {heading_text(title): title.parent["id"] for title in soup.select("article section > h1")}
    for link in header.select("#jb-print-toc a[href^='#']"):
        link["href"] = f"#{chapters.get(' '.join(link.get_text(' ').split()), link['href'][1:])}"


def headings(soup) -> list[tuple[int, str, str]]:
    """The book's chapters and their sections, in order: (level 1 or 2, title as plain text, the id
    of its section), from the ``<h1>`` and ``<h2>`` of the one-page book (after :func:`promote_chapters`)."""
    found = []
    article = soup.find("article")
    chapters_and_sections = article.find_all(["h1", "h2"]) if article else []
    for heading in (h for h in chapters_and_sections if h.parent.name == "section"):  # article section > h1, h2
        title = re.sub(r"\\[()]", "", heading_text(heading))  # inline math: its source
        title = re.sub(r"\\(\w+)", r"\1", title).replace("{", "").replace("}", "")
        found.append((int(heading.name[1]), title, heading.parent["id"]))
    return found


def write_outline(target: Path, entries: list[tuple[int, str, str]]) -> int:
    """Replace the outline (bookmarks) of the PDF ``target`` by ``entries`` (:func:`headings`): each
    chapter at the top level, its sections under it, each going to its heading (Chromium writes a
    named destination for every heading's section, which its permalink links to). The viewer opens
    with the outline shown. Returns the number of entries written; raises if a heading has no
    destination. (pikepdf, qpdf's bindings: pypdf took 11 s to rewrite the 17 MB file.)"""
    import pikepdf

    with pikepdf.open(target, allow_overwriting_input=True) as document:
        destinations = document.Root.get("/Dests", pikepdf.Dictionary())
        if missing := [anchor for _, _, anchor in entries if f"/{anchor}" not in destinations]:
            raise RuntimeError(f"{target}: no destination for {len(missing)} headings, e.g. {missing[:5]}")
        with document.open_outline() as outline:
            outline.root.clear()
            chapter = None
            for level, title, anchor in entries:
                destination = destinations[f"/{anchor}"]
                if isinstance(destination, pikepdf.Dictionary):
                    destination = destination.D
                item = pikepdf.OutlineItem(title, destination=destination)
                if level == 1 or chapter is None:
                    outline.root.append(item)
                    chapter = item
                else:
                    chapter.children.append(item)
        document.Root.PageMode = pikepdf.Name.UseOutlines
        document.save(target)
    return len(entries)


def unresolved(soup, folder: Path) -> list[str]:
    """What the page ``soup`` loads to be drawn (style sheets, scripts, images, icons) and that does
    not exist relative to ``folder``; links to read elsewhere (``<a>``, canonical and alternate pages)
    are not loaded."""
    loaded = [tag["src"] for tag in soup.select("script[src], img[src], source[src]")]
    loaded += [tag["href"] for tag in soup.select("link[href]") if {"stylesheet", "icon", "preload"} & set(tag["rel"])]
    missing = []
    for link in loaded:
        parts = urlsplit(link)
        if not (parts.scheme or parts.netloc) and not (folder / unquote(parts.path)).exists():
            missing.append(link)
    return missing


def print_pdf(page: Path, target: Path, language: str) -> dict:
    """Print ``page`` to ``target`` on ``language``'s paper (:data:`PAPER`) with headless Chromium, once
    every image, font and equation is ready; what the page reported (:data:`_PREPARE`). Raises if an
    image did not load or MathJax did not finish."""
    from tools.browser import chromium, serve

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    width, height = PAPER[language]
    with serve(page.parent) as base, chromium() as driver:
        driver.set_script_timeout(PRINT_TIMEOUT_S)
        driver.get(f"{base}/{page.name}")
        report = driver.execute_async_script(_PREPARE)
        if report.get("error") or report["broken"] or not report["typeset"]:
            raise RuntimeError(f"{page}: not ready to print: {report}")
        printed = driver.execute_cdp_cmd("Page.printToPDF", {
            "paperWidth": width, "paperHeight": height, "printBackground": True,
            "displayHeaderFooter": False, "generateTaggedPDF": True,  # the outline: write_outline
        })  # fmt: skip
    partial.write_bytes(base64.b64decode(printed["data"]))
    partial.replace(target)
    return report


def printed(language: str) -> Path:
    """Where :func:`build` prints the PDF of ``language`` before it goes into the site (``_build/pdf-<language>/book.pdf``)."""
    return BUILD / f"pdf-{language}" / "book.pdf"


def place(language: str) -> Path:
    """Copy the printed PDF of ``language`` into its site (:data:`TARGETS`)."""
    TARGETS[language].parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(printed(language), TARGETS[language])
    return TARGETS[language]


def build(language: str, *, into_site: bool = True, environment_of: str | None = None) -> int:
    """The PDF of ``language``, printed to :func:`printed` and (``into_site``) copied into its site
    (:data:`TARGETS`); 0 on success, 1 on a failed build. ``environment_of``: see
    :func:`tools.sphinx_build.build_sphinx_language` (``tools.site`` builds each language's PDF after its site,
    from the site's pages as read)."""
    if browser() is None:
        print(
            "tools.pdf: no Chromium and chromedriver (apt-get install chromium chromium-driver): no PDF",
            file=sys.stderr,
        )
        return 1
    start = time.perf_counter()
    page = render(language, environment_of)
    if page is None:
        return 1
    report = print_pdf(page, printed(language), language)
    entries = write_outline(printed(language), headings(BeautifulSoup(page.read_text(encoding="utf-8"), "lxml")))
    target = place(language) if into_site else printed(language)
    import pikepdf

    with pikepdf.open(target) as document:
        pages, size = len(document.pages), target.stat().st_size / 2**20
    print(
        f"tools.pdf: {target.relative_to(REPO)}: {pages} pages, {size:.1f} MiB, {report['chapters']} chapters, "
        f"{report['images']} images, {report['math']} equations, {entries} bookmarks, in {time.perf_counter() - start:.0f} s"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pdf", description=__doc__.split("\n")[0])
    parser.add_argument("languages", nargs="*", help=f"any of {', '.join(TARGETS)} (default: both)")
    args = parser.parse_args(argv)
    if unknown := set(args.languages) - set(TARGETS):
        parser.error(f"unknown language(s) {sorted(unknown)}; expected {', '.join(TARGETS)}")
    return max(build(language) for language in args.languages or TARGETS)


if __name__ == "__main__":
    sys.exit(main())
