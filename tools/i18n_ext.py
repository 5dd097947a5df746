"""The site in two languages (loaded by `book_ext`): what Sphinx's own translation machinery leaves out.

The English site is ``_build/html/``, the Chinese one ``_build/html/zh/`` (``python -m tools.site``),
built from the same sources with the catalogs of ``locale/zh_CN/`` (``python -m tools.i18n``).
Sphinx translates every paragraph, heading and table cell by itself; this extension adds:

- **exercise titles as messages**: sphinx-exercise's ``{exercise} Title`` keeps its title in a
  node without a source line, which Sphinx's gettext skips ("built-in message"): the title gets
  its exercise's source and line, so it is extracted and translated like any heading;
- **claims in the reader's language**: each claim box (`lib.claim`) is drawn again from its data
  (``CLAIM_MIME``) with the statement from the catalog ``claim-statements`` (the statements of
  the seed sweep, ``book/claims_sweep.json``); the Claims appendix lists the same words;
- **a switch to the other language** at the top of every page (the same page path in the other
  site) and ``<link rel="alternate" hreflang>`` for search engines.
"""

from __future__ import annotations

import html
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform

from lib.book.claims import CheckedClaim

# The Chinese site lives in this folder of the English one; each site links to the other.
LANGUAGES = {"en": ("", "English", "en"), "zh_CN": ("zh/", "中文", "zh-CN")}
STATEMENTS_DOMAIN = "claim-statements"
KIND_LABELS = {"zh_CN": {"Claim": "论断", "Check": "核验"}}


def language(app: Sphinx) -> str:
    return app.config.language if app.config.language in LANGUAGES else "en"


class ExerciseTitleMessages(SphinxTransform):
    """Give each exercise title its exercise's source line, so that gettext extracts it (and the
    translation replaces it). Runs before Sphinx's `Locale` transform (priority 20)."""

    default_priority = 10

    def apply(self, **kwargs) -> None:
        from sphinx_exercise.nodes import exercise_subtitle

        for subtitle in self.document.findall(exercise_subtitle):
            holder = subtitle.parent
            while holder is not None and not holder.source:
                holder = holder.parent
            subtitle.source = holder.source if holder is not None else self.document["source"]
            subtitle.line = holder.line if holder is not None and holder.line else 1
            subtitle.rawsource = subtitle.rawsource or subtitle.astext()


def _statements(app: Sphinx):
    """The gettext catalog of claim statements for the build's language (cached on the app)."""
    if not hasattr(app, "_claim_statements"):
        dirs = [str(Path(app.srcdir, d)) for d in app.config.locale_dirs]
        app._claim_statements, _ = init_locale(dirs, app.config.language, STATEMENTS_DOMAIN, "claims")
    return app._claim_statements


def translate_claims(app: Sphinx, doctree: nodes.document) -> None:
    """Draw every claim box of the page again, in the build's language, from the claim's data."""
    lang = language(app)
    if lang == "en":
        return
    catalog = _statements(app)
    # book_ext's claim_data nodes (found by name: Sphinx imports book_ext as a top-level module)
    for data in list(doctree.findall(lambda node: type(node).__name__ == "claim_data")):
        claim = CheckedClaim.from_data(data["claim"])
        shown = catalog.gettext(claim.statement)
        data["statement_shown"] = shown
        box = CheckedClaim(shown, claim.holds, claim.values, claim.kind)._repr_html_()
        label = KIND_LABELS[lang][claim.kind]
        box = box.replace(f"<strong>{html.escape(claim.kind)}: </strong>", f"<strong>{label}：</strong>")
        bundle = data.parent.parent if data.parent is not None else None
        if bundle is None or bundle.get("nb_element") != "mime_bundle":
            continue
        for rendering in bundle.children:
            if rendering.get("mime_type") == "text/html":
                for raw in rendering.findall(nodes.raw):
                    raw.children = [nodes.Text(box)]
            elif rendering.get("mime_type") == "text/plain":
                for block in rendering.findall(nodes.literal_block):
                    line = CheckedClaim(shown, claim.holds, claim.values, claim.kind).line
                    block.children = [nodes.Text(line.replace(f"{claim.kind}:", f"{label}：", 1))]


def counterpart(pagename: str, here: str, there: str) -> str:
    """The relative URL, from page `pagename` of the `here` site, of the same page in the `there` site."""
    up = "../" * (pagename.count("/") + (1 if LANGUAGES[here][0] else 0))
    return f"{up}{LANGUAGES[there][0]}{pagename}.html"


def language_switch(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    """A link to this page in the other language, above the page's content, and its rel=alternate."""
    here = language(app)
    links = []
    for there, (_folder, name, hreflang) in LANGUAGES.items():
        url = counterpart(pagename, here, there)
        context["metatags"] = context.get("metatags", "") + (
            f'\n<link rel="alternate" hreflang="{hreflang}" href="{html.escape(url)}" />'
        )
        if there != here:
            links.append(f'<a href="{html.escape(url)}" hreflang="{hreflang}" lang="{hreflang}">{name}</a>')
    if "body" in context and links:
        switch = f'<nav class="language-switch" aria-label="Language / 语言">{" · ".join(links)}</nav>\n'
        context["body"] = switch + context["body"]


def setup(app: Sphinx) -> dict:
    app.add_transform(ExerciseTitleMessages)
    app.connect("doctree-read", translate_claims, priority=400)  # before book_ext's collect_claims
    app.connect("html-page-context", language_switch)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}

