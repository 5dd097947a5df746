"""The book's Sphinx extension (loaded by `_config.yml`: `sphinx.local_extensions: {book_ext: tools}`).

**Measured run times.** A page may write

- ``{chapter-runtime}`2``` : the time this build took to execute chapter 2 (`book/02_*.ipynb`),
  as measured by myst-nb while it ran the notebook ("1 min 24 s"); "—" if there is no chapter 2;
- ``{build-machine}`x```  : the machine that build ran on ("2 CPU cores, no GPU");
- a ``{chapter-runtimes}`` directive: a table of every chapter, linked, with its measured time and
  the total.

Nothing is typed by hand. The numbers are filled in after every notebook has run (a post-transform),
and the pages that show them are rewritten whenever a notebook is executed again. A build that does
not execute notebooks says "not measured". The same numbers are written to
`_build/html/_static/chapter-runtimes.json` (the tests pick their cheapest chapter from it).

**The claims ledger.** Every chapter checks the claims of its prose with `lib.claim` (and
`lib.check`), which displays each one as a MIME bundle: a box (``text/html``), one line
(``text/plain``) and the claim as data (``application/vnd.transformers-book.claim+json``:
kind, statement, holds, values; see `lib/book/claims.py`). myst-nb renders every MIME type of a
bundle while it reads the notebook and warns about a type it does not know (a ``-W`` build fails),
whatever the render priority says; so this extension registers a myst-nb MIME renderer
(`ClaimDataRenderer`) that turns the data into a `claim_data` node beside the other renderings,
and `_config.yml` gives the type no render priority (``nb_mime_priority_overrides``), so the page
shows the box and never the data. While the build reads each executed notebook, those nodes are
collected (`collect_claims`: data, never printed text), and each claim gets an anchor,
``claim-N``, which the page's box carries. A ``{claims-ledger}`` directive (the Claims appendix,
`book/claims.md`) becomes two tables, claims and checks, each with its count: chapter, statement,
the values this build measured, held or not, each linked to the place it was checked, and what
the seed sweep (`book/claims_sweep.json`) recorded.

**Exercises are numbered per chapter.** sphinx-exercise numbers exercises across the whole book;
here they are renumbered within each chapter as ``N.k`` (chapter 2's first is "Exercise 2.1").

**Author–year bibliography.** The text cites "Vaswani et al. (2017)"; the References page labels
its entries the same way ("[Vaswani et al., 2017]"), sorted by author and year, instead of
pybtex's alpha labels ("[VSP+17]"): the bibliography style ``authoryear`` registered here
(`_config.yml` sets ``bibtex_default_style: authoryear``).

**Progress bars.** The kernels that the build starts get tqdm's own switch ``TQDM_DISABLE=1``: no live
bars, and `lib.train` prints one plain line per run instead (steps, seconds, last loss and metrics),
with no bar glyphs on the page. A live tqdm widget needs a running kernel; Jupyter and Colab readers still get one.

**The Colab button opens the Colab edition.** Every notebook page's Colab button opens
`colab/NN_slug.ipynb` (plain Jupyter markdown, written by `tools/editions.py`) at
`repository.branch`, the ref its setup cell installs `lib` from.

**Clean consoles.** Each page lists each of its scripts once (see `dedupe_scripts`): Sphinx 7 adds
two themes' inline scripts twice, and the second `const THEBE_JS_URL` is a console error.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Iterator
from math import ceil
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from lib.book.claims import CHECK, CLAIM, CLAIM_MIME, CheckedClaim, format_value  # what lib.claim displays
from lib.book.explorers.explorer import EXPLORER_MIME  # how an explorer was drawn

CHAPTER_DOC = re.compile(r"^book/(\d\d)_[^/]+$")
NOT_MEASURED = "not measured"
NO_CHAPTER = "—"
# What this extension writes itself, in each language of the site (the pages' prose is translated by
# Sphinx from locale/: tools/i18n.py).
WORDS = {
    "en": {
        "not measured": NOT_MEASURED, "s": "{s} s", "min": "{m} min {s:02d} s", "no GPU": "no GPU",
        "cores": "{n} CPU core{plural}, {gpu}", "Chapter": "Chapter", "Run time": "Run time",
        "all chapters": "All {n} chapters", "Claim": "Claim", "Check": "Check",
        "Measured in this build": "Measured in this build", "Held": "Held",
        "Held on seeds": "Held on seeds (range of values; the seed closest to failing)", "not swept": "not swept",
        "worst": "closest to failing: seed {seed}, {comparison}, margin {margin}",
        "no sweep entry": "no sweep entry",
        "no claims": "This build executed no notebook, so it checked no claim.",
        "Claims caption": "Claims ({n}): the findings of the chapters' experiments",
        "Checks caption": "Checks ({n}): identities and integrity checks, whose outcome is known before the run",
        "summary": "In the build that made this site, {held} of {total} claims held, and {checks_held} of {checks}"
        " checks (identities and integrity checks, counted apart), in {pages} pages.",
        "sweep": " Over the seed sweep ({seeds} seeds per page, run with ",
        "sweep end": "), {held} of the {total} claims and checks of the swept pages held on every seed.",
    },
    "zh_CN": {
        "not measured": "未测量", "s": "{s} 秒", "min": "{m} 分 {s:02d} 秒", "no GPU": "无 GPU",
        "cores": "{n} 个 CPU 核心，{gpu}", "Chapter": "章", "Run time": "运行时间",
        "all chapters": "全部 {n} 章", "Claim": "论断", "Check": "核验",
        "Measured in this build": "本次构建的测量值", "Held": "成立",
        "Held on seeds": "成立的种子数（取值范围；最接近不成立的种子）", "not swept": "未扫描", "no sweep entry": "无扫描记录",
        "worst": "最接近不成立：种子 {seed}，{comparison}，余量 {margin}",
        "no claims": "本次构建没有执行任何笔记本，因此没有检验任何论断。",
        "Claims caption": "论断（{n}）：各章实验的发现",
        "Checks caption": "核验（{n}）：恒等式与完整性检查，其结果在运行之前即已确定",
        "summary": "在生成本站的构建中，{total} 条论断中有 {held} 条成立，{checks} 项核验（恒等式与完整性检查，"
        "单独计数）中有 {checks_held} 项成立，共 {pages} 个页面。",
        "sweep": "在多种子扫描中（每页 {seeds} 个种子，用 ",
        "sweep end": " 运行），被扫描页面的 {total} 条论断与核验中，有 {held} 条在每个种子上都成立。",
    },
}  # fmt: skip


def words(config) -> dict[str, str]:
    """`WORDS` in the build's language (English for any language the site has no words for)."""
    return WORDS.get(getattr(config, "language", None) or "en", WORDS["en"])


