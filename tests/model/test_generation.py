"""Incremental decoding and beam search agree with their slow, obvious versions."""

import pytest
import torch
from small_models import small_config
from torch import nn

from lib import DecoderOnlyLM, LMConfig, Transformer, TransformerConfig, beam_search, greedy_decode

POSITIONS = ["sinusoidal", "learned", "relative", "rotary", "none"]


def make_models(position, norm_first, seed=0):
    torch.manual_seed(seed)
    config = small_config(position=position, norm_first=norm_first)
    return Transformer(config).eval(), DecoderOnlyLM(
        LMConfig(20, 32, 4, 2, dropout=0.0, position=position, norm_first=norm_first)
    ).eval()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("position", POSITIONS)
def test_cached_decoding_equals_recomputation(position, norm_first):
    model, lm = make_models(position, norm_first)
    src = torch.randint(3, 20, (4, 7))
    src[1, 4:] = 0
    assert torch.equal(greedy_decode(model, src, 10, use_cache=True), greedy_decode(model, src, 10, use_cache=False))
    assert torch.equal(
        beam_search(model, src, 10, beam_size=3, use_cache=True),
        beam_search(model, src, 10, beam_size=3, use_cache=False),
    )
    prompt = torch.randint(3, 20, (3, 4))
    assert torch.equal(lm.generate(prompt, 8, use_cache=True), lm.generate(prompt, 8, use_cache=False))


def test_cached_logits_equal_full_logits():
    model, lm = make_models("rotary", False)
    tokens = torch.randint(3, 20, (2, 9))
    with torch.no_grad():
        full = lm(tokens)
        cache = lm.new_cache()
        steps = [lm(tokens[:, :4], cache=cache)] + [lm(tokens[:, t : t + 1], cache=cache) for t in range(4, 9)]
    torch.testing.assert_close(torch.cat(steps, dim=1), full, atol=1e-5, rtol=0)


@pytest.mark.parametrize("position", ["sinusoidal", "relative"])
def test_beam_of_one_is_greedy(position):
    model, lm = make_models(position, False, seed=3)
    src = torch.randint(3, 20, (5, 6))
    assert torch.equal(beam_search(model, src, 9, beam_size=1), greedy_decode(model, src, 9))
    prompt = torch.randint(3, 20, (2, 3))
    assert torch.equal(beam_search(lm, prompt, 7, beam_size=1), lm.generate(prompt, 7))


def test_beam_search_finds_a_sequence_at_least_as_likely_as_greedy():
    model, _ = make_models("sinusoidal", False, seed=1)
    src = torch.randint(3, 20, (6, 6))

    def log_prob(tgt):  # total log-probability of each output under the model (eos_id=None: every token)
        bos = torch.ones(tgt.size(0), 1, dtype=torch.long)
        with torch.no_grad():
            logp = model(src, torch.cat([bos, tgt[:, :-1]], 1)).log_softmax(-1)
        token_logp = logp.gather(-1, tgt[..., None])[..., 0]
        return token_logp.sum(-1)

    greedy = greedy_decode(model, src, 6, eos_id=None)
    beam = beam_search(model, src, 6, beam_size=5, eos_id=None, length_penalty=0.0)
    assert (log_prob(beam) >= log_prob(greedy) - 1e-5).all()


class ScriptedHead(nn.Module):
    """Stands in for a model's output projection: logits follow a script, whatever the input.

    At decoding step ``s`` (one call per step), every position prefers token ``FILLER``, except the
    rows of source ``b`` (``row // beams``) with ``s >= stops[b]``, which prefer ``<eos>`` (so that
    every beam of a source finishes one step after its best one does, at the latest).
    """

    FILLER, EOS = 5, 2

    def __init__(self, vocab_size, stops, beams=1, logits=None):
        super().__init__()
        self.vocab_size, self.stops, self.beams, self.calls = vocab_size, stops, beams, 0
        self.logits = logits

    def forward(self, x):
        step, self.calls = self.calls, self.calls + 1
        N, T = x.shape[:2]
        if self.logits is not None:
            return self.logits.expand(N, T, -1).clone()
        logits = torch.zeros(N, T, self.vocab_size)
        logits[..., self.FILLER] = 10.0
        for row in range(N):
            if step >= self.stops[row // self.beams]:
                logits[row, :, self.EOS] = 30.0
        return logits


STOPS = [0, 3, 1]


def expected_rows(prefix_len=0):
    """Row b: FILLER STOPS[b] times, then <eos>, then padding up to the longest row."""
    width = max(STOPS) + 1
    return [[ScriptedHead.FILLER] * s + [ScriptedHead.EOS] + [0] * (width - s - 1) for s in STOPS]


@pytest.mark.parametrize("use_cache", [True, False])
@pytest.mark.parametrize("decode", ["greedy", "beam"])
def test_seq2seq_decoding_stops_at_eos(decode, use_cache):
    model, _ = make_models("sinusoidal", False)
    src = torch.randint(3, 20, (len(STOPS), 5))
    beams = 3 if decode == "beam" else 1
    model.out_proj = ScriptedHead(20, STOPS, beams)
    if decode == "greedy":
        out = greedy_decode(model, src, 10, eos_id=2, use_cache=use_cache)
    else:
        out = beam_search(model, src, 10, beam_size=beams, eos_id=2, use_cache=use_cache)
    assert out.tolist() == expected_rows()  # stopped after max(STOPS) + 1 of 10 steps
    assert model.out_proj.calls == max(STOPS) + 1


@pytest.mark.parametrize("use_cache", [True, False])
def test_lm_generate_stops_at_eos(use_cache):
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0, tie_output=False)).eval()
    lm.out_proj = ScriptedHead(20, STOPS)
    prompt = torch.randint(3, 20, (len(STOPS), 4))
    out = lm.generate(prompt, 10, eos_id=2, use_cache=use_cache)
    assert torch.equal(out[:, :4], prompt)
    assert out[:, 4:].tolist() == expected_rows()
    lm.out_proj = ScriptedHead(20, STOPS, beams=2)
    out = beam_search(lm, prompt, 10, beam_size=2, eos_id=2, use_cache=use_cache)
    assert out[:, 4:].tolist() == expected_rows()


