"""The site in two languages (loaded by `book_ext`): what Sphinx's own translation machinery leaves out.

The English site is ``_build/html/``, the Chinese one ``_build/html/zh/`` (``python -m tools.site``),
built from the same sources with the catalogs of ``locale/zh_CN/`` (``python -m tools.i18n``).
Sphinx translates every paragraph, heading and table cell by itself; this extension adds:

- **display equations** translated as LaTeX (Sphinx would parse them as reStructuredText literal
  blocks, which MyST pages are not: they came out as ``::``);
- **exercise titles as messages**: sphinx-exercise's ``{exercise} Title`` is not a message for
  Sphinx's gettext; the titles join their page's catalog and are translated from it;
- **claims in the reader's language**: each claim box (`lib.claim`) is drawn again from its data
  (``CLAIM_MIME``) with the statement from the catalog ``claim-statements`` (the statements of
  the seed sweep, ``book/claims_sweep.json``); the Claims appendix lists the same words;
- **a switch to the other language** at the top of every page (the same page path in the other
  site) and ``<link rel="alternate" hreflang>`` for search engines.
"""

from __future__ import annotations

import functools
import gettext
import html
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.search import languages as search_languages
from sphinx.search import zh as search_zh
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


def page_catalog(transform: SphinxTransform):
    """The translations of the page a transform works on, in the build's language (``None`` in English,
    or where the page has no catalog)."""
    if language(transform.app) == "en":
        return None
    dirs = [str(Path(transform.app.srcdir, d)) for d in transform.config.locale_dirs]
    domain = docname_to_domain(transform.env.docname, transform.config.gettext_compact)
    catalog, has_catalog = init_locale(dirs, transform.config.language, domain)
    return catalog if has_catalog else None


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

        if (catalog := page_catalog(self)) is None:
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


class DisplayMath(SphinxTransform):
    """Display equations whose translation differs (a ``\\text{…}`` in Chinese), translated here, before
    Sphinx's `Locale` transform (priority 20).

    Sphinx translates a literal-type node (a literal block, a display equation) by parsing
    ``"::\\n\\n" + the translation, indented`` with the page's parser: reStructuredText's literal-block
    marker. The notebooks' parser is MyST, for which ``::`` is a paragraph, so the equation became
    ``\\[::\\]`` on the Chinese page. An equation's translation is its LaTeX, to be used as it is:
    it replaces the node's text, and the node is marked done for `Locale`.
    """

    default_priority = 19

    def apply(self, **kwargs) -> None:
        if (catalog := page_catalog(self)) is None:
            return
        for node in list(self.document.findall(nodes.math_block)):
            source = node.rawsource or node.astext()
            translated = catalog.gettext(source)
            if translated and translated != source:
                node.rawsource = translated
                node.children = [nodes.Text(translated)]
            node["translatable"] = False  # done: Locale would parse it with the wrong marker


class FigureCaptions(SphinxTransform):
    """Figure captions in the build's language (before Sphinx's `Locale` transform, priority 20).

    A figure's caption is its cell's ``mystnb.figure.caption``: myst-nb draws it from the execution
    cache, so the gettext build (which executes nothing) never sees it. `extract_figure_captions` adds
    each caption to the page's catalog from the notebook's metadata; here it gets its translation.
    """

    default_priority = 10

    def apply(self, **kwargs) -> None:
        if (catalog := page_catalog(self)) is None:
            return
        for caption in list(self.document.findall(nodes.caption)):
            if not isinstance(caption.parent, nodes.figure):
                continue
            source = _title_source(caption)
            translated = catalog.gettext(source)
            if translated and translated != source:
                caption.children = []
                caption.extend(_title_nodes(translated))
                caption["translatable"] = False


