"""`lib.book.diagrams.positions`: the schematic of where position information enters (chapter 6)."""

from __future__ import annotations

import pytest
from matplotlib.figure import Figure

import lib
from lib.book.diagrams import position_schematic


def _texts(fig: Figure) -> str:
    return "\n".join(t.get_text() for ax in fig.axes for t in ax.texts)


def test_schematic_is_a_figure_labelled_with_the_config_shapes() -> None:
    config = lib.TransformerConfig(
        13,
        13,
        d_model=48,
        n_heads=4,
        n_encoder_layers=1,
        n_decoder_layers=0,
        d_ff=64,
        max_relative_distance=5,
        position="rotary",
    )
    fig = position_schematic(config, seq_len=7)
    assert isinstance(fig, Figure)
    text = _texts(fig)
    assert "T=7" in text and r"$d_\mathrm{model}$=48" in text  # token and embedding shapes
    assert "H=4" in text and ", 12]" in text  # d_head = 48 / 4
    assert "2c+1=11" in text and "c=5" in text  # Shaw et al.'s clipped tables (clip distance c)
    assert "6 planes per head" in text  # RoPE: d_head / 2 rotation planes
    for panel in ("absolute", "rotary", "relative"):
        assert panel in text


def test_schematic_accepts_a_model(tiny_transformer_config) -> None:
    model = lib.Transformer(tiny_transformer_config())
    assert r"$d_\mathrm{model}$=16" in _texts(position_schematic(model))


@pytest.mark.parametrize("bad", [None, 3, "rotary"])
def test_schematic_rejects_what_is_not_a_config(bad) -> None:
    with pytest.raises(TypeError, match="model_or_config"):
        position_schematic(bad)


@pytest.mark.parametrize("seq_len, error", [(0, ValueError), (-2, ValueError), (2.5, TypeError), (True, TypeError)])
def test_schematic_rejects_a_bad_length(seq_len, error, tiny_transformer_config) -> None:
    with pytest.raises(error, match="seq_len"):
        position_schematic(tiny_transformer_config(), seq_len=seq_len)
