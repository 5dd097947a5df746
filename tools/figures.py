"""The figures that pages show from files, drawn by ``lib`` (a page written in Markdown runs no code).

    python -m tools.figures            # (re)draw book/figures/*.svg
    python -m tools.figures --check    # changes nothing; exits 1 if a file is not what lib draws now

One figure so far: ``book/figures/book_map.svg``, the introduction's Transformer with each part
marked by the chapters of ``_toc.yml`` that build it (:func:`lib.book.diagrams.book_map`). It is drawn
with the book's theme (``lib.set_theme``: text kept as text, no time stamp, a fixed hash salt), so the
same code gives the same file on any machine; ``tests/tools/test_figures.py`` fails while it is
stale. The Chinese site translates its labels at build time like every chapter figure's
(``figures.po``: ``python -m tools.i18n extract`` harvests them from the file).
"""

from __future__ import annotations

import argparse
import io
import re
import sys
from collections.abc import Callable

from tools.common import REPO, toc_docnames

FIGURES = REPO / "book" / "figures"


def chapter_numbers() -> list[int]:
    """The numbers of the chapters in ``_toc.yml`` (``book/NN_slug``)."""
    return [int(m[1]) for d in toc_docnames() if (m := re.fullmatch(r"book/(\d\d)_\w+", d))]


def _book_map():
    from lib.book.diagrams import book_map

    return book_map(chapter_numbers())


#: file name in book/figures -> what draws it (a matplotlib Figure)
DRAWN: dict[str, Callable] = {"book_map.svg": _book_map}


def svg(draw: Callable) -> str:
    """The figure ``draw`` returns, as the SVG that the book's theme writes."""
    import matplotlib

    matplotlib.use("Agg")
    import lib

    lib.set_theme()
    out = io.StringIO()
    draw().savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def stale() -> list[str]:
    """The files of :data:`DRAWN` that differ from what ``lib`` draws now (or are missing)."""

    def current(name: str) -> str | None:
        path = FIGURES / name
        return path.read_text(encoding="utf-8") if path.is_file() else None

    return [name for name, draw in DRAWN.items() if current(name) != svg(draw)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.figures", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a figure is stale")
    args = parser.parse_args(argv)
    if args.check:
        names = stale()
        for name in names:
            print(f"book/figures/{name} is not what lib draws now: run python -m tools.figures", file=sys.stderr)
        return 1 if names else 0
    FIGURES.mkdir(exist_ok=True)
    for name, draw in DRAWN.items():
        (FIGURES / name).write_text(svg(draw), encoding="utf-8")
        print(f"wrote book/figures/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
