"""Real English–Spanish sentence pairs that ship with the book (chapter 12): data, splits, words, scores.

``lib/data/tatoeba_eng_spa.tsv.gz`` holds short sentence pairs from Tatoeba (tatoeba.org, CC BY 2.0 FR),
each with its attribution line; ``lib/data/LICENSE-tatoeba-eng-spa.txt`` says where they come from and how
they were chosen (``lib/data/make_tatoeba_subset.py`` made the file). Nothing is downloaded.

The path of a sentence through a model, English to Spanish::

    "Where is Tom?"  --tokenize-->  where is tom ?  --src_vocab-->  [B, S] ids  --model-->  [B, T] ids
    --tgt_vocab-->  ¿ dónde está tom ?  --detokenize-->  "¿dónde está tom?"

>>> pairs = load_tatoeba()
>>> train, valid, test = split_pairs(pairs, n_valid=500, n_test=1000, seed=2**31)
>>> src_vocab = WordVocab.from_sentences(pairs[train].english, min_count=2)
>>> tgt_vocab = WordVocab.from_sentences(pairs[train].spanish, min_count=2)
>>> data = translation_dataset(pairs[train], src_vocab, tgt_vocab)   # for lib.train
>>> sources, references = grouped_references(pairs[test])                # every translation of each sentence
>>> corpus_scores(translate(model, sources, src_vocab, tgt_vocab), references)   # {'bleu': ..., 'chrf': ...}
"""

from __future__ import annotations

import gzip
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .model.checks import check_int
from .model.generation import beam_search, greedy_decode
from .training.batching import SPECIALS, Seq2SeqDataset, Vocab, pad_sequences
from .training.device import check_seed

#: The shipped file: ``english``, ``spanish`` and ``attribution``, tab-separated, one pair a line.
TATOEBA_FILE = Path(__file__).parent / "data" / "tatoeba_eng_spa.tsv.gz"
UNK = "<unk>"


@dataclass(frozen=True)
class SentencePairs:
    """Sentence pairs: ``spanish[i]`` translates ``english[i]``; ``attribution[i]`` credits both sentences'
    authors on Tatoeba (``"CC-BY 2.0 (France) Attribution: tatoeba.org #id (user) & #id (user)"``).

    ``pairs[indices]`` (a list or tensor of ints, or a slice) is the sub-collection of those pairs.
    """

    english: list[str]
    spanish: list[str]
    attribution: list[str]

    def __post_init__(self) -> None:
        sizes = {len(self.english), len(self.spanish), len(self.attribution)}
        if len(sizes) != 1:
            raise ValueError(f"english, spanish and attribution must have one length, got {sorted(sizes)}")

    def __len__(self) -> int:
        return len(self.english)

    def __getitem__(self, index: slice | Sequence[int] | torch.Tensor) -> SentencePairs:
        if isinstance(index, slice):
            rows = range(len(self))[index]
        elif isinstance(index, torch.Tensor) and index.dim() == 1 and not index.dtype.is_floating_point:
            rows = index.tolist()
        elif isinstance(index, Sequence) and not isinstance(index, str):
            rows = [check_int("index", i, minimum=-len(self), maximum=len(self) - 1) for i in index]
        else:
            raise TypeError(f"index must be a slice or a list of ints, got {type(index).__name__}")
        return SentencePairs(*([column[i] for i in rows] for column in (self.english, self.spanish, self.attribution)))


def load_tatoeba() -> SentencePairs:
    """The shipped English–Spanish pairs, in the file's order (``TATOEBA_FILE``)."""
    with gzip.open(TATOEBA_FILE, "rt", encoding="utf-8") as file:
        next(file)  # the header
        columns = zip(*(line.rstrip("\n").split("\t") for line in file))
        return SentencePairs(*(list(column) for column in columns))


# ----------------------------------------------------------------------------------------------
# Words
# ----------------------------------------------------------------------------------------------

