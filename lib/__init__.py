"""lib: the Transformer of CS224N Lecture 8, one readable module per concept.

Chapters import everything from here::

    from lib import MultiHeadAttention, Transformer, TransformerConfig, make_task, train
"""
from .claims import claim
from .attention import KVCache, MultiHeadAttention, record_attention, scaled_dot_product_attention
from .batching import Batch, LMBatch, Seq2SeqDataset, Vocab, collate, to_lm_batch
from .data import TaskStream, centered_xor_batch, make_task
from .decoding import beam_search, generate_tokens, greedy_decode
from .layers import DecoderLayer, EncoderLayer, FeedForward, LayerCache
from .lm import DecoderOnlyLM, LMConfig
from .masks import causal_mask, padding_mask
from .positions import (
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from .plots import plot_attention, plot_attention_grid, plot_history, set_theme
from .rnn import AdditiveAttention, Seq2SeqRNN
from .schedules import make_schedule, noam_lr
from .train import History, evaluate, lm_loss, seq2seq_loss, train
from .transformer import Transformer, TransformerConfig
from .utils import default_device, seed_everything, show_source

__version__ = "0.1.0"
from . import efficient
from .efficient import (
    LinformerAttention,
    bigbird_mask,
    memory_efficient_attention,
    performer_attention,
    sliding_window_mask,
    use_attention,
)
