"""One switch: make every :class:`~lib.MultiHeadAttention` in a model use an efficient variant.

>>> use_attention(model, "sliding_window", window=8)   # every attention layer now sees ±8 tokens
>>> use_attention(model, "full")                       # back to softmax(QKᵀ/√d_k) V

It sets ``MultiHeadAttention.kernel``, the seam through which an attention layer hands its
``q, k, v [B, H, T, d_head]``, mask (``True`` = may attend), ``is_causal`` and ``scale`` to a function
that returns ``out [B, H, T_q, d_head]``. The projections ``W_Q, W_K, W_V, W_O`` stay as they are.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from functools import partial

from torch import Tensor, nn

from ..model.attention import MultiHeadAttention, attention_layers
from ..model.checks import check_choice
from ..model.layers import DecoderLayer
from .blockwise import memory_efficient_attention
from .kernelized import LinformerProjection, performer_attention
from .sparse import bigbird_mask, sliding_window_attention, sliding_window_mask

Kernel = Callable[..., Tensor]
VARIANTS = ("full", "memory_efficient", "sliding_window", "bigbird", "performer", "linformer")
PATTERNS = ("sliding_window", "bigbird")
SHIFT_INVARIANT = (
    "memory_efficient",
    "sliding_window",
    "bigbird",
)  # exact softmax kernels (see make_kernel)  # patterns over the positions of one sequence: self-attention only


def _with_pattern(pattern: Tensor, mask: Tensor | None, T_q: int) -> Tensor:
    pattern = pattern[-T_q:]  # the rows of the last T_q queries
    return pattern if mask is None else mask & pattern


def memory_efficient_kernel(q, k, v, mask, is_causal, scale, block_size: int = 128) -> Tensor:
    return memory_efficient_attention(q, k, v, mask, is_causal, scale, block_size)


def sliding_window_kernel(q, k, v, mask, is_causal, scale, window: int, block_size: int = 64) -> Tensor:
    T_q, T_k = q.size(-2), k.size(-2)
    if T_q == T_k:
        return sliding_window_attention(q, k, v, window, mask, is_causal, scale, block_size)
    mask = _with_pattern(sliding_window_mask(T_k, window, q.device), mask, T_q)  # decoding with a cache
    return memory_efficient_attention(q, k, v, mask, is_causal, scale)


def bigbird_kernel(q, k, v, mask, is_causal, scale, window: int, n_global: int, n_random: int, seed: int = 0) -> Tensor:
    T_q, T_k = q.size(-2), k.size(-2)
    pattern = bigbird_mask(T_k, window, n_global, n_random, seed, q.device)
    return memory_efficient_attention(q, k, v, _with_pattern(pattern, mask, T_q), is_causal, scale)


def performer_kernel(q, k, v, mask, is_causal, scale, n_features: int = 256, seed: int = 0) -> Tensor:
    if is_causal:
        raise ValueError("performer_attention is non-causal; got is_causal=True (use it in an encoder)")
    return performer_attention(q, k, v, n_features, seed, scale, mask)


def make_kernel(name: str, **options) -> Kernel | None:
    """The kernel of variant ``name`` (``None`` for ``"full"``), with its options bound.

    Options: ``memory_efficient``: ``block_size``; ``sliding_window``: ``window``;
    ``bigbird``: ``window, n_global, n_random, seed``; ``performer``: ``n_features, seed``;
    ``linformer``: ``k, max_len, init`` (a new :class:`LinformerProjection`, with parameters).
    """
    kernels = {
        "memory_efficient": memory_efficient_kernel,
        "sliding_window": sliding_window_kernel,
        "bigbird": bigbird_kernel,
        "performer": performer_kernel,
    }
    check_choice("name", name, VARIANTS)
    if name == "full":
        if options:
            raise TypeError(f"'full' attention takes no options, got {sorted(options)}")
        return None
    if name == "linformer":
        return LinformerProjection(**options)
    kernel = kernels[name]
    try:  # check the options now, not at the first forward
        inspect.signature(kernel).bind(None, None, None, None, False, None, **options)
    except TypeError as error:
        raise TypeError(f"attention variant {name!r}: bad options {sorted(options)} ({error})") from None
    bound = partial(kernel, **options)
    # An exact softmax over the scores q·k (all three patterns here compute one) does not change when a
    # row of scores shifts by a constant, so the key bias b_K gets no gradient: the training loop then
    # gives it an exact zero instead of rounding noise (lib.training.step.inert_parameters).
    bound.shift_invariant = name in SHIFT_INVARIANT
    return bound


def use_attention(model: nn.Module, name: str, **options) -> nn.Module:
    """Make every ``MultiHeadAttention`` in ``model`` compute attention with variant ``name``.

    ``name`` is one of :data:`VARIANTS`; ``options`` as in :func:`make_kernel`. ``"full"`` removes
    the variant. Each layer gets its own kernel (a Linformer's ``E, F`` become its parameters, so
    create the optimizer *after* this call). Returns ``model``, changed in place.

    The sparse patterns (:data:`PATTERNS`: ``"sliding_window"``, ``"bigbird"``) say which *positions of
    one sequence* see each other, so they apply to self-attention only. Cross-attention (every
    ``cross_attn`` of a :class:`~lib.model.layers.DecoderLayer`) relates two sequences of different
    lengths, where ``|i − j| ≤ w`` means nothing: it keeps full attention, computed exactly and
    blockwise (the ``"memory_efficient"`` kernel), as Longformer's and BigBird's encoder-decoders do.
    With it, teacher forcing and cached decoding give the same logits, whatever the two lengths, for
    ``"sliding_window"`` and for ``"bigbird"``, random keys included: a row's random keys are earlier
    keys fixed by its position and the seed, not by the length (:func:`~lib.efficient.sparse.bigbird_mask`),
    so the pattern of a prefix is the prefix of the pattern, and a decoder that grows its output one
    token at a time sees the rows that teacher forcing sees.
    """
    layers = attention_layers(model)  # every MultiHeadAttention, by name
    if not layers:
        raise ValueError(f"model ({type(model).__name__}) contains no MultiHeadAttention")
    cross = {id(m.cross_attn) for m in model.modules() if isinstance(m, DecoderLayer)}
    make_kernel(name, **options)  # bad options fail here, before any layer changes
    device = next(model.parameters()).device
    for layer in layers.values():
        cross_pattern = name in PATTERNS and id(layer) in cross
        kernel = make_kernel("memory_efficient") if cross_pattern else make_kernel(name, **options)
        layer.kernel = kernel.to(device) if isinstance(kernel, nn.Module) else kernel
    return model


class LinformerAttention(MultiHeadAttention):
    r"""Multi-head attention with Linformer's projections (Wang et al., 2020): same forward as
    :class:`~lib.MultiHeadAttention` (``forward(query, key, value, mask=None, ...)``).

    .. math::
        \mathrm{head}_h = \mathrm{softmax}\!\left(\frac{Q_h (E K_h)^\top}{\sqrt{d_k}}\right) F V_h,
        \qquad E, F \in \mathbb{R}^{k \times T}

    One :class:`LinformerProjection` (``E, F``) is shared by the heads of the layer, as in the
    paper's headwise sharing. Keys and values longer than ``max_len`` are refused.
    """

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        k: int,
        max_len: int,
        dropout: float = 0.0,
        bias: bool = True,
        init: str = "pool",
    ):
        super().__init__(d_model, n_heads, dropout, bias)
        self.kernel = LinformerProjection(k, max_len, init)
