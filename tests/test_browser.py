"""The built site, as a reader sees it: every page of the book opened in a real headless Chromium.

`_build/html` (conftest.py's one site build) is served on localhost and every page listed in
`_toc.yml` is loaded, one after the other, in one Chromium driven by Selenium; the English pages
here, the Chinese ones in tests/test_browser_zh.py (the same tests). Each page is loaded once for all
its tests (conftest.py runs them one after another; a test that changes the page has it loaded
again for the next), in a desktop window and in a phone's. On every page:

- the browser console shows no error (a JavaScript exception, a resource that failed to load, ...);
- MathJax has run: every math element was typeset, none holds a TeX error, and no raw `$$`, `\\(`,
  `\\[` or `\\begin{` is left in the text;
- every image has loaded (`complete`, with a non-zero natural width).

On every chapter page, in addition:

- the Colab link is exactly `<colab_url>/github/<org>/<repo>/blob/<branch>/colab/[zh/]<chapter>.ipynb`
  for this chapter (from `_config.yml`), and that Colab edition exists in the repository;
- the repository button links to `repository.url`; the download button's `.ipynb` is served and
  is this chapter's notebook;
- every exercise solution is a closed dropdown: its text is hidden until its button is clicked.

On a phone (390 px) (issue 64): figure text stays at 9 px or more, code keeps its shape (no wrapped
line of code continues left of its indentation, no printed line or pandas value wraps), nothing is
cut off (what is wider than its box scrolls inside it), and what scrolls shows a shadow at the edge it
continues past. On a desktop (1280 px, light and dark) no empty bar tops the page; in dark mode the
lib.show_source listings take the dark theme's colours. Every claim box shows each value under a plain
label, smaller than the statement and at AA contrast in both themes, and stays in its column on a phone.

Needs Debian's `chromium` and `chromium-driver` (`.ci/run` installs them). Without them the test is
skipped locally and fails in CI (CI=true). Chromium runs with `--headless --no-sandbox --disable-gpu
--disable-quic --no-first-run --disable-background-networking --disable-component-update
--disable-sync` and a fresh `--user-data-dir`: the machines have no internet, and Chromium's own
background connections would otherwise get in the way.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import json
import re
import shutil
import tempfile
import threading
import urllib.request
from pathlib import Path

import pytest
import yaml

from conftest import HTML, REPO, SiteBuild, skip_or_fail
from tools.browser import CHROMIUM, CHROMIUM_FLAGS, DRIVER, QuietHandler, find_executable
from tools.common import toc_docnames

pytestmark = [pytest.mark.site, pytest.mark.browser]

# The browser and its flags are tools/browser.py's, which the readability measurement and the PDF share.
CHROMIUM_FLAGS = (*CHROMIUM_FLAGS, "--window-size=1280,900")
PAGE_TIMEOUT_S = 60
CHAPTER = re.compile(r"^book/\d\d_[^/]+$")
PAGES = toc_docnames()  # every page of the book, in the order of `_toc.yml`
CHAPTERS = [d for d in PAGES if CHAPTER.match(d)]
EXPLORERS = {  # what each chapter page shows to point at (lib.book.explorers), in page order
    "book/02_self_attention": ["lookup"],
    "book/03_scaling": ["saturation"],
    "book/04_multi_head": ["heads"],
    "book/05_masking_decoding": ["masks", "decoding"],
    "book/06_position": ["positions"],
    "book/09_pretrained": ["bert-heads"],
}

# The language of this file's pages: English here; tests/test_browser_zh.py runs the same tests on the
# Chinese site (_build/html/zh/), a file of its own so that the two workers check one language each.
LANGUAGE = "en"


def on(docnames: list[str]):
    """The pages a test checks, as English docnames: each file checks them in its own LANGUAGE."""

    def mark(test):
        test.docnames = list(docnames)
        return test

    return mark


def pytest_generate_tests(metafunc) -> None:
    """Parametrize every test marked with `on` by its pages, in the language of the file it runs in."""
    docnames = getattr(metafunc.function, "docnames", None)
    if docnames is not None:
        prefix = "" if metafunc.module.LANGUAGE == "en" else f"{metafunc.module.LANGUAGE}/"
        metafunc.parametrize("docname", [prefix + d for d in docnames])


@pytest.fixture(scope="module")
def site_url(site_build: SiteBuild):
    site_build.require_success()
    handler = functools.partial(QuietHandler, directory=str(HTML))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser():
    chromium, driver_path = find_executable(CHROMIUM), find_executable(DRIVER)
    if chromium is None or driver_path is None:
        skip_or_fail(
            "no headless browser: install Debian's chromium and chromium-driver "
            "(apt-get install -y chromium chromium-driver)"
        )
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_or_fail("selenium is not installed (it is in requirements.txt)")
    profile = tempfile.mkdtemp(prefix="chromium-profile-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: Selenium Manager never tries to download one (there is no internet).
    driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
    driver.set_page_load_timeout(PAGE_TIMEOUT_S)
    driver.set_script_timeout(PAGE_TIMEOUT_S)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


# Runs in the page: wait for MathJax (if the page loads it), then report what a reader would see.
_INSPECT = r"""
const done = arguments[arguments.length - 1];
const report = () => {
  const skip = "pre, code, script, style, textarea, mjx-container, .highlight";
  const raw = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest(skip)) continue;
    if (/\$\$|\\\(|\\\[|\\begin\{/.test(n.textContent)) raw.push(n.textContent.trim().slice(0, 120));
  }
  const math = [...document.querySelectorAll("span.math, div.math")];
  done({
    mathjax: !!window.MathJax,
    math: math.length,
    typeset: math.filter(m => m.querySelector("mjx-container")).length,
    errors: [...document.querySelectorAll("mjx-merror")].map(e => e.getAttribute("data-mjx-error") || e.textContent),
    raw: raw,
    images: [...document.images].map(i => ({src: i.getAttribute("src"), ok: i.complete && i.naturalWidth > 0})),
  });
};
const start = Date.now();
const wait = () => {
  if (document.readyState !== "complete") return setTimeout(wait, 50);
  if (!document.querySelector("span.math, div.math")) return report();
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    return MathJax.startup.promise.then(report, e => done({fatal: "MathJax failed: " + e}));
  if (Date.now() - start > 30000) return report();  // MathJax never loaded: report says so
  setTimeout(wait, 50);
};
wait();
"""


def _console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]


# --- One load of a page for all its tests ------------------------------------------------------------
# conftest.py runs a page's tests one after another, in the order of this file: first those that only
# read the page, then those that change it (open its solutions and hidden cells, move an explorer's
# controls). Each browser loads a page once, waits for it as a reader would (its scripts and MathJax
# done: _INSPECT) and keeps what the load logged; the next test of the same page reads the page as it
# is. A test that changes the page says so (`_changed`), and the next test loads it afresh.

_shown: dict[str, dict] = {}  # the driver's session id -> {"url", "inspected", "errors"} of the page it shows


def _open(driver, url: str) -> dict:
    """Show `url` in `driver`, loading it only if the driver does not show it unchanged already; what
    the load's _INSPECT saw, and the console errors it logged."""
    shown = _shown.get(driver.session_id)
    if shown is None or shown["url"] != url:
        _shown.pop(driver.session_id, None)
        driver.get(url)
        inspected = driver.execute_async_script(_INSPECT)
        shown = _shown[driver.session_id] = {"url": url, "inspected": inspected, "errors": _console_errors(driver)}
    return shown


def _changed(driver) -> None:
    """The page `driver` shows is no longer as loaded: the next test loads it again."""
    _shown.pop(driver.session_id, None)


@contextlib.contextmanager
def _theme_kept(driver):
    """Inside the block a test may switch the page's theme (light, dark); after it, the page is back in
    the theme it loaded in (or, if the block failed, loaded afresh by the next test)."""
    theme = driver.execute_script("return document.documentElement.dataset.theme")
    try:
        yield
    except BaseException:
        _changed(driver)
        raise
    driver.execute_script("document.documentElement.dataset.theme = arguments[0]", theme)


@on(PAGES)
def test_page_renders_cleanly(docname: str, browser, site_url: str) -> None:
    page = HTML / f"{docname}.html"
    assert page.is_file(), f"{docname} is in _toc.yml but {page} was not built"
    shown = _open(browser, f"{site_url}/{docname}.html")
    seen = shown["inspected"]
    problems = []
    if "fatal" in seen:
        problems.append(seen["fatal"])
    else:
        if seen["math"] and not seen["mathjax"]:
            problems.append("the page has math but MathJax did not load")
        if seen["typeset"] != seen["math"]:
            problems.append(f"MathJax typeset {seen['typeset']} of {seen['math']} math elements")
        problems += [f"MathJax error: {e}" for e in seen["errors"]]
        problems += [f"raw TeX left in the text: {t!r}" for t in seen["raw"]]
        problems += [f"image did not load: {i['src']}" for i in seen["images"] if not i["ok"]]
    problems += [f"console error: {m}" for m in shown["errors"] + _console_errors(browser)]
    assert not problems, f"{docname}:\n  " + "\n  ".join(problems)


# --- Readable at the column's width (issue 21): tools/readability.py's measurements, as a test ----------


@on(PAGES)
def test_page_is_readable_at_the_column_width(docname: str, browser, site_url: str) -> None:
    """Every SVG figure's text renders at >= 9 CSS px, no figure is a raster image, and no output block,
    display equation or code cell scrolls sideways, in a 1280-px window."""
    from tools.readability import summary

    report, readable = summary(docname, _measured(browser, f"{site_url}/{docname}.html"))
    assert readable, report


def _measured(driver, url: str) -> dict:
    """tools/readability.py's measurements of the page as loaded (taken again on a fresh load if the
    browser handed the script a document with no content, as a loaded machine once did)."""
    from tools.readability import MEASURE_JS, measure_page

    _open(driver, url)
    seen = driver.execute_async_script(MEASURE_JS)
    if "fatal" in seen:
        _changed(driver)
        seen = measure_page(driver, url)
    return seen


@pytest.fixture(scope="module")
def phone():
    """A headless Chromium whose page is 390 CSS px wide (a phone held upright)."""
    from tools.browser import chromium

    if find_executable(CHROMIUM) is None or find_executable(DRIVER) is None:
        skip_or_fail("no headless browser: apt-get install -y chromium chromium-driver")
    with chromium(390, 844) as driver:
        yield driver


@on(PAGES)
def test_page_is_readable_on_a_phone(docname: str, phone, site_url: str) -> None:
    """At 390 px figure text stays >= 9 px, as at the column's width (a figure shrinks to the column
    down to that size, then scrolls inside its output and opens full size on a tap; an explorer too),
    no display equation is cut off (a wide one scrolls inside its box) and the page does not scroll
    sideways as a whole."""
    from tools.readability import summary

    report, readable = summary(docname, _measured(phone, f"{site_url}/{docname}.html"), phone=True)
    assert readable, report


def test_the_readability_check_can_fail() -> None:
    from tools.readability import summary

    fine = {"figures": [], "outputs": [], "output_blocks": 3, "math": [], "math_displays": 1}
    fine |= {"code_inputs_overflowing": 0, "code_inputs": 2}
    assert summary("page", fine)[1]
    small = {"kind": "svg", "smallest": 6.0, "label": "x", "src": "a.svg", "scale": 0.5}
    assert not summary("page", {**fine, "figures": [small]})[1]
    assert not summary("page", {**fine, "outputs": [{"by": 40, "classes": "output", "text": "…"}]})[1]
    assert not summary("page", {**fine, "math": [{"by": 12, "tex": "x"}]})[1]
    assert not summary("page", {**fine, "figures": [{"kind": "raster", "shrink": 0.5, "src": "a.png"}]})[1]
    phone = {**fine, "outputs": [{"by": 40, "classes": "output", "text": "…"}], "math_clipped": [], "page_overflow": 0}
    assert summary("page", phone, phone=True)[1]  # on a phone a figure may scroll inside its output ...
    assert not summary("page", {**phone, "math_clipped": ["x"]}, phone=True)[1]  # ... an equation not be cut
    assert not summary("page", {**phone, "page_overflow": 30}, phone=True)[1]  # ... nor the page scroll
    assert not summary("page", {**phone, "figures": [small]}, phone=True)[1]
    assert not summary("page", {**phone, "figures": [{**small, "smallest": 8.5}]}, phone=True)[1]  # 9 px on a phone


# --- The desktop page and dark mode (issue 64) -------------------------------------------------------------

# Runs in the page: in the theme given, what a reader sees at the top of the window, at a tenth, half
# and nine tenths of its width: the element there, and whether it belongs to the page's body (the
# sidebars, the article's bar of buttons, the article: .bd-container) rather than to a bar above it.
_TOP_OF_THE_PAGE = r"""
document.documentElement.dataset.theme = arguments[0];
window.scrollTo(0, 0);
return [0.1, 0.5, 0.9].map((f) => {
  const x = Math.round(window.innerWidth * f), el = document.elementFromPoint(x, 8);
  return [x, el ? el.tagName.toLowerCase() + "." + [...el.classList].join(".") : null, !!(el && el.closest(".bd-container"))];
});
"""


@on(["book/intro", "book/02_self_attention", "book/06_position", "book/claims"])
def test_no_empty_band_tops_the_page(docname: str, browser, site_url: str) -> None:
    """At 1280 px, light and dark, the page starts at the top of the window: the sidebars and the article's
    bar of buttons, not pydata-sphinx-theme's navbar, which held only a search field hidden there (the
    same box in the template of every page)."""
    _open(browser, f"{site_url}/{docname}.html")
    with _theme_kept(browser):
        for theme in ("light", "dark"):
            seen = browser.execute_script(_TOP_OF_THE_PAGE, theme)
            assert all(body for _, _, body in seen), f"{docname} ({theme}): at the top of the window: {seen}"


# Runs in the page: in dark mode, the first lib.show_source listing's ground, the code cells' ground,
# the ground of the HTML output that holds it, and every text of the listing and its caption whose
# colour has a contrast below 4.5 with its ground (WCAG AA).
_DARK_LISTING = r"""
document.documentElement.dataset.theme = "dark";
const pre = document.querySelector("div.lib-source pre");
if (!pre) return null;
const channels = (c) => c.match(/[\d.]+/g).map(Number).slice(0, 3);
const luminance = (c) => {
  const [r, g, b] = channels(c).map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
};
const bg = (el) => getComputedStyle(el).backgroundColor;
const low = [];
const caption = pre.parentElement.previousElementSibling;
for (const [box, ground] of [[pre, bg(pre)], [caption, bg(caption)]]) {
  for (const el of [box, ...box.querySelectorAll("*")]) {
    if (![...el.childNodes].some((n) => n.nodeType === 3 && n.data.trim())) continue;
    const c = contrast(getComputedStyle(el).color, ground);
    if (c < 4.5) low.push(`${el.textContent.trim().slice(0, 24)}: ${getComputedStyle(el).color} (${c.toFixed(1)})`);
  }
}
return {listing: bg(pre), cells: bg(document.querySelector("div.cell_input pre")),
        output: bg(pre.closest(".output")), low: [...new Set(low)]};
"""

LISTING_PAGES = [d for d in PAGES if any("show_source(" in p.read_text(encoding="utf-8") for p in REPO.glob(f"{d}.*"))]


@on(LISTING_PAGES)
def test_source_listings_are_dark_in_dark_mode(docname: str, browser, site_url: str) -> None:
    """In dark mode a lib.show_source listing (pygments' inline light colours) takes the dark theme's:
    its ground is the code cells', the light backdrop of HTML outputs is left out around it, and every
    token and its caption read at a contrast of 4.5 or more."""
    _open(browser, f"{site_url}/{docname}.html")
    with _theme_kept(browser):
        seen = browser.execute_script(_DARK_LISTING)
    assert seen, f"{docname}: no lib.show_source listing on the page"
    assert seen["listing"] == seen["cells"], f"{docname}: listing on {seen['listing']}, code cells on {seen['cells']}"
    assert seen["output"] == "rgba(0, 0, 0, 0)", f"{docname}: the listing's output has a backdrop: {seen['output']}"
    assert not seen["low"], f"{docname}: low contrast in dark mode: {seen['low']}"


# --- The claim boxes (issue 64, item 2) -------------------------------------------------------------------

# Runs in the page: in the theme given, every claim box (lib.claim): how many claims and boxes, and per
# box of its values: their font size against the statement's, the contrast of their (translucent) text
# on the box's ground, whether a value is shown as its name in the code (its tooltip) and `=` (no label),
# and how far the box reaches past its column.
_CLAIM_BOXES = r"""
document.documentElement.dataset.theme = arguments[0];
const rgba = (c) => { const m = c.match(/[\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
const over = (top, under) => [0, 1, 2].map((i) => top[i] * top[3] + under[i] * (1 - top[3])).concat([1]);
const ground = (el) => {
  const chain = [];
  for (let e = el; e; e = e.parentElement) chain.unshift(e);
  return chain.reduce((bg, e) => over(rgba(getComputedStyle(e).backgroundColor), bg), [255, 255, 255, 1]);
};
const luminance = (c) => {
  const [r, g, b] = c.slice(0, 3).map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => { const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x); return (hi + 0.05) / (lo + 0.05); };
const problems = [];
const boxes = [...document.querySelectorAll("div.book-claim")];
for (const box of boxes) {
  const statement = box.querySelector("strong").parentElement;
  const column = box.closest(".cell_output") || box.parentElement;
  const past = box.getBoundingClientRect().right - column.getBoundingClientRect().right;
  if (past > 1) problems.push(`${statement.textContent.slice(0, 40)}: ${past.toFixed(0)} px past its column`);
  for (const values of box.querySelectorAll("div[style*='opacity']")) {
    const style = getComputedStyle(values), bg = ground(values), fg = rgba(style.color);
    const shown = over([fg[0], fg[1], fg[2], fg[3] * Number(style.opacity)], bg);
    const ratio = contrast(shown, bg), smaller = parseFloat(style.fontSize) < parseFloat(getComputedStyle(statement).fontSize);
    if (ratio < 4.5) problems.push(`${values.textContent.slice(0, 40)}: contrast ${ratio.toFixed(2)}`);
    if (!smaller) problems.push(`${values.textContent.slice(0, 40)}: not smaller than the statement`);
    for (const value of values.children) {
      if (value.textContent.startsWith(`${value.title}=`)) problems.push(`no label: ${value.textContent.slice(0, 40)}`);
    }
  }
}
return {boxes: boxes.length, claims: document.querySelectorAll("[id^='claim-']").length, problems};
"""

CLAIM_PAGES = [d for d in PAGES if CHAPTER.match(d)] + ["book/performance", "book/distributed"]


@on(CLAIM_PAGES)
def test_claim_boxes_read_at_a_glance(docname: str, browser, phone, site_url: str) -> None:
    """Every claim box shows the statement first and each value under a plain label (never the code's
    `name=`), smaller and at AA contrast (4.5) on its ground, light and dark, at 1280 px; it stays in
    its column at 390 px; and a chapter's claims displayed one after another share boxes (fewer boxes
    than claims, each claim's anchor kept)."""
    problems = []
    _open(browser, f"{site_url}/{docname}.html")
    with _theme_kept(browser):
        for theme in ("light", "dark"):
            seen = browser.execute_script(_CLAIM_BOXES, theme)
            problems += [f"{theme}, 1280 px: {p}" for p in seen["problems"]]
    _open(phone, f"{site_url}/{docname}.html")
    with _theme_kept(phone):
        problems += [f"390 px: {p}" for p in phone.execute_script(_CLAIM_BOXES, "light")["problems"]]
    assert not problems, f"{docname}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:15])
    if CHAPTER.match(docname.removeprefix("zh/")):
        assert 0 < seen["boxes"] < seen["claims"], f"{docname}: {seen['boxes']} boxes for {seen['claims']} claims"


# --- Accessibility: axe-core, the engine of browsers' own audits, on every page of both languages ------

AXE = REPO / "tests" / "assets" / "axe-core-4.14.1.min.js"  # vendored (MPL-2.0: axe-core-LICENSE.txt)


@on(PAGES)
def test_no_critical_or_serious_accessibility_violation(docname: str, browser, site_url: str) -> None:
    """axe-core finds no critical or serious violation (a list item that is no list item, a label that
    says less than its button shows, a link too pale on its ground, controls inside an image)."""
    _open(browser, f"{site_url}/{docname}.html")
    browser.execute_script(AXE.read_text(encoding="utf-8"))  # adds window.axe; changes nothing on the page
    found = browser.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "axe.run(document, {resultTypes: ['violations']}).then((r) => done(r.violations"
        ".filter((v) => v.impact === 'critical' || v.impact === 'serious')"
        ".map((v) => [v.impact, v.id, v.nodes.length, v.nodes.slice(0, 2).map((n) => n.target.join(' '))])));"
    )
    assert not found, f"{docname}: {found}"


