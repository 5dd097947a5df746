"""tools.figures: the figures that pages show from files are what lib draws now."""

from __future__ import annotations

from tools import figures


def test_the_figures_of_the_pages_are_what_lib_draws_now() -> None:
    assert figures.stale() == [], "run python -m tools.figures"


def test_the_book_map_marks_the_chapters_of_the_toc() -> None:
    numbers = figures.chapter_numbers()
    assert numbers[:10] == list(range(1, 11))
    svg = (figures.FIGURES / "book_map.svg").read_text(encoding="utf-8")
    assert ">self-attention</text>" in svg and "<image" not in svg  # text as text, no raster
    for n in numbers:
        assert f">{n}</text>" in svg