_NO_SPACE_BEFORE = re.compile(r" ([.,!?;:%)\]}»])")
_NO_SPACE_AFTER = re.compile(r"([¿¡(\[{«]) ")
_APOSTROPHE = re.compile(r"(\w) ' (\w)")


def tokenize(text: str) -> list[str]:
    """Lower-cased words and punctuation marks: ``"¿Dónde está Tom?"`` -> ``['¿', 'dónde', 'está', 'tom', '?']``.

    A word is a run of letters, digits or ``_`` (``\\w``, accents included); every other non-space
    character is a token of its own (``"don't"`` -> ``don ' t``). Short sentences of two languages that
    share an alphabet need no more: a word-level vocabulary of a few thousand covers them.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return re.findall(r"\w+|[^\w\s]", text.lower())


def detokenize(tokens: Sequence[str]) -> str:
    """Tokens back to text: spaces between words, none before ``. , ! ? ; : % ) »`` nor after ``¿ ¡ ( «``,
    none around an apostrophe between two words: ``['¿', 'dónde', 'está', 'tom', '?']`` -> ``"¿dónde está tom?"``."""
    if isinstance(tokens, str) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(f"tokens must be a list of str, got {tokens!r:.80}")
    text = _NO_SPACE_BEFORE.sub(r"\1", _NO_SPACE_AFTER.sub(r"\1", " ".join(tokens)))
    return _APOSTROPHE.sub(r"\1'\2", text)


class WordVocab(Vocab):
    """A word vocabulary with ``<unk>``: ``<pad>`` = 0, ``<bos>`` = 1, ``<eos>`` = 2, ``<unk>`` = 3, then the words.

    :meth:`encode` maps a word it does not hold to ``unk_id``, so any sentence can be translated.

    >>> v = WordVocab.from_sentences(["Tom runs.", "Tom eats."])
    >>> v.itos
    ['<pad>', '<bos>', '<eos>', '<unk>', '.', 'tom', 'eats', 'runs']
    >>> v.encode(tokenize("Tom sleeps."))
    [5, 3, 4]
    """

    def __init__(self, tokens: Sequence[str]):
        if isinstance(tokens, str):
            raise TypeError(f"tokens must be a sequence of strings, got the single str {tokens!r}")
        super().__init__([UNK, *tokens])
        self.unk_id = len(SPECIALS)

    @classmethod
    def from_sentences(cls, sentences: Sequence[str], min_count: int = 1) -> WordVocab:
        """The tokens (:func:`tokenize`) seen at least ``min_count`` times in ``sentences``, the most
        frequent first (ties in alphabetical order)."""
        if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
            raise TypeError(f"sentences must be a list of str, got {sentences!r:.80}")
        check_int("min_count", min_count, minimum=1)
        counts = Counter(t for s in sentences for t in tokenize(s))
        ordered = sorted(
            (item for item in counts.items() if item[1] >= min_count), key=lambda item: (-item[1], item[0])
        )
        return cls([token for token, _ in ordered])

    def encode(self, tokens: Sequence[str]) -> list[int]:
        """Token strings -> ids, ``unk_id`` for a token the vocabulary does not hold (no ``<bos>``/``<eos>``)."""
        return [self.stoi.get(token, self.unk_id) for token in tokens]

    def __repr__(self) -> str:
        shown = " ".join(self.itos[:16]) + (" …" if len(self) > 16 else "")
        return f"WordVocab(size={len(self)}: {shown})"


# ----------------------------------------------------------------------------------------------
# Splits and data sets
# ----------------------------------------------------------------------------------------------


def words_only(text: str) -> str:
    """A sentence up to case and punctuation: its lower-cased words, one space apart (``"Hi!"`` -> ``"hi"``)."""
    return " ".join(re.findall(r"\w+", text.lower()))


def sentence_groups(pairs: SentencePairs) -> list[list[int]]:
    """The pairs joined by a shared sentence: two pairs are in one group when they share their English or
    their Spanish sentence, up to case and punctuation (``"Hi."`` and ``"Hi!"`` are one sentence), directly
    or through other pairs. Groups in the order of their first pair; each a sorted list of indices."""
    parent = list(range(len(pairs)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for column in (pairs.english, pairs.spanish):
        first: dict[str, int] = {}
        for i, sentence in enumerate(column):
            j = first.setdefault(words_only(sentence), i)
            parent[root(i)] = root(j)
    groups: dict[int, list[int]] = {}
    for i in range(len(pairs)):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())


def split_pairs(pairs: SentencePairs, n_valid: int, n_test: int, seed: int) -> tuple[list[int], list[int], list[int]]:
    """Split the pairs into ``(train, valid, test)`` index lists (each sorted) that never share a sentence.

    The groups of :func:`sentence_groups` are shuffled (``torch.randperm``, seeded with ``seed``) and dealt
    out whole: test takes groups until it holds at least ``n_test`` pairs, validation until it holds at
    least ``n_valid`` (``0``: none), training the rest. So no English or Spanish sentence of the test set,
    up to case and punctuation, is seen in training, and every translation of a test sentence is in the
    test set (its references). The same ``seed`` gives the same split.
    """
    if not isinstance(pairs, SentencePairs):
        raise TypeError(f"pairs must be SentencePairs (load_tatoeba()), got {type(pairs).__name__}")
    check_int("n_valid", n_valid, minimum=0)
    check_int("n_test", n_test, minimum=1)
    if n_valid + n_test >= len(pairs):
        raise ValueError(f"n_valid + n_test = {n_valid + n_test} leaves no training pair of the {len(pairs)}")
    groups = sentence_groups(pairs)
    order = torch.randperm(len(groups), generator=torch.Generator().manual_seed(check_seed("seed", seed)))
    parts: list[list[int]] = [[], [], []]  # test, valid, train
    for g in order.tolist():
        part = 0 if len(parts[0]) < n_test else 1 if len(parts[1]) < n_valid else 2
        parts[part] += groups[g]
    test, valid, train = (sorted(part) for part in parts)
    return train, valid, test


def translation_dataset(pairs: SentencePairs, src_vocab: WordVocab, tgt_vocab: WordVocab) -> Seq2SeqDataset:
    """English -> Spanish as a :class:`~lib.training.batching.Seq2SeqDataset` of token ids, which
    :func:`lib.train` and :func:`lib.train_ensemble` take (its batches: ``src [B, S]``, ``tgt_in [B, T]``,
    ``tgt_out [B, T]``, ``<bos>``/``<eos>`` added)."""
    if not isinstance(pairs, SentencePairs):
        raise TypeError(f"pairs must be SentencePairs, got {type(pairs).__name__}")
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, WordVocab):
            raise TypeError(f"{name} must be a WordVocab, got {type(vocab).__name__}")
    src = [src_vocab.encode(tokenize(s)) for s in pairs.english]
    tgt = [tgt_vocab.encode(tokenize(s)) for s in pairs.spanish]
    return Seq2SeqDataset(src, tgt, src_vocab, tgt_vocab, name="tatoeba eng-spa")


def grouped_references(pairs: SentencePairs) -> tuple[list[str], list[list[str]]]:
    """Each distinct English sentence once (in order of first appearance) and all its Spanish translations
    among ``pairs``: ``(sources [N], references [N][≥ 1])``, what :func:`corpus_scores` compares with."""
    if not isinstance(pairs, SentencePairs):
        raise TypeError(f"pairs must be SentencePairs, got {type(pairs).__name__}")
    references: dict[str, list[str]] = {}
    for english, spanish in zip(pairs.english, pairs.spanish):
        references.setdefault(english, []).append(spanish)
    return list(references), list(references.values())


# ----------------------------------------------------------------------------------------------
# Translating and scoring
# ----------------------------------------------------------------------------------------------


@torch.no_grad()
def translate(
    model: nn.Module,
    sentences: Sequence[str],
    src_vocab: WordVocab,
    tgt_vocab: WordVocab,
    beam_size: int = 1,
    max_new_tokens: int = 20,
    batch_size: int = 500,
) -> list[str]:
    """Translate English ``sentences``: tokenize, encode, decode, detokenize. One string per sentence.

    ``beam_size=1`` decodes greedily (:func:`~lib.model.generation.greedy_decode`), more is beam search
    (:func:`~lib.model.generation.beam_search`, length penalty 0.6). ``model`` is any encoder-decoder of
    ``lib``'s decoding interface (``Transformer``, ``Seq2SeqRNN``). At most ``max_new_tokens`` tokens a
    translation (the Spanish of the shipped pairs has at most 14). The sentences are decoded ``batch_size`` at a
    time, padded; a sentence's translation does not depend on the others.
    """
    if isinstance(sentences, str) or not all(isinstance(s, str) for s in sentences):
        raise TypeError(f"sentences must be a list of str, got {sentences!r:.80}")
    for name, vocab in (("src_vocab", src_vocab), ("tgt_vocab", tgt_vocab)):
        if not isinstance(vocab, WordVocab):
            raise TypeError(f"{name} must be a WordVocab, got {type(vocab).__name__}")
    check_int("beam_size", beam_size, minimum=1)
    check_int("batch_size", batch_size, minimum=1)
    check_int("max_new_tokens", max_new_tokens, minimum=1)
    device = next(model.parameters()).device
    out: list[str] = []
    for begin in range(0, len(sentences), batch_size):
        ids = [src_vocab.encode(tokenize(s)) or [src_vocab.unk_id] for s in sentences[begin : begin + batch_size]]
        src = pad_sequences(ids, src_vocab.pad_id).to(device)
        kw = {"bos_id": tgt_vocab.bos_id, "eos_id": tgt_vocab.eos_id}
        if beam_size == 1:
            tokens = greedy_decode(model, src, max_new_tokens, **kw)
        else:
            tokens = beam_search(model, src, max_new_tokens, beam_size=beam_size, **kw)
        out += [detokenize(tgt_vocab.decode(row)) for row in tokens.cpu()]
    return out


def corpus_scores(hypotheses: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, float]:
    """Corpus BLEU and chrF (0–100) of ``hypotheses [N]`` against ``references [N][≥ 1]``, with ``sacrebleu``.

    Both ignore case (the model writes lower case). BLEU is sacrebleu's default (13a tokenization, 4-grams,
    exponential smoothing): the geometric mean of the n-gram precisions times a brevity penalty, with every
    reference of a sentence counting. chrF (β = 2) is the F-score of character 1- to 6-grams, spaces left
    out, against the best-matching reference. Needs ``sacrebleu`` (the extra ``bleu``).
    """
    for name, texts in (("hypotheses", hypotheses), ("references", references)):
        if isinstance(texts, str) or len(texts) == 0:
            raise TypeError(f"{name} must be a non-empty list, got {texts!r:.80}")
    if not all(isinstance(h, str) for h in hypotheses):
        raise TypeError("hypotheses must all be str")
    if len(hypotheses) != len(references):
        raise ValueError(
            f"got {len(hypotheses)} hypotheses but {len(references)} lists of references; expected one each"
        )
    for refs in references:
        if isinstance(refs, str) or len(refs) == 0 or not all(isinstance(r, str) for r in refs):
            raise TypeError(f"each entry of references must be a non-empty list of str, got {refs!r:.80}")
    from sacrebleu.metrics import BLEU, CHRF  # the extra `bleu`; imported only to score

    depth = max(len(refs) for refs in references)  # sacrebleu: one stream per k-th reference, None where absent
    streams = [[refs[k] if k < len(refs) else None for refs in references] for k in range(depth)]
    bleu = BLEU(lowercase=True).corpus_score(list(hypotheses), streams).score
    chrf = CHRF(lowercase=True).corpus_score(list(hypotheses), streams).score
    return {"bleu": bleu, "chrf": chrf}
