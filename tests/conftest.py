"""Shared fixtures: the one site build that every site test reads, and what CI must not skip.

The site is built ONCE per pytest run, by whichever test asks first (the `site_build` fixture), into
the default `_build/`. test_site.py, test_site_content.py, test_browser.py and test_student.py all
read that build, in any order, and under pytest-xdist too: a file lock makes one worker build while
the others wait, and the build's result is recorded with the run's id so that no worker builds
again or reads a build from an earlier run.

`BOOK_SITE_BUILD=reuse pytest tests/test_browser.py` reads the `_build/html` that is already there
instead of building (for working on these tests; CI always builds).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # `import tools` (the book's tools, not part of lib)

BUILD = REPO / "_build"
HTML = BUILD / "html"
EXECUTED = BUILD / "jupyter_execute"  # the notebooks as the build executed them
_STAMP = BUILD / "site-build.json"
_LOCK = BUILD / "site-build.lock"

# Generous: the build executes every chapter; CI as a whole has 30 minutes.
BUILD_TIMEOUT_S = 45 * 60

# One id for the whole run: pytest-xdist gives every worker of a run the same PYTEST_XDIST_TESTRUNUID.
_RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or uuid.uuid4().hex


def in_ci() -> bool:
    """CI (`.ci/run`, CI=true) must run every test: there a missing tool is a failure, not a skip."""
    return os.environ.get("CI", "").lower() in ("1", "true", "yes")


def skip_or_fail(reason: str) -> None:
    """Skip locally (with the reason); fail in CI, where `.ci/run` installed everything."""
    if in_ci():
        pytest.fail(f"{reason} (CI=true: this test must run in CI, so a skip is a failure)")
    pytest.skip(reason)


def chapters_to_execute() -> list[Path]:
    """The chapters that the Colab-like test (tests/test_colab.py) executes.

    By default only the cheapest: the chapter that the last site build measured as the fastest
    (`_build/html/_static/chapter-runtimes.json`, written by tools/book_ext.py), else the first one.
    What it checks (installing lib from git, the stripped exercises) is the same in every
    chapter, and every chapter already runs twice in CI (nbval and the site build), so running them
    all again would add a few minutes per chapter for little. `BOOK_TEST_ALL_CHAPTERS=1` runs every
    chapter.
    """
    from tools.common import chapters

    found = chapters(REPO)
    if not found or os.environ.get("BOOK_TEST_ALL_CHAPTERS") == "1":
        return found
    try:
        measured = json.loads((HTML / "_static" / "chapter-runtimes.json").read_text())["chapters"]
    except (OSError, ValueError, KeyError):
        return found[:1]
    seconds = {REPO / f"{doc}.ipynb": data.get("seconds") for doc, data in measured.items()}
    timed = [p for p in found if seconds.get(p)]
    return [min(timed, key=lambda p: seconds[p])] if timed else found[:1]


def jupyter_book() -> str:
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


@dataclass
class SiteBuild:
    returncode: int
    stdout: str
    seconds: float

    def require_success(self) -> None:
        """Fail a test that needs the built site when the build itself failed."""
        if self.returncode != 0:
            pytest.fail("the site build failed (see test_site.py); last lines of its log:\n" + self.stdout[-4000:])


def _build_site() -> SiteBuild:
    import time

    env = dict(os.environ)
    # The interpreter's own bin/ first, so the notebook kernels find the same environment.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    shutil.rmtree(HTML, ignore_errors=True)
    shutil.rmtree(EXECUTED, ignore_errors=True)
    start = time.perf_counter()
    proc = subprocess.run(
        [jupyter_book(), "build", str(REPO), "-W", "-n", "--keep-going", "--all"],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=BUILD_TIMEOUT_S,
    )
    return SiteBuild(proc.returncode, proc.stdout, time.perf_counter() - start)


@pytest.fixture(scope="session")
def site_build() -> SiteBuild:
    """`jupyter-book build . -W -n --keep-going --all` into _build/, once per pytest run.

    Why `--all` (Sphinx's fresh environment): an incremental build re-reads only changed pages, and
    the warnings of unchanged pages are not emitted again, so a second `-W` build after a failed one
    passes without the fix. The old `_build/html` is removed too, so no stale page can satisfy a check.
    """
    if os.environ.get("BOOK_SITE_BUILD") == "reuse" and (HTML / "index.html").is_file():
        # For working on the site tests: read the _build/html that is there, without building.
        return SiteBuild(0, "BOOK_SITE_BUILD=reuse: reused the existing _build/html", 0.0)
    BUILD.mkdir(exist_ok=True)
    with FileLock(_LOCK):  # another xdist worker may be building: wait for it
        try:
            stamp = json.loads(_STAMP.read_text())
        except (OSError, ValueError):
            stamp = {}
        if stamp.get("run_id") == _RUN_ID:
            return SiteBuild(stamp["returncode"], stamp["stdout"], stamp["seconds"])
        result = _build_site()
        _STAMP.write_text(
            json.dumps(
                {
                    "run_id": _RUN_ID,
                    "returncode": result.returncode,
                    "stdout": result.stdout[-20000:],
                    "seconds": result.seconds,
                }
            )
        )
        return result


# --- Small models shared by the unit tests (lib.model's public configs) ------------------------------
# One tiny size for every test that needs *a* model rather than a particular one: d_model 16, 2 heads,
# d_ff 32, one layer per stack, no dropout (so two forward passes agree). Override any field.

TINY_MODEL = dict(d_model=16, n_heads=2, d_ff=32, dropout=0.0)


@pytest.fixture
def tiny_transformer_config():
    """``make(**overrides) -> TransformerConfig``: vocabularies of 11, one encoder and one decoder layer."""
    from lib.model import TransformerConfig

    def make(**overrides):
        fields = dict(src_vocab_size=11, tgt_vocab_size=11, n_encoder_layers=1, n_decoder_layers=1, **TINY_MODEL)
        return TransformerConfig(**{**fields, **overrides})

    return make


@pytest.fixture
def tiny_lm_config():
    """``make(**overrides) -> LMConfig``: a vocabulary of 11, one layer."""
    from lib.model import LMConfig

    def make(**overrides):
        return LMConfig(**{**dict(vocab_size=11, n_layers=1, **TINY_MODEL), **overrides})

    return make
