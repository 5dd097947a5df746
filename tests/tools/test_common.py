"""tools/common.py: what the tools and the tests share (here: the one reader of `_toc.yml`)."""

from __future__ import annotations

import re

import pytest
from sphinx_external_toc.parsing import MalformedError

from conftest import REPO
from tools.common import toc_docnames


def test_toc_docnames_lists_every_page_of_the_toc_in_order() -> None:
    """The simple expectation: the `root:` and `file:` lines of `_toc.yml`, top to bottom (the toc is
    flat: one root, two parts of pages), each a notebook or a markdown file in book/."""
    text = (REPO / "_toc.yml").read_text(encoding="utf-8")
    expected = re.findall(r"^\s*(?:-\s+)?(?:root|file):\s*(\S+)\s*$", text, flags=re.M)
    assert len(expected) > 10
    assert toc_docnames() == expected
    for docname in expected:
        assert docname.startswith("book/")
        assert (REPO / f"{docname}.ipynb").is_file() or (REPO / f"{docname}.md").is_file(), docname


def test_toc_docnames_reads_a_nested_toc_in_reading_order(tmp_path) -> None:
    (tmp_path / "_toc.yml").write_text(
        "format: jb-book\nroot: intro\nchapters:\n"
        "  - file: a\n    sections:\n      - file: a1.md\n      - file: a2\n"
        "  - file: b.ipynb\n",
        encoding="utf-8",
    )
    assert toc_docnames(tmp_path) == ["intro", "a", "a1", "a2", "b"]


def test_a_malformed_toc_is_an_error(tmp_path) -> None:
    (tmp_path / "_toc.yml").write_text("format: jb-book\nchapters:\n  - file: a\n", encoding="utf-8")
    with pytest.raises(MalformedError):
        toc_docnames(tmp_path)
