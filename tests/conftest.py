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

from tools import execution  # noqa: E402

BUILD = REPO / "_build"
HTML = BUILD / "html"
EXECUTED = BUILD / "jupyter_execute"  # the notebooks as the build executed them
_STAMP = BUILD / "site-build.json"
_LOCK = BUILD / "site-build.lock"

# Generous: the build executes every chapter; CI as a whole has 30 minutes.
BUILD_TIMEOUT_S = 45 * 60

# One id for the whole run: pytest-xdist gives every worker of a run the same PYTEST_XDIST_TESTRUNUID
# (without xdist, the repository's conftest.py sets BOOK_TEST_RUN).
_RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID") or os.environ.get("BOOK_TEST_RUN") or uuid.uuid4().hex
NBVAL_RUNS = execution.BUILD / ".nbval-runs" / _RUN_ID  # the repository's conftest.py: notebooks nbval ran
NOTEBOOK_WAIT_S = 30 * 60


def write_claims_book(src: Path, conf: str = "") -> None:
    """A small Sphinx project in `src` for the tests of the claims on a page: conf.py with myst-nb, the
    book's extensions (tools/book_ext/) and _config.yml's MIME priorities (plus the lines `conf`), an index
    listing `book/05_x` (the test writes that notebook) and the Claims appendix `book/claims`."""
    import yaml

    config = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))
    overrides = config["sphinx"]["config"]["nb_mime_priority_overrides"]
    (src / "book").mkdir(parents=True)
    (src / "conf.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(REPO / 'tools')!r})\n"  # as _config.yml's local_extensions
        "extensions = ['myst_nb', 'book_ext']\n"
        "nb_execution_mode = 'off'\n"
        f"nb_mime_priority_overrides = {[tuple(o) for o in overrides]!r}\n" + conf,
        encoding="utf-8",
    )
    (src / "index.md").write_text("# Book\n\n```{toctree}\nbook/05_x\nbook/claims\n```\n", encoding="utf-8")
    (src / "book" / "claims.md").write_text("# Claims\n\n```{claims-ledger}\n```\n", encoding="utf-8")


