"""The code is lint-clean and formatted: `ruff check` and `ruff format --check` over lib/, tests/ and
tools/, with the settings in pyproject.toml."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PATHS = ["lib", "tests", "tools"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    try:
        import ruff  # noqa: F401  (the wheel ships the binary; `python -m ruff` runs it)
    except ImportError:
        pytest.fail("ruff is not installed: pip install -r requirements.txt (it pins ruff)")
    return subprocess.run([sys.executable, "-m", "ruff", *args, *PATHS], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_is_clean() -> None:
    result = _ruff("check", "--no-cache", "--output-format", "concise")
    assert result.returncode == 0, (
        f"ruff check found problems (ruff check --fix fixes some):\n{result.stdout}{result.stderr}"
    )


def test_ruff_format_is_clean() -> None:
    result = _ruff("format", "--check", "--no-cache")
    assert result.returncode == 0, f"ruff format would change files (run ruff format lib tests tools):\n{result.stdout}"


def test_pre_commit_runs_ruff_and_nbstripout() -> None:
    import yaml

    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    hooks = {hook["id"]: repo for repo in config["repos"] for hook in repo["hooks"]}
    assert {"ruff-check", "ruff-format", "nbstripout"} <= set(hooks)
    pinned = next(
        line.split("==")[1].strip()
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line.startswith("ruff==")
    )
    assert hooks["ruff-check"]["rev"] == f"v{pinned}", "the pre-commit ruff and requirements.txt's ruff differ"
