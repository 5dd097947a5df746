"""The book's colours: seaborn's colour-blind palette (``"colorblind"``), written out.

One list for the plots (:func:`lib.set_theme`'s colour cycle), the schematics
(:mod:`lib.book.diagrams.canvas`) and the interactive explorers (:mod:`lib.book.explorers`), so a
colour means the same thing everywhere. Written out, because importing seaborn (and with it scipy
and pandas) takes most of a second; ``tests/book/test_plots_svg.py`` checks it is still seaborn's.
"""

PALETTE = ("#0173b2", "#de8f05", "#029e73", "#d55e00", "#cc78bc", "#ca9161", "#fbafe4", "#949494", "#ece133", "#56b4e9")