@on(list(EXPLORERS))
def test_explorer_controls_can_be_tapped_on_a_phone(docname: str, phone, site_url: str) -> None:
    """At 390 px every menu, slider and check box of an explorer, and every row the reader points at,
    is a target of at least 24 x 24 px (WCAG 2.2, 2.5.8); a check box counts with its label, which
    toggles it too, and a row with its band (its label and its cells). (Before: menus 19 px high,
    sliders 16 px, check boxes 13 px; rows 10 to 13 px high, a one-letter row label 2.5 px wide.)"""
    from explorer_controls import small_targets

    _open(phone, f"{site_url}/{docname}.html")
    small = small_targets(phone)
    assert not small, _listed(docname, small)


# --- On a phone (issue 64): code keeps its shape, and what is wider than the screen scrolls, visibly ---

# Runs in the page at 390 px (async): opens every hidden code cell and solution, as a reader would, then
# reports, each as a list of short descriptions:
# - code_shape: a line of code (a cell's input, a code block, a lib.show_source listing) that wraps
#   to a row starting left of the line's first character (its indentation);
# - output_wraps: a printed line (a cell's text output) that wraps, which breaks a printed table's
#   columns; cell_wraps: a value of a table a cell printed (pandas) that wraps;
# - cut_off: a code block, printed output, formula (displayed or inline) or table wider than its box
#   that does not scroll (overflow-x auto or scroll), and any other element that hides part of its
#   content sideways (overflow-x hidden or clip);
# - no_cue: one of those that scrolls without showing it (a phone shows no scrollbar until it is
#   touched): its background has no shadow at the edge that scrolls with it (book.css draws the cue
#   as gradients, the covers attached "local");
# and page_overflow, how far the page as a whole scrolls sideways.
_PHONE_SHAPE = r"""
const done = arguments[arguments.length - 1];
const TOL = 1;
const short = (s, n = 70) => (s || "").replace(/\s+/g, " ").trim().slice(0, n);
const article = () => document.querySelector("article") || document.querySelector("main") || document.body;
const scrolls = (el) => ["auto", "scroll"].includes(getComputedStyle(el).overflowX);
const overflows = (el) => el.scrollWidth > el.clientWidth + TOL;
// the cue: a shadow in the box's background at an edge it continues past, which scrolls with it
// (a gradient layer attached "local")
const cue = (el) => {
  const s = getComputedStyle(el);
  return /gradient/.test(s.backgroundImage) && /\blocal\b/.test(s.backgroundAttachment);
};
const where = (el) => {
  const h = el.closest("section[id]");
  return h ? "#" + h.id : "";
};

// The source lines of a code block: a line ends at "\n" or where the block element holding the
// text changes (lib.show_source writes one block <span> a line). Each line: its characters as
// [text node, offset] pairs.
function lines(pre) {
  const out = [];
  let line = [], lastBlock = null;
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    let block = node.parentElement;
    while (block !== pre && getComputedStyle(block).display === "inline") block = block.parentElement;
    if (lastBlock !== null && block !== lastBlock && line.length) { out.push(line); line = []; }
    lastBlock = block;
    const text = node.data;
    for (let i = 0; i < text.length; i++) {
      if (text[i] === "\n") { out.push(line); line = []; continue; }
      line.push([node, i]);
    }
  }
  if (line.length) out.push(line);
  return out;
}

const charRect = ([node, i]) => {
  const r = document.createRange();
  r.setStart(node, i); r.setEnd(node, i + 1);
  return r.getBoundingClientRect();
};

// The boxes of the text of `chars` ([text node, offset] pairs, in order), one or more a row.
function textRects(chars) {
  const rects = [];
  let i = 0;
  while (i < chars.length) {
    let j = i;
    while (j + 1 < chars.length && chars[j + 1][0] === chars[i][0]) j++;
    const r = document.createRange();
    r.setStart(chars[i][0], chars[i][1]);
    r.setEnd(chars[j][0], chars[j][1] + 1);
    rects.push(...[...r.getClientRects()].filter((b) => b.width > 0 && b.height > 0));
    i = j + 1;
  }
  return rects;
}

// The rects after the first row (a rect whose top is below the middle of the first row's).
function continuation(rects) {
  const top = Math.min(...rects.map((b) => b.top));
  const first = rects.filter((b) => b.top < top + 1);
  const height = Math.min(...first.map((b) => b.height));
  return rects.filter((b) => b.top > top + height / 2);
}

// How a source line is laid out: whether it wraps, the left edge of its first visible character
// (its indentation) and the leftmost start of a continuation row.
function layout(line) {
  const text = line.map(([n, i]) => n.data[i]).join("");
  const first = text.search(/\S/);
  if (first < 0) return null;
  const rects = textRects(line);
  if (!rects.length) return null;
  const below = continuation(rects);
  return {
    text,
    wraps: below.length > 0,
    indent: charRect(line[first]).left,
    continuation: below.length ? Math.min(...below.map((b) => b.left)) : null,
  };
}

function measure() {
  const content = article();
  // as a reader who opens every hidden code cell and every solution
  for (const d of content.querySelectorAll("details")) d.open = true;
  for (const t of content.querySelectorAll(".toggle-hidden")) t.classList.remove("toggle-hidden");
  const found = {code_shape: [], output_wraps: [], cut_off: [], no_cue: [], cell_wraps: [], blocks: 0};
  // a line of code that wraps must continue at or right of its own indentation; a printed line
  // (a cell's text output) must not wrap at all
  // code: cells' inputs, code blocks, lib.show_source's listings; printed output: a cell's text outputs
  const outputs = [...content.querySelectorAll("div.cell_output > div.output:not(.text_html) pre")];
  const codes = [...content.querySelectorAll("div.highlight pre, div.lib-source pre")].filter((p) => !outputs.includes(p));
  for (const pre of [...codes, ...outputs]) {
    if (!pre.getClientRects().length) continue;  // not displayed
    found.blocks++;
    const isCode = codes.includes(pre);
    for (const line of lines(pre)) {
      const l = layout(line);
      if (!l || !l.wraps) continue;
      if (!isCode) found.output_wraps.push(`${where(pre)} ${short(l.text)}`);
      else if (l.continuation < l.indent - TOL)
        found.code_shape.push(`${where(pre)} ${short(l.text)} (continues ${Math.round(l.indent - l.continuation)} px left of its indentation)`);
    }
  }
  // what is wider than its box: a code block, a printed output, math (displayed or inline), a table
  const wide = [...codes, ...outputs, ...content.querySelectorAll('mjx-container[display="true"], span.math, table')];
  for (const el of wide) {
    if (!el.getClientRects().length || !overflows(el)) continue;
    const what = `${where(el)} ${el.tagName.toLowerCase()} ${short(el.getAttribute("data-tex") || el.textContent, 50)} (+${el.scrollWidth - el.clientWidth} px)`;
    if (!scrolls(el)) found.cut_off.push(what);
    else if (!cue(el)) found.no_cue.push(what);
  }
  // anything else that hides part of its content sideways, with no way to scroll to it (what is
  // drawn inside an SVG or a formula is the SVG's or the formula's)
  for (const el of content.querySelectorAll("*")) {
    if (el.closest("svg, mjx-container") && !el.matches("mjx-container")) continue;
    const s = getComputedStyle(el);
    if (!["hidden", "clip"].includes(s.overflowX) || !el.clientWidth || !overflows(el)) continue;
    found.cut_off.push(`${where(el)} ${el.tagName.toLowerCase()}.${[...el.classList].join(".")} ${short(el.textContent, 50)} (+${el.scrollWidth - el.clientWidth} px hidden)`);
  }
  // a value of a table that a cell printed (pandas) on two rows
  for (const td of content.querySelectorAll(".cell_output table td")) {
    if (!td.getClientRects().length || !td.textContent.trim()) continue;
    const chars = [];
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode())
      for (let i = 0; i < node.data.length; i++) if (node.data[i].trim()) chars.push([node, i]);
    const rects = textRects(chars);
    if (rects.length && continuation(rects).length) found.cell_wraps.push(`${where(td)} ${short(td.textContent, 40)}`);
  }
  found.page_overflow = Math.max(0, document.scrollingElement.scrollWidth - window.innerWidth);
  return found;
}

const start = Date.now();
const wait = () => {
  if (document.readyState !== "complete") return setTimeout(wait, 50);
  const go = () => { try { done(measure()); } catch (e) { done({fatal: String(e)}); } };
  if (!document.querySelector("span.math, div.math")) return go();
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) return MathJax.startup.promise.then(go, go);
  if (Date.now() - start > 30000) return go();
  setTimeout(wait, 50);
};
wait();
"""