def extract_figure_captions(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """For the gettext builder: the caption of each figure a notebook page draws (its code cells'
    ``mystnb.figure.caption``) becomes a message of the page's catalog."""
    if app.builder.name != "gettext":
        return
    source = Path(app.env.doc2path(docname))
    if source.suffix != ".ipynb":
        return
    for cell in json.loads(source.read_text(encoding="utf-8"))["cells"]:
        caption = ((cell.get("metadata", {}).get("mystnb") or {}).get("figure") or {}).get("caption")
        if cell.get("cell_type") == "code" and caption:
            message = nodes.paragraph(caption, caption)
            message.source, message.line = str(source), 1
            message.uid = ""  # the catalog adds only nodes with a uid (versioning's; none here)
            doctree.append(message)


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


class InterfaceWords(gettext.NullTranslations):
    """The themes' words in the site's language (``interface`` of ``locale/<language>/site.yml``), in
    front of a domain's own catalog, which answers for every other word."""

    def __init__(self, words: dict[str, str], fallback: gettext.NullTranslations | None):
        super().__init__()
        self.words = words
        if fallback is not None:
            self.add_fallback(fallback)

    def gettext(self, message: str) -> str:
        return self.words.get(message) or super().gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.words.get(singular if n == 1 else plural) or super().ngettext(singular, plural, n)


THEME_DOMAINS = ("sphinx", "booktheme", "togglebutton")  # pydata-sphinx-theme speaks through "sphinx"


def interface_words(app: Sphinx, config) -> None:
    """Install the site's interface words in front of the themes' catalogs (the templates' ``_()``
    is ``app.translator``, the "sphinx" domain; sphinx-book-theme's buttons ask "booktheme")."""
    path = Path(app.srcdir, "locale", config.language or "en", "site.yml")
    if language(app) == "en" or not path.is_file():
        return
    import yaml
    from sphinx import locale

    words = yaml.safe_load(path.read_text(encoding="utf-8")).get("interface", {})
    for domain in THEME_DOMAINS:
        key = ("general", domain)
        theirs = locale.translators.get(key)
        locale.translators[key] = InterfaceWords(words, theirs)
    app.translator = locale.translators[("general", "sphinx")]


LABELS = ("aria-label", "title", "data-bs-title", "alt")  # attributes that hold words a reader sees or hears


def interface_attributes(app: Sphinx, exception: Exception | None) -> None:
    """After a build in another language: the tooltips and labels that the themes and myst-nb write
    in English without asking a catalog (``aria-label="Main"``, ``"Toggle hidden content"``), in
    every page, from the same ``interface`` words."""
    path = Path(app.srcdir, "locale", app.config.language or "en", "site.yml")
    if exception is not None or language(app) == "en" or not path.is_file() or app.builder.format != "html":
        return
    import yaml

    words = yaml.safe_load(path.read_text(encoding="utf-8")).get("interface", {})
    pattern = re.compile(
        rf'\b({"|".join(LABELS)})="({"|".join(map(re.escape, sorted(words, key=len, reverse=True)))})"'
    )
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        changed = pattern.sub(lambda m: f'{m[1]}="{html.escape(words[m[2]])}"', text)
        if changed != text:
            page.write_text(changed, encoding="utf-8")


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


def translated_nodes_at_home(app: Sphinx, doctree: nodes.document) -> None:
    """Every node of a page belongs to the page's document, translated ones too.

    Sphinx translates a message by parsing its translation as a document of its own and moving the
    nodes into the page; they keep a reference to that document, whose settings hold the build
    environment. Pickled with the page, that was the whole environment in every page's doctree: 5 MB
    for a page of 1 KB, and a third of the Chinese builds' time spent pickling and unpickling it.
    """
    for node in doctree.findall():
        if node.document is not doctree:
            node.document = doctree


class SearchChinese(search_zh.SearchChinese):
    """Sphinx's Chinese search index, its Latin terms kept in a set.

    Sphinx 7.4 keeps every Latin word of every page in one list and, to stem a word, looks it up in
    that list: quadratic in the book's length (13 of the Chinese site's 59 s were that lookup). A
    set answers the same question, so the index is the same.
    """

    def init(self, options: dict[str, str]) -> None:
        super().init(options)
        self.latin_terms = set()  # per index (Sphinx's is one list on the class, shared by all)

    def split(self, input: str) -> list[str]:
        chinese = list(search_zh.jieba.cut_for_search(input)) if search_zh.JIEBA else []
        latin = [term.strip() for term in self.latin1_letters.findall(input)]
        self.latin_terms.update(latin)
        return chinese + latin


def setup(app: Sphinx) -> dict:
    search_languages["zh"] = SearchChinese
    app.add_transform(ExerciseTitles)
    app.add_transform(DisplayMath)
    app.add_transform(FigureCaptions)
    app.connect("doctree-resolved", extract_exercise_titles)
    app.connect("doctree-resolved", extract_figure_captions)
    app.connect("doctree-read", translate_claims, priority=400)  # before book_ext's collect_claims
    app.connect("doctree-read", translate_explorers)
    app.connect("doctree-read", translated_nodes_at_home, priority=900)  # last: before the page is pickled
    app.connect("html-page-context", language_switch)
    app.connect("config-inited", interface_words)
    app.connect("build-finished", interface_attributes)
    app.connect("build-finished", translate_figures)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
