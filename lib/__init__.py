"""lib: the Transformer of CS224N Lecture 8, one readable module per concept.

Chapters import everything from here::

    from lib import MultiHeadAttention, Transformer, TransformerConfig, make_task, train
"""
from .attention import KVCache, MultiHeadAttention, record_attention, scaled_dot_product_attention
from .decoding import beam_search, generate_tokens, greedy_decode
from .layers import DecoderLayer, EncoderLayer, FeedForward
from .lm import DecoderOnlyLM
from .masks import causal_mask, padding_mask
from .positions import (
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from .transformer import Transformer, TransformerConfig

__version__ = "0.1.0"
