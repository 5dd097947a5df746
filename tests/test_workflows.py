"""The GitHub Actions workflows (.github/workflows/): valid, least-privileged, and doing what the
README says they do.

- they validate against GitHub's workflow schema (`check-jsonschema --builtin-schema
  vendor.github-workflows`, which ships the schema: no network);
- `zizmor --offline` (a static security audit of workflows) finds nothing of medium or high
  severity; `zizmor.yml` lets GitHub's own `actions/*` be pinned by tag (see its comment);
- `test` runs `.ci/run` (the README's test command) with Python 3.11 and pip caching, on push and
  pull request; `book` builds with the README's build command and deploys to Pages; `latest` runs
  weekly and by hand, with the newest releases of every dependency of lib; `sweep` runs the seed
  sweep (tools/sweep.py) weekly and by hand and uploads its file;
- every job states its permissions, the workflow-level default is none, and every checkout
  leaves no credentials behind.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from conftest import REPO

WORKFLOWS = REPO / ".github" / "workflows"
FILES = sorted(WORKFLOWS.glob("*.yml"))
BIN = Path(sys.executable).parent


def _load(name: str) -> dict:
    return yaml.safe_load((WORKFLOWS / f"{name}.yml").read_text(encoding="utf-8"))


def _on(workflow: dict) -> dict:
    return workflow.get("on", workflow.get(True))  # YAML 1.1 reads the key `on` as True


def _steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def _readme_command(which: str) -> str:
    """The README's build or test command (the fenced line that ends with it)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    ending = {"build": ".venv/bin/python -m tools.site", "test": ".venv/bin/python -m pytest -n 2"}[which]
    found = [
        l.strip() for l in text.splitlines() if l.strip().startswith("python3 -m venv") and l.strip().endswith(ending)
    ]
    assert found, f"README.md has no {which} command ending in {ending!r}"
    return found[0]


def test_the_workflows_exist() -> None:
    assert {p.stem for p in FILES} >= {"test", "book", "latest", "sweep"}, FILES


def test_workflows_match_githubs_schema() -> None:
    proc = subprocess.run(
        [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.github-workflows", *map(str, FILES)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_zizmor_finds_nothing_of_medium_or_high_severity() -> None:
    proc = subprocess.run(
        [
            str(BIN / "zizmor"),
            "--offline",
            "--config",
            str(REPO / "zizmor.yml"),
            "--min-severity",
            "medium",
            "--format",
            "plain",
            str(WORKFLOWS),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_least_permissions_and_no_persisted_credentials(path: Path) -> None:
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert workflow.get("permissions") == {}, f"{path.name}: the workflow-level default must be `permissions: {{}}`"
    for name, job in workflow["jobs"].items():
        assert "permissions" in job, f"{path.name}: job {name!r} must state its own permissions"
        writes = {k for k, v in job["permissions"].items() if v == "write"}
        assert writes <= {"pages", "id-token"}, f"{path.name}: job {name!r} asks to write {writes}"
    for step in _steps(workflow):
        uses = step.get("uses", "")
        if uses.startswith("actions/checkout@"):
            assert step.get("with", {}).get("persist-credentials") is False, (
                f"{path.name}: checkout persists credentials"
            )
        if uses and not uses.startswith("actions/"):
            assert re.fullmatch(r"[^@]+@[0-9a-f]{40}", uses), f"{path.name}: {uses} must be pinned by commit SHA"


def test_test_workflow_runs_ci_run_with_python_311_and_pip_cache() -> None:
    workflow = _load("test")
    assert {"push", "pull_request"} <= set(_on(workflow))
    steps = _steps(workflow)
    python = next(s for s in steps if s.get("uses", "").startswith("actions/setup-python@"))
    assert str(python["with"]["python-version"]) == "3.11" and python["with"]["cache"] == "pip"
    assert any(s.get("run", "").strip() == "bash .ci/run" for s in steps)
    ci_run = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert _readme_command("test") in ci_run, ".ci/run must run exactly the README's test command"


def test_book_workflow_builds_with_the_readme_command_and_deploys_to_pages() -> None:
    workflow = _load("book")
    assert _on(workflow)["push"]["branches"] == ["main"]
    steps = _steps(workflow)
    build = " ".join(" ".join(s.get("run", "").split()) for s in steps)
    assert _readme_command("build") in build, "the book workflow must build with the README's build command"
    uses = [s.get("uses", "").split("@")[0] for s in steps]
    assert "actions/upload-pages-artifact" in uses and "actions/deploy-pages" in uses
    upload = next(s for s in steps if s.get("uses", "").startswith("actions/upload-pages-artifact@"))
    assert upload["with"]["path"] == "_build/html"
    deploy = workflow["jobs"]["deploy"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"


def test_latest_workflow_upgrades_every_dependency_of_lib_weekly() -> None:
    workflow = _load("latest")
    on = _on(workflow)
    assert "schedule" in on and "workflow_dispatch" in on
    with open(REPO / "pyproject.toml", "rb") as f:
        deps = tomllib.load(f)["project"]["dependencies"]
    names = {re.split(r"[<>=!~\[ ;]", d, maxsplit=1)[0].lower() for d in deps}
    upgrade = next(s["run"] for s in _steps(workflow) if "--upgrade" in s.get("run", ""))
    line = next(l for l in upgrade.splitlines() if "--upgrade" in l)
    assert names <= set(line.split()), f"latest.yml must upgrade every dependency of lib: {names - set(line.split())}"
    runs = " ".join(s.get("run", "") for s in _steps(workflow))
    assert "pytest tests" in runs and "pytest -n 2 --dist loadfile book" in runs


def test_sweep_workflow_runs_the_seed_sweep_weekly_and_keeps_its_file() -> None:
    workflow = _load("sweep")
    assert "schedule" in _on(workflow) and "workflow_dispatch" in _on(workflow)
    runs = [step.get("run", "") for step in _steps(workflow)]
    assert any("python -m tools.sweep --seeds 10" in run for run in runs), runs
    uploads = [s for s in _steps(workflow) if s.get("uses", "").startswith("actions/upload-artifact")]
    assert uploads and uploads[0]["with"]["path"] == "book/claims_sweep.json"
