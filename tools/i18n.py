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
  the English term once beside it, in full-width parentheses; emphasis is read through (``**相对**位置``
  is 相对位置 to the glossary), and a term is bolded whole or not at all;
- one number style: a number of four digits or more is written as the English writes it, and none of
  five digits or more goes without its thousands separators (20,000), in either language.
"""

from __future__ import annotations

import argparse
import ast
import functools
import html
import json
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import yaml
from babel.messages.catalog import Catalog, Message
from babel.messages.pofile import read_po

from tools.common import REPO, notebooks

LANGUAGE = "zh_CN"
LOCALE = REPO / "locale"
CATALOGS = LOCALE / LANGUAGE / "LC_MESSAGES"
GLOSSARY = LOCALE / "glossary.yml"
GETTEXT = REPO / "_build" / "gettext"
STATEMENTS_DOMAIN = "claim-statements"  # tools/i18n_ext/outputs.py reads this catalog
# The words a run shows (tools/i18n_ext/outputs.py draws the Chinese explorers and figures with them): harvested
# from the notebooks the last build executed, since they exist only once a chapter has run.
RUNTIME_DOMAINS = ("explorers", "figures")
EXECUTED = REPO / "_build" / "jupyter_execute"
NOT_PROSE = (STATEMENTS_DOMAIN, *RUNTIME_DOMAINS)  # catalogs of short labels: no glossary explanations

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


def catalogs(language: str = LANGUAGE) -> list[Path]:
    """Every page's catalog, sorted."""
    return sorted((LOCALE / language / "LC_MESSAGES").rglob("*.po"))


def read_catalog(path: Path) -> Catalog:
    with path.open("rb") as f:
        return read_po(f, abort_invalid=True)


def messages(catalog: Catalog) -> list[Message]:
    """The catalog's messages in page order, without the header."""
    return [m for m in catalog if m.id]


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
        if not words:
            continue
        pattern = re.compile(r"(?<![\w`$])" + r"\s+".join(map(re.escape, words)) + r"(?![\w`$])")
        translated = table[source]
        markdown = pattern.sub(lambda _m, t=translated: t, markdown)
    return markdown


def unswept_statements(ledger: dict) -> dict[str, list[str]]:
    """The statements of the claims and checks on the pages the sweep does not run (e.g. the
    Performance appendix), page by page: read from their code, each ``lib.claim`` / ``lib.check`` call
    whose statement is a string literal (Python joins a literal split over lines into one)."""
    swept = {entry.get("notebook") for entry in ledger["chapters"].values()}
    found: dict[str, list[str]] = {}
    for path in notebooks():
        if path.name in swept:
            continue
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        for cell in (c for c in cells if c["cell_type"] == "code"):
            try:
                tree = ast.parse("".join(cell["source"]))
            except SyntaxError:  # a cell with IPython magics holds no claim
                continue
            for node in ast.walk(tree):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("claim", "check")
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "lib"
                    and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and isinstance(node.args[0].value, str)
                ):
                    found.setdefault(path.name, []).append(node.args[0].value)
    return found


def claim_statements() -> dict[str, str]:
    """Every claim statement the pages show -> where it comes from: the seed sweep's ledger
    (``book/claims_sweep.json#04``), and the code of the pages it does not sweep (``book/performance.ipynb``)."""
    ledger = json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8"))
    statements = {}
    for key, entry in sorted(ledger["chapters"].items()):
        for claim in entry.get("claims", []):
            statements.setdefault(claim["statement"], f"book/claims_sweep.json#{key}")
    for page, found in unswept_statements(ledger).items():
        for statement in found:
            statements.setdefault(statement, f"book/{page}")
    return statements


def write_statements_template(out: Path = GETTEXT / f"{STATEMENTS_DOMAIN}.pot") -> int:
    """The claim statements (:func:`claim_statements`: every claim and check the pages make), one
    message each, as a template: the Chinese pages draw each claim box with the statement's translation."""
    from babel.messages.pofile import write_po

    template = Catalog(project="Transformers, Executed", charset="utf-8")
    for statement, where in claim_statements().items():
        template.add(statement, locations=[(where, 0)])
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        write_po(f, template, width=0, omit_header=False)
    return len(template)


