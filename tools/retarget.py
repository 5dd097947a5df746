"""Point the whole book at another repository and/or branch or tag, or check that it points where
`_config.yml` says.

The repository URL and the ref live in ONE place, `_config.yml`::

    repository:
      url: https://github.com/cs224n-book/transformers-executed
      branch: main        # the Colab button opens chapters from this ref, and their setup cells
                          # install lib from the same ref

Every chapter's first code cell (CONTRIBUTING.md) installs, in Colab only,
``cs224n-transformers-lib @ git+<url>@<branch>`` (a chapter may add extras, e.g.
``cs224n-transformers-lib[pretrained]``). The notebook a reader opens and the `lib` it installs
therefore always come from the same commit: a chapter can never outgrow a pinned release.

    python -m tools.retarget --repo https://github.com/me/my-fork   # a fork, same branch
    python -m tools.retarget --ref v1.0        # a release: build the site from tag v1.0
    python -m tools.retarget                   # rewrite the setup cells from _config.yml
    python -m tools.retarget --check           # change nothing; exit 1 if a cell or an edition is off

Moving updates `_config.yml` (url and branch, and `html.baseurl` when the site is the repository's
GitHub Pages site), the project URLs in `pyproject.toml`, the setup cell of every chapter
(book/NN_*.ipynb; nothing else in the notebooks changes), and the Colab editions (colab/, written
by tools/editions.py from the chapters: the notebooks the Colab button opens). `_config.yml` is
edited with ruamel.yaml, which keeps its comments and layout. To freeze a course
on one version, retarget to a tag on a branch of your own (``--ref fall-2026``), commit, create
the tag on that commit (``git tag fall-2026 && git push origin fall-2026``) and build the site
from it: its Colab buttons open, and its setup cells install, exactly that tag.
"""

from __future__ import annotations

import argparse
import io
import sys
from pathlib import Path

import nbformat

from tools import editions
from tools.common import (
    REPO,
    SETUP_TAG,
    distribution_name,
    expected_setup_source,
    extras_available,
    first_code_cell,
    load_config,
    notebooks,
    pages_url,
    ref_exists,
    ref_problem,
    repository,
    setup_extras,
    site_url,
)


def _is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and "google.colab" in cell.source


def check(repo: Path = REPO) -> list[str]:
    """Every way the book's chapters disagree with `_config.yml`, as messages (empty: all good)."""
    problems = []
    url, ref = repository(repo)
    if (why := ref_problem(ref)) is not None:
        problems.append(f"_config.yml: {why}")
    known_extras = extras_available(repo)
    for path in notebooks(repo):
        name = path.relative_to(repo)
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        i = first_code_cell(nb)
        if i is None or not _is_setup_cell(nb.cells[i]):
            problems.append(f"{name}: the first code cell is not the Colab setup cell")
            continue
        cell = nb.cells[i]
        extras = setup_extras(cell.source)
        if unknown := sorted(set(extras) - known_extras):
            problems.append(
                f"{name}: the setup cell asks for extras {unknown} that pyproject.toml "
                f"does not define (it has {sorted(known_extras)})"
            )
        expected = expected_setup_source(repo, extras)
        if cell.source.rstrip() != expected:
            problems.append(
                f"{name}: setup cell differs from _config.yml; expected exactly\n{expected}\n"
                f"--- found ---\n{cell.source}"
            )
        if SETUP_TAG not in cell.metadata.get("tags", []):
            problems.append(f"{name}: the setup cell lacks the tag {SETUP_TAG!r} (it must be hidden on the site)")
    # The Colab editions (what the Colab button opens) carry the same setup cells and site links.
    problems += editions.problems(repo)
    return problems


def rewrite_setup_cells(repo: Path = REPO, dry_run: bool = False) -> list[Path]:
    """Make every chapter's setup cell exactly what `_config.yml` says; return the changed files."""
    changed = []
    for path in notebooks(repo):
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        i = first_code_cell(nb)
        if i is not None and _is_setup_cell(nb.cells[i]):
            cell = nb.cells[i]
            expected = expected_setup_source(repo, setup_extras(cell.source))
        else:
            expected = expected_setup_source(repo)  # no setup cell yet: insert one before the first code cell
            cell = nbformat.v4.new_code_cell("")
            if nb.nbformat_minor < 5:  # cell ids came with nbformat 4.5
                del cell["id"]
            nb.cells.insert(len(nb.cells) if i is None else i, cell)
        tags = cell.metadata.setdefault("tags", [])
        if cell.source == expected and SETUP_TAG in tags:
            continue
        cell.source = expected
        if SETUP_TAG not in tags:
            tags.append(SETUP_TAG)
        changed.append(path)
        if not dry_run:
            nbformat.write(nb, path)
    return changed


