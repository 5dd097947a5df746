"""Figures for phones: after an HTML build, every SVG figure of every page says how narrow it may get
(``--book-min-width``, which ``_static/book.css`` uses on phones), and is a link to itself."""

from __future__ import annotations

import re
from math import ceil
from pathlib import Path

from sphinx.application import Sphinx

# The smallest label a figure may show on a phone before it stops shrinking: 9 px, and a fifth of a
# pixel more, so that rounding (a label set at 9 units, drawn at scale 0.99999) cannot take it below 9.
PHONE_LABEL_PX = 9.2
_IMG = re.compile(r'<img\b([^>]*?)\bsrc="((?:\.\./)*_images/[^"]+\.svg)"([^>]*)/?>')
_VIEWBOX_WIDTH = re.compile(r'<svg\b[^>]*\bviewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_FONT_SIZE = re.compile(r'font-size[:=]\s*"?([\d.]+)(?:px)?')


def phone_width(svg: str) -> float | None:
    """The width, in CSS px, below which a figure's smallest label would be under
    :data:`PHONE_LABEL_PX` (its labels are sized in the units of its viewBox)."""
    width = _VIEWBOX_WIDTH.search(svg)
    sizes = [float(size) for size in _FONT_SIZE.findall(svg) if float(size) > 0]
    if width is None or not sizes:
        return None
    return float(width[1]) * PHONE_LABEL_PX / min(sizes)


def site_pages(app: Sphinx) -> list[Path]:
    """The HTML pages of this build: those of its output folder, but not the other language's site
    that ``tools.site`` copies into it (``_build/html/zh``), maybe while this build is finishing."""
    from i18n_ext.languages import LANGUAGES

    outdir = Path(app.outdir)
    others = [outdir / folder for folder, _, _ in LANGUAGES.values() if folder]
    return [page for page in outdir.rglob("*.html") if not any(page.is_relative_to(other) for other in others)]


def figures_for_phones(app: Sphinx, exception: Exception | None) -> None:
    """After an HTML build: every SVG figure of every page says how narrow it may get
    (``--book-min-width``, which ``_static/book.css`` uses on phones), and is a link to itself, so that a
    figure too wide for a phone opens full size on a tap."""
    if exception is not None or app.builder.format != "html":
        return
    images = Path(app.outdir, "_images")
    widths: dict[str, float | None] = {}

    def figure(m: re.Match) -> str:
        name = m[2].rsplit("/", 1)[1]
        if name not in widths:
            path = images / name
            widths[name] = phone_width(path.read_text(encoding="utf-8")) if path.is_file() else None
        style = f' style="--book-min-width: {ceil(widths[name])}px"' if widths[name] else ""  # never < 9 px
        tag = m[0].rstrip(">").rstrip().rstrip("/").rstrip()
        return f'<a class="book-figure-link" href="{m[2]}">{tag}{style} /></a>'

    for page in site_pages(app):
        text = page.read_text(encoding="utf-8")
        changed = _IMG.sub(figure, text)
        if changed != text:
            page.write_text(changed, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", figures_for_phones)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
