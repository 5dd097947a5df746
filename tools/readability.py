"""Measure how readable a built site is, page by page, in headless Chromium (issue 21).

    python -m tools.readability [_build/html] [--page book/05_masking_decoding ...] [--json out.json] [--check]

Every page is opened at 1280 x 900 CSS px (one Chromium driven by Selenium, the site served on
localhost, as tests/test_browser.py does) and measured as a reader sees it:

- **figure text**: for every SVG figure in the page's content, inline ``<svg>`` or ``<img src="*.svg">``,
  the smallest rendered size of its ``<text>``, in CSS px: the font size in the SVG's own units times
  the scale it is drawn at (rendered width / viewBox width, with any transform on the way: the text's
  screen CTM). A raster figure (PNG, JPEG) has no measurable text: it is counted, with the factor it
  is shrunk by (rendered width / natural width);
- **overflow**: every output block (each child of a ``.cell_output``) that scrolls sideways or sticks
  out of its cell (``scrollWidth > clientWidth``, in the block or inside it), every display equation
  (``mjx-container[display="true"]``) that does, and every code input that does.

It reports; it does not judge, except with ``--check``, which exits 1 if any figure text is below
``--min-px`` (default 9) or anything overflows (the criteria of issue 21). The pages are those of the
build's ``_toc.yml`` (the folder above ``_build``), else every HTML page of the build.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium chromium-driver``) and
selenium (in requirements.txt).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from tools.browser import WINDOW, chromium, serve
from tools.common import toc_docnames

MIN_PX = 9.0
PHONE_MIN_PX = 9.0  # on a phone too: a figure shrinks to the column until its smallest label is 9 px (book.css)
NOT_PAGES = {"genindex", "search", "index", "py-modindex"}

# Runs in the page (async): wait for the page and MathJax, then measure. Returns a JSON-able dict.
MEASURE_JS = r"""
const done = arguments[arguments.length - 1];
const TOL = 1;  // px: sub-pixel rounding
// The page's content, looked up once the page is complete (at the script's start a document that is
// still being replaced can have no <body> yet).
const pageContent = () => document.querySelector("article") || document.querySelector("main") || document.body;
const short = (s, n = 90) => (s || "").replace(/\s+/g, " ").trim().slice(0, n);

// The smallest rendered font size (CSS px) of the <text> in an <svg> that is in the document.
function smallestText(svg) {
  let smallest = null, label = null, count = 0;
  for (const t of svg.querySelectorAll("text")) {
    if (!t.textContent.trim()) continue;
    const m = t.getScreenCTM();
    if (!m) continue;
    const size = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    count++;
    if (smallest === null || size < smallest) { smallest = size; label = short(t.textContent, 40); }
  }
  return {smallest, label, texts: count};
}

function viewBoxWidth(svg) {
  const vb = svg.viewBox && svg.viewBox.baseVal;
  if (vb && vb.width) return vb.width;
  return parseFloat(svg.getAttribute("width")) || null;
}

// The <img>s of SVG files: fetch each, lay them all out off screen at the sizes the page shows them
// (together: each insertion into the page makes the browser lay the page out again), measure each.
async function measureImgs(items) {  // items: [{img, box}]
  const svgs = await Promise.all(items.map(async ({img, box}) => {
    try {
      const text = await (await fetch(img.currentSrc || img.src)).text();
      const doc = new DOMParser().parseFromString(text, "image/svg+xml");
      const svg = document.importNode(doc.documentElement, true);
      svg.setAttribute("width", box.width);
      svg.setAttribute("height", box.height);
      return svg;
    } catch (e) {
      return {error: String(e)};
    }
  }));
  const holders = [];
  for (const svg of svgs) {
    if (svg.error) continue;
    const holder = document.createElement("div");
    holder.style.cssText = "position:absolute; left:0; top:0; visibility:hidden; pointer-events:none;";
    holder.appendChild(svg);
    holders.push(holder);
  }
  document.body.append(...holders);
  try {
    return svgs.map((svg, i) => {
      if (svg.error) return svg;
      const vbw = viewBoxWidth(svg);
      return {...smallestText(svg), scale: vbw ? items[i].box.width / vbw : null};
    });
  } finally {
    for (const holder of holders) holder.remove();
  }
}

// A box that scrolls or clips sideways, or whose content sticks out of it.
const overflows = el => el.scrollWidth > el.clientWidth + TOL;

function blockOverflow(block, cell) {
  const found = [];
  for (const el of [block, ...block.querySelectorAll("*")]) {
    if (el.closest("svg") && el.tagName.toLowerCase() !== "svg") continue;
    const style = getComputedStyle(el);
    if (style.display === "inline" || !el.clientWidth) continue;
    if (style.overflowX !== "visible" && overflows(el)) found.push({el, by: el.scrollWidth - el.clientWidth});
  }
  const right = cell.getBoundingClientRect().right, sticks = block.getBoundingClientRect().right - right;
  if (sticks > TOL) found.push({el: block, by: sticks});
  return found;
}