def test_top_k_sampling_never_leaves_the_top_k():
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0, tie_output=False)).eval()
    logits = torch.zeros(20)
    logits[[4, 9, 13]] = torch.tensor([1.0, 0.9, 0.8])  # the top 3, barely above the other 17
    lm.out_proj = ScriptedHead(20, [], logits=logits)
    prompt = torch.randint(3, 20, (64, 2))
    torch.manual_seed(0)
    sampled = lm.generate(prompt, 8, temperature=1.0, top_k=3)[:, 2:]
    assert set(sampled.unique().tolist()) == {4, 9, 13}
    torch.manual_seed(0)
    unrestricted = lm.generate(prompt, 8, temperature=1.0)[:, 2:]
    assert not set(unrestricted.unique().tolist()) <= {4, 9, 13}  # without top_k it does leave


@pytest.mark.parametrize("position", ["learned", "rotary"])
def test_top_1_sampling_is_greedy(position):
    model, lm = make_models(position, True, seed=2)
    prompt = torch.randint(3, 20, (4, 3))
    torch.manual_seed(0)
    assert torch.equal(lm.generate(prompt, 8, temperature=1.0, top_k=1), lm.generate(prompt, 8))
    assert torch.equal(lm.generate(prompt, 8, temperature=0.5, top_k=1), lm.generate(prompt, 8))


def test_sampling_is_reproducible_by_seed():
    _, lm = make_models("learned", True)
    prompt = torch.randint(3, 20, (2, 3))
    torch.manual_seed(5)
    a = lm.generate(prompt, 6, temperature=1.0, top_k=5)
    torch.manual_seed(5)
    b = lm.generate(prompt, 6, temperature=1.0, top_k=5)
    assert torch.equal(a, b)


def test_one_eos_default_everywhere() -> None:
    """Regression: lm.generate stopped at no token but greedy_decode stopped at token 2, so the two
    differed whenever the model emitted a 2. Now every entry point defaults to eos_id=None."""
    import inspect

    from lib import Seq2SeqRNN, generate_tokens

    for fn in (generate_tokens, beam_search, DecoderOnlyLM.generate, Seq2SeqRNN.generate):  # greedy: generate_tokens
        assert inspect.signature(fn).parameters["eos_id"].default is None, fn.__qualname__
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0, tie_output=False)).eval()
    lm.out_proj = ScriptedHead(20, STOPS)  # emits token 2 early in some rows
    prompt = torch.randint(3, 20, (len(STOPS), 4))
    generated = lm.generate(prompt, 6)
    assert (generated[:, 4:] == 2).any()
    lm.out_proj = ScriptedHead(20, STOPS)
    assert torch.equal(greedy_decode(lm, prompt, 6), generated)


@pytest.mark.parametrize("use_cache", [True, False])
def test_a_transformer_without_decoder_layers_decodes(use_cache) -> None:
    """Regression: n_decoder_layers=0 is a valid config, and greedy_decode raised IndexError on it."""
    torch.manual_seed(0)
    config = TransformerConfig(20, 20, d_model=16, n_heads=2, n_encoder_layers=1, n_decoder_layers=0, d_ff=32)
    model = Transformer(config).eval()
    src = torch.randint(3, 20, (3, 5))
    out = greedy_decode(model, src, 4, use_cache=use_cache)
    assert out.shape == (3, 4)
    assert torch.equal(beam_search(model, src, 4, beam_size=1, use_cache=use_cache), out)


@pytest.mark.parametrize("use_cache", [True, False])
def test_generation_past_max_len_is_refused_up_front(use_cache) -> None:
    """Learned positions stop at max_len: asking for more is refused before the first step, with the
    prompt's length, max_new_tokens and max_len in the message (not half-way, about a longer 'tokens')."""
    from unittest import mock

    torch.manual_seed(0)
    lm = DecoderOnlyLM(LMConfig(20, 32, 4, 1, dropout=0.0, max_len=8)).eval()
    prompt = torch.randint(3, 20, (2, 6))
    with mock.patch.object(lm, "forward", side_effect=AssertionError("no step may run")):
        for generate in (lambda: lm.generate(prompt, 4, use_cache=use_cache), lambda: beam_search(lm, prompt, 4)):
            with pytest.raises(
                ValueError, match=r"prompt of length 6 and max_new_tokens=4 need 9 positions.*max_len=8"
            ):
                generate()
    assert lm.generate(prompt, 3, use_cache=use_cache).shape == (2, 9)  # it feeds 6 + 2 = 8 tokens: fits
    model = Transformer(small_config(position="learned", max_len=8)).eval()
    src = torch.randint(3, 20, (2, 5))
    for decode in (greedy_decode, beam_search):
        with pytest.raises(ValueError, match=r"src of length 5 and max_new_tokens=9 need 9 positions.*max_len=8"):
            decode(model, src, 9, use_cache=use_cache)
        assert decode(model, src, 8, use_cache=use_cache).shape == (2, 8)  # <bos> + 7 fed back: fits
    for position in ("sinusoidal", "rotary", "relative", "none"):  # no length limit
        unlimited = DecoderOnlyLM(LMConfig(20, 32, 4, 1, dropout=0.0, max_len=8, position=position)).eval()
        assert unlimited.generate(prompt, 4, use_cache=use_cache).shape == (2, 10)