RUNTIMES_JSON = "chapter-runtimes.json"


SWEEP_FILE = "book/claims_sweep.json"  # written by tools/sweep.py


def read_sweep(path: Path) -> dict[str, dict]:
    """The seed sweep by chapter number ("04"), each claim keyed by (statement, occurrence in the chapter)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    sweep = {}
    for number, entry in data.get("chapters", {}).items():
        seen: dict[str, int] = {}
        keyed: dict = {"seeds": entry["seeds"]}
        for claim in entry["claims"]:
            occurrence = seen.get(claim["statement"], 0)
            seen[claim["statement"]] = occurrence + 1
            keyed[claim["statement"], occurrence] = claim
        sweep[number] = keyed
    return sweep


def _span(low: float, high: float) -> str:
    """``0.95–0.99``, or one number if every seed measured the same."""

    def short(x: float) -> str:
        return f"{x:.3g}" if abs(x) < 1e5 else f"{x:.2e}"

    return short(low) if short(low) == short(high) else f"{short(low)}–{short(high)}"


def over_seeds_text(found: dict) -> str:
    """A claim's values over the sweep's seeds: ``acc 0.91–0.97; ok True; loss 0.1–0.2, nan``.

    Numbers as their range (`values`), the other values seen (`seen`: bools, strings, null) listed.
    """
    seen = found.get("seen", {})
    parts = []
    for name in dict.fromkeys([*found["values"], *seen]):
        shown = [_span(*found["values"][name])] if name in found["values"] else []
        shown += [format_value(value) for value in seen.get(name, [])]
        parts.append(f"{name} {', '.join(shown)}")
    return "; ".join(parts)


def worst_text(worst: dict, w: dict[str, str]) -> str:
    """The seed closest to failing a claim: ``closest to failing: seed 7, lowest > 0.9, margin 0.0123``."""
    return w["worst"].format(seed=worst["seed"], comparison=worst["comparison"], margin=f"{worst['margin']:.3g}")


class runtime_placeholder(nodes.Inline, nodes.TextElement):
    """Becomes the measured run time of chapter `chapter` (or the machine, for kind="machine")."""


class runtime_table_placeholder(nodes.General, nodes.Element):
    """Becomes the table of every chapter's measured run time."""


def _users(env) -> dict[str, bool]:
    if not hasattr(env, "book_runtime_users"):
        env.book_runtime_users = {}
    return env.book_runtime_users


def chapter_runtime_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    try:
        number = int(text.strip())
    except ValueError:
        msg = inliner.reporter.error(f"{{chapter-runtime}} needs a chapter number, got {text!r}", line=lineno)
        return [inliner.problematic(rawtext, rawtext, msg)], [msg]
    _users(env)[env.docname] = True
    return [runtime_placeholder("", "", chapter=number, kind="chapter")], []


def build_machine_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    _users(env)[env.docname] = True
    return [runtime_placeholder("", "", kind="machine")], []


class ChapterRuntimes(SphinxDirective):
    """A table: every chapter of the book (linked) and the time this build took to run it."""

    has_content = False
    option_spec = {"class": directives.class_option}

    def run(self):
        _users(self.env)[self.env.docname] = True
        node = runtime_table_placeholder()
        node["classes"] += self.options.get("class", [])
        return [node]


