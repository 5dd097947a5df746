#!/usr/bin/env python3
"""Point the whole book at another repository and/or release of `lib`, or check that it points
where `_config.yml` says.

The repository URL and the ref that Colab installs `lib` from live in ONE place, `_config.yml`::

    repository:
      url: https://github.com/cs224n-book/transformers-executed
      branch: main        # the Colab button opens chapters from this branch
      lib_ref: v0.1.0     # the tag (or commit) every chapter's setup cell installs lib from

Every chapter's first code cell (CONTRIBUTING.md) installs, in Colab only,
``cs224n-transformers-lib @ git+<url>@<lib_ref>``. This command keeps the two in step:

    python tools/retarget.py --repo https://github.com/me/my-fork --ref v1.0   # move the book
    python tools/retarget.py --ref v0.2.0           # a new release of lib, same repository
    python tools/retarget.py                        # rewrite the setup cells from _config.yml
    python tools/retarget.py --check                # change nothing; exit 1 if a cell is off

Moving updates `_config.yml` (url, lib_ref, and branch with --branch), the project URLs in
`pyproject.toml`, and the setup cell of every chapter (book/NN_*.ipynb); nothing else in the
notebooks changes. `lib_ref` must be a tag or a commit, never a branch: a branch moves, so a
chapter that ran yesterday could break today. Create the tag on the commit that contains this
change (``git tag v1.0 && git push origin v1.0``) so the release installs the lib it documents.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import nbformat

if __package__ in (None, ""):  # run as a script: python tools/retarget.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tools.common import (  # noqa: E402
    REPO,
    SETUP_TAG,
    branch_problem,
    chapters,
    distribution_name,
    expected_setup_source,
    first_code_cell,
    load_config,
    ref_exists,
    repository,
)


def _is_setup_cell(cell) -> bool:
    return cell.cell_type == "code" and "google.colab" in cell.source


def check(repo: Path = REPO) -> list[str]:
    """Every way the book's chapters disagree with `_config.yml`, as messages (empty: all good)."""
    problems = []
    url, ref = repository(repo)
    if (why := branch_problem(ref, repo)) is not None:
        problems.append(f"_config.yml: {why}")
    expected = expected_setup_source(repo)
    for path in chapters(repo):
        name = path.relative_to(repo)
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        i = first_code_cell(nb)
        if i is None or not _is_setup_cell(nb.cells[i]):
            problems.append(f"{name}: the first code cell is not the Colab setup cell")
            continue
        cell = nb.cells[i]
        if cell.source.rstrip() != expected:
            problems.append(
                f"{name}: setup cell differs from _config.yml; expected exactly\n{expected}\n"
                f"--- found ---\n{cell.source}"
            )
        if SETUP_TAG not in cell.metadata.get("tags", []):
            problems.append(f"{name}: the setup cell lacks the tag {SETUP_TAG!r} (it must be hidden on the site)")
    return problems


def rewrite_setup_cells(repo: Path = REPO, dry_run: bool = False) -> list[Path]:
    """Make every chapter's setup cell exactly what `_config.yml` says; return the changed files."""
    expected = expected_setup_source(repo)
    changed = []
    for path in chapters(repo):
        nb = nbformat.read(path, as_version=nbformat.NO_CONVERT)
        i = first_code_cell(nb)
        if i is not None and _is_setup_cell(nb.cells[i]):
            cell = nb.cells[i]
        else:  # no setup cell yet: insert one before the first code cell
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


