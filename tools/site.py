"""Build the site in both languages: English in ``_build/html/``, Chinese in ``_build/html/zh/``.

    python -m tools.site              # both, as the README's build command does (-W -n --keep-going)
    python -m tools.site --gettext    # only the English messages, into _build/gettext/ (tools.i18n)

The English build is Jupyter Book's own (``jupyter-book build``): it executes every notebook and keeps
the results in the execution cache (``_build/.jupyter_cache``, ``execute_notebooks: cache``). The
Chinese build is the same Sphinx configuration (Jupyter Book writes it from ``_config.yml``) with
``language = zh_CN``, the Chinese table of contents and theme strings of ``locale/zh_CN/site.yml``;
it reads every notebook's outputs from that cache, so no chapter runs twice. The cache is cleared
before the English build, so every build shows a fresh run of the current code (``lib``'s too).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

from tools.common import REPO

BUILD = REPO / "_build"
HTML = BUILD / "html"
CACHE = BUILD / ".jupyter_cache"
EXECUTED = BUILD / "jupyter_execute"  # the executed notebooks (the tests read them)
ZH_BUILD = BUILD / "zh"  # the Chinese build's own folder (myst-nb writes beside its output)
ZH = "zh_CN"
ZH_HTML = HTML / "zh"
SITE_STRINGS = REPO / "locale" / ZH / "site.yml"
ZH_BUILD_MARKER = "=== tools.site: the Chinese site, from the execution cache, into _build/html/zh ==="


def jupyter_book() -> str:
    """The jupyter-book next to this interpreter (the book's venv), else the one on PATH."""
    here = Path(sys.executable).parent / "jupyter-book"
    return str(here) if here.exists() else (shutil.which("jupyter-book") or "jupyter-book")


def build_english(*, all_pages: bool = True, keep_cache: bool = False) -> int:
    """``jupyter-book build . -W -n --keep-going`` after clearing the execution cache (unless
    `keep_cache`: the test suite fills it with the notebooks as nbval ran them, see conftest.py)."""
    if not keep_cache:
        shutil.rmtree(CACHE, ignore_errors=True)
    cmd = [jupyter_book(), "build", str(REPO), "-W", "-n", "--keep-going"] + (["--all"] if all_pages else [])
    code = subprocess.run(cmd, cwd=REPO).returncode
    if code == 0:
        export_executed()
    return code


def export_executed(out: Path = EXECUTED) -> list[Path]:
    """Every notebook of the site with the outputs this build showed, into ``_build/jupyter_execute/``.

    myst-nb writes that folder itself, but in ``cache`` mode it writes the notebook as read, without
    the outputs it took from the cache; the notebooks here are the cache's, as the pages show them.
    """
    import nbformat
    from jupyter_cache import get_cache

    from tools.common import toc_docnames

    cache = get_cache(str(CACHE))
    written = []
    for docname in toc_docnames():
        source = REPO / f"{docname}.ipynb"
        if not source.exists():
            continue
        try:
            _, executed = cache.merge_match_into_notebook(nbformat.read(source, as_version=4))
        except KeyError:  # not in the cache: the build did not run it
            continue
        target = out / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(executed, target)
        written.append(target)
    return written


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


def build_sphinx_language(language: str, outdir: Path, builder: str = "html", warningiserror: bool = True) -> int:
    """The book's Sphinx configuration, as Jupyter Book writes it from ``_config.yml``, built in `language`.

    Notebooks are read from the execution cache (never executed): a notebook missing from the cache
    is an error, so the build fails instead of running a chapter again.
    """
    from jupyter_book.sphinx import build_sphinx

    sys.path.insert(0, str(REPO / "tools"))  # the local extension book_ext (as _config.yml says)
    overrides: dict = {"latex_individualpages": False, "nitpicky": True}
    if language != "en":
        strings = yaml.safe_load(SITE_STRINGS.read_text(encoding="utf-8"))
        overrides |= {
            "language": language,
            "external_toc_path": _translated_toc(strings).as_posix(),
            "html_title": strings["title"],
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
    os.environ.setdefault("TQDM_DISABLE", "1")
    result = build_sphinx(
        REPO,
        outdir,
        noconfig=True,
        path_config=str(REPO / "_config.yml"),
        confoverrides=overrides,
        doctreedir=BUILD / f".doctrees-{language}-{builder}",
        builder=builder,
        warningiserror=warningiserror,
        keep_going=True,
        freshenv=True,
    )
    return result if isinstance(result, int) else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.site", description=__doc__.split("\n")[0])
    parser.add_argument("--gettext", action="store_true", help="only extract the English messages (_build/gettext)")
    parser.add_argument("--language", choices=["both", "en", ZH], default="both")
    parser.add_argument("--keep-cache", action="store_true", help="reuse the execution cache (the tests fill it)")
    parser.add_argument("--out", type=Path, default=BUILD / "gettext", help="where --gettext writes (_build/gettext)")
    args = parser.parse_args(argv)
    if args.gettext:
        return build_sphinx_language("en", args.out, builder="gettext", warningiserror=False)
    if args.language in ("both", "en") and (code := build_english(keep_cache=args.keep_cache)) != 0:
        return code
    if args.language in ("both", ZH):
        print(ZH_BUILD_MARKER, flush=True)
        # Built into _build/zh/html (myst-nb writes its notebooks and images beside the output
        # folder, so not inside the English site), then copied to _build/html/zh.
        shutil.rmtree(ZH_BUILD / "html", ignore_errors=True)
        code = build_sphinx_language(ZH, ZH_BUILD / "html")
        if code == 0:
            shutil.rmtree(ZH_HTML, ignore_errors=True)
            shutil.copytree(ZH_BUILD / "html", ZH_HTML)
        return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
