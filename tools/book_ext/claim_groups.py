"""The claim boxes as the site shows them: drawn from each claim's data, and the claims that one code
cell displays one after another in one box.

A check cell displays its claims one after another (`lib.claim`, `lib.check`); in Jupyter and Colab
each call is a box of its own, since a notebook's outputs are displayed one at a time. On the site
a run of consecutive claim outputs in one cell becomes **one** box with one line per claim
(`lib.book.claim_box.box_html`): each line keeps its own mark (✔ or ✘), its anchor ``claim-N`` (the
Claims appendix links to it) and its values, and the box turns red if any of them failed. A lone
claim stays a box of its own. Either way the box is drawn again from the claim's data (the
``claim_data`` node that `claim_data` reads, found here by its type's name), so that it shows the
values' labels of the ``lib`` being built, whatever ``lib`` executed the notebook; on the site in
another language with the line that ``i18n_ext/outputs.py`` drew (``line_shown``).

A post-transform, before myst-nb picks each output's rendering (`SelectMimeType`, priority 4): the
HTML rendering of the first claim of a run gets the box of the run, the plain-text one every line,
and the outputs of the other claims of the run are removed.
"""

from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform

from lib.book.claim_box import BoxLine, box_html
from lib.book.claims import CheckedClaim


def _claim_data(node: nodes.Node) -> nodes.Element | None:
    """The claim data node of a myst-nb output (a ``mime_bundle`` container), or None if it shows no claim."""
    if not isinstance(node, nodes.container) or node.get("nb_element") != "mime_bundle":
        return None
    return next(node.findall(lambda n: type(n).__name__ == "claim_data"), None)


def _rendering(bundle: nodes.Element, mime_type: str, kind: type[nodes.Element]) -> nodes.Element | None:
    """The node of `kind` that renders `bundle` as `mime_type` (``raw`` for HTML, ``literal_block`` for text)."""
    for alternative in bundle.children:
        if alternative.get("mime_type") == mime_type:
            return next(alternative.findall(kind), None)
    return None


def claim_runs(parent: nodes.Element) -> list[list[tuple[nodes.Element, nodes.Element]]]:
    """The runs of consecutive claim outputs among `parent`'s children: lists of (output, its claim data)."""
    runs: list[list[tuple[nodes.Element, nodes.Element]]] = []
    previous = None
    for child in parent.children:
        data = _claim_data(child)
        if data is None:
            previous = None
            continue
        if previous is None:
            runs.append([])
        runs[-1].append((child, data))
        previous = child
    return runs


def _line(bundle: nodes.Element, data: nodes.Element, anchored: bool) -> BoxLine:
    """The line of one claim, in the page's language, with its anchor if `anchored`."""
    html = _rendering(bundle, "text/html", nodes.raw)
    ids = html["ids"] if html is not None else []
    anchor = ids[0] if anchored and ids else None
    if "line_shown" in data:  # drawn in the page's language by i18n_ext/outputs.py
        line = BoxLine.from_data(data["line_shown"])
        return BoxLine(**{**line.__dict__, "anchor": anchor})
    return CheckedClaim.from_data(data["claim"]).box_line(anchor=anchor)


def group_claims(run: list[tuple[nodes.Element, nodes.Element]]) -> None:
    """Draw one run's box into its first output, and remove the others (a run of one: its box again)."""
    first = run[0][0]
    grouped = len(run) > 1
    lines = [_line(bundle, data, anchored=grouped) for bundle, data in run]
    html = _rendering(first, "text/html", nodes.raw)
    if html is not None:
        html.children = [nodes.Text(box_html(lines))]
        if grouped:  # the anchors are the lines' now
            html["ids"] = []
    if not grouped:
        return
    text = _rendering(first, "text/plain", nodes.literal_block)
    if text is not None:
        shown = [_rendering(bundle, "text/plain", nodes.literal_block) for bundle, _ in run]
        text.children = [nodes.Text("\n".join(block.astext() for block in shown if block is not None))]
        text["ids"] = [line.anchor for line in lines if line.anchor]
    for bundle, _ in run[1:]:
        bundle.parent.remove(bundle)


class GroupClaims(SphinxPostTransform):
    """Every claim box of the page drawn from its data; consecutive claims of a cell in one box."""

    default_priority = 3  # before myst-nb's SelectMimeType (4), which keeps one rendering per output

    def run(self, **kwargs) -> None:
        outputs = {}  # the nodes that hold claim outputs (a cell's outputs), each once, in page order
        for data in self.document.findall(lambda n: type(n).__name__ == "claim_data"):
            bundle = data.parent.parent if data.parent is not None else None
            if bundle is not None and bundle.parent is not None:
                outputs.setdefault(id(bundle.parent), bundle.parent)
        for parent in outputs.values():
            for run in claim_runs(parent):
                group_claims(run)


def setup(app: Sphinx) -> dict:
    app.add_post_transform(GroupClaims)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
