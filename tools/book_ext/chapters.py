"""Which page is chapter N: ``book/NN_slug`` (what the run times, the Claims appendix and the
per-chapter numbers share)."""

from __future__ import annotations

import re

CHAPTER_DOC = re.compile(r"^book/(\d\d)_[^/]+$")


def chapter_docs(env) -> dict[int, str]:
    """Chapter number -> docname, for every chapter in this build."""
    found = {}
    for docname in sorted(env.found_docs):
        m = CHAPTER_DOC.match(docname)
        if m:
            found.setdefault(int(m.group(1)), docname)
    return found
