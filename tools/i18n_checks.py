"""What ``python -m tools.i18n check`` (and ``tests/tools/test_i18n.py``) asks of the Chinese catalogs.

An English edit changes its message, so the message comes back untranslated (or fuzzy) and
``check`` (and ``tests/test_i18n.py``) fail until the Chinese is written: an English edit is done
when its translation is. ``check`` also asks of every translation what a reviewer would:

- the same roles (``{cite:p}`x```, ``{doc}`x```, ...), math, inline code and links as the English;
- a numbered heading keeps its number with the dot escaped (``3\\. 缩放``: unescaped, MyST reads
  "3." as a list and Sphinx silently keeps the English heading);
- the glossary's terms (``locale/glossary.yml``): one Chinese term per English one, and on each page
  the English term once beside it, in full-width parentheses; emphasis is read through (``**相对**位置``
  is 相对位置 to the glossary), and a term is bolded whole or not at all;
- one number style: a number of four digits or more is written as the English writes it, and none of
  five digits or more goes without its thousands separators (20,000), in either language.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.messages.catalog import Message

from tools.i18n_catalogs import CATALOGS, GLOSSARY, NOT_PROSE, messages, read_catalog

# Markup that a translation must carry over unchanged (as a multiset).
_ROLE = re.compile(r"(?<!`)\{[a-zA-Z][\w:+-]*\}`[^`]*`")  # not `{x}` quoted in code
_DISPLAY_MATH = re.compile(r"\$\$.+?\$\$", re.S)
_MATH = re.compile(r"(?<![\\$])\$(?!\$)(?:\\.|[^$\\])+?\$")
_CODE = re.compile(r"(?<![`}])(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.S)
_URL = re.compile(r"https?://[^\s)>\]]+")
_NUMBERED = re.compile(r"^(\d+)\. ")
_MATH_BLOCK = re.compile(r"^\s*\\begin\{|^\n")  # a display-math block's message ($$ dropped by gettext)


@dataclass(frozen=True)
class Term:
    """One glossary entry: the English term (a regular expression), its one Chinese term, where the
    choice comes from, and the variants a translation of it must not use (``avoid``)."""

    en: str
    zh: str
    explain: bool = True
    enforce: bool = True
    avoid: tuple[str, ...] = ()
    source: str = ""
    note: str = ""

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(rf"\b(?:{self.en})\b", re.I)


@dataclass(frozen=True)
class Forbidden:
    """What no Chinese prose may contain (``pattern``, a regular expression), and what to write instead."""

    pattern: str
    use: str


def glossary(path: Path = GLOSSARY) -> list[Term]:
    entries = yaml.safe_load(path.read_text(encoding="utf-8"))["terms"]
    return [Term(**{**entry, "avoid": tuple(entry.get("avoid", ()))}) for entry in entries]


def forbidden(path: Path = GLOSSARY) -> list[Forbidden]:
    return [Forbidden(**entry) for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("forbidden", [])]


def _role_target(role: str) -> str:
    """A role as a translation must keep it: ``{doc}`chapter 2 <02_x>``` -> ``{doc}`<02_x>``` (an
    explicit title is prose, and is translated); other roles whole."""
    title_and_target = re.fullmatch(r"(\{[^}]+\}`)[^`<]*?\s*<([^>`]+)>`", role)
    return f"{title_and_target.group(1)}<{title_and_target.group(2)}>`" if title_and_target else role


def markup(text: str) -> list[str]:
    """The roles, math, inline code and links of `text`, sorted (what a translation must keep)."""
    found = [_role_target(role) for role in _ROLE.findall(text)]
    text = _ROLE.sub(" ", text)
    for pattern in (_DISPLAY_MATH,):
        found += pattern.findall(text)
        text = pattern.sub(" ", text)
    found += [m.group(0) for m in _CODE.finditer(text)]
    text = _CODE.sub(" ", text)
    found += _MATH.findall(text)
    text = _MATH.sub(" ", text)
    found += _URL.findall(text)
    return sorted(" ".join(item.split()) for item in found)


_FIELD = re.compile(r"\{\w+\}(?!`)")  # a template's field ({token}, {0}): the explorers' and figures' catalogs


# What prose() leaves where it took markup out: a "word" that is no letter, so that "小 $\sqrt{d_k}$ 倍"
# still reads as 小 … 倍, and "positions of {doc}`x`" as "positions of" followed by no word.
REMOVED = "⟨⟩"
_EMPHASIS = re.compile(r"\*+")  # bold and italics: read through, so that **相对**位置 is 相对位置


def prose(text: str) -> str:
    """`text` without its roles, math, inline code, links and template fields (each left as
    :data:`REMOVED`) and without its emphasis markers: the words a reader reads as English."""
    for pattern in (_ROLE, _DISPLAY_MATH, _CODE, _MATH, _URL, _FIELD):
        text = pattern.sub(f" {REMOVED} ", text)
    return _EMPHASIS.sub("", text)


def _emphasis_inside(term: str) -> re.Pattern[str]:
    """`term` with emphasis markers allowed between its characters (``**相对**位置编码``)."""
    return re.compile(r"\**".join(map(re.escape, term)))


# Numbers of four digits or more, with or without thousands separators; a bare one of five or more.
_NUMBER = re.compile(r"(?<![\d.,])(?:\d{1,3}(?:,\d{3})+|\d{4,})(?!\d|,\d)")
_BARE_LONG = re.compile(r"(?<![\d.,])\d{5,}(?!\d)")


def number_problems(english: str, chinese: str) -> list[str]:
    """One number style: the translation writes each number as the English writes it (``20,000``,
    not ``20000``), and neither language leaves a number of five digits or more without separators."""
    found = []
    written = {n.replace(",", ""): n for n in _NUMBER.findall(english)}
    for number in _NUMBER.findall(chinese):
        english_form = written.get(number.replace(",", ""))
        if english_form and english_form != number:
            found.append(f"numbers: write {english_form} as the English does, not {number}")
    for language, text in (("English", english), ("Chinese", chinese)):
        for number in _BARE_LONG.findall(text):
            found.append(f"numbers: the {language} writes {number} without thousands separators ({int(number):,})")
    return found


def message_problems(message: Message, terms: Iterable[Term] = (), banned: Iterable[Forbidden] = ()) -> list[str]:
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
    english = prose(source) if not _MATH_BLOCK.match(source) else ""  # a $$ block: its \text{} is math
    chinese = prose(translation) if english else ""
    for term in terms:
        if len(term.zh) > 1:
            for match in _emphasis_inside(term.zh).finditer(translation):
                if "*" in match[0]:
                    found.append(f"glossary: emphasis inside the term {term.zh!r}: {match[0]!r} (bold it whole)")
        if not term.pattern.search(english):
            continue
        if term.enforce and term.zh not in _EMPHASIS.sub("", translation):
            found.append(f"glossary: {term.en!r} is {term.zh!r}")
        for variant in term.avoid:
            if match := re.search(variant, chinese):
                found.append(f"glossary: {term.en!r} is {term.zh!r}, not {match[0]!r}")
    for rule in banned:
        if match := re.search(rule.pattern, chinese):
            found.append(f"write {rule.use}, not {match[0]!r}")
    if english:
        found += number_problems(english, chinese)
    return found


# A line of a PO file that carries a string: a keyword or nothing, then one C string literal.
_PO_STRING_LINE = re.compile(
    r'^(?:msgctxt |msgid |msgid_plural |msgstr(?:\[\d+\])? |#\| (?:msgid )?)?"(?:[^"\\]|\\.)*"$'
)


def syntax_problems(path: Path) -> list[str]:
    """Lines that are not valid PO syntax: a string line must be one quoted C string (babel's reader
    accepts ``msgstr ""text""`` and keeps the quotes in the translation; gettext's ``msgfmt`` refuses it)."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        string_line = line.startswith(("msgid", "msgstr", "msgctxt", '"', "#| "))
        if string_line and not _PO_STRING_LINE.match(line):
            found.append(f"{path.stem}:{number}: not one quoted string: {line[:60]!r}")
    return found


def page_problems(path: Path, terms: list[Term] | None = None, banned: list[Forbidden] | None = None) -> list[str]:
    """Every problem of one page's catalog, each as ``"<page>:<line>: <problem>: <message start>"``."""
    terms = glossary() if terms is None else terms
    banned = forbidden() if banned is None else banned
    page = path.relative_to(CATALOGS).with_suffix("").as_posix() if path.is_relative_to(CATALOGS) else path.stem
    found = syntax_problems(path)
    entries = messages(read_catalog(path))
    for m in entries:
        where = f"{page}:{m.lineno}"
        found += [f"{where}: {p}: {m.id[:60]!r}" for p in message_problems(m, terms, banned)]
    translated = [m for m in entries if m.string and not m.fuzzy]
    if page in NOT_PROSE:  # claim boxes, labels: not prose, their pages explain the terms
        return found
    for term in (t for t in terms if t.explain):
        uses_english = any(term.pattern.search(prose(m.id)) for m in entries)
        if not uses_english:
            continue
        beside = re.compile(rf"{re.escape(term.zh)}[^（]{{0,4}}（[^）]*\b(?:{term.en})\b", re.I)
        if not any(beside.search(m.string) for m in translated):
            found.append(f"{page}: glossary: give the English once beside {term.zh}: {term.zh}（{term.en}）")
    return found
