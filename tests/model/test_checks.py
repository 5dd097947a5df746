"""One way to validate input (lib.model.checks): a wrong type is a TypeError, a wrong value a ValueError,
bools are not ints, and every module says so the same way."""

import math

import pytest
import torch

import lib
from lib.model.checks import check_choice, check_int, check_number, check_tokens
from lib.training.device import check_seed


def test_torch_keeps_a_seeds_lowest_32_bits():
    """Why check_seed exists: 2**40 + 3 draws what 3 draws, so a seed "far away" is not."""
    far, near = torch.Generator().manual_seed(2**40 + 3), torch.Generator().manual_seed(3)
    assert torch.equal(torch.randn(8, generator=far), torch.randn(8, generator=near))


def test_check_seed():
    assert check_seed("seed", 0) == 0
    assert check_seed("seed", 2**32 - 1) == 2**32 - 1
    with pytest.raises(TypeError, match=r"seed must be an int, got"):
        check_seed("seed", 1.0)
    for bad in (-1, 2**32, 2**40 + 3):
        with pytest.raises(ValueError, match=r"seed=.* must be in \[0, 2\*\*32\)"):
            check_seed("seed", bad)


@pytest.mark.parametrize(
    "draw",
    [
        lambda seed: lib.seed_everything(seed),
        lambda seed: lib.linked_list_batch(2, seed=seed),
        lambda seed: lib.centered_xor_batch(2, seed=seed),
        lambda seed: lib.efficient.orthogonal_features(4, 4, seed),
    ],
    ids=["seed_everything", "linked_list_batch", "centered_xor_batch", "orthogonal_features"],
)
def test_every_torch_seeded_function_refuses_a_seed_torch_would_fold(draw):
    draw(2**32 - 1)
    with pytest.raises(ValueError, match=r"it would draw what 3 draws"):
        draw(2**40 + 3)


def test_check_int():
    assert check_int("n", 3, minimum=1) == 3
    for bad in (2.5, True, "3", None):
        with pytest.raises(TypeError, match=r"n must be an int, got"):
            check_int("n", bad)
    with pytest.raises(ValueError, match=r"n=0 must be a positive int"):
        check_int("n", 0, minimum=1)
    with pytest.raises(ValueError, match=r"n=-1 must be a non-negative int"):
        check_int("n", -1, minimum=0)
    with pytest.raises(ValueError, match=r"n=2 must be an int >= 3"):
        check_int("n", 2, minimum=3)
    with pytest.raises(ValueError, match=r"n=11 must be <= 10"):
        check_int("n", 11, maximum=10)


def test_check_number_and_choice():
    assert check_number("p", 0, 0.0, 1.0, high_open=True) == 0.0
    for bad in (True, "0.1", None):
        with pytest.raises(TypeError, match=r"p must be a number"):
            check_number("p", bad, 0.0, 1.0)
    for bad in (1.0, -0.1, math.nan):
        with pytest.raises(ValueError, match=r"p=.* must be in \[0, 1\)"):
            check_number("p", bad, 0.0, 1.0, high_open=True)
    with pytest.raises(ValueError, match=r"x='c' is unknown; expected one of \['a', 'b'\]"):
        check_choice("x", "c", ["a", "b"])


def test_check_tokens_limits_length_only_when_asked():
    import torch

    tokens = torch.ones(2, 9, dtype=torch.long)
    check_tokens("src", tokens, vocab_size=5)  # no max_len: any length
    with pytest.raises(ValueError, match=r"src of length 9 is longer than max_len=8"):
        check_tokens("src", tokens, vocab_size=5, max_len=8)
    with pytest.raises(ValueError, match=r"outside the vocabulary \[0, 1\)"):
        check_tokens("src", tokens, vocab_size=1)


@pytest.mark.parametrize("bad", [2.5, True])
@pytest.mark.parametrize(
    "build",
    [
        lambda n: lib.MultiHeadAttention(n, 1),
        lambda n: lib.TransformerConfig(n, 10),
        lambda n: lib.LMConfig(n),
        lambda n: lib.Seq2SeqRNN(n, 8),
        lambda n: lib.make_task("copy", n),
        lambda n: lib.TaskStream("copy", n),
        lambda n: lib.causal_mask(n),
        lambda n: lib.FeedForward(8, n),
        lambda n: lib.seed_everything(n),
    ],
    ids=[
        "MultiHeadAttention",
        "TransformerConfig",
        "LMConfig",
        "Seq2SeqRNN",
        "make_task",
        "TaskStream",
        "causal_mask",
        "FeedForward",
        "seed_everything",
    ],
)
def test_every_module_rejects_a_non_int_size_with_a_type_error(build, bad):
    with pytest.raises(TypeError, match=r"must be an int, got"):
        build(bad)
