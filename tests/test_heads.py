"""Chapter 4 (multi-head attention): head ablation, the linked-list task, the split/merge schematic."""

from __future__ import annotations

import dataclasses

import pytest
import torch
from matplotlib.figure import Figure

import lib
from lib import MultiHeadAttention
from lib.book.diagrams.heads import multi_head_diagram
from lib.heads import ablate_heads, attention_layers
from lib.training.lookup import LinkedListModel, linked_list_batch, linked_list_neighbours, neighbour_accuracy


def _model(n_heads: int = 2, n_layers: int = 1) -> LinkedListModel:
    torch.manual_seed(0)
    return LinkedListModel(d_model=16, n_heads=n_heads, n_layers=n_layers).eval()


# ---------------------------------------------------------------------------------- ablate_heads


def test_ablating_a_head_zeroes_exactly_its_block_before_w_o() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).eval()
    x = torch.randn(3, 5, 8)
    q, k, v = (mha.split_heads(p(x)) for p in (mha.q_proj, mha.k_proj, mha.v_proj))
    heads = (q @ k.transpose(-2, -1) / 2.0).softmax(dim=-1) @ v  # [B, H, T, d_head], √4 = 2
    heads[:, 1] = 0.0
    expected = mha.out_proj(mha.merge_heads(heads))
    holder = torch.nn.ModuleDict({"attn": mha})
    with ablate_heads(holder, {"attn": [1]}):
        for need_weights in (True, False):
            out, _ = mha(x, x, x, need_weights=need_weights)
            torch.testing.assert_close(out, expected)
    assert not mha.out_proj._forward_pre_hooks  # the hook is gone
    torch.testing.assert_close(
        mha(x, x, x)[0], mha.out_proj(mha.merge_heads((q @ k.transpose(-2, -1) / 2.0).softmax(dim=-1) @ v))
    )


def test_ablating_every_head_leaves_the_output_bias() -> None:
    model = _model(n_heads=4)
    attn = model.layers[0].self_attn
    x = torch.randn(2, 6, 16)
    with ablate_heads(model, {"layers.0.self_attn": [0, 1, 2, 3]}):
        out, _ = attn(x, x, x)
    torch.testing.assert_close(out, attn.out_proj.bias.expand_as(out))


def test_ablations_nest_and_are_removed_even_after_an_error() -> None:
    model = _model(n_heads=4)
    attn = model.layers[0].self_attn
    x = torch.randn(2, 6, 16)
    with ablate_heads(model, {"layers.0.self_attn": [0, 1]}):
        both = attn(x, x, x)[0]
    with pytest.raises(RuntimeError), ablate_heads(model, {"layers.0.self_attn": [0]}):
        with ablate_heads(model, {"layers.0.self_attn": [1]}):
            torch.testing.assert_close(attn(x, x, x)[0], both)  # nested: heads 0 and 1 are off
        raise RuntimeError("boom")
    assert not attn.out_proj._forward_pre_hooks


def test_record_attention_records_every_layer_and_refuses_a_kernel() -> None:
    model = _model(n_layers=2)
    batch = linked_list_batch(4, seed=0)
    with lib.record_attention(model) as maps:
        model(batch.input)
    assert sorted(maps) == ["layers.0.self_attn", "layers.1.self_attn"]
    assert all(torch.allclose(w.sum(-1), torch.ones(())) for w in maps.values())
    assert "attend" not in model.layers[0].self_attn.__dict__  # the layers are as they were
    model.layers[1].self_attn.kernel = lambda q, k, v, mask, is_causal, scale: v
    with pytest.raises(ValueError, match="layers.1.self_attn.*kernel"), lib.record_attention(model):
        pass


def test_ablation_changes_predictions_and_only_inside_the_block() -> None:
    model = _model()
    batch = linked_list_batch(8, seed=3)
    before = model(batch.input)
    with ablate_heads(model, {"layers.0.self_attn": [0]}) as same:
        assert same is model
        during = model(batch.input)
    assert not torch.allclose(before, during)
    torch.testing.assert_close(model(batch.input), before)


def test_attention_layers_names_every_layer() -> None:
    assert sorted(attention_layers(_model(n_layers=2))) == ["layers.0.self_attn", "layers.1.self_attn"]
    with pytest.raises(TypeError, match="model"):
        attention_layers("not a model")


@pytest.mark.parametrize(
    "heads, error, match",
    [
        ({"layers.5.self_attn": [0]}, ValueError, "not an attention layer"),
        ({"layers.0.self_attn": [2]}, ValueError, "must be <= 1"),
        ({"layers.0.self_attn": [-1]}, ValueError, "non-negative"),
        ({"layers.0.self_attn": [0.0]}, TypeError, "must be an int"),
        ({"layers.0.self_attn": 0}, TypeError, "sequence of head indices"),
        ([("layers.0.self_attn", [0])], TypeError, "mapping"),
    ],
)
def test_ablate_heads_rejects_bad_input(heads, error, match) -> None:
    model = _model()
    with pytest.raises(error, match=match), ablate_heads(model, heads):
        pass
    assert not model.layers[0].self_attn.out_proj._forward_pre_hooks


# ---------------------------------------------------------------------------- the linked list


