"""The Transformer itself, in one small package that imports only torch. Read it in this order:
masks, attention, positions, layers, embedding, transformer (encoder-decoder), lm (decoder-only),
generation (greedy, sampling, beam search, key/value cache); checks validates inputs.
"""

from .attention import KVCache, MultiHeadAttention, RelativeMultiHeadAttention, scaled_dot_product_attention
from .generation import beam_search, eval_mode, generate_tokens, greedy_decode
from .layers import DecoderLayer, DecoderOnlyLayer, EncoderLayer, FeedForward, LayerCache
from .lm import DecoderOnlyLM, LMConfig
from .masks import causal_mask, padding_mask
from .positions import (
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from .transformer import Transformer, TransformerConfig
