"""lib.show_source(..., elide_checks=True): the core of a function without its input validation."""

import pytest

from lib.book.source import ELISION, show_source
from lib.model.attention import scaled_dot_product_attention


def _validated(x, y=None):
    """Add y to x (a docstring stays)."""
    if not isinstance(x, int):
        raise TypeError(f"x must be an int, got {x!r}")
    _check_positive("x", x)
    assert x < 10**9, x
    total = x + (y or 0)
    if y is not None:
        if y < 0:
            raise ValueError("y must be >= 0")
        total += 1
    return total


def _check_positive(name, value):
    if value <= 0:
        raise ValueError(f"{name} must be positive")


def _plain(x):
    return x + 1


def test_elide_checks_drops_validation_and_says_so():
    src = show_source(_validated, elide_checks=True)
    code = src.code
    assert "raise" not in code and "_check_positive" not in code and "assert" not in code
    # the core stays, including the docstring and the branches that do work
    for kept in ('"""Add y to x', "total = x + (y or 0)", "if y is not None:", "total += 1", "return total"):
        assert kept in code, kept
    # one marker per run of checks: the leading three statements, and the nested one
    assert code.count(ELISION) == 2
    assert src.elided == 6
    assert "6 lines of input checks elided" in src.caption
    assert "input checks elided" in src._repr_html_()
    # the full listing is unchanged without the flag
    full = show_source(_validated)
    assert full.elided == 0 and "raise TypeError" in full.code and "elided" not in full.caption


def test_elide_checks_on_lib_code_keeps_the_equation():
    src = show_source(scaled_dot_product_attention, elide_checks=True)
    assert "raise" not in src.code
    assert "scores = (q @ k.transpose(-2, -1)) * scale" in src.code
    assert "return dropped @ v, weights" in src.code
    assert src.elided >= 6
    compile(src.code, "<shown>", "exec")  # what is shown is still valid Python


def test_elide_checks_without_checks_changes_nothing():
    assert show_source(_plain, elide_checks=True).code == show_source(_plain).code
    assert show_source(_plain, elide_checks=True).elided == 0


def test_elide_checks_with_an_excerpt():
    src = show_source(_validated, start="_check_positive", end="return", elide_checks=True)
    assert src.code.splitlines()[0] == ELISION
    assert src.code.splitlines()[-1] == "return total"


def test_elide_checks_bad_arguments():
    with pytest.raises(ValueError, match="linenos"):
        show_source(_validated, elide_checks=True, linenos=True)
    with pytest.raises(TypeError, match="elide_checks"):
        show_source(_validated, elide_checks="yes")


def test_tool_pragmas_are_not_shown() -> None:
    """``# fmt: skip`` and friends address the formatter, not the reader."""
    from lib.model.attention import MultiHeadAttention

    code = show_source(MultiHeadAttention.forward).code
    assert "fmt: skip" not in code and "need_weights: bool = True," in code
    assert "fmt: skip" in open(show_source(MultiHeadAttention.forward).path).read()  # it is in the file
