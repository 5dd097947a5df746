"""tools/myst/: the book's MyST to plain Jupyter markdown, on small cells (no notebook is run).

- exercises get the site's number and title, solutions a closed <details> (reader) or nothing (student);
- {doc}, {ref}, {cite:p}, {cite:t} and relative links to pages become links to the published site,
  titled and labelled as on the site (the References page's author-year labels, 2020a/2020b);
- admonitions become headed blockquotes; math, code and HTML stay byte for byte;
- anything Jupyter would show raw is an error that names the cell and the construct;
- the exercise numbers are the site's (tools/book_ext/numbering.py: chapter N's k-th exercise is N.k).
"""

from __future__ import annotations

import nbformat
import pytest

from conftest import REPO
from tools.common import chapter_number, chapters, pages_url, site_url
from tools.myst import (
    Book,
    Context,
    MystError,
    convert,
    directives,
    notebook_to_jupyter,
    raw_myst,
    to_jupyter,
    without_solution_markers,
)


@pytest.fixture(scope="module")
def book() -> Book:
    return Book.load()


@pytest.fixture(scope="module")
def reader(book: Book) -> Context:
    return Context(book, "book/03_scaling", "reader", "book/03_scaling.ipynb, cell 7")


def _exercise(book: Book, docname: str):
    return next(ex for ex in book.exercises.values() if ex.docname == docname)


def test_exercise_is_a_numbered_titled_block_and_its_solution_a_closed_details(book: Book, reader: Context) -> None:
    ex = _exercise(book, "book/03_scaling")
    source = (
        f"Text before.\n\n```{{exercise}} A title with $x^2$\n:label: {ex.label}\n\nDo it, see {{doc}}`04_multi_head`.\n```\n\n"
        f"```{{solution}} {ex.label}\n:class: dropdown\n\n$$\na = b\n$$\n```\n"
    )
    parts = convert(source, context=reader)
    assert [p.kind for p in parts] == ["text", "exercise", "solution"]
    assert parts[1].label == ex.label
    assert f'<a id="{ex.label}"></a>**Exercise {ex.number} · {ex.title}**' in parts[1].markdown
    assert ex.number.startswith("3.")
    assert parts[1].markdown.startswith("> ") and "> Do it, see [4. Multi-head attention](" in parts[1].markdown
    assert parts[2].markdown.startswith(f"<details>\n<summary>Solution to Exercise {ex.number}</summary>")
    assert "$$\na = b\n$$" in parts[2].markdown, "math must stay as it is"
    student = to_jupyter(source, context=Context(book, "book/03_scaling", "student"))
    assert "a = b" not in student and "<details>" not in student and f"Exercise {ex.number}" in student
    assert not raw_myst(to_jupyter(source, context=reader))


def test_exercise_numbers_are_the_sites(book: Book) -> None:
    """Chapter N's exercises are N.1, N.2, ... in reading order (tools/book_ext/numbering.py renumbers the
    site's the same way), and every label is unique."""
    for path in chapters():
        nb = nbformat.read(path, as_version=4)
        labels = [
            d.options["label"]
            for c in nb.cells
            if c.cell_type == "markdown"
            for d in directives(c.source, book=book)
            if d.name == "exercise"
        ]
        n = chapter_number(path)
        assert [book.exercises[label].number for label in labels] == [f"{n}.{k}" for k in range(1, len(labels) + 1)]
        assert all(book.exercises[label].docname == f"book/{path.stem}" for label in labels)


def test_roles_become_links_to_the_site(book: Book, reader: Context) -> None:
    site = site_url()
    ex = _exercise(book, "book/02_self_attention")
    text = to_jupyter(
        "See {doc}`04_multi_head`, {doc}`that chapter <02_self_attention>`, {ref}`" + ex.label + "`,\n"
        "{cite:p}`vaswani2017attention`, {cite:t}`vaswani2017attention` and {cite:p}`wang2020linformer,wang2020minilm`.",
        context=reader,
    )
    assert f"[4. Multi-head attention]({site}book/04_multi_head.html)" in text
    assert f"[that chapter]({site}book/02_self_attention.html)" in text
    assert f"[Exercise {ex.number}]({site}book/02_self_attention.html#{ex.label})" in text
    refs = f"{site}book/references.html#cite-"
    assert f"([Vaswani et al., 2017]({refs}vaswani2017attention))" in text
    assert f"[Vaswani et al. (2017)]({refs}vaswani2017attention)" in text
    # The References page tells the two Wang et al. 2020 apart; so do the citations.
    assert f"([Wang et al., 2020a]({refs}wang2020linformer); [Wang et al., 2020b]({refs}wang2020minilm))" in text


def test_site_url_is_declared_once_and_follows_github_pages() -> None:
    assert site_url() == "https://cs224n-book.github.io/transformers-executed/"
    assert pages_url("https://github.com/Some-Org/some-repo") == "https://some-org.github.io/some-repo/"


