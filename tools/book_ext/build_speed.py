"""Work a build need not do: each page's doctree is read once for every {numref} to it, and the
one-page book of the PDF builds no search index."""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

# Sphinx resolves each {numref} by unpickling its target page's whole doctree (to find the figure's
# node), and a chapter's doctree holds its outputs: a page with ten references read its doctree ten
# times (about 18 s of a build). Each page's doctree is read once per build here; numref only reads it.
_NUMREF_DOCTREES: dict[int, dict[str, nodes.document]] = {}


def _resolve_numref_xref(self, env, *args, **kwargs):
    from sphinx.environment import BuildEnvironment

    doctrees = _NUMREF_DOCTREES.setdefault(id(env), {})

    def read(docname: str) -> nodes.document:
        if docname not in doctrees:
            doctrees[docname] = BuildEnvironment.get_doctree(env, docname)
        return doctrees[docname]

    env.get_doctree = read
    try:
        return _sphinx_resolve_numref_xref(self, env, *args, **kwargs)
    finally:
        del env.get_doctree


def _sphinx_resolve_numref_xref(self, env, *args, **kwargs):
    """Sphinx's own resolver (kept on the wrapper, so that a second import of this module finds it)."""
    from sphinx.domains.std import StandardDomain

    resolve = StandardDomain._resolve_numref_xref
    return getattr(resolve, "sphinx_original", resolve)(self, env, *args, **kwargs)


def forget_numref_doctrees(app: Sphinx, exception: Exception | None) -> None:
    _NUMREF_DOCTREES.pop(id(app.env), None)


def one_page_without_search(app: Sphinx) -> None:
    """The one-page book of the PDF (``singlehtml``) has no search page: no search index to build."""
    if app.builder.name == "singlehtml":
        app.builder.search = False


def setup(app: Sphinx) -> dict:
    from sphinx.domains.std import StandardDomain

    current = StandardDomain._resolve_numref_xref
    _resolve_numref_xref.sphinx_original = getattr(current, "sphinx_original", current)
    StandardDomain._resolve_numref_xref = _resolve_numref_xref
    app.connect("build-finished", forget_numref_doctrees)
    app.connect("builder-inited", one_page_without_search)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
