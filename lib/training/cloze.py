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


@torch.no_grad()
def sentence_log_probs(model: nn.Module, tokens: Tensor, pad_id: int) -> Tensor:
    """``[B]``: the log-probability a decoder-only ``model`` gives each whole row of ``tokens [B, T]``,
    :math:`\\sum_{t \\ge 2} \\log p_\\theta(w_t \\mid w_{<t})` over the positions that are not ``pad_id``
    (the first token, ``<bos>``, is given); on the CPU. Scoring every way to fill a gap and keeping the
    most probable lets the words on both sides of the gap count, with a causal model."""
    check_tensor("tokens", tokens)
    if tokens.dim() != 2 or tokens.size(1) < 2 or tokens.dtype != torch.long:
        raise ValueError(f"tokens must be [B, T] long token ids with T >= 2, got {tuple(tokens.shape)}, {tokens.dtype}")
    check_int("pad_id", pad_id, minimum=0)
    device = next(model.parameters()).device
    with eval_mode(model):
        logits = model(tokens[:, :-1].to(device)).float().cpu()  # [B, T-1, V]
    target = tokens[:, 1:].cpu()
    picked = logits.log_softmax(-1).gather(-1, target.unsqueeze(-1)).squeeze(-1)  # [B, T-1]
    return picked.masked_fill(target == pad_id, 0.0).sum(-1)