def test_what_jupyter_renders_stays_byte_for_byte(reader: Context) -> None:
    source = (
        "# A title\n\nProse with $a_{ij}$, `{doc}` in code, **bold** and <b>HTML</b>.\n\n"
        "$$\n\\mathrm{softmax}(x)_i = \\frac{e^{x_i}}{\\sum_j e^{x_j}}\n$$\n\n"
        "```python\nprint('{doc}`not a role`')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "\\begin{align}\na &= b\n\\end{align}\n\n![a figure](https://example.org/x.png)"
    )
    assert to_jupyter(source, context=reader) == source


def test_admonitions_targets_and_comments(reader: Context) -> None:
    text = to_jupyter(
        "(sec-x)=\n## Section\n\n% a comment\n\n```{note}\nA note with {doc}`03_scaling`.\n```\n\n"
        ":::{admonition} Careful\nBody.\n:::\n",
        context=reader,
    )
    assert '<a id="sec-x"></a>\n## Section' in text
    assert "a comment" not in text
    assert "> **Note**\n>\n> A note with [3. Scaling and variance](" in text
    assert "> **Careful**\n>\n> Body." in text
    assert not raw_myst(text)


def test_relative_links_to_pages_go_to_the_site(reader: Context) -> None:
    text = to_jupyter("The [references](references.md#cite-ba2016layer) list.", context=reader)
    assert text == f"The [references]({site_url()}book/references.html#cite-ba2016layer) list."


@pytest.mark.parametrize(
    "source, construct",
    [
        ("```{figure} x.png\nA figure\n```", "{figure}"),
        ("```{exercise-start}\n:label: ex-x\n```", "{exercise-start}"),
        ("See {eq}`my-eq`.", "{eq}"),
        ("See {glue:text}`acc:.2f`.", "{glue:text}"),
        ("{doc}`no_such_page`", "no_such_page"),
        ("{ref}`no-such-label`", "no-such-label"),
        ("{cite:p}`nobody2099nothing`", "nobody2099nothing"),
        ("---\ntitle: x\n---\ntext", "front matter"),
        ("term\n: definition", "definition list"),
        ("Text {{ name }}.", "substitution"),
        ("$$\nx\n$$ (eq-1)", "labelled equation"),
        ("- item\n\n  ```{note}\n  x\n  ```", "inside a list"),
        ("```{exercise} No label\nBody\n```", "no :label:"),
        ("```{exercise} Bad option\n:label: ex-03-dk\n:colour: red\n\nBody\n```", "{exercise}"),
        ("```{solution} ex-nothing\nBody\n```", "ex-nothing"),
        (":::\nA colon fence without a name\n:::", "colon fence"),
        ("![a figure](figures/x.png)", "x.png"),
        ("[a data file](data/x.csv)", "x.csv"),
    ],
)
def test_unknown_myst_is_an_error_naming_the_cell_and_the_construct(
    reader: Context, source: str, construct: str
) -> None:
    with pytest.raises(MystError) as error:
        to_jupyter(source, context=reader)
    assert "book/03_scaling.ipynb, cell 7" in str(error.value)
    assert construct in str(error.value)


def test_gated_code_solutions_are_collapsed_without_their_markers(book: Book) -> None:
    path = REPO / "book" / "03_scaling.ipynb"
    nb = nbformat.read(path, as_version=4)
    out = notebook_to_jupyter(nb, book=book, docname="book/03_scaling", edition="reader")
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert [c.source for c in out.cells if c.cell_type == "code"] == [without_solution_markers(c.source) for c in code]
    hidden = [c for c in out.cells if c.cell_type == "code" and c.metadata.get("jupyter", {}).get("source_hidden")]
    assert hidden and all(c.metadata.get("cellView") == "form" for c in hidden)  # Colab hides them
    assert all("### BEGIN SOLUTION" not in c.source and "### END SOLUTION" not in c.source for c in hidden)
    gated = [c for c in code if "### BEGIN SOLUTION" in c.source]
    assert [without_solution_markers(c.source) for c in gated] == [c.source for c in hidden]
    assert without_solution_markers("x = 1\n    ### BEGIN SOLUTION\ny = 2\n    ### END SOLUTION") == "x = 1\ny = 2"
    assert all(not raw_myst(c.source) for c in out.cells if c.cell_type == "markdown")
    assert nb == nbformat.read(path, as_version=4), "the chapter itself must not change"


def test_a_bad_context_is_refused(book: Book) -> None:
    with pytest.raises(ValueError, match="edition"):
        Context(book, "book/03_scaling", "teacher")


def test_the_site_hides_nbgrader_solution_markers() -> None:
    """A code solution's ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines are for the student-version
    tools; the site shows the code without them (tools/book_ext/page_content.py)."""
    from docutils import nodes
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.utils import new_document

    from tools.book_ext.page_content import hide_solution_markers

    code = "def f(x):\n    ### BEGIN SOLUTION\n    return x\n    ### END SOLUTION\n"
    doc = new_document("<test>", get_default_settings(Parser))
    cell = nodes.container("", nodes.container("", nodes.literal_block(code, code), classes=["cell_input"]))
    output = nodes.container("", nodes.literal_block(code, code), classes=["cell_output"])
    doc += [cell, output]
    hide_solution_markers(None, doc)
    shown, printed = (b.astext() for b in doc.findall(nodes.literal_block))
    assert shown == "def f(x):\n    return x\n"
    assert printed == code  # outputs are left alone


def test_a_code_span_that_wraps_a_line_and_quotes_a_role_stays_code(reader: Context) -> None:
    """The parser's code span, not a search of the raw text, says where code is: a code span broken
    across lines (its content then has a space where the source has a newline) is left as it is,
    and the real role after it is the one converted."""
    source = "Write `` {doc}`x`\nlike`` this, see {doc}`04_multi_head`."
    link = f"[4. Multi-head attention]({site_url()}book/04_multi_head.html)"
    assert to_jupyter(source, context=reader) == f"Write `` {{doc}}`x`\nlike`` this, see {link}."


def test_roles_are_found_in_lists_blockquotes_headings_and_tables(reader: Context) -> None:
    site = site_url()
    link = f"[4. Multi-head attention]({site}book/04_multi_head.html)"
    source = (
        "## A `{doc}` heading {doc}`04_multi_head` ##\n\n"
        "> quoted `{doc}`x``\n> and {doc}`04_multi_head`\n\n"
        "- an item `a\n  {doc}`x`` and\n  {doc}`04_multi_head`\n\n"
        "| `{doc}`x`` | {doc}`04_multi_head` |\n|---|---|\n| {doc}`04_multi_head` | `{doc}`y`` |"
    )
    expected = (
        f"## A `{{doc}}` heading {link} ##\n\n"
        f"> quoted `{{doc}}`x``\n> and {link}\n\n"
        f"- an item `a\n  {{doc}}`x`` and\n  {link}\n\n"
        f"| `{{doc}}`x`` | {link} |\n|---|---|\n| {link} | `{{doc}}`y`` |"
    )
    assert to_jupyter(source, context=reader) == expected


def test_a_figures_caption_follows_its_cell_in_the_editions(book: Book) -> None:
    """A code cell whose metadata gives its figure a caption (``mystnb.figure``) is followed, in the
    Colab edition and the student version, by the caption as the site numbers it."""
    import nbformat

    from tools.myst import figure_captions, notebook_to_jupyter

    figure = nbformat.v4.new_code_cell("plot()", metadata={"mystnb": {"figure": {"caption": "Loss falls with $T$."}}})
    again = nbformat.v4.new_code_cell("plot()", metadata=figure.metadata)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1"), figure, again])
    assert figure_captions(nb, book=book, docname="book/04_multi_head", edition="reader") == {
        1: "**Figure 4.1.** Loss falls with $T$.",
        2: "**Figure 4.2.** Loss falls with $T$.",
    }
    out = notebook_to_jupyter(nb, book=book, docname="book/04_multi_head")
    assert [c.cell_type for c in out.cells] == ["code", "code", "markdown", "code", "markdown"]
    # the caption cell's id comes from its figure's: an edition written twice is the same file
    assert out.cells[2].id == f"{figure.id}-caption" and out.cells[4].id == f"{again.id}-caption"
    assert [c.id for c in notebook_to_jupyter(nb, book=book, docname="book/04_multi_head").cells] == [
        c.id for c in out.cells
    ]
    zh = Book.load(language="zh_CN")
    assert figure_captions(nb, book=zh, docname="book/04_multi_head", edition="reader")[1].startswith("**图 4.1**　")


def test_numref_cites_a_figure_by_the_number_the_site_gives_it(book: Book, reader: Context) -> None:
    """A chapter's figure names (mystnb.figure.name) are numbered as the site numbers them: {numref}
    links to the caption cell's anchor in the notebook itself, or to the figure on the site."""
    from tools.myst import Context, convert, join

    name, (docname, number) = next(iter(book.figures.items()))
    assert name.startswith("fig-") and number.split(".")[0] == str(int(docname.split("/")[1][:2]))
    here = Context(book, docname, "reader", "test")
    assert join(convert(f"see {{numref}}`{name}`", context=here), "reader").strip() == f"see [Figure {number}](#{name})"
    elsewhere = join(convert(f"see {{numref}}`{name}`", context=reader), "reader")
    assert f"[Figure {number}]({book.page_url(docname, name)})" in elsewhere
