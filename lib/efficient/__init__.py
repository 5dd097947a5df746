"""Efficient attention (chapter 8): exact in less memory, sparse, low-rank and kernelized.

Tensors are ``[B, H, T, d]`` as in ``F.scaled_dot_product_attention``; masks are bool with lib's
meaning (``True`` = may attend). :func:`use_attention` puts any variant inside a model.
"""

from .blockwise import memory_efficient_attention
from .cost import cpu_seconds
from .kernelized import LinformerProjection, orthogonal_features, performer_attention, positive_features
from .memory import peak_tensor_memory
from .sparse import bigbird_mask, sliding_window_attention, sliding_window_mask
from .switch import VARIANTS, LinformerAttention, make_kernel, use_attention

__all__ = [
    "LinformerAttention",
    "LinformerProjection",
    "VARIANTS",
    "bigbird_mask",
    "cpu_seconds",
    "make_kernel",
    "memory_efficient_attention",
    "orthogonal_features",
    "peak_tensor_memory",
    "performer_attention",
    "positive_features",
    "sliding_window_attention",
    "sliding_window_mask",
    "use_attention",
]
