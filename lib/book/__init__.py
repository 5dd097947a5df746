"""What the book shows around the model: claims, ``show_source``, plots and schematics.

It may import the model; the model never imports it. Plotting libraries load with
:mod:`lib.book.plots` and :mod:`lib.book.diagrams`, not with this package.
"""

from .claims import check, claim
from .source import show_source
