"""The execution cache: the executed notebooks that the site shows, and the code they were run with.

Every notebook of the book runs once per build, under nbval (``conftest.py``), one per core; its
outputs go into Jupyter Book's execution cache (``_build/.jupyter_cache``, jupyter-cache), from which
both languages of the site are rendered without executing anything again (``tools/site.py``). The
cache's key is a notebook's code cells only, so beside the cache lies a *stamp*: a hash of the code
the notebooks import and run with (``lib/``, ``requirements.txt``). A build that reuses a cache
(``python -m tools.site --keep-cache`` or ``--language zh_CN``) refuses one whose stamp differs, so
that no page shows the outputs of older code as current.

``BOOK_BUILD_DIR`` in the environment moves ``_build`` (the tests of this module use a folder of their own).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

from tools.common import REPO

BUILD = Path(os.environ.get("BOOK_BUILD_DIR") or REPO / "_build")
CACHE = BUILD / ".jupyter_cache"  # _config.yml's execute.cache
STAMP = BUILD / ".jupyter_cache.stamp.json"
STAMPED = ("lib", "requirements.txt", "pyproject.toml")  # what the notebooks import and run with


def code_stamp(repo: Path = REPO) -> str:
    """sha256 of every file of ``lib/`` (but compiled ones) and of the requirements, by path and content."""
    digest = hashlib.sha256()
    for name in STAMPED:
        root = repo / name
        files = sorted(p for p in root.rglob("*") if p.is_file()) if root.is_dir() else [root]
        for path in files:
            if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
                continue
            digest.update(path.relative_to(repo).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def clear() -> None:
    """Empty the cache and remove its stamp."""
    shutil.rmtree(CACHE, ignore_errors=True)
    STAMP.unlink(missing_ok=True)


def write_stamp() -> None:
    """Record that the cache is filled with the code as it is now."""
    STAMP.parent.mkdir(parents=True, exist_ok=True)
    STAMP.write_text(json.dumps({"code": code_stamp()}))


def stale_reason() -> str | None:
    """Why the cache cannot be shown as this code's outputs, or ``None`` if it can."""
    if not CACHE.is_dir():
        return f"there is no execution cache ({CACHE})"
    try:
        stamped = json.loads(STAMP.read_text())["code"]
    except (OSError, ValueError, KeyError):
        return f"the execution cache has no stamp ({STAMP}): it was filled by an older build"
    if stamped != code_stamp():
        return "the execution cache holds outputs of other code: lib/ or the requirements changed since it was filled"
    return None


def cache_notebook(notebook, path: Path, seconds: float) -> None:
    """Put an executed notebook (every code cell with its outputs) into the cache, as the site build
    would have: its key is the notebook's code; ``seconds``, its execution time, goes with it (the
    chapter-runtime table shows it)."""
    from filelock import FileLock
    from jupyter_cache import get_cache
    from jupyter_cache.base import CacheBundleIn

    BUILD.mkdir(parents=True, exist_ok=True)
    with FileLock(str(BUILD / ".jupyter_cache.lock")):
        get_cache(str(CACHE)).cache_notebook_bundle(
            CacheBundleIn(notebook, str(path), data={"execution_seconds": seconds}),
            check_validity=False,
            overwrite=True,
        )
