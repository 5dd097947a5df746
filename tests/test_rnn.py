"""Unit tests of lib/rnn.py: the LSTM encoder-decoder of the RNN chapter, and additive attention."""

import pytest
import torch

import lib
from lib import AdditiveAttention, Seq2SeqRNN

V, D = 11, 16
KINDS = [None, "additive", "dot"]


def tokens(B: int, T: int, seed: int = 0) -> torch.Tensor:
    """Random non-special ids (3 … V-1), so nothing is <pad>, <bos> or <eos> by accident."""
    return torch.randint(3, V, (B, T), generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("attention", KINDS)
def test_shapes(attention):
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention=attention, tgt_vocab_size=7)
    src, tgt_in = tokens(3, 5), torch.randint(3, 7, (3, 4))
    logits = model(src, tgt_in)
    assert logits.shape == (3, 4, 7)
    if attention is None:
        assert model.last_attention is None
    else:
        assert model.last_attention.shape == (3, 4, 5)  # [B, T, S]


@pytest.mark.parametrize("attention", KINDS)
def test_padding_is_handled_by_the_encoder(attention):
    """Extra <pad> after a source changes nothing: not the logits, not the weights on real tokens."""
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention=attention).eval()
    src, tgt_in = tokens(2, 5), tokens(2, 4, seed=1)
    src_short = src.clone()
    src_short[0, 3:] = 0  # row 0 has 3 real tokens, row 1 has 5
    padded = torch.cat([src_short, torch.zeros(2, 4, dtype=torch.long)], dim=1)
    out_short, out_padded = model(src_short, tgt_in), model(padded, tgt_in)
    torch.testing.assert_close(out_padded, out_short, atol=1e-6, rtol=1e-5)
    if attention is not None:
        weights = model.last_attention  # of the padded call
        assert torch.all(weights[0, :, 3:] == 0) and torch.all(weights[1, :, 5:] == 0)
    # The final encoder state is the one after the last real token.
    states, (h, _) = model.encode(padded)
    torch.testing.assert_close(h[0, 0], states[0, 2])
    torch.testing.assert_close(h[0, 1], states[1, 4])
    assert torch.all(states[0, 3:] == 0)


@pytest.mark.parametrize("attention", KINDS)
def test_fully_padded_source_is_never_nan(attention):
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention=attention)
    src = tokens(2, 4)
    src[1] = 0  # nothing to attend to
    logits = model(src, tokens(2, 3, seed=1))
    logits.sum().backward()
    assert torch.isfinite(logits).all()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters() if p.grad is not None)
    if attention is not None:
        assert torch.all(model.last_attention[1] == 0)


def test_additive_attention_fully_masked_row_is_zero_and_finite():
    lib.seed_everything(0)
    attn = AdditiveAttention(D, D)
    q, k = torch.randn(2, 3, D, requires_grad=True), torch.randn(2, 4, D)
    mask = torch.ones(2, 1, 4, dtype=torch.bool)
    mask[1] = False
    context, weights = attn(q, k, k, mask)
    context.sum().backward()
    assert torch.all(weights[1] == 0) and torch.all(context[1] == 0)
    assert torch.isfinite(q.grad).all()


def test_additive_attention_weights_sum_to_one_over_non_pad_keys():
    lib.seed_everything(0)
    attn = AdditiveAttention(D, 8, d_attn=12)
    q, k, v = torch.randn(2, 3, D), torch.randn(2, 5, 8), torch.randn(2, 5, 6)
    mask = torch.tensor([[True] * 5, [True, True, False, True, False]])[:, None]  # [B, 1, S]
    context, weights = attn(q, k, v, mask)
    assert weights.shape == (2, 3, 5) and context.shape == (2, 3, 6)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3))
    assert torch.all(weights[1, :, [2, 4]] == 0)
    # e_{t,i} = v^T tanh(W_q s_t + W_k h_i), alpha = softmax over the allowed keys, c_t = sum alpha v_i
    keep = torch.tensor([0, 1, 3])
    e = attn.v(torch.tanh(attn.w_q(q[1, 0]) + attn.w_k(k[1, keep]))).squeeze(-1)
    torch.testing.assert_close(weights[1, 0, keep], e.softmax(-1))
    torch.testing.assert_close(context[1, 0], e.softmax(-1) @ v[1, keep])