def chapter_docs(env) -> dict[int, str]:
    """Chapter number -> docname, for every chapter in this build."""
    found = {}
    for docname in sorted(env.found_docs):
        m = CHAPTER_DOC.match(docname)
        if m:
            found.setdefault(int(m.group(1)), docname)
    return found


def measured_seconds(env, docname: str) -> float | None:
    data = (getattr(env, "nb_metadata", {}).get(docname) or {}).get("exec_data") or {}
    if not data.get("succeeded") or data.get("runtime") is None:
        return None
    return float(data["runtime"])


def format_seconds(seconds: float | None, language: str = "en") -> str:
    w = WORDS[language]
    if seconds is None:
        return w["not measured"]
    seconds = round(seconds)
    if seconds < 60:
        return w["s"].format(s=max(seconds, 1))
    minutes, s = divmod(seconds, 60)
    return w["min"].format(m=minutes, s=s)


def machine_description(language: str = "en") -> str:
    cores = os.cpu_count() or 1
    gpu = WORDS[language]["no GPU"]
    try:
        import torch  # the book's environment has it; only asked when a page uses {build-machine}

        if torch.cuda.is_available():
            gpu = f"GPU: {torch.cuda.get_device_name(0)}"
    except Exception:  # noqa: BLE001 - a description, never a build failure
        pass
    return WORDS[language]["cores"].format(n=cores, plural="s" if cores != 1 else "", gpu=gpu)