def test_linked_list_targets_are_the_colours_of_next_and_previous() -> None:
    batch = linked_list_batch(16, n_items=7, n_names=10, n_colours=5, seed=1)
    names, pointers, colours = batch.input.unbind(-1)
    nxt, prv = linked_list_neighbours(batch.input)
    assert torch.equal(names.gather(1, nxt), pointers)  # a_next(i) = p_i
    assert torch.equal(pointers.gather(1, prv), names)  # p_prev(i) = a_i
    assert torch.equal(nxt.gather(1, prv), torch.arange(7).expand(16, 7))  # next(prev(i)) = i
    assert torch.equal(batch.target, colours.gather(1, nxt) * 5 + colours.gather(1, prv))
    # one cycle through all nodes: following next 7 times returns, and not earlier
    pos = torch.zeros(16, 1, dtype=torch.long)
    for step in range(1, 8):
        pos = nxt.gather(1, pos)
        assert bool((pos == 0).all()) == (step == 7)
    assert all(len(set(row.tolist())) == 7 for row in names)  # distinct names


def test_linked_list_is_deterministic_per_seed() -> None:
    a, b, c = (linked_list_batch(4, seed=s) for s in (0, 0, 1))
    assert torch.equal(a.input, b.input) and torch.equal(a.target, b.target)
    assert not torch.equal(a.input, c.input)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"batch_size": 0}, "batch_size"),
        ({"n_items": 1}, "n_items"),
        ({"n_names": 4, "n_items": 5}, "n_names"),
        ({"n_colours": 1}, "n_colours"),
    ],
)
def test_linked_list_rejects_bad_sizes(kw, match) -> None:
    args = {"batch_size": 2, **kw}
    with pytest.raises(ValueError, match=match):
        linked_list_batch(**args)


def test_model_parameters_do_not_depend_on_the_number_of_heads() -> None:
    counts = {h: sum(p.numel() for p in _model(n_heads=h).parameters()) for h in (1, 2, 4, 8, 16)}
    assert len(set(counts.values())) == 1, counts


def test_model_output_and_accuracy() -> None:
    model = _model()
    batch = linked_list_batch(4, seed=0)
    assert model(batch.input).shape == (4, 12, 16 * 16)
    acc = neighbour_accuracy(model, batch)
    assert set(acc) == {"next", "prev", "both"} and all(0 <= v <= 1 for v in acc.values())
    assert acc["both"] == pytest.approx(lib.evaluate(model, batch)["token_accuracy"])


def test_model_rejects_bad_input() -> None:
    model = _model()
    with pytest.raises(ValueError, match="d_model=10 is not divisible by n_heads=3"):
        LinkedListModel(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match=r"\[B, T, 3\]"):
        model(torch.zeros(2, 5, dtype=torch.long))
    bad = linked_list_batch(2, seed=0).input.clone()
    bad[0, 0, 2] = 99
    with pytest.raises(ValueError, match=r"colour ids must lie in \[0, 16\), got 0\.\.99"):
        model.check_fields(bad)  # the values are checked at the evaluation's entry, never in forward
    with pytest.raises(ValueError, match="colour ids"):
        neighbour_accuracy(model, dataclasses.replace(linked_list_batch(2, seed=0), input=bad))
    with pytest.raises(ValueError, match=r"\[B, T, 3\]"):
        linked_list_neighbours(torch.zeros(2, 5, 2, dtype=torch.long))


# ------------------------------------------------------------------------------ the schematic


def test_multi_head_diagram_draws_a_real_forward_pass() -> None:
    torch.manual_seed(0)
    mha = MultiHeadAttention(8, 2).train()
    fig = multi_head_diagram(mha, torch.randn(1, 5, 8))
    assert isinstance(fig, Figure)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "[1, 5, 8] → [1, 2, 5, 4]" in texts.replace("\n", " ")
    assert mha.training  # mode restored


def test_multi_head_diagram_rejects_bad_input() -> None:
    mha = MultiHeadAttention(8, 2)
    with pytest.raises(TypeError, match="MultiHeadAttention"):
        multi_head_diagram(torch.nn.Linear(8, 8), torch.randn(1, 5, 8))
    with pytest.raises(ValueError, match=r"\[1, T, d_model=8\]"):
        multi_head_diagram(mha, torch.randn(2, 5, 8))
    with pytest.raises(ValueError, match="T <= 8"):
        multi_head_diagram(MultiHeadAttention(8, 2), torch.randn(1, 9, 8))


def test_neighbour_attention_measures_mass_on_next_and_previous() -> None:
    from lib.training.lookup import neighbour_attention

    model = _model(n_heads=2, n_layers=2)
    batch = linked_list_batch(4, seed=0)
    mass = neighbour_attention(model, batch)
    assert sorted(mass) == ["layers.0.self_attn", "layers.1.self_attn"]
    nxt, prv = linked_list_neighbours(batch.input)
    with lib.record_attention(model) as maps:
        model(batch.input)
    b, i = torch.arange(4)[:, None], torch.arange(12)[None, :]
    for name, w in maps.items():  # w [B, H, T, T]
        for h in range(2):
            by_hand = [w[:, h][b, i, nxt].mean(), w[:, h][b, i, prv].mean()]
            torch.testing.assert_close(mass[name][h], torch.stack(by_hand))
    assert all(((m > 0) & (m < 1)).all() for m in mass.values())
    with pytest.raises(TypeError, match="LMBatch"):
        neighbour_attention(model, batch.input)