def test_dot_attention_is_luong_score():
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention="dot").eval()
    src, tgt_in = tokens(1, 6), tokens(1, 3, seed=1)
    model(src, tgt_in)
    states, final = model.encode(src)
    s, _ = model.decoder(model.tgt_embed(tgt_in), final)
    torch.testing.assert_close(model.last_attention, (s @ states.transpose(1, 2)).softmax(-1))


def test_unknown_attention_and_bad_sizes_are_clear_errors():
    with pytest.raises(ValueError, match=r"attention='bahdanau' is unknown"):
        Seq2SeqRNN(V, D, attention="bahdanau")
    with pytest.raises(ValueError, match=r"d_hidden=0 must be a positive int"):
        Seq2SeqRNN(V, 0)
    with pytest.raises(TypeError, match=r"vocab_size must be an int, got 2.5"):
        Seq2SeqRNN(2.5, D)


def test_bad_tokens_are_clear_errors():
    model = Seq2SeqRNN(V, D, attention="dot")
    with pytest.raises(TypeError, match=r"src must hold integer token ids"):
        model(torch.randn(2, 3), tokens(2, 3))
    with pytest.raises(ValueError, match=r"tgt_in of shape \(3,\)"):
        model(tokens(2, 3), tokens(1, 3)[0])
    with pytest.raises(ValueError, match=r"src holds token ids in \[11, 11\], outside the vocabulary \[0, 11\)"):
        model(tokens(2, 3).fill_(11), tokens(2, 3))
    with pytest.raises(ValueError, match=r"src has batch size 2 but tgt_in has 3"):
        model(tokens(2, 3), tokens(3, 3))
    with pytest.raises(ValueError, match=r"max_new_tokens=0"):
        model.generate(tokens(2, 3), max_new_tokens=0)


def scripted(model: Seq2SeqRNN, script: list[list[int]]) -> Seq2SeqRNN:
    """Make ``model.decode`` emit ``script[step][row]`` at each decoding step."""
    step = iter(range(len(script)))

    def decode(tgt_in, states, final, src):
        logits = torch.full((src.size(0), 1, model.tgt_vocab_size), -1e4)
        logits[torch.arange(src.size(0)), 0, torch.tensor(script[next(step)])] = 0.0
        return logits, final

    model.decode = decode
    return model


def test_generate_stops_at_eos_and_pads_after_it():
    model = scripted(Seq2SeqRNN(V, D), [[2, 5], [7, 6], [8, 2], [9, 9]])  # <eos> = 2
    out = model.generate(tokens(2, 4), max_new_tokens=10, eos_id=2)
    # row 0 ends at step 1, row 1 at step 3; decoding stops there although max_len = 10
    assert out.tolist() == [[2, 0, 0], [5, 6, 2]]


def test_generate_without_eos_runs_to_max_len():
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention="dot")
    with torch.no_grad():
        model.out_proj.weight.zero_()
        model.out_proj.bias.fill_(-10.0)
        model.out_proj.bias[4] = 10.0  # always token 4, never <eos>
    model.train()
    out = model.generate(tokens(3, 5), max_new_tokens=6)
    assert out.shape == (3, 6) and torch.all(out == 4)
    assert model.training  # the mode is restored


@pytest.mark.parametrize("attention", [None, "additive", "dot"])
def test_generation_is_the_one_loop_of_lib_model(attention):
    """Seq2SeqRNN decodes through lib.model.generation like the Transformers: greedy with and without
    the cached state agree, and beam search with one beam is greedy."""
    lib.seed_everything(0)
    model = Seq2SeqRNN(V, D, attention=attention)
    src = tokens(3, 6)
    greedy = model.generate(src, 7)
    assert torch.equal(model.generate(src, 7, use_cache=False), greedy)
    assert torch.equal(lib.greedy_decode(model, src, 7), greedy)
    assert torch.equal(lib.beam_search(model, src, 7, beam_size=1), greedy)
    assert lib.beam_search(model, src, 7, beam_size=3).shape == greedy.shape
