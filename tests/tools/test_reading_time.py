"""tools/book_ext/reading_time.py: a chapter's reading time counts its prose, not its code or math."""

from __future__ import annotations

from docutils import nodes

from tools.book_ext.reading_time import PACE, prose_units, units


def test_words_and_chinese_characters_count_one_each() -> None:
    assert units("Attention is all you need, isn't it? 2017") == 8
    assert units("注意力就是一切 Transformer") == 8


def test_code_outputs_and_math_are_not_read_as_prose() -> None:
    # built by hand, not parsed: in a process where Sphinx has run, docutils' math directive is Sphinx's,
    # which needs a build environment
    doctree = nodes.document(None, None)
    section = nodes.section()
    section += nodes.title(text="A title")
    section += nodes.paragraph(text="Two short sentences. Read them.")
    section += nodes.literal_block(text="x = softmax(q @ k.T)  # code")
    section += nodes.math_block(text="o = \\sum_j a_j v_j")
    doctree += section
    output = nodes.container(classes=["cell_output"])
    output += nodes.paragraph(text="printed words the reader skims")
    doctree += output
    explorer = nodes.raw(format="html")
    explorer.children = [nodes.Text("<div>an explorer drawn again in Chinese, 注意力</div>")]  # no parent set
    doctree += explorer
    assert prose_units(doctree) == 2 + 5  # the title and the paragraph


def test_the_pace_is_stated_per_language() -> None:
    assert PACE == {"en": 200, "zh_CN": 300}
