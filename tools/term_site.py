"""A term's site without solutions: a build option, and the Sphinx extension that makes it work.

    python -m tools.term_site                    # writes _config.term.yml (git-ignored is fine)
    jupyter-book build . -W -n --keep-going --config _config.term.yml

``_config.term.yml`` is ``_config.yml`` with sphinx-exercise's ``hide_solutions: true`` and this
module as a local extension. ``hide_solutions`` alone removes every ``{solution}`` block but crashes
the build on the gated solutions of the coding exercises (``{solution-start}`` … ``{solution-end}``:
"unknown node type: solution_end_node"), and would leave their code on the page. With
``hide_solutions`` on, this extension turns each gated pair into two markers and deletes them and
everything between them (the solution's code cell) from the page. The notebooks still run in full,
solutions included, so every check cell and claim is still executed by the build.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform
from sphinx.util.docutils import SphinxDirective


class hidden_solution_start(nodes.Element):
    """Marks where a gated solution began (removed before writing)."""


class hidden_solution_end(nodes.Element):
    """Marks where a gated solution ended (removed before writing)."""


class _GatedMarker(SphinxDirective):
    has_content = True
    optional_arguments = 1
    final_argument_whitespace = True
    option_spec = {"class": lambda arg: arg, "label": lambda arg: arg, "hidden": lambda arg: arg}
    marker: type[nodes.Element]

    def run(self) -> list[nodes.Node]:
        return [self.marker()]


class HiddenSolutionStart(_GatedMarker):
    marker = hidden_solution_start


class HiddenSolutionEnd(_GatedMarker):
    marker = hidden_solution_end


class RemoveHiddenSolutions(SphinxTransform):
    """Delete every marker pair and the nodes between them (siblings, as sphinx-exercise merges them)."""

    default_priority = 5  # before sphinx-exercise's own transforms

    def apply(self) -> None:
        for start in list(self.document.findall(hidden_solution_start)):
            parent = start.parent
            if parent is None:
                continue
            children = parent.children
            i = children.index(start)
            j = next((k for k in range(i + 1, len(children)) if isinstance(children[k], hidden_solution_end)), None)
            if j is None:
                raise ValueError(f"{self.env.docname}: a solution-start without its solution-end")
            for child in children[i : j + 1]:
                parent.remove(child)
        for end in list(self.document.findall(hidden_solution_end)):
            raise ValueError(f"{self.env.docname}: a solution-end without its solution-start ({end.line})")


def _override(app: Sphinx, config) -> None:
    if config.hide_solutions:
        app.add_directive("solution-start", HiddenSolutionStart, override=True)
        app.add_directive("solution-end", HiddenSolutionEnd, override=True)


def setup(app: Sphinx) -> dict:
    app.setup_extension("sphinx_exercise")
    app.add_node(hidden_solution_start)
    app.add_node(hidden_solution_end)
    app.connect("config-inited", _override, priority=900)  # after sphinx-exercise registered its own
    app.add_transform(RemoveHiddenSolutions)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def term_config(config: dict) -> dict:
    """``_config.yml``'s content with the solutions hidden (a new dict)."""
    config = yaml.safe_load(yaml.safe_dump(config))
    sphinx = config.setdefault("sphinx", {})
    sphinx.setdefault("config", {})["hide_solutions"] = True
    sphinx.setdefault("local_extensions", {})["term_site"] = "tools"
    return config


def main(argv: list[str] | None = None) -> int:
    # Imported here, not above: the site build loads this module as the extension `term_site`, with
    # only the tools folder on sys.path (`local_extensions`), where the package `tools` is not found.
    from tools.common import REPO

    parser = argparse.ArgumentParser(prog="python -m tools.term_site", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source", type=Path, default=REPO / "_config.yml", help="the book's config (default: _config.yml)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "_config.term.yml", help="where to write the config")
    args = parser.parse_args(argv)
    config = term_config(yaml.safe_load(args.source.read_text()))
    header = "# Written by tools/term_site.py from _config.yml: the site without solutions. Do not edit.\n"
    args.out.write_text(header + yaml.safe_dump(config, sort_keys=False, allow_unicode=True))
    print(f"wrote {args.out}; build with: jupyter-book build . -W -n --keep-going --config {args.out.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
