"""Schematic figures of the mechanisms the chapters teach, drawn by code (see :mod:`.canvas`).

Each function returns a matplotlib ``Figure``; a notebook shows it by leaving it as the cell's
last expression. Functions that take a model or tensors label the figure with their real shapes.

- :func:`seq2seq_bottleneck` (chapter 1): the LSTM encoder-decoder without and with attention.
- :func:`qkv_dataflow` (chapter 2): queries, keys and values, with a forward pass's shapes.
- :func:`scaling_and_softmax` (chapter 3): where :math:`1/\\sqrt{d_k}` sits, and what the softmax
  does with large scores.
"""
from .attention import qkv_dataflow, scaling_and_softmax
from .canvas import COLORS, Box, Canvas, color
from .seq2seq import seq2seq_bottleneck

__all__ = ["COLORS", "Box", "Canvas", "color", "qkv_dataflow", "scaling_and_softmax", "seq2seq_bottleneck"]
