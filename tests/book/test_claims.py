"""lib.claim shows NumPy values as readably as Python and torch ones."""

import numpy as np
import pytest

from lib.book.claims import claim, format_value


def test_numpy_scalars_and_arrays_are_rounded_like_floats():
    assert format_value(np.float32(15.387586)) == "15.4"
    assert format_value(np.float64(4.591083e6)) == "4.59e+06"
    assert format_value(np.array([1.23456, 2.0])) == "[1.23, 2]"
    assert format_value(np.int64(3)) == "3"
    assert format_value(np.bool_(True)) == "True"


def test_claim_line_with_numpy_values(capsys):
    claim("a ratio is small", bool(np.float32(0.5) < 1), ratio=np.float32(0.5))
    assert capsys.readouterr().out.strip() == "✔ Claim: a ratio is small — ratio=0.5"


def test_a_claim_that_does_not_hold_raises_its_line():
    with pytest.raises(AssertionError, match=r"^✘ Claim: a ratio is small — ratio=2$"):
        claim("a ratio is small", bool(np.float32(2.0) < 1), ratio=np.float32(2.0))
