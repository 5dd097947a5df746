"""The buttons at the top of every page. **The Colab button opens the Colab edition**: every notebook
page's Colab button opens `colab/NN_slug.ipynb` (plain Jupyter markdown, written by
`tools/editions.py`) at `repository.branch`, the ref its setup cell installs `lib` from. **The
download menu offers the whole book as PDF** (``tools/pdf.py``), in the page's language."""

from __future__ import annotations

import os
from pathlib import Path

from sphinx.application import Sphinx

EDITIONS_FOLDER = "colab"  # tools/editions.py writes the Colab editions there
EDITION_FOLDERS = {"en": EDITIONS_FOLDER, "zh_CN": f"{EDITIONS_FOLDER}/zh"}  # ... and the Chinese ones


def colab_edition_url(button_url: str, branch: str, pagename: str, folder: str = EDITIONS_FOLDER) -> str:
    """The theme's Colab URL of a page, `.../github/ORG/REPO/blob/BRANCH/book/NN_slug.ipynb`, made to
    open the page's Colab edition at the same branch: `.../blob/BRANCH/colab/NN_slug.ipynb`
    (`colab/zh/NN_slug.ipynb` on the Chinese site)."""
    head, found, _ = button_url.partition("/blob/")
    if not found:
        raise ValueError(f"button_url: expected a Colab URL with /blob/BRANCH/PATH, got {button_url!r}")
    return f"{head}/blob/{branch}/{folder}/{Path(pagename).name}.ipynb"


def colab_button_opens_the_edition(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The Colab button (sphinx-book-theme's launch buttons) opens the page's Colab edition,
    `colab/NN_slug.ipynb` (plain Jupyter markdown: tools/editions.py), not the MyST chapter.

    The ref stays `repository.branch`, the one the edition's setup cell installs `lib` from. A
    notebook page without an edition is a warning, so a `-W` build fails until
    `python -m tools.editions` has been run.
    """
    branch = (app.config.html_theme_options or {}).get("repository_branch") or "main"
    for group in context.get("header_buttons") or []:
        for button in group.get("buttons") or []:
            if button.get("text") != "Colab" or not button.get("url"):
                continue
            folder = EDITION_FOLDERS.get(getattr(app.config, "language", None) or "en", EDITIONS_FOLDER)
            edition = Path(app.srcdir, folder, f"{Path(pagename).name}.ipynb")
            if not edition.is_file():
                from sphinx.util import logging

                logging.getLogger(__name__).warning(
                    f"{pagename}: no Colab edition {edition.relative_to(app.srcdir)}; run `python -m tools.editions`"
                )
                continue
            button["url"] = colab_edition_url(button["url"], branch, pagename, folder)


PDF_WORDS = {  # the entry's tooltip: what the PDF holds and what it leaves out (README, "The PDF")
    "en": "The whole book as one PDF to print or read offline: every chapter, figure and solution, "
    "bookmarks and page numbers; explorers in their first state, folded cells left out",
    "zh_CN": "全书，一个 PDF 文件，可打印或离线阅读：所有章节、图与解答，带书签和页码；交互式探索器以初始状态呈现，折叠的单元格不收入",
}
PDF_NAMES = {"en": "book.pdf", "zh_CN": "全书.pdf"}  # the download menu's entry, as its other entries (.ipynb)


def link_the_book_pdf(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The download menu of every page offers the whole book as PDF, in the page's language
    (``book.pdf`` at the site's root: ``tools/pdf.py``), when the build makes it (``BOOK_PDF=1``)."""
    if os.environ.get("BOOK_PDF") != "1" or app.builder.name != "html":
        return
    url = context["pathto"]("book.pdf", 1)
    language = getattr(app.config, "language", None) or "en"
    entry = {"type": "link", "url": url, "text": PDF_NAMES.get(language, "book.pdf"), "icon": "fas fa-book",
             "tooltip": PDF_WORDS.get(getattr(app.config, "language", None) or "en", PDF_WORDS["en"]),
             "label": "book-pdf-button"}  # fmt: skip
    for group in context.get("header_buttons") or []:
        if any(b.get("label") == "download-source-button" for b in group.get("buttons") or []):
            group["buttons"].append(entry)
            return


def setup(app: Sphinx) -> dict:
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", colab_button_opens_the_edition, priority=502)
    app.connect("html-page-context", link_the_book_pdf, priority=502)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
