"""The site in two languages (loaded by `book_ext`): what Sphinx's own translation machinery leaves out.

The English site is ``_build/html/``, the Chinese one ``_build/html/zh/`` (``python -m tools.site``),
built from the same sources with the catalogs of ``locale/zh_CN/`` (``python -m tools.i18n``).
Sphinx translates every paragraph, heading and table cell by itself; this extension adds:

- **exercise titles as messages**: sphinx-exercise's ``{exercise} Title`` is not a message for
  Sphinx's gettext; the titles join their page's catalog and are translated from it;
- **claims in the reader's language**: each claim box (`lib.claim`) is drawn again from its data
  (``CLAIM_MIME``) with the statement from the catalog ``claim-statements`` (the statements of
  the seed sweep, ``book/claims_sweep.json``); the Claims appendix lists the same words;
- **a switch to the other language** at the top of every page (the same page path in the other
  site) and ``<link rel="alternate" hreflang>`` for search engines.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain

from lib.book.claims import CheckedClaim

# The Chinese site lives in this folder of the English one; each site links to the other.
LANGUAGES = {"en": ("", "English", "en"), "zh_CN": ("zh/", "中文", "zh-CN")}
STATEMENTS_DOMAIN = "claim-statements"
KIND_LABELS = {"zh_CN": {"Claim": "论断", "Check": "核验"}}


def language(app: Sphinx) -> str:
    return app.config.language if app.config.language in LANGUAGES else "en"


def _title_source(subtitle: nodes.Element) -> str:
    """An exercise title as its MyST source wrote it (math as ``$...$``, code in backticks)."""
    parts = []
    for child in subtitle.children:
        if isinstance(child, nodes.math):
            parts.append(f"${child.astext()}$")
        elif isinstance(child, nodes.literal):
            parts.append(f"`{child.astext()}`")
        else:
            parts.append(child.astext())
    return "".join(parts)


def _title_nodes(text: str) -> list[nodes.Node]:
    """A translated title as nodes: ``$...$`` becomes math, ```...``` code, the rest text."""
    found: list[nodes.Node] = []
    for piece in re.split(r"(\$[^$]+\$|`[^`]+`)", text):
        if piece.startswith("$") and piece.endswith("$") and len(piece) > 1:
            found.append(nodes.math(piece[1:-1], piece[1:-1]))
        elif piece.startswith("`") and piece.endswith("`") and len(piece) > 1:
            found.append(nodes.literal(piece[1:-1], piece[1:-1]))
        elif piece:
            found.append(nodes.Text(piece))
    return found


class ExerciseTitles(SphinxTransform):
    """Exercise titles in the build's language (before Sphinx's `Locale` transform, priority 20).

    sphinx-exercise's ``{exercise} Title`` is not a message for Sphinx's gettext (its title node has
    no source line, and the post-transforms rebuild it); `extract_exercise_titles` adds each title to
    the page's catalog, and here the title, and the registry's copy that solution titles are made
    from, get the catalog's translation.
    """

    default_priority = 10

    def apply(self, **kwargs) -> None:
        from sphinx_exercise.nodes import exercise_subtitle

        if language(self.app) == "en":
            return
        dirs = [str(Path(self.app.srcdir, d)) for d in self.config.locale_dirs]
        domain = docname_to_domain(self.env.docname, self.config.gettext_compact)
        catalog, has_catalog = init_locale(dirs, self.config.language, domain)
        if not has_catalog:
            return
        registry = getattr(self.env, "sphinx_exercise_registry", {})
        for subtitle in list(self.document.findall(exercise_subtitle)):
            source = _title_source(subtitle)
            translated = catalog.gettext(source)
            if translated == source:
                continue
            exercise = subtitle.parent.parent if subtitle.parent is not None else None
            copies = [subtitle]
            entry = registry.get(exercise.get("label")) if exercise is not None else None
            if entry is not None:
                copies += list(entry["node"].findall(exercise_subtitle))
            for copy in copies:
                copy.children = []
                copy.extend(_title_nodes(translated))


def extract_exercise_titles(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """For the gettext builder: each exercise title of the page becomes a message of its catalog."""
    if app.builder.name != "gettext":
        return
    from sphinx_exercise.nodes import exercise_subtitle

    source = app.env.doc2path(docname)
    for entry in getattr(app.env, "sphinx_exercise_registry", {}).values():
        if entry.get("docname") != docname:
            continue
        for subtitle in entry["node"].findall(exercise_subtitle):
            text = _title_source(subtitle)
            message = nodes.paragraph(text, text)
            message.source, message.line = str(source), entry["node"].line or 1
            message.uid = ""  # the catalog adds only nodes with a uid (versioning's; none here)
            doctree.append(message)


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
    app.add_transform(ExerciseTitles)
    app.connect("doctree-resolved", extract_exercise_titles)
    app.connect("doctree-read", translate_claims, priority=400)  # before book_ext's collect_claims
    app.connect("html-page-context", language_switch)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