def _round_trip_yaml():
    """ruamel.yaml set up to write `_config.yml` back exactly as it reads it: comments, quotes,
    flow lists and the `  - item` indentation of its lists."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096  # never re-wrap a long line
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def set_config_keys(text: str, section: str, values: dict[str, str]) -> str:
    """`_config.yml`'s text with `section.key: value` set for each key, comments and layout kept."""
    yaml = _round_trip_yaml()
    data = yaml.load(text)
    if data.get(section) is None:
        data[section] = {}
    for key, value in values.items():
        data[section][key] = value
    out = io.StringIO()
    yaml.dump(data, out)
    return out.getvalue()


def move(repo: Path, url: str | None, ref: str | None) -> None:
    old_url, old_ref = repository(repo)
    url = (url or old_url).rstrip("/")
    if url.endswith(".git"):
        url = url[:-4]
    ref = ref or old_ref
    if (why := ref_problem(ref)) is not None:
        sys.exit(f"error: {why}")
    config = repo / "_config.yml"
    text = set_config_keys(config.read_text(encoding="utf-8"), "repository", {"url": url, "branch": ref})
    declared = (load_config(repo).get("html") or {}).get("baseurl")
    if url != old_url and declared and site_url(repo) == pages_url(old_url):
        text = set_config_keys(text, "html", {"baseurl": pages_url(url)})  # GitHub Pages: the site moves too
    # the example URLs in the comments, .../github/<org>/<repo>/blob/<ref>/...
    if url != old_url and "github.com/" in old_url and "github.com/" in url:
        old_path, new_path = old_url.split("github.com/", 1)[1], url.split("github.com/", 1)[1]
        text = text.replace(f"/github/{old_path}/", f"/github/{new_path}/")
    text = text.replace(f"/blob/{old_ref}/", f"/blob/{ref}/").replace(f"@{old_ref}\n", f"@{ref}\n")
    config.write_text(text, encoding="utf-8")
    if repository(repo) != (url, ref):  # the edit must read back as intended
        sys.exit(f"error: could not set repository.url/branch in {config}; edit it by hand")
    pyproject = repo / "pyproject.toml"
    if url != old_url and old_url in (text := pyproject.read_text(encoding="utf-8")):
        pyproject.write_text(text.replace(old_url, url), encoding="utf-8")
    print(f"_config.yml: repository.url = {url}, repository.branch = {ref}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tools.retarget",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--repo", help="the book's repository URL, e.g. https://github.com/me/my-fork")
    parser.add_argument("--ref", help="the branch or tag the Colab button opens and the setup cells install")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a chapter is off")
    parser.add_argument("--dry-run", action="store_true", help="say which chapters would change")
    parser.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repo = args.root.resolve()

    if args.check:
        problems = check(repo)
        for p in problems:
            print(p, file=sys.stderr)
        n = len(notebooks(repo))
        print(
            f"{n} notebook(s) checked against _config.yml: "
            + ("all setup cells and Colab editions agree" if not problems else f"{len(problems)} problem(s)")
        )
        return 1 if problems else 0
    if args.dry_run and (args.repo or args.ref):
        parser.error("--dry-run only previews the setup cells for the current _config.yml")
    if args.repo or args.ref:
        move(repo, args.repo, args.ref)
    changed = rewrite_setup_cells(repo, dry_run=args.dry_run)
    verb = "would change" if args.dry_run else "rewrote"
    print(
        f"{verb} the setup cell of {len(changed)} of {len(notebooks(repo))} notebook(s)"
        + "".join(f"\n  {p.relative_to(repo)}" for p in changed)
    )
    if args.dry_run:
        stale = editions.problems(repo)
        print(f"would rewrite {len(stale)} Colab edition(s)" + "".join(f"\n  {p}" for p in stale))
    else:
        written = editions.write(repo)
        print(f"rewrote {len(written)} Colab edition(s) in {editions.FOLDER}/ (tools/editions.py)")
    url, ref = repository(repo)
    print(f"setup cells install: {distribution_name(repo)} @ git+{url}@{ref}")
    if not args.dry_run and not ref_exists(ref, repo):
        print(
            f"note: {ref!r} is not a branch or tag of this clone yet. Commit this change, then create\n"
            f"it on that commit and push it (a tag: git tag {ref} && git push origin {ref}),\n"
            f"so that Colab can open the chapters and install lib from it."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
