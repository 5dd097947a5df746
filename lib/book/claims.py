"""Claims a reader can see: every claim a chapter's prose makes is checked by :func:`claim`.

A checked claim is a :class:`CheckedClaim`. Under IPython (Jupyter, Colab, the site build) it is
*displayed* as a MIME bundle with three renderings:

- ``text/html``: a box that wraps to the page's width (:mod:`lib.book.claim_box`), what Jupyter,
  Colab and the site show: the mark and the statement, and below them, smaller and quieter, each
  measured value under a plain label with its unit (:mod:`lib.book.claim_labels`), ``label: value
  unit``; a value without a label as ``name=value``. On the site the claims one cell displays one
  after another share one box, a line each (``tools/book_ext/claim_groups.py``); in Jupyter and
  Colab each call displays its own;
- ``text/plain``: one line, for consoles, nbval and any front end without HTML::

      ✔ Claim: attention holds its accuracy as length grows — acc_T32=0.973, drop=0.012

- :data:`CLAIM_MIME` (``application/vnd.transformers-book.claim+json``): the claim as data, the
  **contract** that everything reading claims back relies on (the site's Claims appendix,
  ``tools/book_ext/claim_data.py``; the seed sweep, ``tools/sweep.py``; the site tests). It is one JSON
  object (see :meth:`CheckedClaim.data`)::

      {"kind": "Claim" | "Check", "statement": str, "holds": bool, "values": {name: value, ...}}

  with the measured values at full precision, in the caller's order (a notebook saved by nbformat
  sorts an object's keys, so read back they come by name), made JSON by :func:`to_json`:
  numbers stay numbers (a one-element tensor becomes its number; other tensors and NumPy arrays
  become nested lists), bools, ``None`` and strings stay as they are, mappings become objects with
  string keys, sequences become lists, anything else its ``str()``. JSON has no NaN or infinity:
  a non-finite float is written as the *string* ``"nan"``, ``"inf"`` or ``"-inf"`` (what ``str()``
  of the float says, so the plain-text line reads the same as before it was encoded).

Nothing reads the line or the box back: :func:`read_claims` reads the data of every claim an
executed notebook displayed (the site draws its boxes again from the data). The line is for people,
and so is the box; the line keeps the names of the code (``name=value``), the box their labels.

A claim that does not hold is displayed too (with ``"holds": false``, the ``✘`` box) *before*
``AssertionError`` is raised with its line: so the notebook's outputs record the failed claim (the
sweep reads it there), and the chapter stops. Outside IPython a claim that holds prints its line
and one that does not raises, without printing.

:func:`check` is its sibling for what is *not* a finding: an identity or an integrity check whose
outcome is known before the run (a hash the loader already enforced, a formula transcribed from
``lib``, two implementations agreeing to rounding). It is shown and asserted the same way, with
``Check:`` instead of ``Claim:`` (``"kind": "Check"``), and the Claims appendix counts checks
apart from claims.
"""

from __future__ import annotations

import cmath
import math
import reprlib
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from .claim_box import ENGLISH, BoxLine, BoxWords, box_html
from .claim_labels import ValueLabel, value_labels

HELD, FAILED = "✔", "✘"
CLAIM, CHECK = "Claim", "Check"  # the two kinds: a finding of an experiment, or an identity/integrity check
SEPARATOR = " — "  # between the statement and the values, in the plain-text line (for people only)
#: The MIME type of a claim's data in a notebook's outputs: ``output["data"][CLAIM_MIME]``.
CLAIM_MIME = "application/vnd.transformers-book.claim+json"


def _plain(value: object) -> object:
    """Tensors and NumPy values as Python ones: a one-element tensor as its number, others as lists."""
    if isinstance(value, torch.Tensor):
        return value.item() if value.numel() == 1 else value.tolist()
    if type(value).__module__ == "numpy" and hasattr(value, "tolist"):  # NumPy scalars and arrays
        return value.tolist()
    return value


def to_json(value: object) -> Any:
    """A measured value as JSON data, at full precision (the claim bundle's ``values``).

    Numbers stay numbers, bools, ``None`` and strings stay as they are; a one-element tensor is its
    number, other tensors and NumPy arrays nested lists; mappings become objects (keys as strings),
    other sequences lists; anything else its ``str()``. Non-finite floats, which JSON cannot hold,
    become the strings ``"nan"``, ``"inf"`` and ``"-inf"``.
    """
    value = _plain(value)
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, Mapping):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, Sequence):
        return [to_json(v) for v in value]
    return str(value)


def format_value(value: object) -> str:
    """A short, readable rendering of a measured value: 3 significant digits for floats."""
    value = _plain(value)
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