async function measure() {
  const content = pageContent();
  if (!content) throw new Error(`the page has no content (readyState ${document.readyState}, url ${location.href})`);
  const figures = [], svgImgs = [];
  for (const img of content.querySelectorAll("img")) {
    const src = img.getAttribute("src") || "";
    const box = img.getBoundingClientRect();
    if (!box.width) continue;
    if (/\.svg(\?|#|$)/i.test(src)) {
      figures.push({kind: "svg-img", src, width: box.width});
      svgImgs.push({img, box, figure: figures[figures.length - 1]});
    } else {
      figures.push({kind: "raster", src, width: box.width, natural: img.naturalWidth,
                    shrink: img.naturalWidth ? box.width / img.naturalWidth : null});
    }
  }
  const measured = await measureImgs(svgImgs);
  svgImgs.forEach(({figure}, i) => Object.assign(figure, measured[i]));
  for (const svg of content.querySelectorAll("svg")) {
    if (svg.parentElement.closest("svg") || !svg.querySelector("text")) continue;
    const box = svg.getBoundingClientRect();
    if (!box.width) continue;
    const vbw = viewBoxWidth(svg);
    figures.push({kind: "svg-inline", src: short(svg.id || svg.getAttribute("class") || "inline svg", 60),
                  width: box.width, scale: vbw ? box.width / vbw : null, ...smallestText(svg)});
  }
  const outputs = [];
  let blocks = 0;
  for (const cell of content.querySelectorAll(".cell_output")) {
    if (cell.parentElement.closest(".cell_output")) continue;
    for (const block of cell.children) {
      blocks++;
      const found = blockOverflow(block, cell);
      if (found.length) {
        const worst = found.reduce((a, b) => (b.by > a.by ? b : a));
        outputs.push({classes: block.className || block.tagName.toLowerCase(), by: Math.round(worst.by),
                      text: short(block.textContent)});
      }
    }
  }
  const displays = [...content.querySelectorAll('mjx-container[display="true"]')];
  const math = displays.filter(overflows).map(m => ({by: m.scrollWidth - m.clientWidth,
      tex: short((m.closest(".math") || m).getAttribute("data-tex") || m.textContent)}));
  const inputs = [...content.querySelectorAll(".cell_input pre")];
  // cut off: wider than its box, and the box neither scrolls nor shows it (a phone's criterion)
  const clipped = displays.filter(m => overflows(m) && !["auto", "scroll"].includes(getComputedStyle(m).overflowX));
  return {
    figures, outputs, output_blocks: blocks, math, math_displays: displays.length,
    math_clipped: clipped.map(m => short((m.closest(".math") || m).getAttribute("data-tex") || m.textContent)),
    code_inputs: inputs.length, code_inputs_overflowing: inputs.filter(overflows).length,
    code_overflows: inputs.filter(overflows).map(p => ({by: p.scrollWidth - p.clientWidth,
        text: short([...p.textContent.split("\n")].reduce((a, b) => (b.length > a.length ? b : a), ""))})),
    page_overflow: Math.max(0, document.scrollingElement.scrollWidth - window.innerWidth),
  };
}

const start = Date.now();
const wait = () => {
  if (document.readyState !== "complete") return setTimeout(wait, 50);
  const go = () => measure().then(done, e => done({fatal: String(e)}));
  if (!document.querySelector("span.math, div.math")) return go();
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) return MathJax.startup.promise.then(go, go);
  if (Date.now() - start > 30000) return go();
  setTimeout(wait, 50);
};
wait();
"""


def pages(html: Path) -> list[str]:
    """The pages to measure: the build's ``_toc.yml`` (root first), else every page of ``html``."""
    repo = html.resolve().parents[1]
    if (repo / "_toc.yml").is_file():
        return [d for d in toc_docnames(repo) if (html / f"{d}.html").is_file()]
    skip = ("_static", "_sources", "_images", "mathjax")
    return sorted(
        p.relative_to(html).with_suffix("").as_posix()
        for p in html.rglob("*.html")
        if p.relative_to(html).parts[0] not in skip and p.stem not in NOT_PAGES
    )


def measure_page(driver, url: str, tries: int = 2) -> dict:
    """Open `url` in `driver` and measure it (MEASURE_JS's dict).

    A measurement that could not be taken at all (``"fatal"``: the browser handed the script a
    document with no content, as a loaded machine once did) is retried by loading the page again,
    up to `tries` times in all; a page that was measured is never measured twice.
    """
    for _ in range(tries):
        driver.get(url)
        seen = driver.execute_async_script(MEASURE_JS)
        if "fatal" not in seen:
            break
    return seen


def measure(html: Path, docnames: list[str], width: int = WINDOW[0]) -> dict[str, dict]:
    """Every page's measurements (see the module docstring), by docname."""
    results = {}
    with serve(html) as url, chromium(width) as driver:
        for docname in docnames:
            results[docname] = measure_page(driver, f"{url}/{docname}.html")
    return results


