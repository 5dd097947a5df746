r"""Reading what a model predicts at one position, among a few candidates: the cloze of chapter 10.

A cloze prompt is a sentence with a gap: ``Kato was born in`` (the gap is the next token, for a
decoder-only model) or ``<mask> is where Kato was born .`` (the gap is the ``<mask>``, for an encoder).
The model's answer is read at the gap's position ``t``, among the candidate tokens ``c_1 … c_C`` (the
places), as the softmax of their logits alone:

.. math::
    p(c_j \mid \text{prompt}) = \frac{\exp z_{t, c_j}}{\sum_{k=1}^{C} \exp z_{t, c_k}} ,

which is the model's full distribution at ``t`` renormalised over the candidates.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor, nn

from ..model import eval_mode
from ..model.checks import check_int, check_tensor


@torch.no_grad()
def cloze_probabilities(model: nn.Module, prompts: Tensor, position: int, candidate_ids: Sequence[int]) -> Tensor:
    """``[B, C]``: for each prompt of ``prompts [B, T]``, the distribution of ``model(prompts)`` at
    ``position`` over ``candidate_ids`` (see the module docstring); on the CPU.

    ``model`` maps token ids ``[B, T]`` to logits ``[B, T, V]`` (a :class:`~lib.model.lm.DecoderOnlyLM`, or
    an encoder with an output projection). It runs in eval mode, which is restored afterwards.
    """
    check_tensor("prompts", prompts)
    if prompts.dim() != 2:
        raise ValueError(f"prompts must be [B, T] token ids, got shape {tuple(prompts.shape)}")
    check_int("position", position, minimum=-prompts.size(1), maximum=prompts.size(1) - 1)
    if isinstance(candidate_ids, (str, Tensor)) or not isinstance(candidate_ids, Sequence) or not candidate_ids:
        raise TypeError(f"candidate_ids must be a non-empty list of token ids, got {candidate_ids!r}")
    ids = [check_int("candidate_ids", i, minimum=0) for i in candidate_ids]
    device = next(model.parameters()).device
    with eval_mode(model):
        logits = model(prompts.to(device))[:, position]  # [B, V]
    if max(ids) >= logits.size(-1):
        raise ValueError(f"candidate_ids hold {max(ids)}, outside the model's vocabulary of {logits.size(-1)}")
    return logits[:, ids].softmax(dim=-1).cpu()


def cloze_accuracy(probabilities: Tensor, answers: Tensor) -> float:
    """The share of rows of ``probabilities [B, C]`` whose most probable candidate is ``answers [B]``
    (indices into the candidates)."""
    check_tensor("probabilities", probabilities)
    check_tensor("answers", answers)
    if probabilities.dim() != 2 or answers.shape != probabilities.shape[:1]:
        raise ValueError(
            f"probabilities [B, C] and answers [B] do not match: {tuple(probabilities.shape)}, {tuple(answers.shape)}"
        )
    return (probabilities.argmax(dim=-1) == answers.to(probabilities.device)).float().mean().item()
