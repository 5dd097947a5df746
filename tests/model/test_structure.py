"""lib/model is small, flat and readable: the promises of its design, checked.

- the whole model is at most 1,000 lines, docstrings included (a reader finishes it in one sitting);
- ``MultiHeadAttention.forward`` reads like the equation: at most 35 lines;
- no module-level mutable state (no memo, no registry that a call could change);
- no chapter shows a private method with ``show_source``.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

from lib.model.attention import MultiHeadAttention

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "lib" / "model"


def test_the_model_is_at_most_1000_lines() -> None:
    lines = {p.name: len(p.read_text().splitlines()) for p in sorted(MODEL.glob("*.py"))}
    assert sum(lines.values()) <= 1000, lines


def test_multi_head_attention_forward_is_short() -> None:
    source = inspect.getsource(MultiHeadAttention.forward)
    assert len(source.splitlines()) <= 35


def _module_level_mutables(tree: ast.Module) -> list[str]:
    mutable = (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
    found = []
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, mutable):
            found.append(ast.unparse(node)[:60])
    found += [f"global {', '.join(n.names)}" for n in ast.walk(tree) if isinstance(n, ast.Global)]
    return found


def test_no_module_level_mutable_state_in_the_model() -> None:
    for path in MODEL.glob("*.py"):
        assert _module_level_mutables(ast.parse(path.read_text())) == [], path.name


def test_the_mutable_state_check_can_fail() -> None:
    assert _module_level_mutables(ast.parse("CACHE = {}\ndef f():\n    global X\n")) == ["CACHE = {}", "global X"]


def test_no_chapter_shows_a_private_method() -> None:
    shown = []
    for notebook in sorted((ROOT / "book").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text())["cells"]:
            if cell["cell_type"] == "code":
                shown += re.findall(r"show_source\(([\w.]+)", "".join(cell["source"]))
    assert shown, "no show_source call found: the check would pass vacuously"
    private = [name for name in shown if any(part.startswith("_") for part in name.split("."))]
    assert private == []
