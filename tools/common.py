"""What the tools and the tests share: where the chapters are, what `_config.yml` says, and the
exact text of a chapter's Colab setup cell (CONTRIBUTING.md, "The cell order", item 2)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import tomllib
import yaml

REPO = Path(__file__).resolve().parents[1]

# A chapter is book/NN_slug.ipynb; every tool and test finds them with this glob, so a new
# chapter is covered the moment its file exists.
CHAPTER_GLOB = "book/[0-9][0-9]_*.ipynb"

SETUP_TAG = "remove-cell"
SETUP_TEMPLATE = """\
# Setup: in Google Colab, install the book's `lib` (a pinned release; Colab's own torch is kept).
# Everywhere else this cell does nothing: `lib` is already installed.
import sys
if "google.colab" in sys.modules:
    %pip install -q "{spec}\""""

# Names that are branches wherever they appear; a setup cell must pin a tag or a commit.
BRANCH_NAMES = {"main", "master", "HEAD", "develop", "dev", "trunk", "gh-pages", "default"}


def chapters(repo: Path = REPO) -> list[Path]:
    """Every chapter notebook, in order."""
    return sorted(repo.glob(CHAPTER_GLOB))


def chapter_number(path: Path | str) -> int:
    return int(Path(path).name[:2])


def load_config(repo: Path = REPO) -> dict:
    return yaml.safe_load((repo / "_config.yml").read_text(encoding="utf-8"))


def distribution_name(repo: Path = REPO) -> str:
    with open(repo / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]["name"]


def repository(repo: Path = REPO) -> tuple[str, str]:
    """(repository URL, lib ref) from `_config.yml`: `repository.url` and `repository.lib_ref`."""
    section = load_config(repo).get("repository") or {}
    url, ref = section.get("url"), section.get("lib_ref")
    if not url or not ref:
        raise ValueError(f"{repo / '_config.yml'}: repository.url and repository.lib_ref must both be set")
    return str(url).rstrip("/"), str(ref)


def pip_spec(url: str, ref: str, dist: str) -> str:
    """The PEP 508 direct reference the setup cell installs: `dist @ git+URL@REF`."""
    return f"{dist} @ git+{url.rstrip('/')}@{ref}"


def setup_source(url: str, ref: str, dist: str) -> str:
    return SETUP_TEMPLATE.format(spec=pip_spec(url, ref, dist))


def expected_setup_source(repo: Path = REPO) -> str:
    url, ref = repository(repo)
    return setup_source(url, ref, distribution_name(repo))


def first_code_cell(nb) -> int | None:
    return next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"), None)


def is_commit_sha(ref: str) -> bool:
    return re.fullmatch(r"[0-9a-f]{7,40}", ref) is not None


def branch_problem(ref: str, repo: Path = REPO) -> str | None:
    """Why `ref` is (or may be) a branch, or None if it looks like a tag or a commit."""
    if not ref or ref != ref.strip() or any(c in ref for c in " \"'@#"):
        return f"lib_ref={ref!r} is not a valid git ref"
    if ref in BRANCH_NAMES:
        return f"lib_ref={ref!r} is a branch: pin a tag (e.g. v0.1.0) or a commit"
    if (repo / ".git").exists():
        out = subprocess.run(
            ["git", "for-each-ref", "--format=%(refname)", f"refs/heads/{ref}", f"refs/remotes/*/{ref}"],
            cwd=repo,
            capture_output=True,
            text=True,
        ).stdout.split()
        if out:
            return f"lib_ref={ref!r} is a branch of this repository ({out[0]}): pin a tag or a commit"
    return None


def ref_exists(ref: str, repo: Path = REPO) -> bool:
    """Whether `ref` names a tag or a commit in the local clone."""
    if not (repo / ".git").exists():
        return False
    proc = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd=repo, capture_output=True, text=True
    )
    return proc.returncode == 0
