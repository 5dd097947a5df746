"""The box a claim is shown in: the mark and the statement first, the measured values below, quieter.

One box holds one claim (what :func:`lib.claim` displays in Jupyter, Colab and on the site) or, on
the site, several: the claims one code cell displays one after another are drawn as one box with one
line per claim (``tools/book_ext/claim_groups.py``), each line with its own mark (✔ or ✘), its
anchor and its values. In Jupyter and Colab every call still displays its own box: a cell's outputs
are displayed one at a time, and nothing there can join them.

The box is HTML with inline styles only (no style sheet reaches Jupyter, Colab and the site alike):
a translucent green (red if any claim failed) tint and edge, text in the page's own colour, so that
it reads on light and dark themes. The values are set smaller and at 80% opacity, which keeps the
text above WCAG AA contrast on both themes (the site's axe-core audit, ``tests/test_browser.py``).
What the box says comes in as text (:class:`BoxLine`), already in the reader's language: the words
of :data:`ENGLISH`, or another language's (the Chinese site's, ``tools/i18n_ext/outputs.py``).
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

HELD_RGB, FAILED_RGB = "46, 160, 67", "218, 54, 51"

_BOX_STYLE = (
    "box-sizing: border-box; max-width: 100%; margin: 0.3em 0; padding: 0.45em 0.8em;"
    " border: 1px solid rgba({rgb}, 0.45); border-left: 5px solid rgb({rgb}); border-radius: 4px;"
    " background: rgba({rgb}, 0.08); color: inherit; font-family: inherit; line-height: 1.45;"
    " white-space: normal; overflow-wrap: anywhere; word-break: normal;"
)
_NEXT_LINE_STYLE = "border-top: 1px solid rgba({rgb}, 0.3); margin-top: 0.4em; padding-top: 0.4em;"
_MARK_STYLE = "color: rgb({rgb}); font-weight: bold; margin-right: 0.35em;"
_VALUES_STYLE = "margin-top: 0.2em; font-size: 0.875em; line-height: 1.4; opacity: 0.8;"
_VALUE_STYLE = "display: inline-block; margin-right: 1.4em; font-variant-numeric: tabular-nums;"


@dataclass(frozen=True)
class BoxWords:
    """The words of a box in one language: the heading of each kind (with its punctuation), what
    goes between a value's label and its value, and what the mark says it means (its ``title``)."""

    kinds: Mapping[str, str] = field(default_factory=lambda: {"Claim": "Claim: ", "Check": "Check: "})
    colon: str = ": "
    held: str = "the claim held"
    failed: str = "the claim did not hold"


ENGLISH = BoxWords()


@dataclass(frozen=True)
class BoxLine:
    """One claim as a box shows it, in the reader's language: held or not, the heading (``"Claim: "``),
    the statement, each value as its name in the code and how it is shown (``label: value unit``; the
    name is the value's tooltip), the mark's title, and, in a box of several claims, the line's anchor
    (``claim-3``, the one the Claims appendix links to)."""

    holds: bool
    heading: str
    statement: str
    values: tuple[tuple[str, str], ...] = ()
    title: str = ""
    anchor: str | None = None

    @property
    def data(self) -> dict:
        """The line as plain data (a docutils node keeps it while the site is built)."""
        return {**self.__dict__, "values": [list(value) for value in self.values]}

    @classmethod
    def from_data(cls, data: Mapping) -> BoxLine:
        return cls(**{**data, "values": tuple((name, shown) for name, shown in data.get("values", ()))})


def _line_html(line: BoxLine, first: bool, rgb: str) -> str:
    mark = "✔" if line.holds else "✘"
    own_rgb = HELD_RGB if line.holds else FAILED_RGB
    title = f' title="{html.escape(line.title)}"' if line.title else ""
    head = (
        f'<div><span style="{_MARK_STYLE.format(rgb=own_rgb)}"{title}>{mark}</span>'
        f"<strong>{html.escape(line.heading)}</strong>{html.escape(line.statement)}</div>"
    )
    values = ""
    if line.values:
        items = "".join(
            f'<span title="{html.escape(name)}" style="{_VALUE_STYLE}">{html.escape(shown)}</span>'
            for name, shown in line.values
        )
        values = f'<div style="{_VALUES_STYLE}">{items}</div>'
    anchor = f' id="{html.escape(line.anchor)}"' if line.anchor else ""
    style = "" if first else f' style="{_NEXT_LINE_STYLE.format(rgb=rgb)}"'
    return f"<div{anchor}{style}>{head}{values}</div>"


def box_html(lines: Sequence[BoxLine]) -> str:
    """The box of one claim, or of several one after another (one line each): HTML, inline styles.

    Green while every claim holds, red (its edge and tint) as soon as one does not; each line keeps
    its own mark. A box of several says how many (``data-claims``).
    """
    if not lines:
        raise ValueError("a claim box needs at least one claim, got none")
    rgb = HELD_RGB if all(line.holds for line in lines) else FAILED_RGB
    inner = "".join(_line_html(line, i == 0, rgb) for i, line in enumerate(lines))
    count = f' data-claims="{len(lines)}"' if len(lines) > 1 else ""
    return f'<div class="book-claim"{count} style="{_BOX_STYLE.format(rgb=rgb)}">{inner}</div>'