def summary(docname: str, seen: dict, min_px: float = MIN_PX, phone: bool = False) -> tuple[str, bool]:
    """One page's report (a few lines) and whether it meets the criteria.

    Everywhere: no raster figure, SVG figure text >= `min_px`. At the column width (1280 px): no output
    block, display equation or code cell scrolls sideways. On a `phone` (390 px) what is wider than
    the screen may scroll inside its own box, but no display equation is cut off and the page as a
    whole does not scroll sideways.
    """
    if "fatal" in seen:
        return f"{docname}: could not measure: {seen['fatal']}", False
    if phone and min_px == MIN_PX:
        min_px = PHONE_MIN_PX
    svgs = [f for f in seen["figures"] if f["kind"] != "raster" and f.get("smallest") is not None]
    rasters = [f for f in seen["figures"] if f["kind"] == "raster"]
    lines = [f"{docname}"]
    if svgs:
        worst = min(svgs, key=lambda f: f["smallest"])
        small = [f for f in svgs if f["smallest"] < min_px]
        lines.append(
            f"  SVG figures: {len(svgs)}; smallest text {worst['smallest']:.1f} px ({worst['label']!r} in "
            f"{Path(worst['src']).name}, drawn at scale {worst['scale'] or 0:.2f}); {len(small)} with text < {min_px:g} px"
        )
        for f in small:
            lines.append(f"    < {min_px:g} px: {f['smallest']:.1f} px {f['label']!r} in {Path(f['src']).name}")
    else:
        lines.append("  SVG figures: 0")
    if rasters:
        shrinks = [f["shrink"] for f in rasters if f["shrink"]]
        lines.append(
            f"  raster figures (text not measurable): {len(rasters)}, shown at "
            f"{min(shrinks):.2f}-{max(shrinks):.2f} of their natural width"
            if shrinks
            else f"  raster figures: {len(rasters)}"
        )
    lines.append(f"  output blocks overflowing: {len(seen['outputs'])} of {seen['output_blocks']}")
    for o in seen["outputs"]:
        lines.append(f"    +{o['by']} px  [{o['classes']}]  {o['text']!r}")
    lines.append(f"  display equations overflowing: {len(seen['math'])} of {seen['math_displays']}")
    for m in seen["math"]:
        lines.append(f"    +{m['by']} px  {m['tex']!r}")
    lines.append(f"  code inputs overflowing: {seen['code_inputs_overflowing']} of {seen['code_inputs']}")
    for c in seen.get("code_overflows", []):
        lines.append(f"    +{c['by']} px  {c['text']!r}")
    lines.append(f"  display equations cut off: {len(seen.get('math_clipped', []))}; page scrolls sideways by "
                 f"{seen.get('page_overflow', 0)} px")  # fmt: skip
    for tex in seen.get("math_clipped", []):
        lines.append(f"    cut off: {tex!r}")
    legible = not rasters and all(f["smallest"] >= min_px for f in svgs)
    if phone:
        ok = legible and not seen.get("math_clipped") and seen.get("page_overflow", 0) <= 1
    else:
        ok = legible and not seen["outputs"] and not seen["math"] and not seen["code_inputs_overflowing"]
    return "\n".join(lines), ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.readability", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "html", nargs="?", default="_build/html", type=Path, help="the built site (default _build/html)"
    )
    parser.add_argument("--page", action="append", help="a docname to measure (repeatable; default every page)")
    parser.add_argument("--width", type=int, default=WINDOW[0], help="window width in CSS px (default 1280)")
    parser.add_argument("--min-px", type=float, default=MIN_PX, help="smallest readable figure text (default 9)")
    parser.add_argument("--json", type=Path, help="also write every measurement to this file")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page falls short of issue 21's criteria")
    args = parser.parse_args(argv)
    if not (args.html / "index.html").is_file() and not any(args.html.glob("*.html")):
        parser.error(f"{args.html} is not a built site (no HTML pages in it)")
    docnames = args.page or pages(args.html)
    results = measure(args.html, docnames, args.width)
    all_ok = True
    totals = {"svg": 0, "raster": 0, "small": 0, "outputs": 0, "blocks": 0, "math": 0, "displays": 0}
    smallest = None
    for docname, seen in results.items():
        text, ok = summary(docname, seen, args.min_px)
        all_ok &= ok
        print(text)
        if "fatal" in seen:
            continue
        for f in seen["figures"]:
            if f["kind"] == "raster":
                totals["raster"] += 1
            elif f.get("smallest") is not None:
                totals["svg"] += 1
                totals["small"] += f["smallest"] < args.min_px
                smallest = f["smallest"] if smallest is None else min(smallest, f["smallest"])
        totals["outputs"] += len(seen["outputs"])
        totals["blocks"] += seen["output_blocks"]
        totals["math"] += len(seen["math"])
        totals["displays"] += seen["math_displays"]
    print(
        f"\nAll {len(results)} pages: {totals['svg']} SVG figures (smallest text "
        f"{'-' if smallest is None else f'{smallest:.1f} px'}, {totals['small']} below {args.min_px:g} px), "
        f"{totals['raster']} raster figures; {totals['outputs']} of {totals['blocks']} output blocks and "
        f"{totals['math']} of {totals['displays']} display equations overflow"
    )
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0 if all_ok or not args.check else 1


if __name__ == "__main__":
    sys.exit(main())
