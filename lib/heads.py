"""Looking inside the heads of a trained model: switch heads off, and measure what each one does.

Head ablation zeroes a head's output before the heads are concatenated (``head_h = 0`` in
``[head_1; …; head_H] W^O``), through :attr:`MultiHeadAttention.head_mask`::

    with ablate_heads(model, {"layers.0.self_attn": [1]}):
        accuracy_without_head_1 = evaluate(model, test)

Michel et al. (2019) removed heads this way from trained Transformers and found that most of them
can go with little loss; chapter 4 repeats the experiment on a toy task.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

import torch
from torch import Tensor, nn

from .model.attention import MultiHeadAttention
from .model.checks import check_int, check_tensor


def attention_layers(model: nn.Module) -> dict[str, MultiHeadAttention]:
    """Every :class:`MultiHeadAttention` in ``model``, by its module name (``"layers.0.self_attn"``)."""
    if not isinstance(model, nn.Module):
        raise TypeError(f"model must be a torch.nn.Module, got {type(model).__name__}")
    return {name: m for name, m in model.named_modules() if isinstance(m, MultiHeadAttention)}


@contextmanager
def ablate_heads(model: nn.Module, heads: Mapping[str, Sequence[int]]) -> Iterator[nn.Module]:
    r"""Switch off some heads of ``model`` inside a ``with`` block; they come back afterwards.

    ``heads`` maps an attention layer's name (a key of :func:`attention_layers`) to the indices of
    the heads to remove, e.g. ``{"layers.0.self_attn": [0, 2]}``. Inside the block each listed head
    contributes nothing:

    .. math::
        \mathrm{MultiHead}(X) = [m_1 \mathrm{head}_1; \dots; m_H \mathrm{head}_H]\, W^O,
        \qquad m_h = 0 \text{ for a removed head, } 1 \text{ otherwise}

    (``head_mask`` ``[H]`` of every listed layer; a mask already set is multiplied, then restored).
    The bias of ``W^O`` stays: a removed head's output is 0, not "absent". Yields ``model``.
    """
    layers = attention_layers(model)
    if not isinstance(heads, Mapping):
        raise TypeError(f"heads must be a mapping {{layer name: [head, ...]}}, got {type(heads).__name__}")
    masks: dict[str, Tensor] = {}
    for name, indices in heads.items():
        if name not in layers:
            raise ValueError(
                f"heads names layer {name!r}, which is not an attention layer of the model; "
                f"expected one of {sorted(layers)}"
            )
        layer = layers[name]
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Sequence):
            raise TypeError(f"heads[{name!r}] must be a sequence of head indices, got {indices!r}")
        device = layer.q_proj.weight.device
        mask = torch.ones(layer.n_heads, device=device)
        for h in indices:
            check_int(f"heads[{name!r}] entry", h, minimum=0, maximum=layer.n_heads - 1)
            mask[h] = 0.0
        masks[name] = mask
    saved = {name: layers[name].head_mask for name in masks}
    try:
        for name, mask in masks.items():
            old = saved[name]
            layers[name].head_mask = mask if old is None else mask * check_tensor("head_mask", old).to(mask)
        yield model
    finally:
        for name, old in saved.items():
            layers[name].head_mask = old