@dataclass(frozen=True)
class CheckedClaim:
    """A checked claim as :func:`claim` shows it: its data, its one line (``str()``) and its box.

    ``values`` are the measured values as JSON data (:func:`to_json`), ``name -> value`` in the
    caller's order; ``kind`` is ``"Claim"`` (a finding) or ``"Check"`` (an identity or integrity check).
    """

    statement: str
    holds: bool
    values: tuple[tuple[str, Any], ...] = ()
    kind: str = CLAIM

    def __post_init__(self) -> None:
        if self.kind not in (CLAIM, CHECK):
            raise ValueError(f"kind must be {CLAIM!r} or {CHECK!r}, got {self.kind!r}")

    @classmethod
    def of(cls, statement: str, holds: bool, measured: Mapping[str, object], kind: str = CLAIM) -> CheckedClaim:
        return cls(statement, holds, tuple((str(name), to_json(value)) for name, value in measured.items()), kind)

    @property
    def data(self) -> dict[str, Any]:
        """The claim as JSON data, what the bundle holds under :data:`CLAIM_MIME`."""
        return {"kind": self.kind, "statement": self.statement, "holds": self.holds, "values": dict(self.values)}

    @classmethod
    def from_data(cls, data: object) -> CheckedClaim:
        """The claim whose :attr:`data` is `data` (read back from a notebook); ``ValueError`` if malformed."""
        if not isinstance(data, Mapping):
            raise ValueError(f"{CLAIM_MIME}: expected an object, got {type(data).__name__}")
        kind, statement, holds, values = (data.get(k) for k in ("kind", "statement", "holds", "values"))
        if kind not in (CLAIM, CHECK):
            raise ValueError(f"{CLAIM_MIME}: kind must be {CLAIM!r} or {CHECK!r}, got {kind!r}")
        if not isinstance(statement, str) or not statement.strip():
            raise ValueError(f"{CLAIM_MIME}: statement must be a non-empty string, got {statement!r}")
        if not isinstance(holds, bool):
            raise ValueError(f"{CLAIM_MIME}: holds must be true or false, got {holds!r}")
        if not isinstance(values, Mapping):
            raise ValueError(f"{CLAIM_MIME}: values must be an object, got {values!r}")
        return cls(statement, holds, tuple((str(name), value) for name, value in values.items()), kind)

    @property
    def shown_values(self) -> str:
        """The values as the line shows them: ``"name=value, ..."`` (3 significant digits)."""
        return ", ".join(f"{name}={format_value(value)}" for name, value in self.values)

    @property
    def line(self) -> str:
        """The plain-text form: ``"✔ Claim: statement — name=value, ..."`` (as :func:`claim_line`)."""
        mark = HELD if self.holds else FAILED
        return f"{mark} {self.kind}: {self.statement}" + (f"{SEPARATOR}{self.shown_values}" if self.values else "")

    def __str__(self) -> str:
        return self.line

    def __repr__(self) -> str:  # IPython's text/plain: the same line as in a console
        return self.line

    def box_line(
        self,
        statement: str | None = None,
        labels: Mapping[str, ValueLabel] | None = None,
        words: BoxWords = ENGLISH,
        anchor: str | None = None,
    ) -> BoxLine:
        """The claim as a line of its box (:mod:`lib.book.claim_box`): each value as ``label: value unit``.

        By default in English, with the labels of :mod:`lib.book.claim_labels`; the site in another
        language gives the `statement`, the `labels` and the `words` in that language. A value
        without a label is shown as in the line, ``name=value``; each value keeps its name in the code
        (the box shows it as the value's tooltip).
        """
        labels = value_labels(self.statement) if labels is None else labels
        values = tuple(
            (
                name,
                labels[name].shows(format_value(value), words.colon)
                if name in labels
                else f"{name}={format_value(value)}",
            )
            for name, value in self.values
        )
        return BoxLine(
            holds=self.holds,
            heading=words.kinds[self.kind],
            statement=self.statement if statement is None else statement,
            values=values,
            title=words.held if self.holds else words.failed,
            anchor=anchor,
        )

    def _repr_html_(self) -> str:
        """The box: the mark and the statement, the values below with their labels and units."""
        return box_html([self.box_line()])

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, Any]:
        """What IPython displays: the line, the box and the data (:data:`CLAIM_MIME`)."""
        return {"text/plain": self.line, "text/html": self._repr_html_(), CLAIM_MIME: self.data}


def read_claims(notebook: Mapping) -> list[CheckedClaim]:
    """Every claim an executed notebook displayed, in order, read from its outputs' :data:`CLAIM_MIME` data.

    `notebook` is the notebook's JSON (``json.load`` or ``nbformat.read``). A claim that failed was
    displayed before it raised, so it is here too (``holds`` False).
    """
    return [
        CheckedClaim.from_data(output["data"][CLAIM_MIME])
        for cell in notebook.get("cells", [])
        for output in cell.get("outputs", [])
        if output.get("output_type") in ("display_data", "execute_result") and CLAIM_MIME in output.get("data", {})
    ]


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


