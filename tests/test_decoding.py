"""Incremental decoding and beam search agree with their slow, obvious versions."""
import pytest
import torch

from lib import DecoderOnlyLM, LMConfig, Transformer, TransformerConfig, beam_search, greedy_decode

POSITIONS = ["sinusoidal", "learned", "relative", "rotary", "none"]


def make_models(position, norm_first, seed=0):
    torch.manual_seed(seed)
    config = TransformerConfig(20, 20, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2,
                               d_ff=64, dropout=0.0, position=position, norm_first=norm_first)
    return Transformer(config).eval(), DecoderOnlyLM(LMConfig(20, 32, 4, 2, dropout=0.0, position=position,
                                                              norm_first=norm_first)).eval()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("position", POSITIONS)
def test_cached_decoding_equals_recomputation(position, norm_first):
    model, lm = make_models(position, norm_first)
    src = torch.randint(3, 20, (4, 7))
    src[1, 4:] = 0
    assert torch.equal(greedy_decode(model, src, 10, use_cache=True), greedy_decode(model, src, 10, use_cache=False))
    assert torch.equal(beam_search(model, src, 10, beam_size=3, use_cache=True),
                       beam_search(model, src, 10, beam_size=3, use_cache=False))
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

    def log_prob(tgt):  # total log-probability of each output under the model (up to <eos>)
        bos = torch.ones(tgt.size(0), 1, dtype=torch.long)
        with torch.no_grad():
            logp = model(src, torch.cat([bos, tgt[:, :-1]], 1)).log_softmax(-1)
        token_logp = logp.gather(-1, tgt[..., None])[..., 0]
        return (token_logp * (tgt != 0)).sum(-1)

    greedy = greedy_decode(model, src, 6, eos_id=None)
    beam = beam_search(model, src, 6, beam_size=5, eos_id=None, length_penalty=0.0)
    assert (log_prob(beam) >= log_prob(greedy) - 1e-5).all()


def test_generation_stops_and_pads_after_eos():
    model, _ = make_models("sinusoidal", False)
    src = torch.randint(3, 20, (3, 5))
    with torch.no_grad():
        model.out_proj.weight.zero_()
        model.out_proj.weight[2, 0] = 1.0   # <eos> wins wherever feature 0 of the output is positive
    out = greedy_decode(model, src, 6)
    for row in out.tolist():
        if 2 in row:
            assert all(t == 0 for t in row[row.index(2) + 1:])


def test_sampling_is_reproducible_by_seed():
    _, lm = make_models("learned", True)
    prompt = torch.randint(3, 20, (2, 3))
    torch.manual_seed(5)
    a = lm.generate(prompt, 6, temperature=1.0, top_k=5)
    torch.manual_seed(5)
    b = lm.generate(prompt, 6, temperature=1.0, top_k=5)
    assert torch.equal(a, b)
