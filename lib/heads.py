r"""Looking inside the heads of a model: record their attention weights, switch heads off.

- :func:`record_attention` records the weights ``[B, H, T_q, T_k]`` of every attention layer;
- :func:`ablate_heads` zeroes chosen heads' outputs before ``W_O``
  (``head_h = 0`` in ``[head_0; …; head_{H-1}] W_O``, heads numbered from 0 as in the code)::

      with ablate_heads(model, {"layers.0.self_attn": [1]}):
          accuracy_without_head_1 = evaluate(model, test)

Michel et al. (2019) removed heads this way from trained Transformers and found that most of them
can go with little loss; chapter 4 repeats the experiment on a toy task.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager

from torch import Tensor, nn

from .model.attention import attention_layers  # lives in lib.model; lib.heads.attention_layers still works
from .model.checks import check_int


@contextmanager
def record_attention(model: nn.Module) -> Iterator[dict[str, Tensor]]:
    """Record the attention weights of every attention layer of ``model`` inside a ``with`` block.

    >>> with record_attention(model) as maps:
    ...     model(src, tgt)
    >>> maps["encoder_layers.0.self_attn"].shape   # [B, H, T_q, T_k], the last call's

    Each layer's :meth:`~lib.model.attention.MultiHeadAttention.attend` is asked for its weights
    (the explicit equation). A layer with an efficient ``kernel`` computes no weights: refused.
    """
    layers = attention_layers(model)
    for name, layer in layers.items():
        if layer.kernel is not None:
            raise ValueError(
                f"cannot record the attention weights of {name or 'the model'}: it computes attention with "
                f"kernel {layer.kernel!r}, which returns no weights; remove the kernel first"
            )
    maps: dict[str, Tensor] = {}

    def recording(name: str, attend):
        def attend_and_record(q, k, v, mask, is_causal, need_weights):
            out, weights = attend(q, k, v, mask, is_causal, need_weights=True)
            maps[name] = weights.detach()
            return out, weights if need_weights else None

        return attend_and_record

    try:
        for name, layer in layers.items():
            layer.attend = recording(name, layer.attend)  # an instance attribute hides the method
        yield maps
    finally:
        for layer in layers.values():
            layer.__dict__.pop("attend", None)


def zero_heads(heads: list[int], d_head: int):
    """A forward pre-hook for ``out_proj`` (``W_O``): zero the column blocks of ``heads`` in its input
    ``[B, T, H · d_head]``, the concatenated heads."""

    def hook(module: nn.Module, args: tuple[Tensor, ...]) -> tuple[Tensor, ...]:
        x = args[0].clone()  # [B, T, H * d_head], the concatenated heads
        for h in heads:
            x[..., h * d_head : (h + 1) * d_head] = 0.0
        return (x,)

    return hook


@contextmanager
def ablate_heads(model: nn.Module, heads: Mapping[str, Sequence[int]]) -> Iterator[nn.Module]:
    r"""Switch off some heads of ``model`` inside a ``with`` block; they come back afterwards.

    ``heads`` maps an attention layer's name (a key of :func:`attention_layers`) to the indices of
    the heads to remove, e.g. ``{"layers.0.self_attn": [0, 2]}``. Inside the block each listed head
    contributes nothing:

    .. math::
        \mathrm{MultiHead}(X) = [m_0 \mathrm{head}_0; \dots; m_{H-1} \mathrm{head}_{H-1}]\, W_O,
        \qquad m_h = 0 \text{ for a removed head, } 1 \text{ otherwise}

    A forward pre-hook on each listed layer's ``out_proj`` (``W_O``) zeroes the removed heads'
    column blocks of its input. The bias of ``W_O`` stays: a removed head's output is 0, not
    "absent". Blocks nest. Yields ``model``.
    """
    layers = attention_layers(model)
    if not isinstance(heads, Mapping):
        raise TypeError(f"heads must be a mapping {{layer name: [head, ...]}}, got {type(heads).__name__}")
    for name, indices in heads.items():
        if name not in layers:
            raise ValueError(
                f"heads names layer {name!r}, which is not an attention layer of the model; "
                f"expected one of {sorted(layers)}"
            )
        if isinstance(indices, (str, bytes)) or not isinstance(indices, Sequence):
            raise TypeError(f"heads[{name!r}] must be a sequence of head indices, got {indices!r}")
        for h in indices:
            check_int(f"heads[{name!r}] entry", h, minimum=0, maximum=layers[name].n_heads - 1)
    with ExitStack() as hooks:
        for name, indices in heads.items():
            layer = layers[name]
            handle = layer.out_proj.register_forward_pre_hook(zero_heads(list(indices), layer.d_head))
            hooks.callback(handle.remove)
        yield model
