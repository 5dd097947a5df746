"""Toy tasks, vocabularies and batching (lib.training.data)."""

import datetime

import pytest
import torch

from lib.training.data import (
    BOS_ID,
    DATE_FORMATS,
    EOS_ID,
    PAD_ID,
    Batch,
    LMBatch,
    Seq2SeqDataset,
    TaskStream,
    Vocab,
    collate,
    format_date,
    make_task,
    pad_sequences,
    to_lm_batch,
)

TASK_NAMES = ["copy", "reverse", "sort", "dates", "recall"]


def test_vocab_specials_come_first():
    v = Vocab(["a", "b", "c"])
    assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2)
    assert v.itos[:3] == ["<pad>", "<bos>", "<eos>"]
    assert (v.pad_id, v.bos_id, v.eos_id) == (0, 1, 2)
    assert len(v) == 6 and v.stoi["a"] == 3


def test_vocab_round_trip_and_decode_stops_at_eos():
    v = Vocab(list("abc"))
    ids = v.encode(list("cab"))
    assert v.decode(ids) == list("cab")
    assert v.decode([BOS_ID, *ids, EOS_ID, *ids, PAD_ID]) == list("cab")
    assert v.decode(torch.tensor([BOS_ID, *ids, EOS_ID])) == list("cab")
    assert v.decode([BOS_ID, ids[0], EOS_ID], strip_special=False) == ["<bos>", "c", "<eos>"]


def test_vocab_errors_name_the_problem():
    v = Vocab(list("ab"))
    with pytest.raises(ValueError, match="'z'"):
        v.encode(["a", "z"])
    with pytest.raises(ValueError, match="duplicates"):
        Vocab(["a", "a"])
    with pytest.raises(ValueError, match="<pad>"):
        Vocab(["<pad>", "a"])
    with pytest.raises(TypeError, match="single str"):
        Vocab("abc")
    with pytest.raises(ValueError, match="out of range"):
        v.decode([99])


@pytest.mark.parametrize("name", TASK_NAMES)
def test_same_seed_same_data(name):
    a, b, c = make_task(name, 50, seed=3), make_task(name, 50, seed=3), make_task(name, 50, seed=4)
    assert a.src == b.src and a.tgt == b.tgt
    assert a.src != c.src
    assert a.src_vocab == c.src_vocab and a.tgt_vocab == c.tgt_vocab  # fixed vocabularies


@pytest.mark.parametrize("name", ["copy", "reverse", "sort"])
def test_symbol_task_targets(name):
    ds = make_task(name, 200, seed=0, n_symbols=5, min_len=2, max_len=7)
    expected = {"copy": lambda s: s, "reverse": lambda s: s[::-1], "sort": sorted}[name]
    assert len(ds) == 200 and len(ds.src_vocab) == 3 + 5
    for src, tgt in zip(ds.src, ds.tgt):
        assert 2 <= len(src) <= 7
        assert tgt == expected(src)  # ids of "0" … "4" are in value order, so sorting ids sorts values
    assert {len(s) for s in ds.src} == set(range(2, 8))


def test_sort_by_value_beyond_ten_symbols():
    ds = make_task("sort", 50, n_symbols=15, seed=1)
    for i in range(len(ds)):
        src, tgt = ds.text(i)
        assert [int(t) for t in tgt.split()] == sorted(int(t) for t in src.split())


def _parse_source_date(text):
    for fmt in ("%d %b %Y", "%m/%d/%Y", "%B %d, %Y", "%Y.%m.%d", "%d.%m.%Y", "%d %B %Y"):
        try:
            return datetime.datetime.strptime(text, fmt).date()
        except ValueError:
            pass
    raise AssertionError(f"unparseable source date {text!r}")


def test_dates_target_is_iso_of_the_source_date():
    ds = make_task("dates", 300, seed=0)
    assert ds.src_vocab != ds.tgt_vocab and len(ds.tgt_vocab) == 3 + 11
    seen_formats = set()
    for i in range(len(ds)):
        src, tgt = ds.text(i)
        date = datetime.date.fromisoformat(tgt)  # a valid calendar date
        assert 1950 <= date.year <= 2049
        assert _parse_source_date(src) == date
        seen_formats.update(f for f in DATE_FORMATS if format_date(date, f) == src)
        assert len(ds.tgt[i]) == 10  # per character: YYYY-MM-DD
    assert seen_formats == set(DATE_FORMATS)


def test_dates_options():
    ds = make_task("dates", 20, formats=["{year}-{mm}-{dd}"], shared_vocab=True)
    assert ds.shared_vocab and all(s == t for s, t in zip(ds.src, ds.tgt))
    assert format_date(datetime.date(2026, 11, 29), "{month} {day}, {year}") == "november 29, 2026"
    with pytest.raises(ValueError, match="fields"):
        make_task("dates", 3, formats=["{weekday}"])


def test_recall_target_is_the_value_of_the_query_key():
    ds = make_task("recall", 200, n_pairs=6, seed=0)
    for i in range(len(ds)):
        src, tgt = ds.text(i)
        tokens = src.split()
        assert len(tokens) == 2 * 6 + 2 and tokens[-2] == "?"
        pairs = dict(zip(tokens[0:-2:2], tokens[1:-2:2]))
        assert len(pairs) == 6  # distinct keys
        assert tgt == pairs[tokens[-1]]


