"""lib.book.diagrams.transformer_diagram: slide 27 drawn from a real lib.Transformer (chapter 7)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import pytest
from matplotlib.figure import Figure

from lib import Transformer, TransformerConfig
from lib.book.diagrams import transformer_diagram


def _texts(fig: Figure) -> str:
    """Every string drawn on the figure (boxes, labels, title), joined."""
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    texts += [t.get_text() for t in fig.texts]
    return "\n".join(texts)


def _model(**kw) -> Transformer:
    base = dict(
        src_vocab_size=30,
        tgt_vocab_size=30,
        d_model=48,
        n_heads=3,
        n_encoder_layers=3,
        n_decoder_layers=2,
        d_ff=96,
        dropout=0.0,
    )
    base.update(kw)
    return Transformer(TransformerConfig(**base))


def test_labels_come_from_the_model() -> None:
    model = _model(share_embeddings=True, tie_output=True)
    text = _texts(transformer_diagram(model))
    assert "encoder layer  × N = 3" in text and "decoder layer  × N = 2" in text
    assert r"$d_\mathrm{model}$=48" in text and r"H=3, $d_\mathrm{head}$=16" in text
    assert "48 → 96 → 48" in text  # the feed-forward widths
    assert "Embedding 30 × 48" in text and r"× $√d_\mathrm{model}$ = × 6.93" in text
    assert f"{sum(p.numel() for p in model.parameters()):,} parameters" in text
    assert "one shared\nmatrix" in text and "tied: one matrix" in text
    assert "post-LN" in text and "Add & Norm" in text and "final LayerNorm" not in text


def test_pre_ln_untied_model() -> None:
    model = _model(tgt_vocab_size=20, norm_first=True, position="learned")
    text = _texts(transformer_diagram(model))
    assert "pre-LN" in text and "final LayerNorm" in text and "Add & Norm" not in text
    assert "Linear 48 → 20" in text and "learned positions" in text
    assert "shared" not in text and "tied" not in text


def test_rejects_what_is_not_a_transformer() -> None:
    with pytest.raises(TypeError, match="model must be a lib.Transformer"):
        transformer_diagram("not a model")
