"""Claims a reader can see: every claim a chapter's prose makes is checked by :func:`claim`.

A claim that holds is shown as a :class:`CheckedClaim`. In Jupyter, Colab and on the site it is a
box that wraps to the page's width (the mark and the statement, the measured values below them);
its plain-text form, for consoles, nbval and the site build, is one line::

    ✔ Claim: attention holds its accuracy as length grows — acc_T32=0.973, drop=0.012

A claim that does not hold raises ``AssertionError`` with the same line (``✘`` instead of ``✔``).

:func:`check` is its sibling for what is *not* a finding: an identity or an integrity check whose
outcome is known before the run (a hash the loader already enforced, a formula transcribed from
``lib``, two implementations agreeing to rounding). It is shown and asserted the same way, with
``Check:`` instead of ``Claim:``, and the Claims appendix counts checks apart from claims.
The site build collects the lines from every chapter's outputs into the Claims appendix
(``book/claims``), so the line's format is part of the contract: ``"✔ Claim: "`` + statement +
``" — "`` + values.
"""

from __future__ import annotations

import html
import math
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch

HELD, FAILED = "✔", "✘"
CLAIM, CHECK = "Claim", "Check"  # the two kinds: a finding of an experiment, or an identity/integrity check
SEPARATOR = " — "
#: The plain-text line, parsed: what the site build (the Claims appendix) and the seed sweep read back.
CLAIM_LINE = re.compile(
    rf"^(?P<mark>[{HELD}{FAILED}]) (?P<kind>{CLAIM}|{CHECK}): (?P<statement>.+?)(?:{SEPARATOR}(?P<values>.*))?$"
)


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


def claim_line(statement: str, holds: bool, measured: Mapping[str, object], kind: str = CLAIM) -> str:
    """The one line :func:`claim` (or :func:`check`) shows in plain text: mark, statement, measured values."""
    return CheckedClaim.of(statement, holds, measured, kind).line


# Inline styles only (no stylesheet reaches Jupyter, Colab and the site alike). Colours are
# translucent tints and the text inherits its colour, so the box reads on light and dark themes.
_COLOURS = {HELD: "46, 160, 67", FAILED: "218, 54, 51"}
_BOX_STYLE = (
    "box-sizing: border-box; max-width: 100%; margin: 0.3em 0; padding: 0.45em 0.8em;"
    " border: 1px solid rgba({rgb}, 0.45); border-left: 5px solid rgb({rgb}); border-radius: 4px;"
    " background: rgba({rgb}, 0.08); color: inherit; font-family: inherit; line-height: 1.45;"
    " white-space: normal; overflow-wrap: anywhere; word-break: normal;"
)
_MARK_STYLE = "color: rgb({rgb}); font-weight: bold; margin-right: 0.35em;"
_VALUES_STYLE = "margin-top: 0.25em; font-family: monospace; font-size: 0.9em; opacity: 0.85;"
_VALUE_STYLE = "display: inline-block; margin-right: 1.2em;"


@dataclass(frozen=True)
class CheckedClaim:
    """A checked claim as :func:`claim` shows it: ``str()`` is its one line, ``_repr_html_`` its box.

    ``values`` are the measured values, already formatted (``name -> text``), in the caller's order;
    ``kind`` is ``"Claim"`` (a finding) or ``"Check"`` (an identity or integrity check).
    """

    statement: str
    holds: bool
    values: tuple[tuple[str, str], ...] = ()
    kind: str = CLAIM

    @classmethod
    def of(cls, statement: str, holds: bool, measured: Mapping[str, object], kind: str = CLAIM) -> CheckedClaim:
        if kind not in (CLAIM, CHECK):
            raise ValueError(f"kind must be {CLAIM!r} or {CHECK!r}, got {kind!r}")
        values = tuple((name, format_value(value)) for name, value in measured.items())
        return cls(statement, holds, values, kind)

    @property
    def line(self) -> str:
        """The plain-text form: ``"✔ Claim: statement — name=value, ..."`` (as :func:`claim_line`)."""
        values = ", ".join(f"{name}={value}" for name, value in self.values)
        mark = HELD if self.holds else FAILED
        return f"{mark} {self.kind}: {self.statement}" + (f"{SEPARATOR}{values}" if values else "")

    def __str__(self) -> str:
        return self.line

    def __repr__(self) -> str:  # IPython's text/plain: the same line as in a console
        return self.line

    def _repr_html_(self) -> str:
        mark = HELD if self.holds else FAILED
        rgb = _COLOURS[mark]
        status = "held" if self.holds else "did not hold"
        head = (
            f'<div><span style="{_MARK_STYLE.format(rgb=rgb)}" title="the claim {status}">{mark}</span>'
            f"<strong>{html.escape(self.kind)}: </strong>{html.escape(self.statement)}</div>"
        )
        values = ""
        if self.values:
            items = "".join(
                f'<span style="{_VALUE_STYLE}">{html.escape(name)}={html.escape(value)}</span>'
                for name, value in self.values
            )
            values = f'<div style="{_VALUES_STYLE}">{items}</div>'
        return f'<div class="book-claim" style="{_BOX_STYLE.format(rgb=rgb)}">{head}{values}</div>'


def _display(shown: CheckedClaim) -> bool:
    """Show ``shown`` as rich output if an IPython kernel or shell is running; False if not.

    IPython is only looked up, never imported: ``lib`` works without it (it is there in Jupyter and Colab).
    """
    ipython = sys.modules.get("IPython")
    if ipython is None or ipython.get_ipython() is None:
        return False
    from IPython.display import display

    display(shown)
    return True


def claim(statement: str, holds: bool, **measured: object) -> None:
    """Check a claim of the prose and show it, with the values measured on this run.

    >>> claim("scaled scores have unit variance", abs(var - 1) < 0.1, var=var)
    ✔ Claim: scaled scores have unit variance — var=0.98

    Under IPython (Jupyter, Colab, the site build) the claim is displayed as a :class:`CheckedClaim`,
    a wrapped box with that line as its plain-text form; elsewhere the line is printed.
    ``holds`` is the check, written out in the cell where the reader sees it (with its margin);
    ``measured`` are the numbers it was decided on. Raises ``AssertionError`` with the same line
    if the claim does not hold, so a chapter that runs to its end is a chapter whose claims held.
    """
    _show(CLAIM, statement, holds, measured)


def check(statement: str, holds: bool, **measured: object) -> None:
    """Assert an identity or integrity check and show it, like :func:`claim` but marked ``Check:``.

    >>> check("lib's encoder matches transformers' BertModel", err < 1e-4, max_abs_diff=err)
    ✔ Check: lib's encoder matches transformers' BertModel — max_abs_diff=3.1e-06

    Use it where the outcome is known before the experiment (two implementations of one formula
    agree, a file has the hash the loader enforced): it guards the page, it is not a finding.
    """
    _show(CHECK, statement, holds, measured)


def _show(kind: str, statement: str, holds: bool, measured: Mapping[str, object]) -> None:
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
    shown = CheckedClaim.of(statement.strip(), holds, measured, kind)
    if not holds:
        raise AssertionError(shown.line)
    if not _display(shown):
        print(shown.line, flush=True)