def _set_section_keys(text: str, section: str, values: dict[str, str]) -> str:
    """Set `section.key: value` in a YAML text line by line, keeping its comments and layout."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, l in enumerate(lines) if re.match(rf"{section}:\s*(#.*)?$", l)), None)
    if start is None:
        lines.append(f"\n{section}:\n")
        start = len(lines) - 1
    end = start + 1
    while end < len(lines) and (not lines[end].strip() or lines[end][0] in " \t#"):
        end += 1
    for key, value in values.items():
        for i in range(start + 1, end):
            m = re.match(rf"(\s+{re.escape(key)}:\s*)([^#\n]*?)(\s*#.*)?(\n?)$", lines[i])
            if m:
                lines[i] = f"{m.group(1)}{value}{m.group(3) or ''}{m.group(4)}"
                break
        else:
            keys = [i for i in range(start + 1, end) if re.match(r"\s+\w+:", lines[i])]
            at = (keys[-1] if keys else start) + 1
            lines.insert(at, f"  {key}: {value}\n")
            end += 1
    return "".join(lines)


def move(repo: Path, url: str | None, ref: str | None, branch: str | None) -> None:
    section = load_config(repo).get("repository") or {}
    old_url, old_ref = str(section.get("url") or "").rstrip("/"), section.get("lib_ref")
    if not (url or old_url) or not (ref or old_ref):
        sys.exit("error: _config.yml has no repository.url/lib_ref yet: give both --repo and --ref")
    url = (url or old_url).rstrip("/")
    if url.endswith(".git"):
        url = url[:-4]
    ref = ref or old_ref
    if (why := branch_problem(ref, repo)) is not None:
        sys.exit(f"error: {why}")
    values = {"url": url, "lib_ref": ref}
    if branch:
        values["branch"] = branch
    config = repo / "_config.yml"
    new_text = _set_section_keys(config.read_text(encoding="utf-8"), "repository", values)
    if old_url and url != old_url and "github.com/" in old_url and "github.com/" in url:
        # the example Colab URL in the comments, .../github/<org>/<repo>/blob/...
        old_path, new_path = old_url.split("github.com/", 1)[1], url.split("github.com/", 1)[1]
        new_text = new_text.replace(f"/github/{old_path}/", f"/github/{new_path}/")
    config.write_text(new_text, encoding="utf-8")
    if repository(repo) != (url, ref):  # the edit must read back as intended
        sys.exit(f"error: could not set repository.url/lib_ref in {config}; edit it by hand")
    pyproject = repo / "pyproject.toml"
    if old_url and url != old_url and old_url in (text := pyproject.read_text(encoding="utf-8")):
        pyproject.write_text(text.replace(old_url, url), encoding="utf-8")
    print(
        f"_config.yml: repository.url = {url}, repository.lib_ref = {ref}"
        + (f", repository.branch = {branch}" if branch else "")
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", help="the book's repository URL, e.g. https://github.com/me/my-fork")
    parser.add_argument("--ref", help="the tag or commit Colab installs lib from (never a branch)")
    parser.add_argument("--branch", help="the branch the Colab button opens the chapters from")
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a chapter is off")
    parser.add_argument("--dry-run", action="store_true", help="say which chapters would change")
    parser.add_argument("--root", type=Path, default=REPO, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    repo = args.root.resolve()

    if args.check:
        problems = check(repo)
        for p in problems:
            print(p, file=sys.stderr)
        n = len(chapters(repo))
        print(
            f"{n} chapter(s) checked against _config.yml: "
            + ("all setup cells agree" if not problems else f"{len(problems)} problem(s)")
        )
        return 1 if problems else 0
    if args.dry_run and (args.repo or args.ref or args.branch):
        parser.error("--dry-run only previews the setup cells for the current _config.yml")
    if args.repo or args.ref or args.branch:
        move(repo, args.repo, args.ref, args.branch)
    changed = rewrite_setup_cells(repo, dry_run=args.dry_run)
    verb = "would change" if args.dry_run else "rewrote"
    print(
        f"{verb} the setup cell of {len(changed)} of {len(chapters(repo))} chapter(s)"
        + "".join(f"\n  {p.relative_to(repo)}" for p in changed)
    )
    url, ref = repository(repo)
    print(f"setup cells install: {distribution_name(repo)} @ git+{url}@{ref}")
    if not args.dry_run and not ref_exists(ref, repo):
        print(
            f"note: {ref!r} is not a tag or commit of this clone yet. Commit this change, then\n"
            f"  git tag {ref} && git push origin {ref}\n"
            f"so that Colab can install lib from it."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