class FillRuntimes(SphinxPostTransform):
    """Replace the placeholders with what this build measured (all notebooks have run by now)."""

    default_priority = 8  # before the reference resolvers, like myst-nb's own execution table

    def run(self, **kwargs) -> None:
        env, builder = self.env, self.app.builder
        language = self.app.config.language if self.app.config.language in WORDS else "en"
        chapters = chapter_docs(env)
        for node in list(self.document.findall(runtime_placeholder)):
            if node["kind"] == "machine":
                text = machine_description(language)
            elif node["chapter"] in chapters:
                text = format_seconds(measured_seconds(env, chapters[node["chapter"]]), language)
            else:
                text = NO_CHAPTER
            node.replace_self(nodes.inline(text, text, classes=["chapter-runtime"]))
        for node in list(self.document.findall(runtime_table_placeholder)):
            node.replace_self(self._table(env, builder, chapters, node["classes"]))
        for node in list(self.document.findall(claims_placeholder)):
            node.replace_self(self._claims_table(env, builder))

    def _claims_table(self, env, builder) -> nodes.Node:
        claims = _claims(env)
        w = words(self.app.config)
        if not claims:
            para = nodes.paragraph()
            para += nodes.emphasis("", w["no claims"])
            return para
        sweep = read_sweep(Path(env.srcdir, SWEEP_FILE))
        order = {doc: number for number, doc in chapter_docs(env).items()}
        docs = sorted(claims, key=lambda d: (order.get(d, 99), d))

        def row(cells, bold=False):
            r = nodes.row()
            for content in cells:
                para = nodes.paragraph()
                para += nodes.strong("", "", content) if bold else content
                r += nodes.entry("", para)
            return r

        rows: dict[str, list[nodes.row]] = {CLAIM: [], CHECK: []}
        tally = {CLAIM: [0, 0], CHECK: [0, 0]}  # kind -> [held, total] in this build
        swept = [0, 0]  # claims and checks of swept pages: [held on every seed, total]
        for docname in docs:
            title = env.titles[docname].astext() if docname in env.titles else docname
            try:
                uri = builder.get_relative_uri(env.docname, docname)
            except Exception:  # noqa: BLE001 - builders without URIs
                uri = docname
            m = CHAPTER_DOC.match(docname)
            # the sweep keys a chapter by its number ("04"), an appendix by its page name ("distributed")
            key = m.group(1) if m else Path(docname).name
            entry = sweep.get(key)
            seen: dict[str, int] = {}
            for claim in claims[docname]:
                kind = claim.get("kind", CLAIM)
                tally[kind][0] += claim["held"]
                tally[kind][1] += 1
                occurrence = seen.get(claim["statement"], 0)
                seen[claim["statement"]] = occurrence + 1
                # a chapter by its number (a narrow column: the statement gets the width), an appendix by its title
                chapter = nodes.reference("", m.group(1).lstrip("0") if m else title, internal=True, refuri=uri)
                statement = nodes.reference(
                    "", claim.get("shown", claim["statement"]), internal=True, refuri=f"{uri}#{claim['anchor']}"
                )
                values = nodes.literal(claim["values"], claim["values"]) if claim["values"] else nodes.Text("")
                over_seeds = nodes.Text(w["not swept"] if key not in sweep and m is None else "—")
                if entry is not None:
                    found = entry.get((claim["statement"], occurrence))
                    if found is None:
                        over_seeds = nodes.Text(w["no sweep entry"])
                    else:
                        held_on, n = len(found["held"]), len(entry["seeds"])
                        swept[0] += held_on == n
                        swept[1] += 1
                        over_seeds = nodes.inline()
                        over_seeds += nodes.strong("", f"{held_on}/{n}")
                        ranges = over_seeds_text(found)
                        if ranges:
                            over_seeds += nodes.Text(" · ")
                            over_seeds += nodes.literal(ranges, ranges)
                        if "worst" in found:
                            over_seeds += nodes.Text(" · ")
                            over_seeds += nodes.inline("", worst_text(found["worst"], w), classes=["claim-worst-seed"])
                cells = [chapter, statement, values, nodes.Text("✔" if claim["held"] else "✘"), over_seeds]
                rows[kind].append(row(cells))
        summary = nodes.paragraph()
        (held, total), (checks_held, checks) = tally[CLAIM], tally[CHECK]
        text = w["summary"].format(held=held, total=total, checks_held=checks_held, checks=checks, pages=len(docs))
        if swept[1]:
            seeds = sorted({n for e in sweep.values() for n in [len(e["seeds"])]})
            text += w["sweep"].format(seeds="/".join(map(str, seeds)))
        summary += nodes.Text(text)
        if swept[1]:
            summary += nodes.literal("python -m tools.sweep", "python -m tools.sweep")
            summary += nodes.Text(w["sweep end"].format(held=swept[0], total=swept[1]))
        summary["classes"].append("claims-summary")
        wrapper = nodes.container("", summary, classes=["claims-ledger-wrapper"])
        captions = {CLAIM: w["Claims caption"].format(n=total), CHECK: w["Checks caption"].format(n=checks)}
        for kind, heading in ((CLAIM, w["Claim"]), (CHECK, w["Check"])):
            if not rows[kind]:
                continue
            # a captioned table needs an id (Sphinx warns otherwise): #claims-ledger-claims, #claims-ledger-checks
            table = nodes.table(classes=["claims-ledger"], ids=[f"claims-ledger-{kind.lower()}s"])
            table += nodes.title(captions[kind], captions[kind])
            group = nodes.tgroup(cols=5)
            table += group
            for width in (12, 37, 22, 7, 22):  # as _static/book.css sets them
                group += nodes.colspec(colwidth=width)
            head = nodes.thead()
            headings = (w["Chapter"], heading, w["Measured in this build"], w["Held"], w["Held on seeds"])
            head += row([nodes.Text(t) for t in headings])
            body = nodes.tbody()
            body.extend(rows[kind])
            group += head
            group += body
            wrapper += table
        return wrapper

    def _table(self, env, builder, chapters: dict[int, str], classes: list[str]) -> nodes.table:
        table = nodes.table(classes=["chapter-runtimes", *classes])
        group = nodes.tgroup(cols=2)
        table += group
        group += nodes.colspec(colwidth=80)
        group += nodes.colspec(colwidth=20)

        def row(first, second, bold=False):
            r = nodes.row()
            for content in (first, second):
                para = nodes.paragraph()
                para += nodes.strong("", "", content) if bold else content
                r += nodes.entry("", para)
            return r

        head = nodes.thead()
        w = words(self.app.config)
        language = self.app.config.language if self.app.config.language in WORDS else "en"
        head += row(nodes.Text(w["Chapter"]), nodes.Text(w["Run time"]))
        body = nodes.tbody()
        total, complete = 0.0, True
        for docname in chapters.values():
            title = env.titles[docname].astext() if docname in env.titles else docname
            try:
                uri = builder.get_relative_uri(env.docname, docname)
            except Exception:  # noqa: BLE001 - builders without URIs (e.g. linkcheck)
                uri = docname
            link = nodes.reference("", title, internal=True, refuri=uri)
            seconds = measured_seconds(env, docname)
            complete &= seconds is not None
            total += seconds or 0.0
            body += row(link, nodes.Text(format_seconds(seconds, language)))
        body += row(
            nodes.Text(w["all chapters"].format(n=len(chapters))),
            nodes.Text(format_seconds(total if complete and chapters else None, language)),
            bold=True,
        )
        group += head
        group += body
        return table


class claims_placeholder(nodes.General, nodes.Element):
    """Becomes the Claims appendix: two tables, every claim and every check the build checked."""


def _claims(env) -> dict[str, list[dict]]:
    if not hasattr(env, "book_claims"):
        env.book_claims = {}
    return env.book_claims


class claim_data(nodes.General, nodes.Element):
    """A claim's data (``claim``: the bundle's JSON object) beside its box and its line in a page's
    MIME bundle; never rendered (no MIME priority: the page shows the box)."""


class explorer_data(nodes.General, nodes.Element):
    """How an explorer was drawn (``call``: the bundle's JSON object, ``EXPLORER_MIME``) beside its HTML;
    never rendered. The site in another language draws the explorer again from it (``i18n_ext.py``)."""


