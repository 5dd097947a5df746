"""The site's own words in its language: a switch to the other language at the top of every page (the
same page path in the other site) with ``<link rel="alternate" hreflang>`` for search engines, and the
themes' words (their catalogs, and the labels they write without asking one) from
``locale/<language>/site.yml``."""

from __future__ import annotations

import gettext
import html
import re
from pathlib import Path

from sphinx.application import Sphinx

from .languages import LANGUAGES, language


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


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", language_switch)
    app.connect("config-inited", interface_words)
    app.connect("build-finished", interface_attributes)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
