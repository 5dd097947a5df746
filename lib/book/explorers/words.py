"""Every word an explorer shows a reader, in one table: titles, legends, control labels, readouts.

An entry is a template whose ``{name}`` fields are filled with values already written as text
(numbers by :func:`~.kit.number`): by :func:`say` when Python draws the first state, and by the
script's ``say`` (the same rule: each ``{name}`` replaced once, nothing else read) when the reader
moves a control; :func:`for_script` hands a kind's entries to its script. Keys are ``kind.what``
(``attention.readout``); ``common.*`` entries serve every kind. An entry that is :class:`~.kit.Html`
(a control's label with markup) is for Python only; its fields are escaped as they are filled in, and
its translation is escaped like any text but for the tags of the English entry (``<sub>``).

The entries are English. Another language is a translation of the templates (English template ->
translated template), applied while an explorer is drawn with :func:`speaking`; :func:`term`
translates the chapter's own words that an explorer shows (a title, a menu's name, a curve's name)
from the same table. The Chinese site redraws each explorer that way (``tools/i18n_ext/outputs.py``, from the
catalog ``locale/zh_CN/LC_MESSAGES/explorers.po``), so the notebooks run once for both languages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar

from .kit import Html, escape

_TRANSLATION: ContextVar[Mapping[str, str] | None] = ContextVar("explorer_translation", default=None)


@contextmanager
def speaking(translation: Mapping[str, str]) -> Iterator[None]:
    """Draw explorers in another language for the block: each template, and each word passed through
    :func:`term`, is looked up in ``translation`` (English -> translated; what it lacks stays English)."""
    token = _TRANSLATION.set(dict(translation))
    try:
        yield
    finally:
        _TRANSLATION.reset(token)


def term(word: str) -> str:
    """A word of the chapter's that an explorer shows (a title, a menu's or a curve's name), translated
    when an explorer is drawn in another language (:func:`speaking`; :func:`translate`)."""
    return translate(word, _TRANSLATION.get() or {})


_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def translate(text: str, translation: Mapping[str, str]) -> str:
    """``text`` in another language: its entry in ``translation``, else the entry of its pattern, with
    each number in it as ``{0}``, ``{1}``, … (``"seed 3"`` -> ``"seed {0}"``), filled back in; else
    ``text`` itself. (Figures' labels are translated the same way, ``tools/i18n_ext/outputs.py``.)"""
    if text in translation:
        return translation[text]
    numbers = _NUMBER.findall(text)
    if not numbers:
        return text
    pattern = pattern_of(text)
    if pattern not in translation:
        return text
    return re.sub(r"\{(\d+)\}", lambda m: numbers[int(m[1])], translation[pattern])


def pattern_of(text: str) -> str:
    """The catalog's key for a text with numbers: each number as ``{0}``, ``{1}``, …"""
    counter = iter(range(len(_NUMBER.findall(text))))
    return _NUMBER.sub(lambda _m: "{" + str(next(counter)) + "}", text)


def _template(entry: str) -> str:
    english = WORDS[entry]
    translated = (_TRANSLATION.get() or {}).get(str(english))
    if translated is None:
        return english
    return _markup(translated, english) if isinstance(english, Html) else translated


_TAG = re.compile(r"(</?[a-z]+>)")  # a bare tag, the only markup the entries hold: <sub>, </sub>


def _markup(translated: str, english: Html) -> Html:
    """The translation of a markup entry as markup: the very tags of the English entry kept, everything
    else escaped as text. (A catalog is text a translator wrote, not markup of this package's.)"""
    allowed = set(_TAG.findall(english))
    return Html("".join(piece if piece in allowed else escape(piece) for piece in _TAG.split(translated)))


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
    "attention.readout_tie": "{row} “{label}”{views}: equal weight on {keys} ({weight} each); weights sum to {sum}",
    "attention.readout_even": "{row} “{label}”{views}: equal weight on all {n} {column}s ({weight} each)",
    "attention.quoted": "“{key}”",
    "attention.views": " ({views})",
    "attention.output": "; output o = Σ αⱼ vⱼ = {output}",
    # attention_explorer(quantity="probabilities"): a model's probability distributions (chapter 10's
    # cloze), drawn alike but not called weights, which is attention's word; the rest as attention.*
    "distribution.hint": "Point at a {row} (a row) to see its probabilities over the {column}s.",
    "distribution.bars": "the {row}'s probabilities over the {column}s",
    "distribution.row_aria": "{row} {label}: show its probabilities",
    "distribution.readout": "{row} “{label}”{views}: most probable “{key}” ({weight}); probabilities sum to {sum}",
    "distribution.readout_tie": "{row} “{label}”{views}: equally probable {keys} ({weight} each); "
    "probabilities sum to {sum}",
    "distribution.readout_even": "{row} “{label}”{views}: all {n} {column}s equally probable ({weight} each)",
    # mask_explorer: which keys each query may see
    "masks.look": "look-ahead mask",
    "masks.pad": "padding mask",
    "masks.row_aria": "query {i}, {token}: which keys it sees",  # no parentheses: axe reads past them
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
    template = _template(entry)
    if isinstance(template, Html):
        return Html(_FIELD.sub(lambda m: escape(values[m[1]]), template))
    return _FIELD.sub(lambda m: values[m[1]], template)


#: A kind that words only some of its entries itself, and the kind whose entries it takes for the rest.
BASED_ON = {"distribution": "attention"}


def for_script(kind: str) -> dict[str, str]:
    """The plain-text entries of ``kind`` and ``common`` (and of the kind it is :data:`BASED_ON`, which its
    own entries override), by the part of the key after the dot: what the kind's script reads as
    ``say('readout', {...})``."""
    kinds = ["common", *([BASED_ON[kind]] if kind in BASED_ON else []), kind]
    return {
        key.partition(".")[2]: _template(key)
        for k in kinds
        for key, template in WORDS.items()
        if key.partition(".")[0] == k and not isinstance(template, Html)
    }
