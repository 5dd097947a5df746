"""Every word an explorer shows a reader, in one table: titles, legends, control labels, readouts.

An entry is a template whose ``{name}`` fields are filled with values already written as text
(numbers by :func:`~.kit.number`): by :func:`say` when Python draws the first state, and by the
script's ``say`` (the same rule: each ``{name}`` replaced once, nothing else read) when the reader
moves a control; :func:`for_script` hands a kind's entries to its script. Keys are ``kind.what``
(``attention.readout``); ``common.*`` entries serve every kind. An entry that is :class:`~.kit.Html`
(a control's label with markup) is for Python only; its fields are escaped as they are filled in.

The entries are English. A translation would be another table of the same keys.
"""

from __future__ import annotations

import re

from .kit import Html, escape

_FIELD = re.compile(r"\{(\w+)\}")

WORDS: dict[str, str] = {
    "common.figure": "{name} explorer",  # the figure's name for screen readers
    "common.list": ", ",  # between the items of a list said in words
    "common.clauses": "; ",  # between the clauses of a readout
    # attention_explorer: a heatmap of weights, and the bars of the row pointed at
    "attention.hint": "Point at a {row} (a row) to see its weights over the {column}s.",
    "attention.bars": "the {row}'s weights over the {column}s",
    "attention.row_aria": "{row} {label}: show its weights",
    "attention.bar": "{key}: {weight}",
    "attention.values": "value vⱼ",
    "attention.view": "{label} {option}",
    "attention.readout": "{row} “{label}”{views}: most weight on “{key}” ({weight}); weights sum to {sum}",
    "attention.views": " ({views})",
    "attention.output": "; output o = Σ αⱼ vⱼ = {output}",
    # mask_explorer: which keys each query may see
    "masks.look": "look-ahead mask",
    "masks.pad": "padding mask",
    "masks.row_aria": "query {i} ({token}): which keys it sees",
    "masks.legend": "blue: may attend · ×: masked (score set to −∞)",
    "masks.blocked": "×",
    "masks.key": "key",
    "masks.keys": "keys",
    "masks.readout": "query {i} “{token}” sees {n} {keys}: {seen} · {allowed} of {pairs} pairs allowed",
    # softmax_explorer: scaled and unscaled softmax over d_k
    "softmax.slider": Html("d<sub>k</sub> = {value}"),
    "softmax.slider_aria": "dₖ, the width of queries and keys",
    "softmax.slider_value": "dₖ = {d}",
    "softmax.scaled": "scaled: softmax(e / √dₖ)",
    "softmax.unscaled": "unscaled: softmax(e)",
    "softmax.keys": "{n} keys, sorted by score",
    "softmax.stat": "score spread (std) {std} · largest weight {max}",
    "softmax.readout": "dₖ = {d}: largest weight {scaled} scaled, {unscaled} unscaled",
    "softmax.mean": " (mean over many queries: {scaled} and {unscaled})",
    # similarity_explorer: similarity by offset, one curve per kind of position
    "similarity.kind": "position",
    "similarity.slider": Html("offset δ = {value}"),
    "similarity.slider_aria": "offset δ",
    "similarity.slider_value": "δ = {d}",
    "similarity.axis": "offset δ",
    "similarity.readout": "{kind}, δ = {d}: {ylabel} {value}",
    # decoding_explorer: several decoding rules, step by step
    "decoding.source": Html("source: {source}"),
    "decoding.slider": Html("step t = {value}"),
    "decoding.slider_aria": "decoding step t",
    "decoding.slider_value": "t = {t}",
    "decoding.candidates": "candidates at this step:",
    "decoding.logp": "log p so far: {logp}",
    "decoding.ended": "  (ended)",
    "decoding.chose": "{rule} chose “{token}” (p = {p})",
    "decoding.so_far": ", log p so far {logp}",
    "decoding.readout": "step {t}: {said}",
}


def say(entry: str, /, **values: str) -> str:
    """The entry ``entry`` with its ``{name}`` fields filled in from ``values`` (text; escaped if the
    entry is markup, which then stays :class:`~.kit.Html`)."""
    template = WORDS[entry]
    if isinstance(template, Html):
        return Html(_FIELD.sub(lambda m: escape(values[m[1]]), template))
    return _FIELD.sub(lambda m: values[m[1]], template)


def for_script(kind: str) -> dict[str, str]:
    """The plain-text entries of ``kind`` and ``common``, by the part of the key after the dot: what
    the kind's script reads as ``say('readout', {...})``."""
    return {
        key.partition(".")[2]: template
        for key, template in WORDS.items()
        if key.partition(".")[0] in (kind, "common") and not isinstance(template, Html)
    }
