"""lib.show_source: the source as it runs, without the pragmas that address tools, wrapped on the page."""

from pathlib import Path

from lib.book.source import show_source


def _with_pragmas(x):
    y = lambda v: v + 1  # noqa: E731
    return y(x)  # type: ignore[no-any-return]


def test_tool_pragmas_are_not_shown() -> None:
    """``# fmt: skip``, ``# noqa`` and ``# type: ignore`` address tools, not the reader."""
    code = show_source(_with_pragmas).code
    assert "noqa" not in code and "type: ignore" not in code
    assert code.endswith("return y(x)") and "y = lambda v: v + 1\n" in code
    assert "# noqa: E731" in Path(__file__).read_text()  # it is in the file


def test_long_lines_wrap_with_a_hanging_indent() -> None:
    """On the page a listing wraps instead of scrolling sideways; continuation lines hang 4 characters
    past their line's own indentation."""
    from lib.model.attention import MultiHeadAttention

    shown = show_source(MultiHeadAttention.forward)
    html = shown._repr_html_()
    assert "white-space: pre-wrap" in html and "overflow-x" not in html
    lines = shown.code.split("\n")
    assert html.count("display: block; padding-left:") == len(lines)
    body = next(line for line in lines if line.startswith("        "))  # a line of the method's body
    hang = len(body) - len(body.lstrip(" ")) + 4
    assert f"padding-left: {hang}ch; text-indent: -{hang}ch" in html
