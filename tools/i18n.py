"""The Chinese edition's catalogs: extract the messages, and check the translations.

The site's pages are translated with Sphinx's own gettext machinery: every paragraph, heading, list
item, table cell and exercise title of a page is one *message*; ``locale/zh_CN/LC_MESSAGES/<page>.po``
holds each message's Chinese translation; the Chinese build (``python -m tools.site``) reads them.

    python -m tools.i18n extract      # after an English edit: refresh every catalog (sphinx-intl)
    python -m tools.i18n check        # what is untranslated, fuzzy, or broken, page by page

An English edit changes its message, so the message comes back untranslated (or fuzzy) and
``check`` (and ``tests/test_i18n.py``) fail until the Chinese is written: an English edit is done
when its translation is. ``check`` also asks of every translation what a reviewer would:

- the same roles (``{cite:p}`x```, ``{doc}`x```, ...), math, inline code and links as the English;
- a numbered heading keeps its number with the dot escaped (``3\\. 缩放``: unescaped, MyST reads
  "3." as a list and Sphinx silently keeps the English heading);
- the glossary's terms (``locale/glossary.yml``): one Chinese term per English one, and on each page
  the English term once beside it, in full-width parentheses.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

from tools.common import REPO

LANGUAGE = "zh_CN"
LOCALE = REPO / "locale"
CATALOGS = LOCALE / LANGUAGE / "LC_MESSAGES"
GLOSSARY = LOCALE / "glossary.yml"
GETTEXT = REPO / "_build" / "gettext"

# Markup that a translation must carry over unchanged (as a multiset).
_ROLE = re.compile(r"\{[a-zA-Z][\w:+-]*\}`[^`]*`")
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$")
_CODE = re.compile(r"(?<![`}])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_URL = re.compile(r"https?://[^\s)>\]]+")
_NUMBERED = re.compile(r"^(\d+)\. ")


@dataclass(frozen=True)
class Term:
    """One glossary entry: the English term (a regular expression) and its one Chinese term."""

    en: str
    zh: str
    explain: bool = True

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(rf"\b(?:{self.en})\b", re.I)


def glossary(path: Path = GLOSSARY) -> list[Term]:
    return [Term(**entry) for entry in yaml.safe_load(path.read_text(encoding="utf-8"))["terms"]]


def catalogs(language: str = LANGUAGE) -> list[Path]:
    """Every page's catalog, sorted."""
    return sorted((LOCALE / language / "LC_MESSAGES").rglob("*.po"))


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, abort_invalid=True)


def messages(catalog: Catalog) -> list[Message]:
    """The catalog's messages in page order, without the header."""
    return [m for m in catalog if m.id]


def markup(text: str) -> list[str]:
    """The roles, math, inline code and links of `text`, sorted (what a translation must keep)."""
    found = []
    for pattern in (_ROLE, _DISPLAY_MATH):
        found += pattern.findall(text)
        text = pattern.sub(" ", text)
    found += [m.group(0) for m in _CODE.finditer(text)]
    text = _CODE.sub(" ", text)
    found += _MATH.findall(text)
    text = _MATH.sub(" ", text)
    found += _URL.findall(text)
    return sorted(" ".join(item.split()) for item in found)


def prose(text: str) -> str:
    """`text` without its roles, math, inline code and links: the words a reader reads as English."""
    for pattern in (_ROLE, _DISPLAY_MATH, _CODE, _MATH, _URL):
        text = pattern.sub(" ", text)
    return text


def message_problems(message: Message, terms: Iterable[Term] = ()) -> list[str]:
    """What is wrong with one message's translation (empty if nothing)."""
    source, translation = message.id, message.string
    if not translation:
        return ["untranslated"]
    if message.fuzzy:
        return ["fuzzy (the English changed: check the translation, then remove the fuzzy flag)"]
    found = []
    if markup(source) != markup(translation):
        missing = sorted(set(markup(source)) - set(markup(translation)))
        extra = sorted(set(markup(translation)) - set(markup(source)))
        found.append(f"markup differs: missing {missing}, extra {extra}")
    number = _NUMBERED.match(source)
    if number and not translation.startswith(f"{number.group(1)}\\. "):
        found.append(f"a numbered heading's translation must start with '{number.group(1)}\\. '")
    english = prose(source)
    for term in terms:
        if term.pattern.search(english) and term.zh not in translation:
            found.append(f"glossary: {term.en!r} is {term.zh!r}")
    return found


def page_problems(path: Path, terms: list[Term] | None = None) -> list[str]:
    """Every problem of one page's catalog, each as ``"<page>:<line>: <problem>: <message start>"``."""
    terms = glossary() if terms is None else terms
    page = path.relative_to(CATALOGS).with_suffix("").as_posix() if path.is_relative_to(CATALOGS) else path.stem
    found = []
    entries = messages(read_catalog(path))
    for m in entries:
        where = f"{page}:{m.lineno}"
        found += [f"{where}: {p}: {m.id[:60]!r}" for p in message_problems(m, terms)]
    translated = [m for m in entries if m.string and not m.fuzzy]
    for term in (t for t in terms if t.explain):
        uses_english = any(term.pattern.search(prose(m.id)) for m in entries)
        if not uses_english:
            continue
        beside = re.compile(rf"{re.escape(term.zh)}[^（]{{0,4}}（[^）]*\b(?:{term.en})\b", re.I)
        if not any(beside.search(m.string) for m in translated):
            found.append(f"{page}: glossary: give the English once beside {term.zh}: {term.zh}（{term.en}）")
    return found


def extract() -> None:
    """Refresh the catalogs from the English sources: a gettext build, then ``sphinx-intl update``.

    Kept translations stay; a changed message comes back fuzzy or untranslated; a removed one is
    dropped. The build does not execute the notebooks (messages come from markdown only).
    """
    subprocess.run(
        [sys.executable, "-m", "tools.site", "--gettext"],
        cwd=REPO,
        check=True,
    )
    subprocess.run(
        [sys.executable, "-m", "sphinx_intl", "update", "-p", str(GETTEXT), "-l", LANGUAGE, "-d", str(LOCALE),
         "-w", "0"],
        cwd=REPO,
        check=True,
    )
    # sphinx-intl keeps obsolete messages as "#~" comments; the catalogs hold only the pages' messages.
    for path in catalogs():
        text = path.read_text(encoding="utf-8")
        kept = "\n\n".join(block for block in text.split("\n\n") if not block.lstrip().startswith("#~"))
        path.write_text(kept.rstrip("\n") + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.i18n", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("extract", help="refresh every catalog from the English sources")
    check = sub.add_parser("check", help="list untranslated, fuzzy or broken translations")
    check.add_argument("po", nargs="*", type=Path, help="catalogs to check (default: all)")
    args = parser.parse_args(argv)
    if args.command == "extract":
        extract()
        return 0
    terms = glossary()
    paths = [p.resolve() for p in args.po] or catalogs()
    found = [p for path in paths for p in page_problems(path, terms)]
    print("\n".join(found) if found else f"{len(paths)} catalog(s): every message translated and checked")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
