"""Measured run times. A page may write

- ``{chapter-runtime}`2``` : the time this build took to execute chapter 2 (`book/02_*.ipynb`),
  as measured by myst-nb while it ran the notebook ("1 min 24 s"); "—" if there is no chapter 2;
- ``{build-machine}`x```  : the machine that build ran on ("2 CPU cores, no GPU");
- a ``{chapter-runtimes}`` directive: a table of every chapter, linked, with its reading time
  (`reading_time`) and its measured time, and the totals.

Every chapter's page also says both on its first screen, under the line of lecture slides
(``p.chapter-time``).

Nothing is typed by hand. The numbers are filled in after every notebook has run (a post-transform),
and the pages that show them are rewritten whenever a notebook is executed again. A build that does
not execute notebooks says "not measured". The same numbers are written to
`_build/html/_static/chapter-runtimes.json` (the tests pick their cheapest chapter from it).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from .chapters import chapter_docs
from .reading_time import reading_minutes
from .words import WORDS, words

NO_CHAPTER = "—"
RUNTIMES_JSON = "chapter-runtimes.json"


class runtime_placeholder(nodes.Inline, nodes.TextElement):
    """Becomes the measured run time of chapter `chapter` (or the machine, for kind="machine")."""


class runtime_table_placeholder(nodes.General, nodes.Element):
    """Becomes the table of every chapter's measured run time."""


def runtime_users(env) -> dict[str, bool]:
    """The pages that show what this build measured (run times, the Claims appendix): written again
    whenever a notebook was executed."""
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
    runtime_users(env)[env.docname] = True
    return [runtime_placeholder("", "", chapter=number, kind="chapter")], []


def build_machine_role(name, rawtext, text, lineno, inliner, options=None, content=None):
    env = inliner.document.settings.env
    runtime_users(env)[env.docname] = True
    return [runtime_placeholder("", "", kind="machine")], []


class ChapterRuntimes(SphinxDirective):
    """A table: every chapter of the book (linked) and the time this build took to run it."""

    has_content = False
    option_spec = {"class": directives.class_option}

    def run(self):
        runtime_users(self.env)[self.env.docname] = True
        node = runtime_table_placeholder()
        node["classes"] += self.options.get("class", [])
        return [node]


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


def format_minutes(minutes: int | None, language: str = "en") -> str:
    """A reading time: "25 min", or "1 h 40 min" from an hour on."""
    w = WORDS[language]
    if minutes is None:
        return w["not measured"]
    hours, m = divmod(minutes, 60)
    return w["h min"].format(h=hours, m=m) if hours else w["minutes"].format(m=m)


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
        if env.docname in chapters.values():
            self._chapter_time(env, language)

    def _chapter_time(self, env, language: str) -> None:
        """On a chapter's first screen, under the line of lecture slides: how long the chapter takes
        to read and how long its code ran in this build."""
        section = next(iter(self.document.findall(nodes.section)), None)
        first = next((c for c in section.children if isinstance(c, nodes.paragraph)), None) if section else None
        if first is None:
            return
        text = WORDS[language]["chapter time"].format(
            read=format_minutes(reading_minutes(env, env.docname, language), language),
            run=format_seconds(measured_seconds(env, env.docname), language),
            machine=machine_description(language),
        )
        first.parent.insert(first.parent.index(first) + 1, nodes.paragraph(text, text, classes=["chapter-time"]))

    def _table(self, env, builder, chapters: dict[int, str], classes: list[str]) -> nodes.table:
        table = nodes.table(classes=["chapter-runtimes", *classes])
        group = nodes.tgroup(cols=3)
        table += group
        group += nodes.colspec(colwidth=64)
        group += nodes.colspec(colwidth=18)
        group += nodes.colspec(colwidth=18)

        def row(first, reading, second, bold=False):
            r = nodes.row()
            for content in (first, reading, second):
                para = nodes.paragraph()
                para += nodes.strong("", "", content) if bold else content
                r += nodes.entry("", para)
            return r

        head = nodes.thead()
        w = words(self.app.config)
        language = self.app.config.language if self.app.config.language in WORDS else "en"
        head += row(nodes.Text(w["Chapter"]), nodes.Text(w["Reading time"]), nodes.Text(w["Run time"]))
        body = nodes.tbody()
        total, complete, reading_total = 0.0, True, 0
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
            minutes = reading_minutes(env, docname, language)
            reading_total += minutes or 0
            body += row(
                link, nodes.Text(format_minutes(minutes, language)), nodes.Text(format_seconds(seconds, language))
            )
        body += row(
            nodes.Text(w["all chapters"].format(n=len(chapters))),
            nodes.Text(format_minutes(reading_total or None, language)),
            nodes.Text(format_seconds(total if complete and chapters else None, language)),
            bold=True,
        )
        group += head
        group += body
        return table


def rewrite_users_after_execution(app: Sphinx, env) -> list[str]:
    """Pages that show run times are written again whenever a notebook was executed."""
    executed = getattr(env, "nb_new_exec_data", False)
    return sorted(d for d in runtime_users(env) if d in env.found_docs) if executed else []


def purge(app: Sphinx, env, docname: str) -> None:
    runtime_users(env).pop(docname, None)


def merge(app: Sphinx, env, docnames, other) -> None:
    runtime_users(env).update({d: True for d in runtime_users(other) if d in docnames})


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
                "reading_minutes": reading_minutes(env, docname, app.config.language or "en"),
                "title": env.titles[docname].astext() if docname in env.titles else docname,
            }
            for number, docname in chapter_docs(env).items()
        },
    }
    out = Path(app.outdir, "_static", RUNTIMES_JSON)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.add_node(runtime_placeholder)
    app.add_node(runtime_table_placeholder)
    app.add_role("chapter-runtime", chapter_runtime_role)
    app.add_role("build-machine", build_machine_role)
    app.add_directive("chapter-runtimes", ChapterRuntimes)
    app.add_post_transform(FillRuntimes)
    app.connect("env-updated", rewrite_users_after_execution)
    app.connect("env-purge-doc", purge)
    app.connect("env-merge-info", merge)
    app.connect("build-finished", write_json)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True, "env_version": 2}
