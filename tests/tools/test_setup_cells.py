"""Every notebook's first code cell is the Colab setup cell, exactly as `_config.yml` says, and
`tools/retarget.py` moves the whole book (the Colab editions in colab/ and the site's address
included) to another repository/ref and back.

The setup cell (CONTRIBUTING.md) installs, in Colab only, `cs224n-transformers-lib @
git+<repository.url>@<repository.branch>`: the same ref that the Colab button opens the notebook
from (Jupyter Book builds the button's URL from `repository.url` and `repository.branch`), so the
notebook and the lib it installs agree by construction.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest

from conftest import REPO
from tools import editions, retarget
from tools.common import (
    SETUP_TAG,
    SPEC_LINE,
    chapters,
    distribution_name,
    expected_setup_source,
    first_code_cell,
    load_config,
    notebooks,
    pages_url,
    ref_problem,
    repository,
    setup_extras,
    setup_source,
    site_url,
)

CHAPTERS = notebooks()


def test_config_names_the_repository_and_one_ref() -> None:
    url, ref = repository()
    assert url.startswith("https://github.com/"), url
    assert ref_problem(ref) is None, ref_problem(ref)
    assert "lib_ref" not in (load_config().get("repository") or {}), (
        "one ref only: repository.branch is what Colab opens and what the setup cells install"
    )


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_setup_cell_installs_what_the_colab_button_opens(chapter: Path) -> None:
    """The Colab URL is .../github/<org>/<repo>/blob/<branch>/book/<notebook>; the cell installs
    lib from git+https://github.com/<org>/<repo>@<branch>: the same repository, the same ref."""
    url, ref = repository()
    nb = nbformat.read(chapter, as_version=4)
    m = SPEC_LINE.search(nb.cells[first_code_cell(nb)].source)
    assert m, f'{chapter.name}: the setup cell has no `%pip install -q "dist @ git+URL@REF"` line'
    assert (m.group("url"), m.group("ref")) == (url, ref), (
        f"{chapter.name} installs lib from {m.group('url')}@{m.group('ref')} but its Colab button "
        f"opens {url}/blob/{ref}/{chapter.relative_to(REPO)}"
    )
    assert m.group("dist") == distribution_name()


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_setup_cell_matches_config(chapter: Path) -> None:
    nb = nbformat.read(chapter, as_version=4)
    i = first_code_cell(nb)
    assert i is not None, f"{chapter.name} has no code cell"
    cell = nb.cells[i]
    expected = expected_setup_source(extras=setup_extras(cell.source))
    assert cell.source.rstrip() == expected, (
        f"{chapter.name}: the first code cell must be exactly (run `python -m tools.retarget`):\n"
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


@pytest.fixture(scope="module")
def book_template(tmp_path_factory) -> Path:
    """The parts of the repository that retarget touches, plus a synthetic chapter and its editions,
    made once for this file (writing the editions of every chapter in two languages takes seconds)."""
    root = tmp_path_factory.mktemp("book")
    for name in ("_config.yml", "pyproject.toml", "_toc.yml"):
        shutil.copy(REPO / name, root / name)
    shutil.copytree(REPO / "book", root / "book", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    shutil.copytree(REPO / editions.FOLDER, root / editions.FOLDER)
    nbformat.write(_synthetic_chapter(), root / "book" / "99_synthetic.ipynb")
    editions.write(root)
    return root


@pytest.fixture
def book_copy(book_template: Path, tmp_path: Path) -> Path:
    """A copy of `book_template` of this test's own, to change."""
    shutil.copytree(book_template, tmp_path, dirs_exist_ok=True)
    return tmp_path


def _about(problems: list[str], name: str) -> list[str]:
    """The problems that name one file (a chapter's edition is out of date with it as well)."""
    return [p for p in problems if p.startswith(name)]


def _cells(path: Path) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["cells"]


def test_retarget_moves_the_whole_book_and_back(book_copy: Path) -> None:
    root = ["--root", str(book_copy)]
    before = {p: p.read_bytes() for p in [book_copy / "_config.yml", book_copy / "pyproject.toml"]}
    pages = notebooks(book_copy)
    cells_before = {p: _cells(p) for p in pages}
    old_url, old_ref = repository(book_copy)

    fork, tag = "https://github.com/some-instructor/transformers-fork", "fall-2026"
    assert retarget.main(root + ["--repo", fork + ".git", "--ref", tag]) == 0
    assert repository(book_copy) == (fork, tag)
    assert retarget.check(book_copy) == []
    assert site_url(book_copy) == pages_url(fork), "the site's address (html.baseurl) must follow the repository"
    for p in pages:
        edition = _cells(editions.edition_path(p, book_copy))
        assert any(f"git+{fork}@{tag}" in "".join(c["source"]) for c in edition), f"{p.name}: its edition did not move"
    assert (
        fork in (book_copy / "pyproject.toml").read_text() and old_url not in (book_copy / "pyproject.toml").read_text()
    )
    config = (book_copy / "_config.yml").read_text()
    assert config.count("\n") == before[book_copy / "_config.yml"].decode().count("\n"), (
        "retarget changed the layout of _config.yml"
    )
    for p in pages:
        after = _cells(p)
        i = first_code_cell(nbformat.read(p, as_version=4))
        assert f"git+{fork}@{tag}" in "".join(after[i]["source"])
        others_before = [c for j, c in enumerate(cells_before[p]) if j != i]
        others_after = [c for j, c in enumerate(after) if j != i]
        assert others_after == others_before, f"{p.name}: retarget changed more than the setup cell"

    assert retarget.main(root + ["--repo", old_url, "--ref", old_ref]) == 0
    for path, content in before.items():
        assert path.read_bytes() == content, f"{path.name} did not come back unchanged"
    for p in pages:
        assert _cells(p) == cells_before[p], f"{p.name} did not come back unchanged"


def test_retarget_to_a_branch_moves_the_colab_button_too(book_copy: Path) -> None:
    """A fork that builds its site from its own branch: button and install follow together."""
    assert retarget.main(["--root", str(book_copy), "--ref", "spring-course"]) == 0
    config = load_config(book_copy)["repository"]
    assert config["branch"] == "spring-course"
    assert retarget.check(book_copy) == []
    text = (book_copy / "_config.yml").read_text()
    assert "/blob/spring-course/colab/" in text  # the example Colab URL in the comments follows


def test_retarget_refuses_a_bad_ref(book_copy: Path) -> None:
    with pytest.raises(SystemExit):
        retarget.main(["--root", str(book_copy), "--ref", "not a ref"])
    assert retarget.check(book_copy) == []  # nothing was changed


def test_check_catches_another_repository(book_copy: Path) -> None:
    path = book_copy / "book" / "99_synthetic.ipynb"
    nb = nbformat.read(path, as_version=4)
    i = first_code_cell(nb)
    url, _ = repository(book_copy)
    nb.cells[i].source = nb.cells[i].source.replace(url, "https://github.com/someone-else/fork")
    nbformat.write(nb, path)
    problems = retarget.check(book_copy)
    assert len(_about(problems, "book/99_synthetic.ipynb")) == 1, problems
    assert _about(problems, "colab/99_synthetic.ipynb"), "the edition is out of date with its chapter"
    assert _about(problems, "colab/zh/99_synthetic.ipynb"), "the Chinese edition too"
    assert len(problems) == 3, problems


def test_check_catches_a_stale_or_hand_edited_edition(book_copy: Path) -> None:
    edition = editions.edition_path(book_copy / "book" / "99_synthetic.ipynb", book_copy)
    nb = nbformat.read(edition, as_version=4)
    nb.cells[0].source += "\n\nAn edit by hand."
    nbformat.write(nb, edition)
    problems = retarget.check(book_copy)
    assert len(problems) == 1 and problems[0].startswith("colab/99_synthetic.ipynb"), problems
    assert retarget.main(["--root", str(book_copy)]) == 0  # rewrites the editions too
    assert retarget.check(book_copy) == []
    (book_copy / editions.FOLDER / "00_gone.ipynb").write_text(edition.read_text())
    assert any(p.startswith("colab/00_gone.ipynb") for p in retarget.check(book_copy))


def test_extras_are_kept_and_checked(book_copy: Path) -> None:
    """A chapter may install an extra of lib (chapter 9: `[pretrained]`); retarget keeps it, and an
    extra that pyproject.toml does not define is an error."""
    path = book_copy / "book" / "99_synthetic.ipynb"
    nb = nbformat.read(path, as_version=4)
    i = first_code_cell(nb)
    dist = distribution_name(book_copy)
    nb.cells[i].source = nb.cells[i].source.replace(f'"{dist} @', f'"{dist}[no-such-extra] @')
    nbformat.write(nb, path)
    editions.write(book_copy)
    problems = retarget.check(book_copy)
    assert len(problems) == 1 and "no-such-extra" in problems[0], problems
    pyproject = (book_copy / "pyproject.toml").read_text()
    header = "[project.optional-dependencies]\n"
    if header not in pyproject:
        pyproject = pyproject.replace("[project.urls]", header + "\n[project.urls]")
    (book_copy / "pyproject.toml").write_text(pyproject.replace(header, header + 'no-such-extra = ["numpy"]\n'))
    assert retarget.check(book_copy) == []
    assert retarget.main(["--root", str(book_copy), "--ref", "v9"]) == 0
    source = nbformat.read(path, as_version=4).cells[i].source
    assert f'"{dist}[no-such-extra] @ git+' in source and source.rstrip().endswith('@v9"')


def test_check_catches_a_hand_edited_cell(book_copy: Path) -> None:
    path = book_copy / "book" / "99_synthetic.ipynb"
    nb = nbformat.read(path, as_version=4)
    i = first_code_cell(nb)
    _, ref = repository(book_copy)
    nb.cells[i].source = nb.cells[i].source.replace(f'@{ref}"', '@some-other-branch"')
    nbformat.write(nb, path)
    problems = retarget.check(book_copy)
    assert len(_about(problems, "book/99_synthetic.ipynb")) == 1, problems
    assert retarget.main(["--root", str(book_copy), "--check"]) == 1
    assert retarget.main(["--root", str(book_copy)]) == 0  # rewrite from _config.yml
    assert retarget.check(book_copy) == []


# --- Reading flow: what a reader of the page need not read before the chapter starts is folded ---------


def _claim_only(source: str) -> bool:
    """A cell of claims: value computations and lib.claim/lib.check calls, nothing else."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    claims = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("claim", "check")
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "lib"
    ]  # fmt: skip
    if not claims:
        return False
    for statement in tree.body:
        inner = set(ast.walk(statement))
        if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            continue
        if isinstance(statement, (ast.Expr, ast.If, ast.For)) and any(c in inner for c in claims):
            continue
        return False
    return True


@pytest.mark.parametrize("chapter", chapters(), ids=lambda p: p.stem)
def test_setup_and_claim_cells_are_folded_on_the_page(chapter: Path) -> None:
    """The imports, SEED and seeding cells after the Colab setup cell, and every cell of claims (whose
    boxes say what they check), show folded on the site (``hide-input``): the chapter starts on its
    second screen, and a claim is not read twice."""
    cells = [c for c in nbformat.read(chapter, as_version=4).cells if c.cell_type == "code"]
    unfolded = []
    for i, cell in enumerate(cells):
        tags = cell.metadata.get("tags", [])
        setup = 1 <= i <= 3 and (cell.source.startswith("import") or "SEED" in cell.source)
        if (setup or _claim_only(cell.source)) and "hide-input" not in tags and "remove-cell" not in tags:
            unfolded.append(cell.source.splitlines()[0])
    assert not unfolded, f"{chapter.name}: cells to fold (tag hide-input): {unfolded}"