def build_claims_book(src: Path, out: Path, **confoverrides) -> tuple[int, str]:
    """Build `src` (`write_claims_book`) as HTML into `out`: (Sphinx's status code, its warnings). Inside
    docutils_namespace, as sphinx-build runs, so the nodes and directives it registers are gone after
    it: a second build in the same process (another test) warns of nothing."""
    import io

    from sphinx.application import Sphinx
    from sphinx.util.docutils import docutils_namespace

    warnings = io.StringIO()
    with docutils_namespace():
        app = Sphinx(src, src, out / "html", out / "doctrees", "html", status=None, warning=warnings,
                     confoverrides=confoverrides)  # fmt: skip
        app.build()
    return app.statuscode, warnings.getvalue()


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

    By default only the cheapest: the chapter with the shortest median run time in the seed sweep
    (`book/claims_sweep.json`, `tools.common.sweep_seconds`), else the first one. The choice needs
    no site build, so the Colab-like run goes beside the build rather than after it (conftest.py).
    What it checks (installing lib from git, the stripped exercises) is the same in every chapter,
    and every chapter already runs under nbval, so running them all again would add a few minutes
    per chapter for little. `BOOK_TEST_ALL_CHAPTERS=1` runs every chapter.
    """
    from tools.common import chapters, sweep_seconds

    found = chapters(REPO)
    if not found or os.environ.get("BOOK_TEST_ALL_CHAPTERS") == "1":
        return found
    seconds = sweep_seconds(REPO)
    timed = [p for p in found if seconds.get(p.name)]
    return [min(timed, key=lambda p: seconds[p.name])] if timed else found[:1]


@dataclass
class SiteBuild:
    returncode: int
    stdout: str
    seconds: float

    def require_success(self) -> None:
        """Fail a test that needs the built site when the build itself failed."""
        if self.returncode != 0:
            pytest.fail("the site build failed (see test_site.py); last lines of its log:\n" + self.stdout[-4000:])


def _wait_for_the_notebooks() -> None:
    """Wait until nbval has run every notebook this run collected (each then is in the execution
    cache, or failed), so that the site build executes none of them again. A run without notebooks
    (e.g. `pytest tests/test_site.py`) does not wait: its site build executes them."""
    import time

    try:
        expected = json.loads((NBVAL_RUNS / "expected.json").read_text())
    except (OSError, ValueError):
        return
    deadline = time.monotonic() + NOTEBOOK_WAIT_S
    while time.monotonic() < deadline and not all((NBVAL_RUNS / f"{n}.done").exists() for n in expected):
        time.sleep(2)


def nbval_student_outcome(chapter: Path) -> dict | None:
    """What the student version's exercises did inside this run's nbval run of `chapter` (the
    repository's conftest.py), waiting for that run if it is under way; None if this run has none."""
    import time

    try:
        expected = json.loads((NBVAL_RUNS / "expected.json").read_text())
    except (OSError, ValueError):
        return None
    if chapter.name not in expected:
        return None
    deadline = time.monotonic() + NOTEBOOK_WAIT_S
    while not (NBVAL_RUNS / f"{chapter.name}.done").exists() and time.monotonic() < deadline:
        time.sleep(2)
    try:
        return json.loads((NBVAL_RUNS / f"student-{chapter.stem}.json").read_text())
    except (OSError, ValueError):
        return None


def _build_site() -> SiteBuild:
    import time

    env = dict(os.environ)
    # The interpreter's own bin/ first, so the notebook kernels find the same environment.
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    shutil.rmtree(HTML, ignore_errors=True)
    shutil.rmtree(EXECUTED, ignore_errors=True)
    _wait_for_the_notebooks()
    start = time.perf_counter()
    proc = subprocess.run(
        # Both languages, from the execution cache that nbval filled in this run (emptied at its start).
        [sys.executable, "-m", "tools.site", "--keep-cache"],
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
    """`python -m tools.site` (the README's build command) into _build/, once per pytest run: the
    English site (`jupyter-book build . -W -n --keep-going --all`) and the Chinese one in _build/html/zh/.

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
                    "stdout": result.stdout[-400_000:],  # the whole log: its Chinese part is tested
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


# --- Efficient attention (tests/efficient/): random q, k, v and the full attention to compare with ---


def _qkv(B=2, H=3, T_q=23, T_k=23, d=8, dtype=None, requires_grad=True, seed=0):
    import torch

    g = torch.Generator().manual_seed(seed)
    shapes = [(B, H, T_q, d), (B, H, T_k, d), (B, H, T_k, d)]
    dtype = torch.float64 if dtype is None else dtype
    return [torch.randn(*s, generator=g, dtype=dtype).requires_grad_(requires_grad) for s in shapes]


def _full(q, k, v, mask=None, is_causal=False):
    from lib.model.attention import scaled_dot_product_attention
    from lib.model.masks import causal_mask

    if is_causal:  # queries are the last T_q of the T_k positions
        causal = causal_mask(q.size(-2), q.device, k.size(-2))
        mask = causal if mask is None else mask & causal
    return scaled_dot_product_attention(q, k, v, mask)[0]


def _same_values_and_grads(out, ref, inputs):
    import torch

    torch.testing.assert_close(out, ref)
    g = torch.randn_like(ref)
    for a, b in zip(torch.autograd.grad(out, inputs, g), torch.autograd.grad(ref, inputs, g)):
        torch.testing.assert_close(a, b)


@pytest.fixture
def qkv():
    """``qkv(B, H, T_q, T_k, d, dtype, requires_grad, seed) -> [q, k, v]``, float64 by default."""
    return _qkv


@pytest.fixture
def full():
    """``full(q, k, v, mask=None, is_causal=False)``: lib's explicit softmax attention, the reference."""
    return _full


@pytest.fixture
def assert_same_values_and_grads():
    """``(out, ref, inputs)``: equal values, and equal gradients for one random output gradient."""
    return _same_values_and_grads
