"""Explorers: figures a reader can point at, on the site, in Colab and in Jupyter, with no server.

An explorer is one cell output, made from the run's own tensors:

- an SVG figure drawn here, in Python, in its first state: what print and readers without
  JavaScript see, a complete static figure;
- the numbers behind every other state, as JSON inside the output;
- a few lines of inline JavaScript that redraw parts of that SVG when the reader moves a control.

Nothing is loaded from another file or host (no CDN, no server, no widget state), so the same output
works on the built site offline, in Colab (which shows each output in its own frame) and in Jupyter.

The root element carries ``data-explorer="NAME"``. The controls are labelled ``<select>``,
``<input type="range">`` and ``<input type="checkbox">`` elements, and SVG elements marked
``data-index`` that respond to the pointer and to the keyboard (Tab to reach one, arrow keys to move);
a row the reader points at is a band of at least 27 px (:data:`~.draw.ROW_PITCH`), a target of 24 x 24
CSS px on a phone, where an explorer may shrink to 91 %. The words under a figure wrap to its width
(:func:`~.draw.wrap`), in any language.
The line below the figure (``class="explorer-readout"``, read out by screen readers) says in words what is
shown. Colours are the book's: ``Blues`` for attention weights, as :func:`lib.plot_attention`.

One module a job: :mod:`.kit` is where every string and number enters the page, escaped;
:mod:`.words` holds every word an explorer shows; :mod:`.draw` the colours, SVG text and controls;
:mod:`.explorer` the output itself (:class:`Explorer`); then one module a kind: :mod:`.attention`,
:mod:`.masks`, :mod:`.softmax`, :mod:`.similarity`, :mod:`.decoding`. Each output also carries how it was
drawn (:data:`EXPLORER_MIME`), so that the site in another language draws it again in that language
(:func:`redraw`) without running the chapter twice.
"""

from .attention import attention_explorer
from .decoding import decoding_explorer
from .draw import BLUES, FONT, GRID, HIGHLIGHT, INK, MUTED, SERIES, blues, text, text_width
from .explorer import EXPLORER_MIME, MAX_BYTES, Explorer, from_json
from .kit import el
from .masks import mask_explorer
from .similarity import similarity_explorer
from .softmax import softmax_explorer
from .words import speaking

KINDS = {
    f.__name__: f for f in (attention_explorer, decoding_explorer, mask_explorer, similarity_explorer, softmax_explorer)
}


def redraw(call: dict, translation: dict[str, str]) -> Explorer:
    """The explorer that ``call`` (its data, :data:`EXPLORER_MIME`) describes, drawn again with
    ``translation`` (English -> another language) for its words: the Chinese site's explorers."""
    with speaking(translation):
        return KINDS[call["explorer"]](**from_json(call["args"]))


__all__ = [
    "BLUES",
    "EXPLORER_MIME",
    "KINDS",
    "FONT",
    "GRID",
    "HIGHLIGHT",
    "INK",
    "MAX_BYTES",
    "MUTED",
    "SERIES",
    "Explorer",
    "attention_explorer",
    "blues",
    "decoding_explorer",
    "el",
    "mask_explorer",
    "redraw",
    "similarity_explorer",
    "softmax_explorer",
    "speaking",
    "text",
    "text_width",
]