_phone_seen: dict[str, dict] = {}  # docname -> _PHONE_SHAPE's report: one measurement for the three tests


def _phone_shape(docname: str, phone, site_url: str) -> dict:
    if docname not in _phone_seen:
        _open(phone, f"{site_url}/{docname}.html")
        _changed(phone)  # _PHONE_SHAPE opens the hidden cells and solutions
        _phone_seen[docname] = phone.execute_async_script(_PHONE_SHAPE)
    seen = _phone_seen[docname]
    assert "fatal" not in seen, f"{docname}: could not measure: {seen['fatal']}"
    return seen


def _listed(docname: str, problems: list[str]) -> str:
    shown = "\n  ".join(problems[:15])
    more = f"\n  ... and {len(problems) - 15} more" if len(problems) > 15 else ""
    return f"{docname}: {len(problems)} at 390 px:\n  {shown}{more}"


@on(PAGES)
def test_code_keeps_its_shape_on_a_phone(docname: str, phone, site_url: str) -> None:
    """At 390 px no line of code (a cell's input, a code block, a lib.show_source listing) continues on
    a row that starts left of its own indentation, no printed line wraps (a printed table's columns
    stay in line) and no value of a pandas table wraps: each scrolls inside its box instead."""
    seen = _phone_shape(docname, phone, site_url)
    problems = [f"code: {x}" for x in seen["code_shape"]]
    problems += [f"printed line wraps: {x}" for x in seen["output_wraps"]]
    problems += [f"table value wraps: {x}" for x in seen["cell_wraps"]]
    assert not problems, _listed(docname, problems)


