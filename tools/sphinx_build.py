"""One Sphinx build of the book in one language, with the configuration Jupyter Book writes from
``_config.yml``: what the site (``tools/site.py``), the PDF (``tools/pdf.py``) and the message
extraction (``tools/i18n.py``) each build with.

``build_sphinx_language("zh_CN", out)`` gives the Chinese configuration (``locale/zh_CN/site.yml``:
title, author, table-of-contents captions, the theme's strings); every build reads the notebooks from
the execution cache (``tools/execution.py``) and never executes one.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import yaml

from tools import execution
from tools.common import REPO

BUILD = REPO / "_build"
CACHE = execution.CACHE
ZH = "zh_CN"
SITE_STRINGS = REPO / "locale" / ZH / "site.yml"


def _translated_toc(strings: dict) -> Path:
    """``_toc.yml`` with its part captions in Chinese (written to ``_build/_toc.zh_CN.yml``)."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text(encoding="utf-8"))
    captions = strings.get("captions", {})
    for part in toc.get("parts", []):
        part["caption"] = captions.get(part.get("caption"), part.get("caption"))
    out = BUILD / f"_toc.{ZH}.yml"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(yaml.safe_dump(toc, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return out


def build_sphinx_language(
    language: str,
    outdir: Path,
    builder: str = "html",
    warningiserror: bool = True,
    overrides: dict | None = None,
    environment_of: str | None = None,
) -> int:
    """The book's Sphinx configuration, as Jupyter Book writes it from ``_config.yml``, built in `language`.

    Notebooks are read from the execution cache (never executed): a notebook missing from the cache
    is an error, so the build fails instead of running a chapter again. The build reads every page
    afresh, unless ``environment_of`` names the builder (``"html"``) of a build of this language just
    before: then it starts from that build's environment (the pages as read, with their warnings
    already shown) and only writes (Sphinx reads again what that build's configuration did not read).
    """
    from jupyter_book.sphinx import build_sphinx

    sys.path.insert(0, str(REPO / "tools"))  # the local extension book_ext (as _config.yml says)
    extra, overrides = overrides, {"latex_individualpages": False, "nitpicky": True}
    if language != "en":
        strings = yaml.safe_load(SITE_STRINGS.read_text(encoding="utf-8"))
        overrides |= {
            "language": language,
            "external_toc_path": _translated_toc(strings).as_posix(),
            "html_title": strings["title"],
            "author": strings["author"],
            **strings.get("config", {}),
            "html_theme_options": {"search_bar_text": strings["search_bar_text"]},
            "html_baseurl": "https://cs224n-book.github.io/transformers-executed/zh/",
            "nb_execution_mode": "cache",
            "nb_execution_cache_path": CACHE.as_posix(),
            "nb_execution_raise_on_error": True,
        }
    else:
        overrides["external_toc_path"] = (REPO / "_toc.yml").as_posix()
    if builder == "gettext":
        overrides |= {"nb_execution_mode": "off", "gettext_compact": False}
    if builder not in ("html", "gettext"):  # the one-page book (tools/pdf.py) reads the cache, executes nothing
        # (the cache's path as the site's build gives it: a changed setting would make Sphinx read every
        # page again, where the PDF starts from the site's pages as read)
        overrides |= {"nb_execution_mode": "cache", "nb_execution_raise_on_error": True}
    overrides |= extra or {}
    os.environ.setdefault("TQDM_DISABLE", "1")
    result = build_sphinx(
        REPO,
        outdir,
        noconfig=True,
        path_config=str(REPO / "_config.yml"),
        confoverrides=overrides,
        doctreedir=BUILD / f".doctrees-{language}-{environment_of or builder}",
        builder=builder,
        warningiserror=warningiserror,
        keep_going=True,
        freshenv=environment_of is None,
    )
    return result if isinstance(result, int) else 1
