"""Clean consoles: each page lists each of its scripts once (see `dedupe_scripts`): Sphinx 7 adds
two themes' inline scripts twice, and the second `const THEBE_JS_URL` is a console error."""

from __future__ import annotations

from sphinx.application import Sphinx


def dedupe_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Each page lists each script once.

    Sphinx 7 adds an inline script registered after the builder started (sphinx-thebe's
    `const THEBE_JS_URL = ...`, sphinx-togglebutton's selector) twice, once with filename None and
    once with "": the second `const` is a SyntaxError in every page's console (fixed in Sphinx 8,
    sphinx-doc/sphinx#13402; Jupyter Book 1 needs Sphinx 7).
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        key = (str(js.filename or ""), tuple(sorted((k, str(v)) for k, v in js.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", dedupe_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
