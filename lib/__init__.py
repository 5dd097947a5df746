"""lib: the Transformer of CS224N Lecture 8, and what the book needs around it.

The model is :mod:`lib.model` (it imports only torch); around it, by role:

- :mod:`lib.training`: the toy tasks, batching, the training loop, learning-rate schedules;
- :mod:`lib.book`: claims, ``show_source``, plots and the schematics (:mod:`lib.book.diagrams`);
- :mod:`lib.heads`: switch heads off and record attention weights;
- :mod:`lib.rnn`: the LSTM baselines; :mod:`lib.lookup_model`: chapter 4's linked-list model;
- :mod:`lib.efficient`: efficient attention;
- :mod:`lib.pretrained`: a real pretrained encoder; :mod:`lib.classifier`: it with a classification head,
  fine-tuned on :mod:`lib.reviews` (real movie reviews); :mod:`lib.translation`: real English–Spanish
  sentence pairs, their words and BLEU/chrF; :mod:`lib.bench`: benchmarks (``python -m lib.bench``).

Chapters import everything from here::

    from lib import MultiHeadAttention, Transformer, TransformerConfig, make_task, train

Names are loaded on first use (a module-level ``__getattr__``), so ``import lib`` or
``import lib.model`` loads no plotting library and no benchmark.
"""

from __future__ import annotations

import importlib

__version__ = "0.1.0"

# Every public name, by the module that defines it.
_EXPORTS = {
    "model.attention": [
        "KVCache",
        "MultiHeadAttention",
        "RelativeMultiHeadAttention",
        "attention_layers",
        "fused_attention",
        "scaled_dot_product_attention",
    ],
    "model.masks": ["causal_mask", "padding_mask"],
    "model.positions": [
        "LearnedPositionalEmbedding",
        "RelativePositionEmbedding",
        "RotaryEmbedding",
        "SinusoidalPositionalEncoding",
    ],
    "model.layers": ["DecoderLayer", "DecoderOnlyLayer", "EncoderLayer", "FeedForward", "LayerCache"],
    "model.transformer": ["Transformer", "TransformerConfig"],
    "model.lm": ["DecoderOnlyLM", "LMConfig"],
    "model.generation": ["beam_search", "eval_mode", "generate_tokens", "greedy_decode"],
    "heads": ["ablate_heads", "record_attention"],
    "rnn": ["AdditiveAttention", "Seq2SeqRNN"],
    "training.batching": ["Batch", "LMBatch", "Seq2SeqDataset", "Vocab", "collate", "to_lm_batch"],
    "training.data": ["TaskStream", "centered_xor_batch", "make_task"],
    "training.device": ["default_device", "seed_block", "seed_everything"],
    "lookup_model": ["LinkedListModel"],
    "training.lookup": [
        "linked_list_batch",
        "linked_list_neighbours",
        "neighbour_accuracy",
        "neighbour_attention",
    ],
    "training.world": ["World", "make_world"],
    "training.masking": [
        "corrupt_span",
        "corrupt_spans",
        "mask_tokens",
        "restore_spans",
        "span_corruption_batch",
        "span_infilling_batch",
    ],
    "training.cloze": ["cloze_accuracy", "cloze_probabilities", "sentence_log_probs"],
    "training.schedules": ["make_schedule", "noam_lr"],
    "training.losses": ["lm_loss", "seq2seq_loss"],
    "training.evaluation": ["evaluate"],
    "training.loop": ["History"],
    "training.options": ["TrainingOptions"],
    "training.train": ["train"],
    "training.ensemble": ["NotFoldedWarning", "train_ensemble"],
    "book.claims": ["claim", "check"],
    "book.explorers.attention": ["attention_explorer"],
    "book.explorers.decoding": ["decoding_explorer"],
    "book.explorers.masks": ["mask_explorer"],
    "book.explorers.similarity": ["similarity_explorer"],
    "book.explorers.softmax": ["softmax_explorer"],
    "book.plots": ["plot_attention", "plot_attention_grid", "plot_history", "set_theme"],
    "book.source": ["show_source"],
    "efficient": [
        "LinformerAttention",
        "bigbird_mask",
        "memory_efficient_attention",
        "performer_attention",
        "sliding_window_mask",
        "use_attention",
    ],
    "pretrained": ["load_minilm", "sentence_embeddings"],
    "classifier": ["ClassifierTop", "SequenceClassifier", "frozen_features", "load_minilm_classifier"],
    "reviews": ["bag_of_words", "load_reviews"],
    "translation": [
        "SentencePairs",
        "WordVocab",
        "corpus_scores",
        "detokenize",
        "grouped_references",
        "load_tatoeba",
        "sentence_groups",
        "split_pairs",
        "tokenize",
        "translate",
        "translation_dataset",
        "words_only",
    ],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
_SUBPACKAGES = (
    "model",
    "training",
    "book",
    "heads",
    "rnn",
    "lookup_model",
    "efficient",
    "bench",
    "pretrained",
    "classifier",
    "reviews",
    "translation",
)

__all__ = sorted(_WHERE)


def __getattr__(name: str):
    if name in _WHERE:
        value = getattr(importlib.import_module(f"{__name__}.{_WHERE[name]}"), name)
    elif name in _SUBPACKAGES:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module 'lib' has no attribute {name!r}")
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_WHERE, *_SUBPACKAGES])
