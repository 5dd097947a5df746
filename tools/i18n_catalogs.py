"""The Chinese edition's catalogs as data: where they are (``locale/zh_CN/LC_MESSAGES/<page>.po``, one a
page, and the catalogs of the claim statements, of the labels of their values and of the words a run
shows), how to read one, and a page's translations applied to MyST markdown (the editions that are
notebooks: ``tools/myst/``). ``python -m tools.i18n`` extracts them (``tools/i18n.py``); ``tools/i18n_checks.py`` checks them."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

from tools.common import REPO

LANGUAGE = "zh_CN"
LOCALE = REPO / "locale"
CATALOGS = LOCALE / LANGUAGE / "LC_MESSAGES"
GLOSSARY = LOCALE / "glossary.yml"
STATEMENTS_DOMAIN = "claim-statements"  # tools/i18n_ext/outputs.py reads this catalog
VALUES_DOMAIN = "claim-values"  # the labels and units of claims' values (lib/book/claim_labels.json): outputs.py too
# The words a run shows (tools/i18n_ext/outputs.py draws the Chinese explorers and figures with them): harvested
# from the notebooks the last build executed, since they exist only once a chapter has run.
RUNTIME_DOMAINS = ("explorers", "figures")
NOT_PROSE = (STATEMENTS_DOMAIN, VALUES_DOMAIN, *RUNTIME_DOMAINS)  # catalogs of short labels: no glossary explanations


def catalogs(language: str = LANGUAGE) -> list[Path]:
    """Every page's catalog, sorted."""
    return sorted((LOCALE / language / "LC_MESSAGES").rglob("*.po"))


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, abort_invalid=True)


def messages(catalog: Catalog) -> list[Message]:
    """The catalog's messages in page order, without the header."""
    return [m for m in catalog if m.id]


@functools.cache
def _translation_table(path: Path, mtime: float) -> dict[str, str]:
    return {m.id: m.string for m in messages(read_catalog(path)) if m.string and not m.fuzzy and m.id != m.string}


def translations(docname: str, language: str = LANGUAGE, repo: Path = REPO) -> dict[str, str]:
    """English message -> translation, for page `docname` (its catalog's translated messages)."""
    path = repo / "locale" / language / "LC_MESSAGES" / f"{docname}.po"
    return _translation_table(path, path.stat().st_mtime) if path.exists() else {}


def translate_markdown(markdown: str, table: dict[str, str]) -> str:
    """A MyST markdown text with each message of `table` replaced by its translation.

    A message is the text of one paragraph, heading, list item, table cell or title as the site's
    gettext saw it: its words, with the line breaks of the source as spaces. Each is found in the
    text as those words separated by any whitespace (longest messages first, so a short message is
    never matched inside a longer one), and replaced. Used for the editions that are notebooks (Colab,
    students), so that they read as the Chinese site does.
    """
    for source in sorted(table, key=len, reverse=True):
        words = source.split()
        if not words or words[0] not in markdown:  # its first word is not in the text: it cannot match
            continue
        translated = table[source]
        markdown = _message_pattern(source).sub(lambda _m, t=translated: t, markdown)
    return markdown


@functools.cache
def _message_pattern(source: str) -> re.Pattern:
    """The message's words, separated by any whitespace, not inside a word, code or math (compiled once:
    there are more messages than `re` keeps compiled)."""
    return re.compile(r"(?<![\w`$])" + r"\s+".join(map(re.escape, source.split())) + r"(?![\w`$])")
