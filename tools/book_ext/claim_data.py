"""The claims of a page, as data. Every chapter checks the claims of its prose with `lib.claim` (and
`lib.check`), which displays each one as a MIME bundle: a box (``text/html``), one line
(``text/plain``) and the claim as data (``application/vnd.transformers-book.claim+json``:
kind, statement, holds, values; see `lib/book/claims.py`). myst-nb renders every MIME type of a
bundle while it reads the notebook and warns about a type it does not know (a ``-W`` build fails),
whatever the render priority says; so this extension registers a myst-nb MIME renderer
(`ClaimDataRenderer`) that turns the data into a `claim_data` node beside the other renderings,
and `_config.yml` gives the type no render priority (``nb_mime_priority_overrides``), so the page
shows the box and never the data. While the build reads each executed notebook, those nodes are
collected (`collect_claims`: data, never printed text), and each claim gets an anchor,
``claim-N``, which the page's box carries; the Claims appendix (`claims_ledger`) lists them.
An explorer's data (how it was drawn) becomes an `explorer_data` node the same way.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx

from lib.book.claims import CLAIM_MIME, CheckedClaim  # what lib.claim displays
from lib.book.explorers.explorer import EXPLORER_MIME  # how an explorer was drawn


def collected_claims(env) -> dict[str, list[dict]]:
    """Docname -> the claims its page displayed (`collect_claims`), in order."""
    if not hasattr(env, "book_claims"):
        env.book_claims = {}
    return env.book_claims


class claim_data(nodes.General, nodes.Element):
    """A claim's data (``claim``: the bundle's JSON object) beside its box and its line in a page's
    MIME bundle; never rendered (no MIME priority: the page shows the box)."""


class explorer_data(nodes.General, nodes.Element):
    """How an explorer was drawn (``call``: the bundle's JSON object, ``EXPLORER_MIME``) beside its HTML;
    never rendered. The site in another language draws the explorer again from it (``i18n_ext/outputs.py``)."""


class ClaimDataRenderer:
    """A myst-nb MIME renderer (its `MimeRenderPlugin` protocol) for `lib.claim`'s data: a `claim_data`
    node; and for an explorer's (how it was drawn): an `explorer_data` node.

    Without it, myst-nb warns "skipping unknown output mime type" for every claim (while reading the
    notebook, before any render priority is consulted) and drops the data.
    """

    mime_priority_overrides = ()  # _config.yml's nb_mime_priority_overrides keeps the type unrendered

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type == EXPLORER_MIME:
            return [] if inline else [explorer_data("", call=dict(data.content))]
        if data.mime_type != CLAIM_MIME:
            return None
        return [] if inline else [claim_data("", claim=dict(data.content))]


def register_claim_renderer() -> None:
    """Add `ClaimDataRenderer` to myst-nb's MIME renderers.

    myst-nb finds renderers only through the entry point group ``myst_nb.mime_renderers``, read
    once into a cached list (`myst_nb.core.render.load_mime_renders`); the book's tools are not an
    installed package, so the renderer joins that list here.
    """
    from myst_nb.core.render import load_mime_renders

    renderers = load_mime_renders()
    if ClaimDataRenderer not in renderers:
        renderers.append(ClaimDataRenderer)


def collect_claims(app: Sphinx, doctree: nodes.document) -> None:
    """Read the claims `lib.claim` displayed in this page's cell outputs (their data); anchor each one."""
    env = app.env
    found = []
    for node in doctree.findall(claim_data):
        claim = CheckedClaim.from_data(node["claim"])
        anchor = f"claim-{len(found) + 1}"
        for target in _anchor_nodes(node):
            target["ids"].append(anchor)
        found.append(
            {
                "kind": claim.kind,
                "statement": claim.statement,
                "shown": node.get("statement_shown", claim.statement),  # in the page's language
                "values": claim.shown_values,
                "held": claim.holds,
                "anchor": anchor,
            }
        )
    if found:
        collected_claims(env)[env.docname] = found
    else:
        collected_claims(env).pop(env.docname, None)


def _anchor_nodes(data: claim_data) -> list[nodes.Element]:
    """The nodes that carry the anchor of the claim whose data is `data`.

    myst-nb keeps a displayed output's renderings side by side in a "mime bundle" (one container
    per MIME type) until a post-transform picks one per builder (the HTML box on the site): every
    rendering but the data gets the anchor, so the one kept has it.
    """
    rendering = data.parent
    bundle = rendering.parent if rendering is not None else None
    if bundle is None or bundle.get("nb_element") != "mime_bundle":
        return []
    return [
        alternative.children[0]
        for alternative in bundle.children
        if alternative.children and alternative.get("mime_type") != CLAIM_MIME
    ]


def purge(app: Sphinx, env, docname: str) -> None:
    collected_claims(env).pop(docname, None)


def merge(app: Sphinx, env, docnames, other) -> None:
    collected_claims(env).update({d: c for d, c in collected_claims(other).items() if d in docnames})


def setup(app: Sphinx) -> dict:
    register_claim_renderer()
    app.add_node(claim_data)
    app.add_node(explorer_data)
    app.connect("doctree-read", collect_claims)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
