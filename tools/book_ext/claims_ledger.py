"""The Claims appendix. A ``{claims-ledger}`` directive (`book/claims.md`) becomes two tables, claims
and checks, each with its count: chapter, statement, the values this build measured, held or not,
each linked to the place it was checked (the anchors of `claim_data`), and what the seed sweep
(`book/claims_sweep.json`, written by ``python -m tools.sweep``) recorded.
"""

from __future__ import annotations

import json
from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.util.docutils import SphinxDirective

from lib.book.claims import CHECK, CLAIM, format_value

from .chapters import CHAPTER_DOC, chapter_docs
from .claim_data import collected_claims
from .runtimes import runtime_users
from .words import words

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


class claims_placeholder(nodes.General, nodes.Element):
    """Becomes the Claims appendix: two tables, every claim and every check the build checked."""


class ClaimsLedger(SphinxDirective):
    """Two tables, the claims and the checks every page displayed, with the values this build measured."""

    has_content = False

    def run(self):
        runtime_users(self.env)[self.env.docname] = True
        self.env.note_dependency(SWEEP_FILE)  # the page is rebuilt when the sweep changes
        return [claims_placeholder()]


class FillClaimsLedger(SphinxPostTransform):
    """Replace the placeholder with the claims and checks this build checked (all notebooks have run by now)."""

    default_priority = 8  # before the reference resolvers, like myst-nb's own execution table

    def run(self, **kwargs) -> None:
        env, builder = self.env, self.app.builder
        for node in list(self.document.findall(claims_placeholder)):
            node.replace_self(self._claims_table(env, builder))

    def _claims_table(self, env, builder) -> nodes.Node:
        claims = collected_claims(env)
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


def setup(app: Sphinx) -> dict:
    app.add_node(claims_placeholder)
    app.add_directive("claims-ledger", ClaimsLedger)
    app.add_post_transform(FillClaimsLedger)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
