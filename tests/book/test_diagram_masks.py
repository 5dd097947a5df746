"""Chapter 5's schematics: the mask grids and the cross-attention data flow."""

import matplotlib

matplotlib.use("Agg")

import pytest
import torch
from matplotlib.figure import Figure

from lib import Transformer, causal_mask, padding_mask
from lib.book.diagrams.masks import cross_attention_dataflow, mask_grids


@pytest.fixture
def small_model(tiny_transformer_config):
    """d_model 16, 2 heads of 8, one encoder and two decoder layers."""
    return Transformer(tiny_transformer_config(src_vocab_size=20, tgt_vocab_size=12, n_decoder_layers=2))


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _cell_colours(fig: Figure):
    from matplotlib.patches import Rectangle

    return [p for p in fig.axes[0].patches if isinstance(p, Rectangle)]


def test_mask_grids_draws_the_three_masks_with_their_cells():
    fig = mask_grids(["<bos>", "a", "b"], n_pad=2)
    assert isinstance(fig, Figure)
    texts = _texts(fig)
    assert any("causal_mask" in t for t in texts) and any("padding_mask" in t for t in texts)
    # 3 grids of 5 × 5 cells, plus one frame per grid
    cells = [p for p in _cell_colours(fig) if abs(p.get_width() - 0.42) < 1e-9]
    assert len(cells) == 3 * 25
    # the first grid is the causal mask: filled (not white) exactly where causal_mask is True
    filled = [p.get_facecolor()[:3] != (1.0, 1.0, 1.0) for p in cells[:25]]
    T = 5
    expected = [bool(causal_mask(T)[i, j]) for i in range(T) for j in range(T)]
    assert filled == expected
    # the second grid is the padding mask: the pad columns are empty in every row
    filled_pad = [p.get_facecolor()[:3] != (1.0, 1.0, 1.0) for p in cells[25:50]]
    keep = padding_mask(torch.tensor([[1, 1, 1, 0, 0]]), 0)[0, 0, 0]
    assert filled_pad == [bool(keep[j]) for i in range(T) for j in range(T)]


def test_mask_grids_rejects_bad_input():
    with pytest.raises(TypeError, match="tokens"):
        mask_grids("abc")
    with pytest.raises(TypeError, match="tokens"):
        mask_grids(["a", 1])
    with pytest.raises(ValueError, match="tokens must not be empty"):
        mask_grids([])
    with pytest.raises(ValueError, match="n_pad"):
        mask_grids(["a"], n_pad=-1)
    for wrong_type in (1.5, True):
        with pytest.raises(TypeError, match="n_pad must be an int"):
            mask_grids(["a"], n_pad=wrong_type)


def test_cross_attention_dataflow_is_labelled_with_real_shapes(small_model):
    src, tgt = torch.ones(3, 7, dtype=torch.long), torch.ones(3, 5, dtype=torch.long)
    fig = cross_attention_dataflow(small_model, src, tgt)
    text = "\n".join(_texts(fig))
    assert "[3, 7, 16]" in text  # memory [B, S, d]
    assert "[3, 2, 5, 8]" in text  # Q [B, H, T, d_head]
    assert "[3, 2, 7, 8]" in text  # K, V [B, H, S, d_head]
    assert "[3, 2, 5, 7]" in text  # weights [B, H, T, S]
    assert "decoder × 2" in text and "encoder × 1" in text


def test_cross_attention_dataflow_rejects_bad_input(small_model):
    src = torch.ones(2, 4, dtype=torch.long)
    with pytest.raises(TypeError, match="model"):
        cross_attention_dataflow(torch.nn.Linear(2, 2), src, src)
    with pytest.raises(TypeError, match="src must be a Tensor"):
        cross_attention_dataflow(small_model, [[1, 2]], src)
    with pytest.raises(ValueError, match="tgt"):
        cross_attention_dataflow(small_model, src, torch.ones(4, dtype=torch.long))
    with pytest.raises(ValueError, match="batch size"):
        cross_attention_dataflow(small_model, src, torch.ones(3, 4, dtype=torch.long))
