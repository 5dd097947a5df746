"""What the model tests share (imported as ``from small_models import small_config``): one small
configuration, changed per test by keyword."""

from __future__ import annotations

from lib import TransformerConfig


def small_config(**overrides) -> TransformerConfig:
    """A 2 + 2-layer Transformer at d_model = 32 (4 heads), no dropout; any field can be overridden."""
    fields = dict(src_vocab_size=20, tgt_vocab_size=20, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2)
    return TransformerConfig(**{**fields, "d_ff": 64, "dropout": 0.0, **overrides})
