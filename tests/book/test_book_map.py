"""lib.book.diagrams.book_map: the introduction's architecture, each part marked with its chapters."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest

from lib.book.diagrams import book_map
from lib.book.diagrams.book_map import PARTS


def _texts(fig) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts] + [t.get_text() for t in fig.texts]


def test_every_part_of_the_architecture_is_drawn() -> None:
    texts = _texts(book_map(range(1, 11)))
    for label in ("self-attention", "masked self-attention", "cross-attention", "feed-forward",
                  "embeddings + positions", "encoder layer × N", "decoder layer × N", "memory"):  # fmt: skip
        assert label in texts


def test_a_badge_for_each_chapter_where_it_lives_and_none_for_a_chapter_not_in_the_book() -> None:
    badges = [t for t in _texts(book_map(range(1, 11))) if t.isdigit()]
    expected = [n for numbers in PARTS.values() for n in numbers if n <= 10]
    expected += [6]  # embeddings + positions: under both stacks
    assert sorted(map(int, badges)) == sorted(expected)
    assert "11" not in badges and "12" not in badges
    assert {int(b) for b in badges} == set(range(1, 11))  # every chapter has its place


@pytest.mark.parametrize("bad", [[0], ["3"], [2.0], [True]])
def test_chapters_must_be_chapter_numbers(bad) -> None:
    with pytest.raises(TypeError, match="chapters must be chapter numbers"):
        book_map(bad)


def test_the_label_of_the_memory_arrow_touches_no_frame() -> None:
    """The label "keys, values" stands clear of every box and dashed frame (it touched the encoder's corner)."""
    from matplotlib.patches import FancyArrowPatch

    fig = book_map(range(1, 11))
    renderer = fig._get_renderer()
    ax = fig.axes[0]
    label = next(t for t in ax.texts if t.get_text() == "keys, values")
    box = label.get_window_extent(renderer).padded(3)  # 3 px of air around its letters
    frames = [p for p in ax.patches if not isinstance(p, FancyArrowPatch)]
    assert frames and not [p for p in frames if box.overlaps(p.get_window_extent(renderer))]
