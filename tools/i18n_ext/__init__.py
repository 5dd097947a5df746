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

Its rooms: `messages` (display equations, exercise titles, figure captions: extracted for the catalogs
and translated), `outputs` (claims, explorers and figures drawn again in the reader's language),
`interface` (the language switch and the themes' words), `build_speed` (pages pickled without the
environment, a faster Chinese search index), and `languages` (the two sites and where each lives).
"""

from __future__ import annotations

# In this order (listeners of one event and priority run in the order they were connected).
EXTENSIONS = ("build_speed", "messages", "interface", "outputs")


def setup(app) -> dict:
    for name in EXTENSIONS:  # as imported: "i18n_ext" in Sphinx, "tools.i18n_ext" in tests
        app.setup_extension(f"{__name__}.{name}")
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
