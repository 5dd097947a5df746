"""Build the site in both languages: English in ``_build/html/``, Chinese in ``_build/html/zh/``.

    python -m tools.site              # both, as the README's build command does (-W -n --keep-going)
    python -m tools.site --gettext    # only the English messages, into _build/gettext/ (tools.i18n)

Three steps. **Execute**: every notebook of the site runs under nbval (pytest, ``conftest.py``), one per
core with one torch thread each, into the emptied execution cache (``_build/.jupyter_cache``, see
``tools/execution.py``): the same mechanism that fills it in the README's test command, so the two
commands show the same runs. A notebook that fails fails the build here, with its traceback.
**Render**: the English site (the Sphinx configuration that Jupyter Book writes from ``_config.yml``,
as ``jupyter-book build . -W -n --keep-going --all`` builds it) followed by its PDF (``tools/pdf.py``),
and the Chinese site (the same configuration with ``language = zh_CN``, the Chinese table of contents
and theme strings of ``locale/zh_CN/site.yml``) followed by its PDF, are rendered from that cache by
two processes side by side (:func:`render_both`); each PDF starts from its site's pages as read, and
none executes anything.
``--keep-cache`` skips the execution and renders from the cache as it is, and so does
``--language en|zh_CN`` (one language, its site then its PDF): both refuse a cache filled by other code
(its stamp, ``tools/execution.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from tools import execution
from tools import pdf as pdfs
from tools.common import REPO, notebooks
from tools.sphinx_build import ZH, build_sphinx_language

BUILD = REPO / "_build"
HTML = BUILD / "html"
CACHE = execution.CACHE
EXECUTED = BUILD / "jupyter_execute"  # the executed notebooks (the tests read them)
ZH_BUILD = BUILD / "zh"  # the Chinese build's own folder (myst-nb writes beside its output)
ZH_HTML = HTML / "zh"
ZH_BUILD_MARKER = "=== tools.site: the Chinese site, from the execution cache, into _build/html/zh ==="


def execute_notebooks(jobs: int | None = None) -> int:
    """Run every notebook of the site under nbval, ``jobs`` at a time (default: one per core), with one
    torch thread each, into the emptied execution cache (``conftest.py`` caches each notebook that ran
    through). Returns pytest's exit code: not 0 if a notebook failed (its traceback is in the log)."""
    paths = [str(path.relative_to(REPO)) for path in notebooks()]
    jobs = jobs or max(1, min(len(paths), os.cpu_count() or 1))
    env = {**os.environ, "BOOK_EXECUTE_ONLY": "1"}  # the notebooks alone: no student versions (conftest.py)
    command = [sys.executable, "-m", "pytest", *paths, "-n", str(jobs), "-p", "no:cacheprovider", "-q", "-rf"]
    return subprocess.run(command, cwd=REPO, env=env).returncode


def build_english() -> int:
    """The English site into ``_build/html``, as ``jupyter-book build . -W -n --keep-going --all`` builds
    it (:func:`build_sphinx_language`: the same Sphinx configuration, a fresh environment), from the
    execution cache (a notebook missing from it is executed), then the executed notebooks into
    ``_build/jupyter_execute/``. Built in this process, not by the ``jupyter-book`` command, so that
    the English PDF can start from the pages as read (``environment_of="html"``), as the Chinese one does."""
    code = build_sphinx_language("en", HTML)
    if code == 0:
        export_executed()
    return code


def build_chinese() -> int:
    """The Chinese site into ``_build/zh/html`` (myst-nb writes its notebooks and images beside the
    output folder, so not inside the English site), then copied to ``_build/html/zh``."""
    shutil.rmtree(ZH_BUILD / "html", ignore_errors=True)
    code = build_sphinx_language(ZH, ZH_BUILD / "html")
    if code == 0:
        chinese_sources(ZH_BUILD / "html")
        shutil.rmtree(ZH_HTML, ignore_errors=True)
        shutil.copytree(ZH_BUILD / "html", ZH_HTML)
    return code


