"""What Sphinx's gettext leaves out of the catalogs, and its translations: exercise titles (not messages
for Sphinx), display equations (translated as LaTeX, not parsed as reStructuredText literal blocks)
and figure captions (drawn from the execution cache, which the gettext build never reads)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain

from .languages import language


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


def setup(app: Sphinx) -> dict:
    app.add_transform(ExerciseTitles)
    app.add_transform(DisplayMath)
    app.add_transform(FigureCaptions)
    app.connect("doctree-resolved", extract_exercise_titles)
    app.connect("doctree-resolved", extract_figure_captions)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
