"""Claims a reader can see: every claim a chapter's prose makes is checked by :func:`claim`.

A claim prints one line on the page (and in Jupyter and Colab)::

    ✔ Claim: attention holds its accuracy as length grows — acc_T32=0.973, drop=0.012

and raises ``AssertionError`` with the same text (``✘`` instead of ``✔``) when it does not hold.
The site build collects these lines from every chapter into the Claims appendix (``book/claims``),
so the line's format is part of the contract: ``"✔ Claim: "`` + statement + ``" — "`` + values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

HELD, FAILED = "✔", "✘"
PREFIX = "Claim: "
SEPARATOR = " — "


def format_value(value: object) -> str:
    """A short, readable rendering of a measured value: 3 significant digits for floats."""
    if isinstance(value, torch.Tensor):
        value = value.item() if value.numel() == 1 else value.tolist()
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):  # NumPy scalars and arrays
        value = value.tolist()
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)
        if value != 0 and (abs(value) >= 1e5 or abs(value) < 1e-3):
            return f"{value:.3g}"
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:.0f}"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {format_value(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def claim_line(statement: str, holds: bool, measured: Mapping[str, object]) -> str:
    """The one line :func:`claim` prints: mark, statement, measured values."""
    values = ", ".join(f"{name}={format_value(value)}" for name, value in measured.items())
    mark = HELD if holds else FAILED
    return f"{mark} {PREFIX}{statement}" + (f"{SEPARATOR}{values}" if values else "")


def claim(statement: str, holds: bool, **measured: object) -> None:
    """Check a claim of the prose and show it, with the values measured on this run.

    >>> claim("scaled scores have unit variance", abs(var - 1) < 0.1, var=var)
    ✔ Claim: scaled scores have unit variance — var=0.98

    ``holds`` is the check, written out in the cell where the reader sees it (with its margin);
    ``measured`` are the numbers it was decided on. Raises ``AssertionError`` with the same line
    if the claim does not hold, so a chapter that runs to its end is a chapter whose claims held.
    """
    if not isinstance(statement, str) or not statement.strip():
        raise TypeError(f"statement must be a non-empty str, got {statement!r}")
    if isinstance(holds, torch.Tensor):
        if holds.numel() != 1:
            raise ValueError(f"holds must be a single truth value, got a tensor of shape {tuple(holds.shape)}")
        holds = bool(holds.item())
    if not isinstance(holds, bool):
        try:
            import numpy as np

            if isinstance(holds, np.bool_):
                holds = bool(holds)
        except ImportError:  # pragma: no cover - numpy is a dependency
            pass
    if not isinstance(holds, bool):
        raise TypeError(f"holds must be a bool (the outcome of the check), got {type(holds).__name__}")
    line = claim_line(statement.strip(), holds, measured)
    if not holds:
        raise AssertionError(line)
    print(line, flush=True)
