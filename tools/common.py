"""What the tools and the tests share: where the chapters are, what `_config.yml` says, and the
exact text of a chapter's Colab setup cell (CONTRIBUTING.md, "The cell order", item 2)."""

from __future__ import annotations

import json
import re
import statistics
import subprocess
import tomllib
from pathlib import Path

import yaml
from sphinx_external_toc.parsing import parse_toc_yaml

REPO = Path(__file__).resolve().parents[1]

# A chapter is book/NN_slug.ipynb; every tool and test finds them with this glob, so a new
# chapter is covered the moment its file exists.
CHAPTER_GLOB = "book/[0-9][0-9]_*.ipynb"

SETUP_TAG = "remove-cell"
SETUP_TEMPLATE = """\
# Setup: in Google Colab, install the book's `lib` from the same branch or tag as this notebook
# (Colab's own torch is kept). Everywhere else this cell does nothing: `lib` is already installed.
import sys
if "google.colab" in sys.modules:
    %pip install -q "{spec}\""""

# The one line of the setup cell that names what Colab installs, with optional extras:
#   %pip install -q "cs224n-transformers-lib[pretrained] @ git+https://github.com/ORG/REPO@main"
SPEC_LINE = re.compile(
    r'%pip install -q "(?P<dist>[A-Za-z0-9_.-]+)(?:\[(?P<extras>[A-Za-z0-9_,.-]+)\])? @ '
    r'git\+(?P<url>[^@"\s]+)@(?P<ref>[^"\s]+)"'
)


def chapters(repo: Path = REPO) -> list[Path]:
    """Every chapter notebook, in order."""
    return sorted(repo.glob(CHAPTER_GLOB))


def notebooks(repo: Path = REPO) -> list[Path]:
    """Every notebook page of the book (the chapters and the appendices' notebooks): each one has a
    Colab button, so each one starts with the setup cell."""
    return sorted(repo.glob("book/*.ipynb"))


def sweep_seconds(repo: Path = REPO) -> dict[str, float]:
    """How long each notebook ran in the seed sweep, by file name: the median over its runs
    (`book/claims_sweep.json`, written by `python -m tools.sweep`), {} without a ledger. Read here with
    the standard library, not with `tools.sweep_ledger.load`, which imports torch: every pytest process
    calls this (conftest.py hands out the notebooks the longest first; the Colab-like test runs the
    shortest chapter)."""
    try:
        chapters = json.loads((repo / "book" / "claims_sweep.json").read_text(encoding="utf-8"))["chapters"]
    except (OSError, ValueError, KeyError):
        return {}
    return {
        entry["notebook"]: statistics.median(runs)
        for entry in chapters.values()
        if (runs := list(entry.get("seconds", {}).values()))
    }


def chapter_number(path: Path | str) -> int:
    return int(Path(path).name[:2])


def load_config(repo: Path = REPO) -> dict:
    return yaml.safe_load((repo / "_config.yml").read_text(encoding="utf-8"))


def distribution_name(repo: Path = REPO) -> str:
    with open(repo / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["name"]


def repository(repo: Path = REPO) -> tuple[str, str]:
    """(repository URL, ref) from `_config.yml`: `repository.url` and `repository.branch`.

    The ref is what the Colab button opens the chapters from AND what their setup cells install
    `lib` from: the branch the site is built from, or a release tag when a release is built.
    """
    section = load_config(repo).get("repository") or {}
    url, ref = section.get("url"), section.get("branch")
    if not url or not ref:
        raise ValueError(f"{repo / '_config.yml'}: repository.url and repository.branch must both be set")
    return str(url).rstrip("/"), str(ref)


def extras_available(repo: Path = REPO) -> set[str]:
    """The optional-dependency groups of `lib` (`pip install "dist[group]"`), from pyproject.toml."""
    with open(repo / "pyproject.toml", "rb") as f:
        return set(tomllib.load(f)["project"].get("optional-dependencies", {}))


def pip_spec(url: str, ref: str, dist: str, extras: tuple[str, ...] = ()) -> str:
    """The PEP 508 direct reference the setup cell installs: `dist[extras] @ git+URL@REF`."""
    group = f"[{','.join(extras)}]" if extras else ""
    return f"{dist}{group} @ git+{url.rstrip('/')}@{ref}"


def setup_source(url: str, ref: str, dist: str, extras: tuple[str, ...] = ()) -> str:
    return SETUP_TEMPLATE.format(spec=pip_spec(url, ref, dist, extras))


def setup_extras(source: str) -> tuple[str, ...]:
    """The extras a setup cell asks for (a chapter may need one, e.g. `[pretrained]`)."""
    m = SPEC_LINE.search(source)
    return tuple(m.group("extras").split(",")) if m and m.group("extras") else ()


def expected_setup_source(repo: Path = REPO, extras: tuple[str, ...] = ()) -> str:
    url, ref = repository(repo)
    return setup_source(url, ref, distribution_name(repo), extras)


def first_code_cell(nb) -> int | None:
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)


def ref_problem(ref: str) -> str | None:
    """Why `ref` cannot be a git branch or tag name, or None."""
    if not ref or ref != ref.strip() or any(c in ref for c in " \"'@#[]"):
        return f"repository.branch={ref!r} is not a valid git branch or tag name"
    return None


def ref_exists(ref: str, repo: Path = REPO) -> bool:
    """Whether `ref` names a tag or a commit in the local clone."""
    if not (repo / ".git").exists():
        return False
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=repo, capture_output=True, text=True
    )
    return proc.returncode == 0


def toc_docnames(repo: Path = REPO) -> list[str]:
    """Every page of the book, in reading order: `_toc.yml` as Jupyter Book reads it (sphinx-external-toc's
    own parser, which also rejects a malformed toc), the root first, then each page followed by its
    own subpages. Docnames have no extension (``book/03_scaling``), as in Sphinx (a toc may name a
    file with its extension: sphinx-external-toc leaves that to Sphinx)."""
    site = parse_toc_yaml(repo / "_toc.yml")
    found: list[str] = []

    def visit(docname: str) -> None:
        found.append(re.sub(r"\.(ipynb|md|rst)$", "", docname))
        for child in site[docname].child_files():
            visit(child)

    visit(site.root.docname)
    return found


def pages_url(url: str) -> str:
    """GitHub Pages' address of a repository's site: github.com/ORG/REPO -> https://ORG.github.io/REPO/."""
    org, repo = url.rstrip("/").split("github.com/", 1)[1].split("/")[:2]
    return f"https://{org.lower()}.github.io/{repo}/"


def site_url(repo: Path = REPO) -> str:
    """The published site (with a trailing slash): `html.baseurl` in `_config.yml`, the one place it
    is declared (`tools/retarget.py --repo` moves it along with the repository)."""
    base = (load_config(repo).get("html") or {}).get("baseurl")
    if not base:
        url, _ = repository(repo)
        return pages_url(url)
    return str(base).rstrip("/") + "/"
