"""The References page, author–year. The text cites "Vaswani et al. (2017)"; the References page labels
its entries the same way ("[Vaswani et al., 2017]"), sorted by author and year, instead of
pybtex's alpha labels ("[VSP+17]"): the bibliography style ``authoryear`` registered here
(`_config.yml` sets ``bibtex_default_style: authoryear``). tools/myst/book.py labels the Colab editions'
citations with the same functions. pybtex looks each plugin up once per build, and the page's list
is a list for screen readers.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator

from sphinx.application import Sphinx


def _person_text(name: str) -> str:
    """A name part as plain text: "{Stanford CS224N}" -> "Stanford CS224N" (LaTeX braces, accents)."""
    from pybtex.backends.plaintext import Backend
    from pybtex.richtext import Text

    return Text.from_latex(name).render(Backend())


def sort_entries(entries: list) -> list:
    """pybtex entries in the order of the References page: by author, year and title."""
    from pybtex.style.sorting.author_year_title import SortingStyle

    return list(SortingStyle().sort(entries))


def author_year_labels(sorted_entries) -> Iterator[str]:
    """The References page's labels, "Vaswani et al., 2017", for entries in `sort_entries` order.

    Two entries with the same authors and year get "2020a", "2020b" in that order. tools/myst/book.py
    labels the Colab editions' citations with this same function.
    """
    seen: dict[str, int] = {}
    labels = []
    for entry in sorted_entries:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_person_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        if not names:
            who = entry.fields.get("title", entry.key)
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        label = f"{who}, {entry.fields.get('year', 'n.d.')}"
        labels.append(label)
        seen[label] = seen.get(label, 0) + 1
    suffix: dict[str, int] = {}
    for label in labels:  # two "Wang et al., 2020": 2020a, 2020b
        if seen[label] > 1:
            suffix[label] = suffix.get(label, 0) + 1
            yield label + "abcdefghijklmnopqrstuvwxyz"[suffix[label] - 1]
        else:
            yield label


def _register_author_year_style() -> None:
    """The pybtex style `authoryear`: labels "Vaswani et al., 2017", sorted by author and year."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle
    from pybtex.style.sorting.author_year_title import SortingStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            return author_year_labels(sorted_entries)

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = AuthorYearLabels
        default_sorting_style = SortingStyle

    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle, force=True)


def _pybtex_plugins_looked_up_once() -> None:
    """pybtex finds each plugin (a name style, a label style, a backend) among the entry points of
    every installed package, and does so again at every citation the build resolves: 171 scans of all
    the packages' metadata, about 1 s of each build that writes pages. The packages do not change during a
    build, so each lookup is made once (the plugins registered at run time are still looked up first)."""
    import pybtex.plugin

    if not hasattr(pybtex.plugin.entry_points, "cache_info"):
        pybtex.plugin.entry_points = functools.cache(pybtex.plugin.entry_points)


def accessible_bibliography(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The References page's entries are the items of their list: docutils marks the list
    ``role="list"`` and each entry ``role="doc-biblioentry"``, a role that is deprecated and not a list
    item (axe-core: aria-required-children, critical)."""
    if "body" in context and 'role="doc-biblioentry"' in context["body"]:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


def setup(app: Sphinx) -> dict:
    _register_author_year_style()
    _pybtex_plugins_looked_up_once()
    app.connect("html-page-context", accessible_bibliography)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
