"""lib.train's progress bar on a static page: with tqdm's switch TQDM_DISABLE=1 (which the site build
sets, tools/book_ext.py) it is printed once, in its final state, as one line on stdout."""

from __future__ import annotations

import re

import lib


def _tiny_run(**kw):
    lib.seed_everything(0)
    data = lib.make_task("copy", 16, max_len=4, seed=0)
    model = lib.Seq2SeqRNN(len(data.src_vocab), 8, tgt_vocab_size=len(data.tgt_vocab))
    return lib.train(model, data, steps=3, batch_size=4, **kw)


def test_final_mode_prints_one_line_in_its_final_state(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    _tiny_run(desc="tiny")
    out, err = capsys.readouterr()
    assert err == "", f"nothing goes to stderr in final mode, got {err!r}"
    lines = out.splitlines()
    assert len(lines) == 1, f"expected one line, got {lines}"
    assert "\r" not in out
    assert re.match(r"tiny: 100%\|[█]+\| 3/3 \[.*loss=\d+\.\d+\]$", lines[0]), lines[0]


def test_final_mode_respects_progress_false(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    _tiny_run(progress=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
