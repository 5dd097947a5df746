"""Bad input gets a clear ValueError/TypeError naming the argument, what came and what was expected."""

import pytest
import torch
from small_models import small_config

from lib import (
    DecoderOnlyLM,
    EncoderLayer,
    FeedForward,
    LearnedPositionalEmbedding,
    LMConfig,
    MultiHeadAttention,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
    Transformer,
    TransformerConfig,
    causal_mask,
    padding_mask,
    scaled_dot_product_attention,
)


def small(**kw):
    sizes = dict(src_vocab_size=10, tgt_vocab_size=10, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=1)
    return small_config(**{**sizes, "d_ff": 32, "max_len": 12, "dropout": 0.1, **kw})


def test_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3"):
        small(d_model=10, n_heads=3)
    with pytest.raises(ValueError, match=r"d_model=10 is not divisible by n_heads=3"):
        EncoderLayer(10, 3, 20)
    with pytest.raises(ValueError, match="n_heads"):
        LMConfig(10, d_model=10, n_heads=3)


def test_mask_that_does_not_broadcast():
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    with pytest.raises(
        ValueError, match=r"mask of shape \(2, 7\) does not broadcast to \(B, H, T_q, T_k\) = \(2, 4, 5, 5\)"
    ):
        mha(x, x, x, torch.ones(2, 7, dtype=torch.bool))
    with pytest.raises(ValueError, match=r"mask of shape"):
        scaled_dot_product_attention(x, x, x, torch.ones(3, 5, 5, dtype=torch.bool))


def test_non_boolean_mask():
    mha = MultiHeadAttention(16, 4)
    x = torch.randn(2, 5, 16)
    with pytest.raises(TypeError, match=r"mask must have dtype torch.bool"):
        mha(x, x, x, torch.ones(5, 5))


def test_share_embeddings_needs_equal_vocabularies():
    with pytest.raises(
        ValueError, match=r"share_embeddings=True needs src_vocab_size == tgt_vocab_size, got 10 and 12"
    ):
        small(tgt_vocab_size=12, share_embeddings=True)


def test_unknown_position_and_activation():
    with pytest.raises(ValueError, match=r"position='alibi' is unknown"):
        small(position="alibi")
    with pytest.raises(ValueError, match=r"position='alibi' is unknown"):
        LMConfig(10, 16, 2, 1, position="alibi")
    with pytest.raises(ValueError, match=r"activation='swish' is unknown"):
        small(activation="swish")
    with pytest.raises(ValueError, match=r"activation='swish' is unknown"):
        FeedForward(16, 32, activation="swish")


def test_max_len_limits_only_learned_positions():
    long, short = torch.ones(1, 13, dtype=torch.long), torch.ones(1, 3, dtype=torch.long)
    model = Transformer(small(position="learned"))
    with pytest.raises(ValueError, match=r"src of length 13 is longer than max_len=12"):
        model(long, short)
    with pytest.raises(ValueError, match=r"tgt of length 13 is longer than max_len=12"):
        model(short, long)
    with pytest.raises(ValueError, match=r"longer than max_len=12"):
        DecoderOnlyLM(LMConfig(10, 16, 2, 1, max_len=12))(long)
    with pytest.raises(ValueError, match=r"longer than max_len=8"):
        LearnedPositionalEmbedding(8, 16)(torch.randn(1, 9, 16))
    for position in ("sinusoidal", "rotary", "relative", "none"):  # no length limit
        assert Transformer(small(position=position))(long, long).shape == (1, 13, 10)
        lm = DecoderOnlyLM(LMConfig(10, 16, 2, 1, max_len=12, position=position))
        assert lm(long).shape == (1, 13, 10)


def test_sinusoidal_table_extends_beyond_max_len():
    pe = SinusoidalPositionalEncoding(16, max_len=8)
    x = torch.zeros(1, 20, 16)
    torch.testing.assert_close(pe(x), SinusoidalPositionalEncoding(16, max_len=64)(x))
    torch.testing.assert_close(pe(x[:, :3], offset=17), SinusoidalPositionalEncoding(16).pe[None, 17:20])


def test_token_ids_outside_the_vocabulary():
    """Ids are values: checked where they enter (generation, ``check_tokens``), never in ``forward``, which
    would wait for the device to read them (tests/model/test_structure.py). ``forward`` checks type and shape."""
    from lib import greedy_decode

    model = Transformer(small())
    ok = torch.ones(1, 3, dtype=torch.long)
    with pytest.raises(ValueError, match=r"src holds token ids in \[1, 10\], outside the vocabulary \[0, 10\)"):
        greedy_decode(model, torch.tensor([[1, 10]]), 3)
    with pytest.raises(ValueError, match=r"tgt holds token ids in \[-1, 1\]"):
        model.check_tokens("tgt", torch.tensor([[1, -1]]), model.config.tgt_vocab_size)
    lm = DecoderOnlyLM(LMConfig(10, 16, 2, 1))
    with pytest.raises(ValueError, match=r"prompt holds token ids in \[1, 12\], outside the vocabulary \[0, 10\)"):
        lm.generate(torch.tensor([[1, 12]]), 3)
    with pytest.raises(TypeError, match=r"src must hold integer token ids, got dtype torch.float32"):
        model(torch.ones(1, 3), ok)
    with pytest.raises(ValueError, match=r"src of shape \(3,\) should be \[B, T\]"):
        model(torch.ones(3, dtype=torch.long), ok)


def test_wrong_activation_shapes():
    mha = MultiHeadAttention(16, 4)
    with pytest.raises(ValueError, match=r"query of shape \(2, 5, 8\) should be \[B, T, d_model=16\]"):
        mha(torch.randn(2, 5, 8), torch.randn(2, 5, 16), torch.randn(2, 5, 16))
    with pytest.raises(TypeError, match=r"query must be a Tensor"):
        mha([[0.0]], torch.randn(2, 5, 16), torch.randn(2, 5, 16))
    with pytest.raises(ValueError, match=r"q has d_k=4 but k has d_k=5"):
        scaled_dot_product_attention(torch.randn(3, 4), torch.randn(3, 5), torch.randn(3, 5))


def test_other_config_errors():
    with pytest.raises(ValueError, match=r"dropout=1.5 must be in \[0, 1\)"):
        small(dropout=1.5)
    with pytest.raises(ValueError, match=r"d_model=0 must be a positive int"):
        small(d_model=0)
    with pytest.raises(TypeError, match=r"config must be a TransformerConfig"):
        Transformer({"d_model": 16})
    with pytest.raises(ValueError, match=r"rotary embeddings need an even d_head"):
        RotaryEmbedding(7)
    with pytest.raises(ValueError, match=r"T=0 must be a positive int"):
        causal_mask(0)
    with pytest.raises(ValueError, match=r"tokens must be a \[B, T\] tensor"):
        padding_mask(torch.ones(2, 3, 4), 0)


def test_presets_match_table_3():
    base, big = TransformerConfig.base(), TransformerConfig.big()
    assert (base.d_model, base.n_heads, base.d_ff, base.n_encoder_layers, base.dropout) == (512, 8, 2048, 6, 0.1)
    assert (big.d_model, big.n_heads, big.d_ff, big.n_encoder_layers, big.dropout) == (1024, 16, 4096, 6, 0.3)
    with torch.device("meta"):  # count without allocating
        n_base, n_big = Transformer(base).num_parameters(), Transformer(big).num_parameters()
    # Table 3 of Vaswani et al. (2017): 65M and 213M, with a shared 37k-token vocabulary.
    assert 60e6 < n_base < 66e6 and 210e6 < n_big < 218e6
