"""Write the Colab edition of every notebook of the book: `colab/NN_slug.ipynb`, plain Jupyter markdown.

    python -m tools.editions            # (re)write colab/ from book/*.ipynb and _config.yml
    python -m tools.editions --check    # change nothing; exit 1 if an edition is missing or out of date

The chapters are MyST, which Colab shows raw; an edition is the same notebook with every markdown
cell converted by `tools/myst/` (numbered exercises, solutions in closed ``<details>``, links and
citations to the published site) and every code cell exactly as in the chapter, the setup cell
included. The Colab button of each page (tools/book_ext/header_buttons.py) opens its edition at
``repository.branch``, the ref that the setup cell installs `lib` from: both come from
`_config.yml`, so the notebook and its `lib` are one commit.

The Chinese editions, `colab/zh/NN_slug.ipynb`, are the same conversion of the chapter with its prose
translated by the catalogs of `locale/zh_CN` (tools/i18n.py) and links to the Chinese site; their
code cells are the chapter's. The editions are committed, so that Colab can open them from GitHub. After editing a chapter (or
`_config.yml`), run ``python -m tools.editions``; `tests/tools/test_editions.py` and
``python -m tools.retarget --check`` fail while an edition is out of date. Never edit `colab/`
by hand.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

from tools.common import REPO, notebooks
from tools.myst import Book, notebook_to_jupyter

FOLDER = "colab"
GENERATED = "tools/editions.py"
# The Chinese editions (colab/zh/), from the same chapters and the catalogs of locale/zh_CN
# (tools/i18n.py): the prose in Chinese, every code cell identical.
LANGUAGES = {"en": FOLDER, "zh_CN": f"{FOLDER}/zh"}


def edition_path(notebook: Path, repo: Path = REPO, language: str = "en") -> Path:
    """book/NN_slug.ipynb -> colab/NN_slug.ipynb (colab/zh/NN_slug.ipynb in Chinese)."""
    return repo / LANGUAGES[language] / Path(notebook).name


def docname(notebook: Path, repo: Path = REPO) -> str:
    return Path(notebook).resolve().relative_to(repo.resolve()).with_suffix("").as_posix()


def colab_edition(nb: nbformat.NotebookNode, *, book: Book, docname: str) -> nbformat.NotebookNode:
    """The Colab edition of one notebook of the book (a new notebook)."""
    out = notebook_to_jupyter(nb, book=book, docname=docname, edition="reader")
    out.metadata["book"] = {"edition": "colab", "source": f"{docname}.ipynb", "generated_by": GENERATED}
    if book.language != "en":
        out.metadata["book"]["language"] = book.language
    for cell in out.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nbformat.validate(out)
    return out


def render(notebook: Path, book: Book, repo: Path = REPO) -> str:
    """The edition's file content, exactly as `write` writes it."""
    nb = nbformat.read(notebook, as_version=4)
    return nbformat.writes(colab_edition(nb, book=book, docname=docname(notebook, repo))) + "\n"


def _books(repo: Path, book: Book | None) -> list[Book]:
    """The English book (or `book`) and the Chinese one."""
    english = book or Book.load(repo)
    return [english] + [Book.load(repo, language) for language in LANGUAGES if language != english.language]


def problems(repo: Path = REPO, book: Book | None = None) -> list[str]:
    """Every edition that is missing, out of date or left over, as messages (empty: all good)."""
    found = []
    pages = notebooks(repo)
    for edition_book in _books(repo, book):
        language = edition_book.language
        for notebook in pages:
            target = edition_path(notebook, repo, language)
            name = target.relative_to(repo)
            if not target.exists():
                found.append(f"{name}: missing (run `python -m tools.editions`)")
            elif target.read_text(encoding="utf-8") != render(notebook, edition_book, repo):
                found.append(f"{name}: out of date with {notebook.relative_to(repo)} (run `python -m tools.editions`)")
        expected = {edition_path(p, repo, language) for p in pages}
        for stray in sorted((repo / LANGUAGES[language]).glob("*.ipynb")):
            if stray not in expected:
                found.append(f"{stray.relative_to(repo)}: no notebook of the book has this name (delete it)")
    return found


def write(repo: Path = REPO, book: Book | None = None) -> list[Path]:
    """Write every edition that differs; remove editions of notebooks that are gone. Returns the changes."""
    changed = []
    pages = notebooks(repo)
    for edition_book in _books(repo, book):
        folder = repo / LANGUAGES[edition_book.language]
        folder.mkdir(parents=True, exist_ok=True)
        for notebook in pages:
            target = edition_path(notebook, repo, edition_book.language)
            text = render(notebook, edition_book, repo)
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                target.write_text(text, encoding="utf-8")
                changed.append(target)
        expected = {edition_path(p, repo, edition_book.language) for p in pages}
        for stray in sorted(folder.glob("*.ipynb")):
            if stray not in expected:
                stray.unlink()
                changed.append(stray)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.editions", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if an edition is off")
    parser.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repo = args.root.resolve()
    if args.check:
        found = problems(repo)
        for p in found:
            print(p, file=sys.stderr)
        print(
            f"{len(notebooks(repo))} Colab edition(s) checked: "
            + ("up to date" if not found else f"{len(found)} problem(s)")
        )
        return 1 if found else 0
    changed = write(repo)
    print(
        f"{FOLDER}/: {len(changed)} edition(s) written or removed"
        + "".join(f"\n  {p.relative_to(repo)}" for p in changed)
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
