"""What the notebooks drew, in the reader's language (the notebooks ran once, in English): each claim
box (`lib.claim`) drawn again from its data with the statement from the catalog ``claim-statements``
(the Claims appendix lists the same words) and its values' labels and units from ``claim-values``,
each explorer from how it was drawn, and each figure's labels from ``figures.po``."""

from __future__ import annotations

import functools
import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale

from lib.book.claim_box import BoxWords, box_html
from lib.book.claim_labels import ValueLabel, value_labels
from lib.book.claims import CheckedClaim

from .languages import language

STATEMENTS_DOMAIN = "claim-statements"
VALUES_DOMAIN = "claim-values"  # the labels and units of lib/book/claim_labels.json
BOX_WORDS = {
    "zh_CN": BoxWords(kinds={"Claim": "论断：", "Check": "核验："}, colon="：", held="论断成立", failed="论断不成立")
}


def _catalog(app: Sphinx, domain: str):
    """The gettext catalog `domain` for the build's language (cached on the app)."""
    cached = app.__dict__.setdefault("_claim_catalogs", {})
    if domain not in cached:
        dirs = [str(Path(app.srcdir, d)) for d in app.config.locale_dirs]
        cached[domain], _ = init_locale(dirs, app.config.language, domain, f"claims-{domain}")
    return cached[domain]


def translated_labels(statement: str, catalog) -> dict[str, ValueLabel]:
    """The labels and units of a claim's values (``lib/book/claim_labels.json``), translated by `catalog`."""
    return {
        name: ValueLabel(catalog.gettext(label.label), catalog.gettext(label.unit) if label.unit else "")
        for name, label in value_labels(statement).items()
    }


def translate_claims(app: Sphinx, doctree: nodes.document) -> None:
    """Draw every claim box of the page again, in the build's language, from the claim's data: the
    statement from ``claim-statements``, the values' labels and units from ``claim-values``. The line
    drawn is kept on the data node (``line_shown``), for the boxes of several claims
    (``book_ext/claim_groups.py``) and the Claims appendix (``statement_shown``)."""
    lang = language(app)
    if lang == "en":
        return
    statements, values = _catalog(app, STATEMENTS_DOMAIN), _catalog(app, VALUES_DOMAIN)
    words = BOX_WORDS[lang]
    # book_ext's claim_data nodes (found by name: Sphinx imports book_ext as a top-level module)
    for data in list(doctree.findall(lambda node: type(node).__name__ == "claim_data")):
        claim = CheckedClaim.from_data(data["claim"])
        shown = statements.gettext(claim.statement)
        line = claim.box_line(shown, translated_labels(claim.statement, values), words)
        data["statement_shown"] = shown
        data["line_shown"] = line.data
        bundle = data.parent.parent if data.parent is not None else None
        if bundle is None or bundle.get("nb_element") != "mime_bundle":
            continue
        for rendering in bundle.children:
            if rendering.get("mime_type") == "text/html":
                for raw in rendering.findall(nodes.raw):
                    raw.children = [nodes.Text(box_html([line]))]
            elif rendering.get("mime_type") == "text/plain":
                for block in rendering.findall(nodes.literal_block):
                    text = CheckedClaim(shown, claim.holds, claim.values, claim.kind).line
                    block.children = [nodes.Text(text.replace(f"{claim.kind}: ", words.kinds[claim.kind], 1))]


@functools.cache
def runtime_words(srcdir: str, language: str, domain: str) -> dict[str, str]:
    """English -> translation of the words a run shows (``domain``: ``explorers``, ``figures``), from
    ``locale/<language>/LC_MESSAGES/<domain>.po`` (``python -m tools.i18n extract`` harvests them from
    the executed notebooks)."""
    from babel.messages.pofile import read_po

    path = Path(srcdir, "locale", language, "LC_MESSAGES", f"{domain}.po")
    if not path.is_file():
        return {}
    with path.open("rb") as f:
        catalog = read_po(f)
    return {m.id: m.string for m in catalog if m.id and m.string and not m.fuzzy}


def translate_explorers(app: Sphinx, doctree: nodes.document) -> None:
    """Draw every explorer of the page again in the build's language, from how it was drawn
    (``explorer_data``: ``lib.book.explorers.EXPLORER_MIME``), with the words of ``explorers.po``."""
    if language(app) == "en":
        return
    from lib.book.explorers import redraw

    words = runtime_words(str(app.srcdir), app.config.language, "explorers")
    for data in list(doctree.findall(lambda node: type(node).__name__ == "explorer_data")):
        bundle = data.parent.parent if data.parent is not None else None
        if bundle is None or bundle.get("nb_element") != "mime_bundle":
            continue
        drawn = redraw(data["call"], words).html
        for rendering in bundle.children:
            if rendering.get("mime_type") == "text/html":
                for raw in rendering.findall(nodes.raw):
                    raw.children = [nodes.Text(drawn)]


CJK_FONTS = "'Noto Sans CJK SC', 'Noto Sans SC', 'Source Han Sans SC', 'PingFang SC', 'Microsoft YaHei', "
_SVG_TEXT = re.compile(r"(<text\b[^>]*>)([^<]+)(</text>)")
_CJK = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")


def translate_svg(svg: str, words: dict[str, str]) -> str:
    """A figure's labels in another language: each ``<text>`` that holds plain text (not mathtext, which
    matplotlib writes glyph by glyph) translated with ``words`` (numbers as ``{0}``, …: ``lib``'s
    ``translate``), in a font that has the characters."""
    from lib.book.explorers.words import translate

    def label(m: re.Match) -> str:
        opening, text, closing = m[1], html.unescape(m[2]), m[3]
        translated = translate(text, words)
        if translated == text:
            return m[0]
        if _CJK.search(translated):
            opening = opening.replace("font-family: ", "font-family: " + CJK_FONTS, 1)
        return opening + html.escape(translated, quote=False) + closing

    return _SVG_TEXT.sub(label, svg)


def translate_figures(app: Sphinx, exception: Exception | None) -> None:
    """After a build in another language: every figure the chapters drew (an SVG of ``_images/``) with
    its labels in that language, from ``figures.po`` (the notebooks ran once, in English)."""
    if exception is not None or language(app) == "en" or app.builder.format != "html":
        return
    words = runtime_words(str(app.srcdir), app.config.language, "figures")
    for path in Path(app.outdir, "_images").glob("*.svg"):
        svg = path.read_text(encoding="utf-8")
        translated = translate_svg(svg, words)
        if translated != svg:
            path.write_text(translated, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("doctree-read", translate_claims, priority=400)  # before book_ext's collect_claims
    app.connect("doctree-read", translate_explorers)
    app.connect("build-finished", translate_figures)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