class ClaimDataRenderer:
    """A myst-nb MIME renderer (its `MimeRenderPlugin` protocol) for `lib.claim`'s data: a `claim_data`
    node; and for an explorer's (how it was drawn): an `explorer_data` node.

    Without it, myst-nb warns "skipping unknown output mime type" for every claim (while reading the
    notebook, before any render priority is consulted) and drops the data.
    """

    mime_priority_overrides = ()  # _config.yml's nb_mime_priority_overrides keeps the type unrendered

    @staticmethod
    def handle_mime(renderer, data, inline: bool):
        if data.mime_type == EXPLORER_MIME:
            return [] if inline else [explorer_data("", call=dict(data.content))]
        if data.mime_type != CLAIM_MIME:
            return None
        return [] if inline else [claim_data("", claim=dict(data.content))]


def register_claim_renderer() -> None:
    """Add `ClaimDataRenderer` to myst-nb's MIME renderers.

    myst-nb finds renderers only through the entry point group ``myst_nb.mime_renderers``, read
    once into a cached list (`myst_nb.core.render.load_mime_renders`); the book's tools are not an
    installed package, so the renderer joins that list here.
    """
    from myst_nb.core.render import load_mime_renders

    renderers = load_mime_renders()
    if ClaimDataRenderer not in renderers:
        renderers.append(ClaimDataRenderer)


def collect_claims(app: Sphinx, doctree: nodes.document) -> None:
    """Read the claims `lib.claim` displayed in this page's cell outputs (their data); anchor each one."""
    env = app.env
    found = []
    for node in doctree.findall(claim_data):
        claim = CheckedClaim.from_data(node["claim"])
        anchor = f"claim-{len(found) + 1}"
        for target in _anchor_nodes(node):
            target["ids"].append(anchor)
        found.append(
            {
                "kind": claim.kind,
                "statement": claim.statement,
                "shown": node.get("statement_shown", claim.statement),  # in the page's language
                "values": claim.shown_values,
                "held": claim.holds,
                "anchor": anchor,
            }
        )
    if found:
        _claims(env)[env.docname] = found
    else:
        _claims(env).pop(env.docname, None)


def _anchor_nodes(data: claim_data) -> list[nodes.Element]:
    """The nodes that carry the anchor of the claim whose data is `data`.

    myst-nb keeps a displayed output's renderings side by side in a "mime bundle" (one container
    per MIME type) until a post-transform picks one per builder (the HTML box on the site): every
    rendering but the data gets the anchor, so the one kept has it.
    """
    rendering = data.parent
    bundle = rendering.parent if rendering is not None else None
    if bundle is None or bundle.get("nb_element") != "mime_bundle":
        return []
    return [
        alternative.children[0]
        for alternative in bundle.children
        if alternative.children and alternative.get("mime_type") != CLAIM_MIME
    ]


# nbgrader's solution markers: they tell the student-version tools where a solution starts and ends;
# a reader of the site only needs the solution.
SOLUTION_MARKER = re.compile(r"^[ \t]*### (BEGIN|END) SOLUTION[ \t]*\n?", re.MULTILINE)


def hide_solution_markers(app: Sphinx, doctree: nodes.document) -> None:
    """Drop the ``### BEGIN SOLUTION`` / ``### END SOLUTION`` lines from the code cells the page shows."""
    for block in list(doctree.findall(nodes.literal_block)):
        if not _inside(block, "cell_input") or not SOLUTION_MARKER.search(block.astext()):
            continue
        code = SOLUTION_MARKER.sub("", block.astext())
        block.clear()
        block += nodes.Text(code)
        block.rawsource = code


def _inside(node: nodes.Node, css_class: str) -> bool:
    parent = node.parent
    while parent is not None:
        if css_class in parent.get("classes", []):
            return True
        parent = parent.parent
    return False


class ClaimsLedger(SphinxDirective):
    """Two tables, the claims and the checks every page displayed, with the values this build measured."""

    has_content = False

    def run(self):
        _users(self.env)[self.env.docname] = True
        self.env.note_dependency(SWEEP_FILE)  # the page is rebuilt when the sweep changes
        return [claims_placeholder()]


def rewrite_users_after_execution(app: Sphinx, env) -> list[str]:
    """Pages that show run times are written again whenever a notebook was executed."""
    executed = getattr(env, "nb_new_exec_data", False)
    return sorted(d for d in _users(env) if d in env.found_docs) if executed else []


def purge(app: Sphinx, env, docname: str) -> None:
    _users(env).pop(docname, None)
    _claims(env).pop(docname, None)


def merge(app: Sphinx, env, docnames, other) -> None:
    _users(env).update({d: True for d in _users(other) if d in docnames})
    _claims(env).update({d: c for d, c in _claims(other).items() if d in docnames})


