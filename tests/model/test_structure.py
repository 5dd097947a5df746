"""lib/model is small, flat and readable: the promises of its design, checked.

- the whole model is at most 1,000 lines, docstrings included (a reader finishes it in one sitting);
- ``MultiHeadAttention.forward`` reads like the equation: at most 35 lines;
- no module-level mutable state (no memo, no registry that a call could change);
- no chapter shows a private method with ``show_source``;
- a forward never waits for the device: no ``.item()``, ``int(tensor)`` or branch on a tensor's values
  (it runs on the ``meta`` device, which has no values, and compiles into one graph). Token ids are
  checked at the boundaries (configs, generation, ``check_tokens``), not in ``forward``.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from pathlib import Path

import pytest
import torch

from lib import DecoderOnlyLM, LMConfig, Transformer, TransformerConfig, padding_mask
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


def _tiny_models() -> list[tuple[torch.nn.Module, tuple]]:
    """A decoder-only LM and an encoder-decoder (with a target padding mask), and inputs for them."""
    torch.manual_seed(0)
    sizes = dict(d_model=16, n_heads=2, dropout=0.0)
    lm = DecoderOnlyLM(LMConfig(11, n_layers=1, max_len=8, **sizes)).eval()
    model = Transformer(TransformerConfig(11, 11, n_encoder_layers=1, n_decoder_layers=1, d_ff=32, **sizes)).eval()
    tokens, src, tgt = torch.randint(3, 11, (2, 6)), torch.randint(3, 11, (2, 5)), torch.randint(3, 11, (2, 4))
    src[1, 3:] = 0
    return [(lm, (tokens,)), (model, (src, tgt, None, padding_mask(tgt, 0)))]


@pytest.mark.parametrize("which", [0, 1], ids=["DecoderOnlyLM", "Transformer"])
def test_a_forward_runs_on_the_meta_device(which: int) -> None:
    """Meta tensors have shapes but no values: any host sync (``int(t)``, ``.item()``, ``if t.any()``) fails."""
    model, inputs = _tiny_models()[which]
    model.to("meta")
    out = model(*(x.to("meta") if isinstance(x, torch.Tensor) else x for x in inputs))
    assert out.device.type == "meta" and out.shape == (2, 6 if which == 0 else 4, 11)


@pytest.mark.slow
@pytest.mark.parametrize("which", [0, 1], ids=["DecoderOnlyLM", "Transformer"])
def test_a_forward_compiles_into_one_graph(which: int) -> None:
    """``torch.compile(fullgraph=True)`` raises on any graph break (a value read back to Python)."""
    torch._dynamo.reset()
    model, inputs = _tiny_models()[which]
    compiled = torch.compile(model, fullgraph=True)
    torch.testing.assert_close(compiled(*inputs), model(*inputs), atol=1e-5, rtol=1e-5)
