"""The whole book as one PDF, in English (``_build/html/book.pdf``) and in Chinese (``_build/html/zh/book.pdf``).

    python -m tools.pdf            # both, from the execution cache of the last build
    python -m tools.pdf zh_CN      # one language

``python -m tools.site`` (the README's build command) makes both, and every page of the site links
to its language's PDF (the download menu: ``tools/book_ext.py``). The book is rendered as one HTML page
by Sphinx's ``singlehtml`` builder, from the execution cache (nothing runs again), with the solutions
open (no dropdowns); the site's print style sheet (``_static/book.css``, ``@media print``) leaves out
the interface (header, sidebars, the show-code and show-solution prompts, the explorers' controls, which
print in their first state), starts every chapter on a new page and numbers the display equations. A
headless Chromium prints that page, fonts embedded (Noto CJK for the Chinese): the same engine that
the browser tests use, with no TeX to install.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tools.common import REPO

BUILD = REPO / "_build"
TARGETS = {"en": BUILD / "html" / "book.pdf", "zh_CN": BUILD / "html" / "zh" / "book.pdf"}
# Sphinx settings of the one-page book: solutions open (sphinx-togglebutton folds nothing it cannot match).
OVERRIDES = {"togglebutton_selector": ".book-pdf-nothing-to-fold"}


def browser() -> str | None:
    """A Chromium or Chrome to print with, or ``None``."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        if found := shutil.which(name):
            return found
    return None


def render(language: str, environment_of: str | None = None) -> Path | None:
    """The book as one HTML page in ``language`` (``_build/pdf-<language>/html/index.html``), or
    ``None`` if the Sphinx build failed (its warnings are errors, as the site's).

    One folder down: myst-nb writes its notebooks beside the output folder (``jupyter_execute``), and
    ``_build/jupyter_execute`` holds the site's executed notebooks, with their outputs."""
    from tools.site import build_sphinx_language

    out = BUILD / f"pdf-{language}" / "html"
    shutil.rmtree(out.parent, ignore_errors=True)
    code = build_sphinx_language(
        language, out, builder="singlehtml", overrides=OVERRIDES, environment_of=environment_of
    )
    return out / "index.html" if code == 0 else None


def print_pdf(page: Path, target: Path, executable: str) -> None:
    """Print ``page`` to ``target`` with headless Chromium, after its scripts ran (MathJax typesets)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    command = [
        executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--no-pdf-header-footer", "--virtual-time-budget=60000", "--run-all-compositor-stages-before-draw",
        f"--user-data-dir={BUILD / f'chromium-pdf-{target.parent.name}'}", f"--print-to-pdf={partial}",
        page.resolve().as_uri(),
    ]  # fmt: skip
    subprocess.run(command, check=True, capture_output=True, timeout=600)
    partial.replace(target)


def printed(language: str) -> Path:
    """Where :func:`build` prints the PDF of ``language`` before it goes into the site (``_build/pdf-<language>/book.pdf``)."""
    return BUILD / f"pdf-{language}" / "book.pdf"


def place(language: str) -> Path:
    """Copy the printed PDF of ``language`` into its site (:data:`TARGETS`)."""
    TARGETS[language].parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(printed(language), TARGETS[language])
    return TARGETS[language]


def build(language: str, *, into_site: bool = True, environment_of: str | None = None) -> int:
    """The PDF of ``language``, printed to :func:`printed` and (``into_site``) copied into its site
    (:data:`TARGETS`); 0 on success, 1 on a failed build. ``environment_of``: see
    :func:`tools.site.build_sphinx_language` (``tools.site`` builds each language's PDF after its site,
    from the site's pages as read)."""
    executable = browser()
    if executable is None:
        print("tools.pdf: no Chromium or Chrome found (apt-get install chromium): no PDF", file=sys.stderr)
        return 1
    start = time.perf_counter()
    page = render(language, environment_of)
    if page is None:
        return 1
    print_pdf(page, printed(language), executable)
    target = place(language) if into_site else printed(language)
    size = target.stat().st_size / 2**20
    print(f"tools.pdf: {target.relative_to(REPO)} ({size:.1f} MiB) in {time.perf_counter() - start:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.pdf", description=__doc__.split("\n")[0])
    parser.add_argument("languages", nargs="*", help=f"any of {', '.join(TARGETS)} (default: both)")
    args = parser.parse_args(argv)
    if unknown := set(args.languages) - set(TARGETS):
        parser.error(f"unknown language(s) {sorted(unknown)}; expected {', '.join(TARGETS)}")
    return max(build(language) for language in args.languages or TARGETS)


if __name__ == "__main__":
    sys.exit(main())