def test_bad_task_arguments():
    with pytest.raises(ValueError, match="copy"):
        make_task("translate", 10)
    with pytest.raises(TypeError, match="bogus"):
        make_task("copy", 10, bogus=1)
    with pytest.raises(ValueError, match="max_len"):
        make_task("reverse", 10, min_len=5, max_len=3)
    with pytest.raises(ValueError, match="n_pairs"):
        make_task("recall", 10, n_pairs=5, n_keys=3)
    with pytest.raises(TypeError, match="seed"):
        make_task("copy", 10, seed=1.5)
    with pytest.raises(ValueError, match="n=0"):
        make_task("copy", 0)


def test_batch_padding_bos_eos():
    batch = collate([([5, 6, 7], [8, 9]), ([5], [8, 9, 10, 11])])
    assert torch.equal(batch.src, torch.tensor([[5, 6, 7], [5, 0, 0]]))
    assert torch.equal(batch.tgt_in, torch.tensor([[1, 8, 9, 0, 0], [1, 8, 9, 10, 11]]))
    assert torch.equal(batch.tgt_out, torch.tensor([[8, 9, 2, 0, 0], [8, 9, 10, 11, 2]]))
    assert batch.src.dtype == torch.long and batch.n_tokens == 3 + 5 and len(batch) == 2


def test_batches_cover_the_epoch_deterministically():
    ds = make_task("reverse", 50, seed=0)
    batches = list(ds.batches(16, seed=1))
    assert [len(b) for b in batches] == [16, 16, 16, 2]
    again = list(ds.batches(16, seed=1))
    assert all(torch.equal(a.src, b.src) for a, b in zip(batches, again))
    rows = {tuple(r[r != PAD_ID].tolist()) for b in batches for r in b.src}
    assert rows == {tuple(s) for s in ds.src}
    first = next(ds.batches(4, shuffle=False))
    assert first.src[0, : len(ds.src[0])].tolist() == ds.src[0]


def test_task_stream_is_fresh_and_reproducible():
    stream = TaskStream("copy", 8, seed=5, max_len=6)
    assert len(stream.src_vocab) == 13
    a, b = next(stream), next(stream)
    assert isinstance(a, Batch) and a.src.shape[0] == 8 and a.src.shape[1] <= 6
    assert not torch.equal(a.src[:, :3], b.src[:, :3])
    again = next(TaskStream("copy", 8, seed=5, max_len=6))
    assert torch.equal(a.src, again.src)
    with pytest.raises(TypeError, match="bogus"):  # fails at construction, not at next()
        TaskStream("copy", 8, bogus=1)


def test_to_lm_batch_concatenates_and_masks_the_source():
    batch = collate([([5, 6, 7], [8, 9]), ([5], [8])])
    lm = to_lm_batch(batch)
    assert isinstance(lm, LMBatch)
    assert lm.input.tolist() == [[5, 6, 7, 1, 8, 9], [5, 1, 8, 0, 0, 0]]
    assert lm.target.tolist() == [[0, 0, 0, 8, 9, 2], [0, 8, 2, 0, 0, 0]]


def test_pad_sequences_right_pads_lists_tuples_and_tensors():
    padded = pad_sequences([[5, 6, 7], (8,), torch.tensor([9, 10]), []], pad_id=0)
    assert padded.dtype == torch.long
    assert padded.tolist() == [[5, 6, 7], [8, 0, 0], [9, 10, 0], [0, 0, 0]]
    assert pad_sequences([[]], pad_id=3).shape == (1, 0)
    with pytest.raises(ValueError, match="at least one"):
        pad_sequences([])


@pytest.mark.parametrize("task", ["copy", "sort", "recall", "dates"])
def test_to_lm_batch_equals_the_row_by_row_concatenation(task):
    """The vectorised conversion writes, row by row, source tokens ⧺ answer, padded on the right."""
    kwargs = {"shared_vocab": True} if task == "dates" else {}
    batch = next(TaskStream(task, 16, seed=3, **kwargs))
    pad = batch.pad_id
    inputs, targets = [], []
    for src, tgt_in, tgt_out in zip(batch.src.tolist(), batch.tgt_in.tolist(), batch.tgt_out.tolist()):
        src = [t for t in src if t != pad]
        keep = [i for i, t in enumerate(tgt_out) if t != pad]
        inputs.append(src + [tgt_in[i] for i in keep])
        targets.append([pad] * len(src) + [tgt_out[i] for i in keep])
    width = max(map(len, inputs))
    lm = to_lm_batch(batch)
    assert lm.input.tolist() == [row + [pad] * (width - len(row)) for row in inputs]
    assert lm.target.tolist() == [row + [pad] * (width - len(row)) for row in targets]
    assert lm.pad_id == pad and lm.input.dtype == torch.long


def test_dataset_text_and_lengths_checked():
    ds = make_task("dates", 3, seed=0)
    src, tgt = ds.text(0)
    assert "-" in tgt and len(tgt) == 10
    with pytest.raises(ValueError, match="same length"):
        Seq2SeqDataset([[3]], [], ds.src_vocab, ds.tgt_vocab)
