"""The Chinese edition's catalogs: extract the messages, and check the translations.

The site's pages are translated with Sphinx's own gettext machinery: every paragraph, heading, list
item, table cell and exercise title of a page is one *message*; ``locale/zh_CN/LC_MESSAGES/<page>.po``
holds each message's Chinese translation; the Chinese build (``python -m tools.site``) reads them.

    python -m tools.i18n extract      # after an English edit: refresh every catalog (sphinx-intl)
    python -m tools.i18n check        # what is untranslated, fuzzy, or broken, page by page

The translations' checks are ``tools/i18n_checks.py``'s; the catalogs, where they are and how to
read them, ``tools/i18n_catalogs.py``'s; this module extracts the messages and runs the checks.
"""

from __future__ import annotations

import argparse
import ast
import html
import json
import re
import subprocess
import sys
from pathlib import Path

from babel.messages.catalog import Catalog

from tools.common import REPO, notebooks
from tools.i18n_catalogs import LANGUAGE, LOCALE, RUNTIME_DOMAINS, STATEMENTS_DOMAIN, VALUES_DOMAIN, catalogs
from tools.i18n_checks import glossary, page_problems

GETTEXT = REPO / "_build" / "gettext"
EXECUTED = REPO / "_build" / "jupyter_execute"  # the words of RUNTIME_DOMAINS are harvested from them


def unswept_claims(ledger: dict) -> dict[str, list[tuple[str, list[str]]]]:
    """The claims and checks on the pages the sweep does not run (e.g. the Performance appendix), page by
    page, each as its statement and the names of the values it records: read from their code, each
    ``lib.claim`` / ``lib.check`` call whose statement is a string literal (Python joins a literal split
    over lines into one), its values the keyword arguments it names."""
    swept = {entry.get("notebook") for entry in ledger["chapters"].values()}
    found: dict[str, list[tuple[str, list[str]]]] = {}
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
                    names = [keyword.arg for keyword in node.keywords if keyword.arg is not None]
                    found.setdefault(path.name, []).append((node.args[0].value, names))
    return found


def unswept_statements(ledger: dict) -> dict[str, list[str]]:
    """The statements of :func:`unswept_claims`, page by page."""
    return {page: [statement for statement, _ in claims] for page, claims in unswept_claims(ledger).items()}


def claim_value_names() -> dict[str, list[str]]:
    """Every claim statement the pages show -> the names of the values it records: the seed sweep's
    ledger (every name a seed recorded, numbers and other values alike), and the code of the pages it
    does not sweep. The labels of ``lib/book/claim_labels.json`` must name them all."""
    ledger = json.loads((REPO / "book" / "claims_sweep.json").read_text(encoding="utf-8"))
    found: dict[str, list[str]] = {}
    for entry in ledger["chapters"].values():
        for claim in entry.get("claims", []):
            names = found.setdefault(claim["statement"], [])
            names += [n for n in (*claim.get("values", {}), *claim.get("seen", {})) if n not in names]
    for claims in unswept_claims(ledger).values():
        for statement, recorded in claims:
            names = found.setdefault(statement, [])
            names += [n for n in recorded if n not in names]
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


def write_value_labels_template(out: Path = GETTEXT / f"{VALUES_DOMAIN}.pot") -> int:
    """The labels and units of the claims' values (``lib/book/claim_labels.json``), one message each
    (a label or unit said in several places is one message), as a template: the Chinese pages draw each
    claim box's values with their translations."""
    from babel.messages.pofile import write_po

    from lib.book.claim_labels import LABELS_FILE, labels_by_page

    template = Catalog(project="Transformers, Executed", charset="utf-8")
    for page, claims in labels_by_page().items():
        for names in claims.values():
            for label in names.values():
                for message in (label.label, label.unit):
                    if message and message not in template:
                        template.add(message, locations=[(f"lib/book/{LABELS_FILE}#{page}", 0)])
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        write_po(f, template, width=0, omit_header=False)
    return len(template)


def runtime_messages(executed: Path = EXECUTED) -> dict[str, dict[str, str]] | None:
    """The words the executed notebooks show, by catalog: ``explorers`` (every template of
    ``lib.book.explorers.words`` and the chapter's own words each explorer shows, its ``terms``) and
    ``figures`` (every plain label of an SVG figure with two letters or more, each number as ``{0}``,
    …, and those of the figures the pages show from files, ``book/figures/*.svg``); each message ->
    where it was seen. ``None`` if no build has left executed notebooks."""
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
    for path in sorted((REPO / "book" / "figures").glob("*.svg")):  # drawn by tools.figures, shown by pages
        for match in _SVG_TEXT.finditer(path.read_text(encoding="utf-8")):
            label = html.unescape(match[2]).strip()
            if re.search(r"[A-Za-z]{2}", label):
                found["figures"].setdefault(pattern_of(label), path.relative_to(REPO).as_posix())
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
    statements come from the seed sweep's ledger and the code of the pages it does not sweep, the
    labels of their values from ``lib/book/claim_labels.json``.
    """
    subprocess.run(
        [sys.executable, "-m", "tools.site", "--gettext"],
        cwd=REPO,
        check=True,
    )
    write_statements_template()
    write_value_labels_template()
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
