"""Every chapter's first code cell is the Colab setup cell, exactly as `_config.yml` says, and
`tools/retarget.py` moves the whole book to another repository/ref and back.

The setup cell (CONTRIBUTING.md) installs, in Colab only, `cs224n-transformers-lib @
git+<repository.url>@<repository.lib_ref>`: a pinned tag or commit, never a branch.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from conftest import REPO

from tools import retarget
from tools.common import (
    SETUP_TAG,
    branch_problem,
    chapters,
    distribution_name,
    expected_setup_source,
    first_code_cell,
    repository,
    setup_source,
)

CHAPTERS = chapters()


def test_config_names_the_repository_and_a_pinned_ref() -> None:
    url, ref = repository()
    assert url.startswith("https://"), url
    assert branch_problem(ref) is None, branch_problem(ref)


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_setup_cell_matches_config(chapter: Path) -> None:
    nb = nbformat.read(chapter, as_version=4)
    i = first_code_cell(nb)
    assert i is not None, f"{chapter.name} has no code cell"
    cell = nb.cells[i]
    expected = expected_setup_source()
    assert cell.source.rstrip() == expected, (
        f"{chapter.name}: the first code cell must be exactly (run `python tools/retarget.py`):\n"
        f"{expected}\n--- found ---\n{cell.source}"
    )
    assert SETUP_TAG in cell.metadata.get("tags", []), f"{chapter.name}: the setup cell needs the tag {SETUP_TAG!r}"


def test_check_command_agrees() -> None:
    assert retarget.main(["--check"]) == 0


def _synthetic_chapter() -> nbformat.NotebookNode:
    url, ref = repository()
    setup = nbformat.v4.new_code_cell(setup_source(url, ref, distribution_name()))
    setup.metadata["tags"] = [SETUP_TAG]
    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# 99. A chapter\n\nText."),
            setup,
            nbformat.v4.new_code_cell("import torch\nimport lib"),
            nbformat.v4.new_markdown_cell("## More\n\n$$x$$"),
        ]
    )


@pytest.fixture
def book_copy(tmp_path: Path) -> Path:
    """The parts of the repository that retarget touches, plus a synthetic chapter."""
    for name in ("_config.yml", "pyproject.toml"):
        shutil.copy(REPO / name, tmp_path / name)
    (tmp_path / "book").mkdir()
    for chapter in CHAPTERS:
        shutil.copy(chapter, tmp_path / "book" / chapter.name)
    nbformat.write(_synthetic_chapter(), tmp_path / "book" / "99_synthetic.ipynb")
    return tmp_path


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_retarget_moves_the_whole_book_and_back(book_copy: Path) -> None:
    root = ["--root", str(book_copy)]
    before = {p: p.read_bytes() for p in [book_copy / "_config.yml", book_copy / "pyproject.toml"]}
    notebooks = chapters(book_copy)
    cells_before = {p: _cells(p) for p in notebooks}
    old_url, old_ref = repository(book_copy)

    fork, tag = "https://github.com/some-instructor/transformers-fork", "fall-2025"
    assert retarget.main(root + ["--repo", fork + ".git", "--ref", tag]) == 0
    assert repository(book_copy) == (fork, tag)
    assert retarget.check(book_copy) == []
    assert (
        fork in (book_copy / "pyproject.toml").read_text() and old_url not in (book_copy / "pyproject.toml").read_text()
    )
    config = (book_copy / "_config.yml").read_text()
    assert config.count("\n") == before[book_copy / "_config.yml"].decode().count("\n"), (
        "retarget changed the layout of _config.yml"
    )
    for p in notebooks:
        after = _cells(p)
        i = first_code_cell(nbformat.read(p, as_version=4))
        assert f"git+{fork}@{tag}" in "".join(after[i]["source"])
        others_before = [c for j, c in enumerate(cells_before[p]) if j != i]
        others_after = [c for j, c in enumerate(after) if j != i]
        assert others_after == others_before, f"{p.name}: retarget changed more than the setup cell"

    assert retarget.main(root + ["--repo", old_url, "--ref", old_ref]) == 0
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path.name} did not come back unchanged"
    for p in notebooks:
        assert _cells(p) == cells_before[p], f"{p.name} did not come back unchanged"


def test_retarget_refuses_a_branch(book_copy: Path) -> None:
    with pytest.raises(SystemExit):
        retarget.main(["--root", str(book_copy), "--ref", "main"])
    assert retarget.check(book_copy) == []  # nothing was changed


def test_check_catches_a_hand_edited_cell(book_copy: Path) -> None:
    path = book_copy / "book" / "99_synthetic.ipynb"
    nb = nbformat.read(path, as_version=4)
    i = first_code_cell(nb)
    _, ref = repository(book_copy)
    nb.cells[i].source = nb.cells[i].source.replace(f'@{ref}"', '@main"')
    nbformat.write(nb, path)
    problems = retarget.check(book_copy)
    assert len(problems) == 1 and problems[0].startswith("book/99_synthetic.ipynb"), problems
    assert retarget.main(["--root", str(book_copy), "--check"]) == 1
    assert retarget.main(["--root", str(book_copy)]) == 0  # rewrite from _config.yml
    assert retarget.check(book_copy) == []