def number_per_chapter(app: Sphinx, env) -> list[str]:
    """Exercise k and figure k of chapter N are "Exercise N.k" and "Figure N.k" (sphinx-exercise counts
    exercises across the whole book, Sphinx figures page by page).

    Runs after Sphinx has assigned its figure numbers (`env-get-updated`, connected after the
    built-in collector), and rewrites the numbers of every page in place: numbered in the order
    Sphinx counted them, i.e. the page's reading order. A {numref} to a figure then reads "Figure 4.2"
    (图 4.2 on the Chinese site: ``numfig_format`` from ``locale/zh_CN/site.yml``).
    """
    for docname, by_type in env.toc_fignumbers.items():
        m = CHAPTER_DOC.match(docname)
        prefix = (int(m.group(1)),) if m else ()
        for kind in ("exercise", "figure"):
            numbers = by_type.get(kind)
            if not numbers:
                continue
            for k, key in enumerate(sorted(numbers, key=numbers.get), start=1):
                numbers[key] = (*prefix, k)
    return []


def alt_from_caption(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A figure's image is described by its caption (what a screen reader reads, and what shows if the
    image cannot): myst-nb gives an output's image its file path as ``alt``."""
    for figure in doctree.findall(nodes.figure):
        captions = list(figure.findall(nodes.caption))
        if not captions:
            continue
        text = " ".join(captions[0].astext().split())
        for image in figure.findall(nodes.image):
            if not image.get("alt") or "_images/" in image.get("alt", "") or image["alt"] == image.get("uri"):
                image["alt"] = text


