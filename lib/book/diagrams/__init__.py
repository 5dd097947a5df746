"""Schematic figures of the mechanisms the chapters teach, drawn by code (see :mod:`.canvas`).

Each function returns a matplotlib ``Figure``; a notebook shows it by leaving it as the cell's
last expression. Functions that take a model or tensors label the figure with their real shapes.

- :mod:`.seq2seq` (chapter 1): :func:`seq2seq_bottleneck`
- :mod:`.attention` (chapter 2): :func:`qkv_dataflow`, :func:`scaling_and_softmax`
- :mod:`.heads` (chapter 4): :func:`multi_head_diagram`
- :mod:`.masks` (chapter 5): :func:`mask_grids`, :func:`cross_attention_dataflow`
- :mod:`.positions` (chapter 6): :func:`position_schematic`
- :mod:`.transformer` (chapter 7): :func:`transformer_diagram`
- :mod:`.sparsity` (chapter 8): :func:`sparsity_patterns`
- :mod:`.bert` (chapter 9): :func:`bert_encoder`
- :mod:`.pretraining` (chapter 10): :func:`pretraining_schematic`
- :mod:`.book_map` (the introduction): :func:`book_map`, the architecture with the chapters marked
"""

from .attention import qkv_dataflow, scaling_and_softmax
from .bert import bert_encoder
from .book_map import book_map
from .canvas import COLORS, Box, Canvas, color
from .heads import multi_head_diagram
from .masks import cross_attention_dataflow, mask_grids
from .positions import position_schematic
from .pretraining import pretraining_schematic
from .seq2seq import seq2seq_bottleneck
from .sparsity import sparsity_patterns
from .transformer import transformer_diagram

__all__ = [
    "COLORS",
    "Box",
    "Canvas",
    "color",
    "bert_encoder",
    "book_map",
    "cross_attention_dataflow",
    "mask_grids",
    "multi_head_diagram",
    "position_schematic",
    "pretraining_schematic",
    "qkv_dataflow",
    "scaling_and_softmax",
    "seq2seq_bottleneck",
    "sparsity_patterns",
    "transformer_diagram",
]