def runtime_messages(executed: Path = EXECUTED) -> dict[str, dict[str, str]] | None:
    """The words the executed notebooks show, by catalog: ``explorers`` (every template of
    ``lib.book.explorers.words`` and the chapter's own words each explorer shows, its ``terms``) and
    ``figures`` (every plain label of an SVG figure with two letters or more, each number as ``{0}``,
    …); each message -> where it was seen. ``None`` if no build has left executed notebooks."""
    from lib.book.explorers.explorer import EXPLORER_MIME
    from lib.book.explorers.words import WORDS, pattern_of
    from tools.i18n_ext.outputs import _SVG_TEXT

    paths = sorted(executed.rglob("*.ipynb")) if executed.is_dir() else []
    # notebooks written as read (a build that executed nothing) show nothing: no catalog from them
    notebooks = {path: json.loads(path.read_text(encoding="utf-8")) for path in paths}
    if not any(cell.get("outputs") for nb in notebooks.values() for cell in nb["cells"]):
        return None
    found: dict[str, dict[str, str]] = {"explorers": {str(t): "lib/book/explorers/words.py" for t in WORDS.values()}}
    found["figures"] = {}
    for path, nb in notebooks.items():
        where = path.relative_to(executed).as_posix()
        for cell in nb["cells"]:
            for output in cell.get("outputs", []):
                data = output.get("data", {})
                for word in data.get(EXPLORER_MIME, {}).get("terms", []):
                    if re.search(r"[A-Za-z]{2}", word):
                        found["explorers"].setdefault(pattern_of(word), where)
                svg = data.get("image/svg+xml")
                for match in _SVG_TEXT.finditer("".join(svg) if isinstance(svg, list) else svg or ""):
                    label = html.unescape(match[2]).strip()
                    if re.search(r"[A-Za-z]{2}", label):
                        found["figures"].setdefault(pattern_of(label), where)
    return found


def write_runtime_templates(out: Path = GETTEXT) -> list[str]:
    """The templates of :data:`RUNTIME_DOMAINS` (``explorers.pot``, ``figures.pot``), when a build has
    left executed notebooks; the names of those written."""
    from babel.messages.pofile import write_po

    found = runtime_messages()
    if found is None:
        print(f"tools.i18n: no executed notebooks in {EXECUTED}: run python -m tools.site first; the catalogs "
              f"{', '.join(RUNTIME_DOMAINS)} are left as they are", file=sys.stderr)  # fmt: skip
        for domain in RUNTIME_DOMAINS:  # no template: sphinx-intl leaves their catalogs alone
            (out / f"{domain}.pot").unlink(missing_ok=True)
        return []
    for domain, messages_ in found.items():
        template = Catalog(project="Transformers, Executed", charset="utf-8")
        for message, where in messages_.items():
            template.add(message, locations=[(where, 0)])
        out.mkdir(parents=True, exist_ok=True)
        with (out / f"{domain}.pot").open("wb") as f:
            write_po(f, template, width=0, omit_header=False)
    return list(found)


def extract() -> None:
    """Refresh the catalogs from the English sources: a gettext build, then ``sphinx-intl update``.

    Kept translations stay; a changed message comes back fuzzy or untranslated; a removed one is
    dropped. The build does not execute the notebooks (messages come from markdown only); the claim
    statements come from the seed sweep's ledger and the code of the pages it does not sweep.
    """
    subprocess.run(
        [sys.executable, "-m", "tools.site", "--gettext"],
        cwd=REPO,
        check=True,
    )
    write_statements_template()
    # The gettext build's myst-nb rewrote _build/jupyter_execute with notebooks as read (no outputs):
    # the executed notebooks again, from the execution cache of the last build.
    from tools.site import CACHE, export_executed

    if CACHE.is_dir():
        export_executed()
    write_runtime_templates()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "sphinx_intl",
            "update",
            "-p",
            str(GETTEXT),
            "-l",
            LANGUAGE,
            "-d",
            str(LOCALE),
            "-w",
            "0",
        ],
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
