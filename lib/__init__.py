"""lib: the Transformer of CS224N Lecture 8, one readable module per concept.

Chapters import everything from here::

    from lib import MultiHeadAttention, Transformer, TransformerConfig, make_task, train

The schematics are in :mod:`lib.diagrams`, the efficient attention variants in :mod:`lib.efficient`,
the benchmarks in :mod:`lib.bench` (``python -m lib.bench``), and the loader of a real pretrained
model in :mod:`lib.pretrained` (its dependencies are imported only when a model is loaded).
"""

from . import diagrams, efficient
from .attention import KVCache, MultiHeadAttention, record_attention, scaled_dot_product_attention
from .batching import Batch, LMBatch, Seq2SeqDataset, Vocab, collate, to_lm_batch
from .claims import claim
from .data import TaskStream, centered_xor_batch, make_task
from .decoding import beam_search, generate_tokens, greedy_decode
from .efficient import (
    LinformerAttention,
    bigbird_mask,
    memory_efficient_attention,
    performer_attention,
    sliding_window_mask,
    use_attention,
)
from .heads import ablate_heads, attention_layers
from .layers import DecoderLayer, EncoderLayer, FeedForward, LayerCache
from .lm import DecoderOnlyLM, LMConfig
from .lookup import (
    LinkedListModel,
    linked_list_batch,
    linked_list_neighbours,
    neighbour_accuracy,
    neighbour_attention,
)
from .masks import causal_mask, padding_mask
from .plots import plot_attention, plot_attention_grid, plot_history, set_theme
from .positions import (
    LearnedPositionalEmbedding,
    RelativePositionEmbedding,
    RotaryEmbedding,
    SinusoidalPositionalEncoding,
)
from .pretrained import load_minilm, sentence_embeddings
from .rnn import AdditiveAttention, Seq2SeqRNN
from .schedules import make_schedule, noam_lr
from .train import History, evaluate, lm_loss, seq2seq_loss, train
from .transformer import Transformer, TransformerConfig
from .utils import default_device, seed_everything, show_source

__version__ = "0.1.0"
