"""Schematic figures of the mechanisms the chapters teach, drawn by code (see :mod:`.canvas`).

Each function returns a matplotlib ``Figure``; a notebook shows it by leaving it as the cell's
last expression. Functions that take a model or tensors label the figure with their real shapes.
"""
from .canvas import COLORS, Box, Canvas, color

__all__ = ["COLORS", "Box", "Canvas", "color"]
from .sparsity import sparsity_patterns

__all__ += ["sparsity_patterns"]