def chinese_sources(html: Path) -> list[Path]:
    """The notebooks a Chinese page offers for download (its ``.ipynb`` button) in Chinese: the Chinese
    editions of ``colab/zh/`` (``python -m tools.editions``) in place of the English sources."""
    written = []
    for edition in sorted((REPO / "colab" / "zh").glob("*.ipynb")):
        target = html / "_sources" / "book" / edition.name
        if target.exists():
            shutil.copyfile(edition, target)
            written.append(target)
    return written


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.site", description=__doc__.split("\n")[0])
    parser.add_argument("--gettext", action="store_true", help="only extract the English messages (_build/gettext)")
    parser.add_argument(
        "--language",
        choices=["both", "en", ZH],
        default="both",
        help="both: execute, then render both; en or zh_CN: render one from the cache as it is",
    )
    parser.add_argument("--keep-cache", action="store_true", help="render from the execution cache as it is")
    parser.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="notebooks executed, then pages rendered, at a time (default: one per core)",
    )
    parser.add_argument("--no-pdf", action="store_true", help="leave out the whole-book PDFs (tools/pdf.py)")
    parser.add_argument(
        "--part",
        choices=["site", "pdf"],
        help="with --language: only its site, or only its PDF (into _build/pdf-<language>)",
    )
    parser.add_argument("--out", type=Path, default=BUILD / "gettext", help="where --gettext writes (_build/gettext)")
    args = parser.parse_args(argv)
    if args.gettext:
        return build_sphinx_language("en", args.out, builder="gettext", warningiserror=False)
    if args.part and args.language == "both":
        parser.error("--part renders one language: give --language en or --language zh_CN")
    if args.language != "both" or args.keep_cache:  # one language, or --keep-cache: from the cache as it is
        if (reason := execution.stale_reason()) is not None:
            print(f"tools.site: {reason}; run `python -m tools.site` to execute every notebook again", file=sys.stderr)
            return 1
    elif (code := execute_notebooks(args.jobs)) != 0:
        print("tools.site: a notebook failed (its traceback is above); nothing was rendered", file=sys.stderr)
        return code
    pdf = not args.no_pdf and pdfs.browser() is not None
    if not args.no_pdf and not pdf:
        print(
            "tools.site: no Chromium or Chrome (apt-get install chromium): the site without its PDFs", file=sys.stderr
        )
    os.environ["BOOK_PDF"] = "1" if pdf else "0"  # the pages link to the PDF (tools/book_ext/header_buttons.py)
    if args.part == "site":
        return build_english() if args.language == "en" else build_chinese()
    if args.part == "pdf":
        return pdfs.build(args.language, into_site=False)
    if args.language == "en":
        return build_english() or (pdf and pdfs.build("en", environment_of="html"))
    if args.language == ZH:
        print(ZH_BUILD_MARKER, flush=True)
        return build_chinese() or (pdf and pdfs.build(ZH, environment_of="html"))
    return render_both(pdf, args.jobs)


# The renders of a two-language build, the longest first: each language's site, then its PDF from the
# site's pages as read, in one process (seconds on a 2-core machine, each alone: 45 and 30).
RENDERS = [ZH, "en"]


def render_both(pdf: bool, jobs: int | None = None) -> int:
    """Each language's site, then its PDF, from the cache, in processes ``jobs`` at a time (default:
    one per core), the longest first; their logs printed English first."""
    compile_catalogs()  # once, here: Sphinx compiles them at its start, and two builds would both write them
    with contextlib.ExitStack() as files:
        logs = {language: files.enter_context(tempfile.TemporaryFile("w+")) for language in RENDERS}
        codes = _run_side_by_side(RENDERS, logs, pdf, jobs)
        for language in sorted(RENDERS, key=lambda language: language != "en"):
            logs[language].seek(0)
            print(logs[language].read(), end="", flush=True)  # the Chinese log starts with ZH_BUILD_MARKER
    return max(codes.values())


def _run_side_by_side(languages: list[str], logs: dict, pdf: bool, jobs: int | None) -> dict:
    """Run ``python -m tools.site --language L`` for each language, ``jobs`` at a time, each into its
    log; their exit codes."""
    waiting, running, codes = list(languages), {}, {}
    jobs = max(1, jobs or os.cpu_count() or 1)
    while waiting or running:
        while waiting and len(running) < jobs:
            language = waiting.pop(0)
            command = [sys.executable, "-m", "tools.site", "--language", language] + ([] if pdf else ["--no-pdf"])
            running[language] = subprocess.Popen(command, cwd=REPO, stdout=logs[language], stderr=subprocess.STDOUT)
        time.sleep(0.2)
        for language, process in list(running.items()):
            if process.poll() is not None:
                codes[language] = running.pop(language).returncode
    return codes


def compile_catalogs() -> None:
    """The Chinese catalogs (``locale/zh_CN/LC_MESSAGES/*.po``) compiled to ``.mo`` where they are
    newer, as each Chinese Sphinx build would do at its start."""
    from sphinx.util.i18n import CatalogRepository

    locale_dirs = yaml.safe_load((REPO / "_config.yml").read_text(encoding="utf-8"))["sphinx"]["config"]["locale_dirs"]
    for catalog in CatalogRepository(str(REPO), locale_dirs, ZH, "utf-8").catalogs:
        if catalog.is_outdated():
            catalog.write_mo(ZH)


if __name__ == "__main__":
    sys.exit(main())