@on(PAGES)
def test_nothing_is_cut_off_on_a_phone(docname: str, phone, site_url: str) -> None:
    """At 390 px a code block, printed output, display equation, inline formula or table wider than its
    box scrolls inside it, nothing else hides part of its content sideways, and the page does not
    scroll sideways as a whole."""
    seen = _phone_shape(docname, phone, site_url)
    problems = [f"cut off: {x}" for x in seen["cut_off"]]
    if seen["page_overflow"] > 1:
        problems.append(f"the page scrolls sideways by {seen['page_overflow']} px")
    assert not problems, _listed(docname, problems)


@on(PAGES)
def test_what_scrolls_on_a_phone_shows_that_it_does(docname: str, phone, site_url: str) -> None:
    """At 390 px each of those boxes that scrolls sideways shows a shadow at the edge it continues past
    (a phone shows no scrollbar until the box is touched, so an equation cut at "o =" read as cut off)."""
    seen = _phone_shape(docname, phone, site_url)
    assert not seen["no_cue"], _listed(docname, [f"scrolls with no cue: {x}" for x in seen["no_cue"]])


def _expected_colab_url(docname: str) -> str:  # docname: book/NN_slug, or zh/book/NN_slug
    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    repo = config["repository"]
    org_repo = re.sub(r"^https?://github\.com/", "", repo["url"].rstrip("/"))
    colab = config["launch_buttons"]["colab_url"].rstrip("/")
    # The button opens the chapter's Colab edition (tools/editions.py), plain Jupyter markdown.
    return f"{colab}/github/{org_repo}/blob/{repo.get('branch', 'main')}/{_edition(docname)}"


