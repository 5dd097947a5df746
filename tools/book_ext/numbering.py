"""Exercises and figures are numbered per chapter: sphinx-exercise numbers exercises across the whole
book, and Sphinx figures page by page; here both are renumbered within each chapter as ``N.k``
(chapter 2's first exercise is "Exercise 2.1", chapter 4's second figure "Figure 4.2")."""

from __future__ import annotations

from sphinx.application import Sphinx

from .chapters import CHAPTER_DOC


def number_per_chapter(app: Sphinx, env) -> list[str]:
    """Exercise k and figure k of chapter N are "Exercise N.k" and "Figure N.k" (sphinx-exercise counts
    exercises across the whole book, Sphinx figures page by page).

    Runs after Sphinx has assigned its figure numbers (`env-get-updated`, connected after the
    built-in collector), and rewrites the numbers of every page in place: numbered in the order
    Sphinx counted them, i.e. the page's reading order. A {numref} to a figure then reads "Figure 4.2"
    (图 4.2 on the Chinese site: ``numfig_format`` from ``locale/zh_CN/site.yml``).
    """
    for docname, by_type in env.toc_fignumbers.items():
        m = CHAPTER_DOC.match(docname)
        prefix = (int(m.group(1)),) if m else ()
        for kind in ("exercise", "figure"):
            numbers = by_type.get(kind)
            if not numbers:
                continue
            for k, key in enumerate(sorted(numbers, key=numbers.get), start=1):
                numbers[key] = (*prefix, k)
    return []


def setup(app: Sphinx) -> dict:
    app.connect("env-get-updated", number_per_chapter, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
