"""The Transformer itself, in one small package that imports only torch.

Read it in this order: :mod:`~lib.model.masks`, :mod:`~lib.model.attention`,
:mod:`~lib.model.positions`, :mod:`~lib.model.layers`, :mod:`~lib.model.embedding`,
:mod:`~lib.model.transformer` (encoder-decoder), :mod:`~lib.model.lm` (decoder-only),
:mod:`~lib.model.generation` (greedy, sampling, beam search, key/value cache).
"""

from .attention import (
    KVCache,
    MultiHeadAttention,
    RelativeMultiHeadAttention,
    fused_attention,
    scaled_dot_product_attention,
)
from .generation import beam_search, generate_tokens, greedy_decode
from .layers import DecoderLayer, DecoderOnlyLayer, EncoderLayer, FeedForward, LayerCache
from .lm import DecoderOnlyLM, LMConfig
from .masks import causal_mask, padding_mask
from .modes import eval_mode
from .positions import (
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from .transformer import Transformer, TransformerConfig
