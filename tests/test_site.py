"""The whole site builds with Sphinx warnings as errors, and its key pages exist.

This runs the README's build command, `jupyter-book build <repo> -W -n --keep-going`, plus `--all`,
and executes every chapter notebook once more (execute_notebooks: force). It builds into the default
`_build/` folder so that later tests (e.g. a browser test of the rendered pages) can reuse it.

Why `--all` (Sphinx's fresh environment): an incremental build re-reads only changed pages, and the
warnings of unchanged pages are not emitted again, so a second `-W` build after a failed one passes
without the fix. The old `_build/html` is removed too, so no stale page can satisfy the checks.

Deselect with `pytest -m "not site"`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HTML = REPO / "_build" / "html"

# Generous: the build executes every chapter; the CI run as a whole has 90 minutes.
BUILD_TIMEOUT_S = 45 * 60


def _jupyter_book() -> str:
    """The jupyter-book next to this interpreter (the book's venv), else the one on PATH."""
    here = Path(sys.executable).parent / "jupyter-book"
    if here.exists():
        return str(here)
    found = shutil.which("jupyter-book")
    if found is None:
        pytest.fail(
            f"jupyter-book not found next to {sys.executable} nor on PATH; "
            "install the book's environment with `pip install -r requirements.txt`"
        )
    return found


@pytest.fixture(scope="module")
def site_build() -> subprocess.CompletedProcess:
    env = dict(os.environ)
    # The interpreter's own bin/ first, so the notebook kernels find the same environment.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    shutil.rmtree(HTML, ignore_errors=True)
    proc = subprocess.run(
        [_jupyter_book(), "build", str(REPO), "-W", "-n", "--keep-going", "--all"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    return proc


@pytest.mark.site
def test_site_builds_without_warnings(site_build: subprocess.CompletedProcess) -> None:
    assert site_build.returncode == 0, (
        "jupyter-book build -W -n --keep-going --all failed; last lines of its log:\n"
        + site_build.stdout[-8000:]
    )
    assert (HTML / "index.html").is_file()
    assert (HTML / "book" / "intro.html").is_file()


@pytest.mark.site
def test_references_page_lists_the_bibliography(site_build: subprocess.CompletedProcess) -> None:
    page = HTML / "book" / "references.html"
    assert site_build.returncode == 0, site_build.stdout[-4000:]
    assert page.is_file(), f"{page} was not built"
    text = page.read_text(encoding="utf-8")
    for name in ("Vaswani", "Attention is all you need", "Bahdanau", "Narang"):
        assert name in text, f"{name!r} not on the references page"


@pytest.mark.site
def test_intro_cites_into_the_bibliography(site_build: subprocess.CompletedProcess) -> None:
    assert site_build.returncode == 0, site_build.stdout[-4000:]
    text = (HTML / "book" / "intro.html").read_text(encoding="utf-8")
    # A {cite} that resolved is a link to the references page.
    assert "references.html#id" in text, "the intro's citations do not link to the bibliography"
