r"""A toy task that needs two different look-ups per token at once (chapter 4, multi-head attention).

**The linked list.** A sequence holds ``n_items`` nodes of a cycle, in a random order. Node ``i`` is
one token with three fields: its own ``name`` :math:`a_i`, the name of the next node
:math:`p_i` (its *pointer*), and a ``colour`` :math:`c_i`. Every node must output two colours:

.. math::
    y_i = \bigl(c_{\mathrm{next}(i)},\; c_{\mathrm{prev}(i)}\bigr), \qquad
    \mathrm{next}(i) = \text{the } j \text{ with } a_j = p_i, \qquad
    \mathrm{prev}(i) = \text{the } j \text{ with } p_j = a_i .

Both are look-ups by content, but by *different* content: the next node is the one whose name
matches my pointer, the previous one the node whose pointer matches my name. One attention head
computes one weighted average per token; two heads can make the two look-ups side by side.

The two colours are returned as one class ``c_next · n_colours + c_prev`` (so :func:`lib.lm_loss`
and :func:`lib.evaluate` apply unchanged), and :class:`~lib.lookup_model.LinkedListModel` scores
that class as the sum of two independent read-outs, which makes its cross-entropy the sum of the two
colours' losses (:func:`linked_list_loss` computes it that way, over ``n_colours`` classes twice
instead of ``n_colours²`` once). The model lives in :mod:`lib.lookup_model` (it is a model, not training); it is
re-exported here, where chapter 4 imports it from.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from ..lookup_model import LinkedListModel
from ..model import eval_mode
from ..model.checks import check_int, check_tensor
from .data import LMBatch
from .device import check_seed

__all__ = [
    "LinkedListModel",
    "linked_list_batch",
    "linked_list_loss",
    "linked_list_neighbours",
    "neighbour_accuracy",
    "neighbour_attention",
]


def linked_list_batch(
    batch_size: int,
    n_items: int = 12,
    n_names: int = 16,
    n_colours: int = 16,
    *,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> LMBatch:
    """A batch of the linked-list task (see the module docstring).

    Each sequence: ``n_items`` distinct names drawn from ``n_names``, linked into one random cycle,
    listed in a random order, each node with a colour drawn uniformly from ``n_colours``.

    Returns an :class:`~lib.training.data.LMBatch`: ``input`` long ``[B, T, 3]`` with the fields
    ``(name, pointer, colour)``; ``target`` long ``[B, T]``, the class
    ``c_next · n_colours + c_prev``; ``pad_id = -100`` (nothing is padding). The same ``seed``
    gives the same batch (generated on the CPU, then moved to ``device``).
    """
    check_int("batch_size", batch_size, minimum=1)
    check_int("n_items", n_items, minimum=2)
    check_int("n_names", n_names, minimum=n_items)
    check_int("n_colours", n_colours, minimum=2)
    check_seed("seed", seed)
    g = torch.Generator().manual_seed(seed)
    B, T = batch_size, n_items
    cycle = torch.rand(B, T, generator=g).argsort(dim=-1)  # positions, in cycle order
    nxt = torch.empty_like(cycle).scatter_(1, cycle, cycle.roll(-1, dims=1))  # next(i)  [B, T]
    prv = torch.empty_like(cycle).scatter_(1, cycle, cycle.roll(1, dims=1))  # prev(i)  [B, T]
    names = torch.rand(B, n_names, generator=g).argsort(dim=-1)[:, :T]  # a_i, distinct
    pointers = names.gather(1, nxt)  # p_i = a_next(i)
    colours = torch.randint(n_colours, (B, T), generator=g)  # c_i
    target = colours.gather(1, nxt) * n_colours + colours.gather(1, prv)
    fields = torch.stack([names, pointers, colours], dim=-1)  # [B, T, 3]
    return LMBatch(fields, target, pad_id=-100).to(device)


def linked_list_neighbours(fields: Tensor) -> tuple[Tensor, Tensor]:
    """The positions of each node's next and previous node, ``([B, T], [B, T])``, from the fields.

    ``next(i)`` is the ``j`` whose name equals ``i``'s pointer; ``prev(i)`` the ``j`` whose pointer
    equals ``i``'s name. These are the two positions a node must look up.
    """
    check_tensor("fields", fields)
    if fields.dim() != 3 or fields.size(-1) != 3:
        raise ValueError(f"fields must be [B, T, 3] (name, pointer, colour), got {tuple(fields.shape)}")
    names, pointers = fields[..., 0], fields[..., 1]
    nxt = (pointers[:, :, None] == names[:, None, :]).long().argmax(dim=-1)
    prv = (names[:, :, None] == pointers[:, None, :]).long().argmax(dim=-1)
    return nxt, prv


def linked_list_loss(model: nn.Module, batch: LMBatch) -> Tensor:
    r""":func:`lib.lm_loss` of a :class:`LinkedListModel` on the linked list, computed from its read-outs.

    The class ``c · N + c'`` scores :math:`a_c + b_{c'}` (``N = n_colours``), so its log-softmax over
    the :math:`N^2` pairs is :math:`\log\mathrm{softmax}(a)_c + \log\mathrm{softmax}(b)_{c'}`: the
    cross-entropy is the sum of the two colours' cross-entropies, each over ``N`` classes. Same
    value as ``lm_loss`` (up to float rounding), without the ``[B, T, N²]`` logits.
    """
    if not isinstance(batch, LMBatch):
        raise TypeError(f"batch must be an LMBatch from linked_list_batch, got {type(batch).__name__}")
    next_logits, prev_logits = model.readouts(batch.input)
    n, target = next_logits.size(-1), batch.target
    keep = target != batch.pad_id
    next_target = torch.where(keep, target // n, -100).flatten()
    prev_target = torch.where(keep, target % n, -100).flatten()
    return F.cross_entropy(next_logits.flatten(0, -2), next_target) + F.cross_entropy(
        prev_logits.flatten(0, -2), prev_target
    )


def _checked(model: nn.Module, fields: Tensor) -> Tensor:
    """The batch's ids checked once at the evaluation's entry (`LinkedListModel.check_fields`)."""
    check = getattr(model, "check_fields", None)
    return check(fields) if check is not None else fields


@torch.no_grad()
def neighbour_accuracy(model: nn.Module, batch: LMBatch) -> dict[str, float]:
    """The fraction of nodes whose next colour, previous colour, and both colours are right.

    Returns ``{"next": …, "prev": …, "both": …}`` (``"both"`` is :func:`lib.evaluate`'s
    ``token_accuracy``: the best pair of colours is the pair of the two best). ``model`` needs
    ``readouts`` (:class:`LinkedListModel`). The model's training mode is restored afterwards.
    """
    if not isinstance(batch, LMBatch):
        raise TypeError(f"batch must be an LMBatch from linked_list_batch, got {type(batch).__name__}")
    device = next(model.parameters()).device
    batch = batch.to(device)
    with eval_mode(model):
        next_logits, prev_logits = model.readouts(_checked(model, batch.input))  # the best pair: the two best colours
    n, target = next_logits.size(-1), batch.target
    next_ok, prev_ok = next_logits.argmax(dim=-1) == target // n, prev_logits.argmax(dim=-1) == target % n
    return {
        "next": next_ok.float().mean().item(),
        "prev": prev_ok.float().mean().item(),
        "both": (next_ok & prev_ok).float().mean().item(),
    }


@torch.no_grad()
def neighbour_attention(model: nn.Module, batch: LMBatch) -> dict[str, Tensor]:
    r"""How much attention each head puts on each node's next and previous node.

    For every attention layer of ``model`` (by name) a tensor ``[H, 2]``: column 0 is
    :math:`\frac{1}{BT}\sum_{b,i} \alpha^{h}_{i,\mathrm{next}(i)}`, column 1 the same for
    :math:`\mathrm{prev}(i)` — the share of head ``h``'s attention that lands on the node its role
    would predict. 1 means the head looks only there; a head that ignored both would score about
    ``1 / n_items``.
    """
    from ..heads import record_attention

    if not isinstance(batch, LMBatch):
        raise TypeError(f"batch must be an LMBatch from linked_list_batch, got {type(batch).__name__}")
    device = next(model.parameters()).device
    batch = batch.to(device)
    nxt, prv = linked_list_neighbours(batch.input)  # [B, T] each
    with eval_mode(model), record_attention(model) as maps:
        model.readouts(_checked(model, batch.input))
    result = {}
    for name, w in maps.items():  # w [B, H, T, T]
        on_next = w.gather(-1, nxt[:, None, :, None].expand(-1, w.size(1), -1, 1)).mean(dim=(0, 2, 3))
        on_prev = w.gather(-1, prv[:, None, :, None].expand(-1, w.size(1), -1, 1)).mean(dim=(0, 2, 3))
        result[name] = torch.stack([on_next, on_prev], dim=-1).cpu()  # [H, 2]
    return result