def _edition(docname: str) -> str:
    """The chapter's Colab edition: colab/NN_slug.ipynb, or colab/zh/NN_slug.ipynb for a Chinese page."""
    return f"colab/{'zh/' if docname.startswith('zh/') else ''}{Path(docname).name}.ipynb"


@on(CHAPTERS)
def test_chapter_buttons_and_solutions(docname: str, browser, site_url: str) -> None:
    from selenium.webdriver.common.by import By

    _open(browser, f"{site_url}/{docname}.html")  # test_page_renders_cleanly reports what its load logged
    _changed(browser)  # the test opens the solutions

    # Every link's address in one call (one WebDriver request per link took most of this test's time).
    hrefs = browser.execute_script("return Array.from(document.querySelectorAll('a[href]'), (a) => a.href);")

    # The Colab link: exactly this chapter's notebook, in the repository _config.yml names.
    colab = {h for h in hrefs if "colab.research.google.com" in h}
    expected = _expected_colab_url(docname)
    assert colab == {expected}, f"{docname}: Colab link(s) {sorted(colab)}; expected {expected}"
    edition = REPO / _edition(docname)
    assert edition.is_file(), f"the Colab link points at {edition.relative_to(REPO)}, which does not exist"

    # The repository button.
    repo_url = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["repository"]["url"].rstrip("/")
    assert any(h.rstrip("/") == repo_url for h in hrefs), f"{docname}: no repository button linking to {repo_url}"

    # The download button: the .ipynb is served, and it is this chapter's notebook.
    # The Chinese page serves the chapter's Chinese edition (tools/site.py, chinese_sources).
    chapter = docname.removeprefix("zh/")
    notebook = f"{chapter}.ipynb" if chapter == docname else _edition(docname)
    downloads = [h for h in hrefs if h.endswith(f"_sources/{chapter}.ipynb")]
    assert downloads, f"{docname}: no download link to the .ipynb source"
    with urllib.request.urlopen(downloads[0], timeout=30) as response:
        served = json.loads(response.read().decode("utf-8"))
    source = json.loads((REPO / notebook).read_text(encoding="utf-8"))
    assert [c["source"] for c in served["cells"]] == [c["source"] for c in source["cells"]], (
        f"{docname}: the downloaded notebook is not {notebook}"
    )

    # Solutions: closed dropdowns whose text shows only after a click on their button.
    solutions = browser.find_elements(By.CSS_SELECTOR, "div.solution")
    for sol in solutions:
        body = [
            el
            for el in sol.find_elements(By.XPATH, "./*")
            if "admonition-title" not in (el.get_attribute("class") or "")
        ]
        assert "toggle-hidden" in (sol.get_attribute("class") or ""), f"{docname}: a solution is not a closed dropdown"
        assert body and not any(el.is_displayed() and el.size["height"] > 0 for el in body), (
            f"{docname}: a closed solution shows its text"
        )
        # The chevron button on the title's right (the title's text is a link to the exercise).
        button = sol.find_element(By.CSS_SELECTOR, ".admonition-title button.toggle-button")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
        button.click()
        assert "toggle-hidden" not in (sol.get_attribute("class") or ""), (
            f"{docname}: a solution does not open on click"
        )
    assert not _console_errors(browser), f"{docname}: console errors while opening the solutions"