def claim(statement: str, holds: bool | torch.Tensor, **measured: object) -> None:
    """Check a claim of the prose and show it, with the values measured on this run.

    >>> claim("scaled scores have unit variance", abs(var - 1) < 0.1, var=var)
    ✔ Claim: scaled scores have unit variance — var=0.98

    Under IPython (Jupyter, Colab, the site build) the claim is displayed as a :class:`CheckedClaim`:
    a wrapped box, that line as its plain-text form, and its data (:data:`CLAIM_MIME`), which the
    site and the seed sweep read; elsewhere the line is printed.
    ``holds`` is the check, written out in the cell where the reader sees it (with its margin): a
    ``bool``, a ``numpy.bool_`` or a one-element ``torch.bool`` tensor (``acc.min() > 0.9``); anything
    else (a number, a float tensor) raises ``TypeError``. ``measured`` are the numbers it was decided
    on; a claim that holds while one of them is NaN, infinite or empty (or contains such a value) raises
    ``ValueError`` naming it: a comparison with NaN is False whichever way it is written, a ratio is
    infinite when what it divides by is 0, and ``all([])`` or an empty tensor's ``.all()`` is True. Raises ``AssertionError`` with
    the same line if the claim does not hold (displayed first, under IPython), so a chapter that runs
    to its end is a chapter whose claims held.
    """
    _show(CLAIM, statement, holds, measured)


def check(statement: str, holds: bool | torch.Tensor, **measured: object) -> None:
    """Assert an identity or integrity check and show it, like :func:`claim` but marked ``Check:``.

    >>> check("lib's encoder matches transformers' BertModel", err < 1e-4, max_abs_diff=err)
    ✔ Check: lib's encoder matches transformers' BertModel — max_abs_diff=3.1e-06

    Use it where the outcome is known before the experiment (two implementations of one formula
    agree, a file has the hash the loader enforced): it guards the page, it is not a finding.
    ``holds`` and ``measured`` are checked as :func:`claim` checks them.
    """
    _show(CHECK, statement, holds, measured)


def _truth(holds: object) -> bool:
    """``holds`` as a Python bool: it must be a ``bool``, a ``numpy.bool_`` or a one-element
    ``torch.bool`` tensor (``acc.min() > 0.9``); a number, even 0 or 1, is not the outcome of a check."""
    if isinstance(holds, bool):
        return holds
    if type(holds).__module__ == "numpy" and type(holds).__name__ in ("bool", "bool_"):  # NumPy 2 and 1
        return bool(holds)
    expected = "a bool, a numpy.bool_ or a one-element torch.bool tensor (a comparison, e.g. acc.min() > 0.9)"
    if isinstance(holds, torch.Tensor):
        if holds.dtype != torch.bool:
            raise TypeError(f"holds must be {expected}, got a {holds.dtype} tensor of shape {tuple(holds.shape)}")
        if holds.numel() != 1:
            raise ValueError(f"holds must be a single truth value, got a tensor of shape {tuple(holds.shape)}")
        return bool(holds.item())
    raise TypeError(f"holds must be {expected}, got {type(holds).__name__} {reprlib.repr(holds)}")


def _degenerate_in(value: object, where: str) -> str | None:
    """Where ``value`` holds nothing a condition can rest on, said in words: a NaN, an infinity or an
    empty collection (``where``, or ``where[i]...`` inside it); None if nowhere."""
    value = _plain(value)
    if isinstance(value, float | complex):
        if cmath.isnan(value):
            return f"{where}, is NaN: a check that passes on NaN checks nothing (comparisons with NaN are all False)"
        if cmath.isinf(value):
            return f"{where}, is infinite: a ratio over a zero (a time of 0 s) or a diverged run, not a measurement"
        return None
    if isinstance(value, Mapping):
        found = (_degenerate_in(v, f"{where}[{k!r}]") for k, v in value.items())
    elif isinstance(value, Sequence) and not isinstance(value, str):
        found = (_degenerate_in(v, f"{where}[{i}]") for i, v in enumerate(value))
    else:
        return None
    if not value:
        return f"{where}, is empty: a condition over no values holds on nothing (all([]) is True); record a count"
    return next((path for path in found if path is not None), None)


def _show(kind: str, statement: str, holds: object, measured: Mapping[str, object]) -> None:
    if not isinstance(statement, str) or not statement.strip():
        raise TypeError(f"statement must be a non-empty str, got {statement!r}")
    holds = _truth(holds)
    if holds:  # a claim cannot rest on a value that is not a number (a diverged run, 0/0, x/0) or on nothing
        for name, value in measured.items():
            if (said := _degenerate_in(value, name)) is not None:
                raise ValueError(f"{kind} {statement.strip()!r} holds, but the value it records, {said}")
    shown = CheckedClaim.of(statement.strip(), holds, measured, kind)
    displayed = _display(shown)  # a failed claim too: its record is then in the notebook's outputs
    if not holds:
        raise AssertionError(shown.line)
    if not displayed:
        print(shown.line, flush=True)