def write_json(app: Sphinx, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    env = app.env
    data = {
        "machine": machine_description(),
        "chapters": {
            docname: {
                "number": number,
                "seconds": measured_seconds(env, docname),
                "title": env.titles[docname].astext() if docname in env.titles else docname,
            }
            for number, docname in chapter_docs(env).items()
        },
    }
    out = Path(app.outdir, "_static", RUNTIMES_JSON)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def _person_text(name: str) -> str:
    """A name part as plain text: "{Stanford CS224N}" -> "Stanford CS224N" (LaTeX braces, accents)."""
    from pybtex.backends.plaintext import Backend
    from pybtex.richtext import Text

    return Text.from_latex(name).render(Backend())


def sort_entries(entries: list) -> list:
    """pybtex entries in the order of the References page: by author, year and title."""
    from pybtex.style.sorting.author_year_title import SortingStyle

    return list(SortingStyle().sort(entries))


def author_year_labels(sorted_entries) -> Iterator[str]:
    """The References page's labels, "Vaswani et al., 2017", for entries in `sort_entries` order.

    Two entries with the same authors and year get "2020a", "2020b" in that order. tools/myst.py
    labels the Colab editions' citations with this same function.
    """
    seen: dict[str, int] = {}
    labels = []
    for entry in sorted_entries:
        people = entry.persons.get("author") or entry.persons.get("editor") or []
        names = [_person_text(" ".join(p.prelast_names + p.last_names)) for p in people]
        if not names:
            who = entry.fields.get("title", entry.key)
        elif len(names) == 1:
            who = names[0]
        elif len(names) == 2:
            who = f"{names[0]} and {names[1]}"
        else:
            who = f"{names[0]} et al."
        label = f"{who}, {entry.fields.get('year', 'n.d.')}"
        labels.append(label)
        seen[label] = seen.get(label, 0) + 1
    suffix: dict[str, int] = {}
    for label in labels:  # two "Wang et al., 2020": 2020a, 2020b
        if seen[label] > 1:
            suffix[label] = suffix.get(label, 0) + 1
            yield label + "abcdefghijklmnopqrstuvwxyz"[suffix[label] - 1]
        else:
            yield label


def _register_author_year_style() -> None:
    """The pybtex style `authoryear`: labels "Vaswani et al., 2017", sorted by author and year."""
    from pybtex.plugin import register_plugin
    from pybtex.style.formatting.unsrt import Style as UnsrtStyle
    from pybtex.style.labels import BaseLabelStyle
    from pybtex.style.sorting.author_year_title import SortingStyle

    class AuthorYearLabels(BaseLabelStyle):
        def format_labels(self, sorted_entries):
            return author_year_labels(sorted_entries)

    class AuthorYearStyle(UnsrtStyle):
        default_label_style = AuthorYearLabels
        default_sorting_style = SortingStyle

    register_plugin("pybtex.style.formatting", "authoryear", AuthorYearStyle, force=True)


def _pybtex_plugins_looked_up_once() -> None:
    """pybtex finds each plugin (a name style, a label style, a backend) among the entry points of
    every installed package, and does so again at every citation the build resolves: 171 scans of all
    the packages' metadata, about 1 s of each build that writes pages. The packages do not change during a
    build, so each lookup is made once (the plugins registered at run time are still looked up first)."""
    import pybtex.plugin

    if not hasattr(pybtex.plugin.entry_points, "cache_info"):
        pybtex.plugin.entry_points = functools.cache(pybtex.plugin.entry_points)


def dedupe_scripts(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """Each page lists each script once.

    Sphinx 7 adds an inline script registered after the builder started (sphinx-thebe's
    `const THEBE_JS_URL = ...`, sphinx-togglebutton's selector) twice, once with filename None and
    once with "": the second `const` is a SyntaxError in every page's console (fixed in Sphinx 8,
    sphinx-doc/sphinx#13402; Jupyter Book 1 needs Sphinx 7).
    """
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for js in scripts:
        key = (str(js.filename or ""), tuple(sorted((k, str(v)) for k, v in js.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(js)
    scripts[:] = unique


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


_TRAILING_PUNCTUATION = re.compile(r"[.,;:!?)\]，。；：！？）、]+")


def keep_math_with_its_punctuation(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """Inline math and the punctuation right after it stay on one line ("$T$." never breaks before the
    full stop): both go into one ``<span class="math-nowrap">`` (``_static/book.css``), in every language."""
    for math in list(doctree.findall(nodes.math)):
        parent = math.parent
        if parent is None:
            continue
        index = parent.index(math)
        after = parent[index + 1] if index + 1 < len(parent) else None
        if not isinstance(after, nodes.Text) or not (m := _TRAILING_PUNCTUATION.match(after.astext())):
            continue
        wrapper = nodes.inline("", "", classes=["math-nowrap"])
        parent.replace(math, wrapper)
        wrapper += math
        wrapper += nodes.Text(m[0])
        rest = after.astext()[len(m[0]) :]
        if rest:
            parent.replace(after, nodes.Text(rest))
        else:
            parent.remove(after)


def accessible_bibliography(app: Sphinx, pagename, templatename, context, doctree) -> None:
    """The References page's entries are the items of their list: docutils marks the list
    ``role="list"`` and each entry ``role="doc-biblioentry"``, a role that is deprecated and not a list
    item (axe-core: aria-required-children, critical)."""
    if "body" in context and 'role="doc-biblioentry"' in context["body"]:
        context["body"] = context["body"].replace('role="doc-biblioentry"', 'role="listitem"')


PHONE_LABEL_PX = 9  # the smallest label a figure may show on a phone before it stops shrinking
_IMG = re.compile(r'<img\b([^>]*?)\bsrc="((?:\.\./)*_images/[^"]+\.svg)"([^>]*)/?>')
_VIEWBOX_WIDTH = re.compile(r'<svg\b[^>]*\bviewBox="[-\d.]+ [-\d.]+ ([\d.]+) [\d.]+"')
_FONT_SIZE = re.compile(r'font-size[:=]\s*"?([\d.]+)(?:px)?')


def phone_width(svg: str) -> float | None:
    """The width, in CSS px, below which a figure's smallest label would be under
    :data:`PHONE_LABEL_PX` (its labels are sized in the units of its viewBox)."""
    width = _VIEWBOX_WIDTH.search(svg)
    sizes = [float(size) for size in _FONT_SIZE.findall(svg) if float(size) > 0]
    if width is None or not sizes:
        return None
    return float(width[1]) * PHONE_LABEL_PX / min(sizes)


def site_pages(app: Sphinx) -> list[Path]:
    """The HTML pages of this build: those of its output folder, but not the other language's site
    that ``tools.site`` copies into it (``_build/html/zh``), maybe while this build is finishing."""
    from i18n_ext import LANGUAGES

    outdir = Path(app.outdir)
    others = [outdir / folder for folder, _, _ in LANGUAGES.values() if folder]
    return [page for page in outdir.rglob("*.html") if not any(page.is_relative_to(other) for other in others)]


def figures_for_phones(app: Sphinx, exception: Exception | None) -> None:
    """After an HTML build: every SVG figure of every page says how narrow it may get
    (``--book-min-width``, which ``_static/book.css`` uses on phones), and is a link to itself, so that a
    figure too wide for a phone opens full size on a tap."""
    if exception is not None or app.builder.format != "html":
        return
    images = Path(app.outdir, "_images")
    widths: dict[str, float | None] = {}

    def figure(m: re.Match) -> str:
        name = m[2].rsplit("/", 1)[1]
        if name not in widths:
            path = images / name
            widths[name] = phone_width(path.read_text(encoding="utf-8")) if path.is_file() else None
        style = f' style="--book-min-width: {ceil(widths[name])}px"' if widths[name] else ""  # never < 9 px
        tag = m[0].rstrip(">").rstrip().rstrip("/").rstrip()
        return f'<a class="book-figure-link" href="{m[2]}">{tag}{style} /></a>'

    for page in site_pages(app):
        text = page.read_text(encoding="utf-8")
        changed = _IMG.sub(figure, text)
        if changed != text:
            page.write_text(changed, encoding="utf-8")


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


# Sphinx resolves each {numref} by unpickling its target page's whole doctree (to find the figure's
# node), and a chapter's doctree holds its outputs: a page with ten references read its doctree ten
# times (about 18 s of a build). Each page's doctree is read once per build here; numref only reads it.
_NUMREF_DOCTREES: dict[int, dict[str, nodes.document]] = {}


def _resolve_numref_xref(self, env, *args, **kwargs):
    from sphinx.environment import BuildEnvironment

    doctrees = _NUMREF_DOCTREES.setdefault(id(env), {})

    def read(docname: str) -> nodes.document:
        if docname not in doctrees:
            doctrees[docname] = BuildEnvironment.get_doctree(env, docname)
        return doctrees[docname]

    env.get_doctree = read
    try:
        return _sphinx_resolve_numref_xref(self, env, *args, **kwargs)
    finally:
        del env.get_doctree


def _sphinx_resolve_numref_xref(self, env, *args, **kwargs):
    """Sphinx's own resolver (kept on the wrapper, so that a second import of this module finds it)."""
    from sphinx.domains.std import StandardDomain

    resolve = StandardDomain._resolve_numref_xref
    return getattr(resolve, "sphinx_original", resolve)(self, env, *args, **kwargs)


def forget_numref_doctrees(app: Sphinx, exception: Exception | None) -> None:
    _NUMREF_DOCTREES.pop(id(app.env), None)


def one_page_without_search(app: Sphinx) -> None:
    """The one-page book of the PDF (``singlehtml``) has no search page: no search index to build."""
    if app.builder.name == "singlehtml":
        app.builder.search = False


def visit_folded_cell(self, node) -> None:
    """A folded cell (``hide-input``) as myst-nb draws it, but its prompt named by what it shows ("Show
    code cell source"), not by an aria-label that says something else ("Toggle hidden content"; axe-core:
    label-content-name-mismatch)."""
    from html import escape

    self.body.append(f'<details class="admonition hide {" ".join(node["classes"])}">\n<summary>\n')
    self.body.append(f'<p class="collapsed admonition-title">{escape(node["prompt_show"])}</p>\n')
    self.body.append(f'<p class="expanded admonition-title">{escape(node["prompt_hide"])}</p>\n</summary>\n')


def visit_folded_for_print(self, node) -> None:
    """A folded cell's part in the one-page book of the PDF: left out, as the site first shows it."""
    self.body.append('<div class="book-folded" hidden>\n')


def depart_folded_for_print(self, node) -> None:
    self.body.append("</div>\n")


def setup(app: Sphinx) -> dict:
    # For every kernel this build starts (they inherit the environment): see lib.training.loop.
    os.environ.setdefault("TQDM_DISABLE", "1")
    app.setup_extension("i18n_ext")  # the Chinese edition: tools/i18n_ext.py
    app.setup_extension("notebook_downloads")  # every chapter to run at home: tools/notebook_downloads.py
    _register_author_year_style()
    _pybtex_plugins_looked_up_once()
    register_claim_renderer()
    app.add_node(runtime_placeholder)
    app.add_node(runtime_table_placeholder)
    app.add_role("chapter-runtime", chapter_runtime_role)
    from sphinx.domains.std import StandardDomain

    current = StandardDomain._resolve_numref_xref
    _resolve_numref_xref.sphinx_original = getattr(current, "sphinx_original", current)
    StandardDomain._resolve_numref_xref = _resolve_numref_xref
    app.connect("build-finished", forget_numref_doctrees)
    app.connect("builder-inited", one_page_without_search)
    app.add_role("build-machine", build_machine_role)
    app.add_directive("chapter-runtimes", ChapterRuntimes)
    app.add_node(claims_placeholder)
    # myst-nb draws a folded cell (`hide-input`) for the `html` builder only; the one-page book of
    # the PDF (tools/pdf.py) is built by `singlehtml`, which would fail on the node: there, what the
    # site folds is left out (the page prints as the site first shows it, with no "show" prompt).
    from myst_nb.sphinx_ import HideCodeCellNode, depart_HideCellInput

    app.add_node(HideCodeCellNode, override=True, html=(visit_folded_cell, depart_HideCellInput),
                 singlehtml=(visit_folded_for_print, depart_folded_for_print))  # fmt: skip
    app.add_node(claim_data)
    app.add_node(explorer_data)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.connect("doctree-read", collect_claims)
    app.connect("doctree-read", hide_solution_markers)
    app.connect("env-get-updated", number_per_chapter, priority=900)
    app.connect("doctree-resolved", alt_from_caption)
    app.connect("doctree-resolved", keep_math_with_its_punctuation)
    app.add_post_transform(FillRuntimes)
    app.connect("env-updated", rewrite_users_after_execution)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("build-finished", write_json)
    app.connect("html-page-context", dedupe_scripts)
    # After sphinx-book-theme adds its launch buttons (priority 501).
    app.connect("html-page-context", colab_button_opens_the_edition, priority=502)
    app.connect("html-page-context", link_the_book_pdf, priority=502)
    app.connect("html-page-context", accessible_bibliography)
    app.connect("build-finished", figures_for_phones)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