# --- Explorers (issue 35): they respond on the built site with the network off ------------------------


@on(list(EXPLORERS))
def test_explorers_respond_with_the_network_off(docname: str, browser, site_url: str) -> None:
    """Each explorer of the page ran its script; with the network switched off, moving its first control
    changes what it shows and logs no error; and the page loaded nothing from another host."""
    from explorer_controls import operate
    from selenium.webdriver.common.by import By

    _open(browser, f"{site_url}/{docname}.html")  # test_page_renders_cleanly reports what its load logged
    _changed(browser)  # the test moves the explorers' controls
    roots = browser.find_elements(By.CSS_SELECTOR, "[data-explorer]")
    assert [r.get_attribute("data-explorer") for r in roots] == EXPLORERS[docname.removeprefix("zh/")]
    offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.emulateNetworkConditions", offline)
    try:
        for root in roots:
            name = root.get_attribute("data-explorer")
            assert root.get_attribute("data-ready") == "1", f"{docname}: the {name} explorer's script did not run"
            assert root.find_elements(By.CSS_SELECTOR, "svg text"), f"{docname}: {name} has no figure"
            before = root.find_element(By.CLASS_NAME, "explorer-readout").text
            browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", root)
            operate(browser, root)
            after = root.find_element(By.CLASS_NAME, "explorer-readout").text
            assert after and after != before, f"{docname}: the {name} explorer did not respond ({before!r})"
    finally:
        browser.execute_cdp_cmd("Network.emulateNetworkConditions", {**offline, "offline": False})
    assert not _console_errors(browser), f"{docname}: console errors while using the explorers"
    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    elsewhere = [u for u in loaded if not u.startswith(site_url)]
    assert not elsewhere, f"{docname}: loaded from another host: {elsewhere}"
