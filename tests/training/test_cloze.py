"""lib.training.cloze: a model's distribution over a few candidates at one position."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from lib.training.cloze import cloze_accuracy, cloze_probabilities


class Fixed(nn.Module):
    """Logits that are a function of the token id at each position; remembers the modes it ran in."""

    def __init__(self, vocab: int = 10):
        super().__init__()
        self.table = nn.Parameter(torch.randn(vocab, vocab, generator=torch.Generator().manual_seed(1)))
        self.modes = []

    def forward(self, tokens):
        self.modes.append((self.training, torch.is_grad_enabled()))
        return self.table[tokens]  # [B, T, V]


def test_the_distribution_is_the_softmax_over_the_candidates_at_the_position() -> None:
    model = Fixed()
    prompts = torch.tensor([[1, 2, 3], [4, 5, 6]])
    p = cloze_probabilities(model, prompts, 1, [7, 2, 9])
    expected = model.table[prompts[:, 1]][:, [7, 2, 9]].softmax(-1)
    torch.testing.assert_close(p, expected.detach())
    torch.testing.assert_close(p.sum(-1), torch.ones(2))
    torch.testing.assert_close(
        cloze_probabilities(model, prompts, -1, [7, 2]), cloze_probabilities(model, prompts, 2, [7, 2])
    )


@pytest.mark.parametrize("training", [True, False])
def test_runs_in_eval_mode_without_a_graph_and_restores_the_mode(training) -> None:
    model = Fixed().train(training)
    cloze_probabilities(model, torch.tensor([[1, 2]]), 0, [3, 4])
    assert model.modes == [(False, False)] and model.training is training


def test_accuracy_counts_the_rows_whose_most_probable_candidate_is_the_answer() -> None:
    p = torch.tensor([[0.7, 0.3], [0.2, 0.8], [0.6, 0.4]])
    assert cloze_accuracy(p, torch.tensor([0, 1, 1])) == pytest.approx(2 / 3)


@pytest.mark.parametrize(
    "args, error, match",
    [
        (([[1, 2]], 0, [3]), TypeError, "prompts"),
        ((torch.tensor([1, 2]), 0, [3]), ValueError, "prompts"),
        ((torch.tensor([[1, 2]]), 2, [3]), ValueError, "position"),
        ((torch.tensor([[1, 2]]), 0.0, [3]), TypeError, "position"),
        ((torch.tensor([[1, 2]]), 0, []), TypeError, "candidate_ids"),
        ((torch.tensor([[1, 2]]), 0, [3, 1.0]), TypeError, "candidate_ids"),
        ((torch.tensor([[1, 2]]), 0, [3, 10]), ValueError, "candidate_ids"),
    ],
)
def test_cloze_probabilities_refuses_bad_input(args, error, match) -> None:
    with pytest.raises(error, match=match):
        cloze_probabilities(Fixed(), *args)


def test_cloze_accuracy_refuses_mismatched_shapes() -> None:
    with pytest.raises(ValueError, match="answers"):
        cloze_accuracy(torch.ones(3, 2), torch.zeros(2, dtype=torch.long))
    with pytest.raises(TypeError, match="answers"):
        cloze_accuracy(torch.ones(3, 2), [0, 1, 1])


def test_sentence_log_probs_sums_the_next_token_log_probabilities_before_padding() -> None:
    from lib.training.cloze import sentence_log_probs

    model = Fixed().train()
    rows = torch.tensor([[1, 2, 3, 4], [5, 6, 0, 0]])
    got = sentence_log_probs(model, rows, pad_id=0)
    log_p = model.table.detach().log_softmax(-1)
    expected = torch.stack([log_p[1, 2] + log_p[2, 3] + log_p[3, 4], log_p[5, 6]])
    torch.testing.assert_close(got, expected)
    assert model.training and model.modes[-1] == (False, False)  # eval mode, no graph, restored
    with pytest.raises(ValueError, match="tokens"):
        sentence_log_probs(model, torch.tensor([1, 2, 3]), pad_id=0)
    with pytest.raises(ValueError, match="tokens"):
        sentence_log_probs(model, torch.tensor([[1]]), pad_id=0)
    with pytest.raises(TypeError):
        sentence_log_probs(model, rows, pad_id="0")
