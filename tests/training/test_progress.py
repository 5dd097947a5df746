"""lib.train's progress bar on a static page: with tqdm's switch TQDM_DISABLE=1 (which the site build
sets, tools/book_ext/__init__.py) there is no bar: one plain line on stdout says what the run did."""

from __future__ import annotations

import re

import lib


def _tiny_run(**kw):
    lib.seed_everything(0)
    data = lib.make_task("copy", 16, max_len=4, seed=0)
    model = lib.Seq2SeqRNN(len(data.src_vocab), 8, tgt_vocab_size=len(data.tgt_vocab))
    return lib.train(model, data, steps=3, batch_size=4, **kw)


def test_final_mode_prints_one_plain_line(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    _tiny_run(desc="tiny")
    out, err = capsys.readouterr()
    assert err == "", f"nothing goes to stderr in final mode, got {err!r}"
    lines = out.splitlines()
    assert len(lines) == 1, f"expected one line, got {lines}"
    assert "\r" not in out
    assert re.fullmatch(r"tiny: 3 steps in \d+\.\d s \(loss=\d+\.\d+\)", lines[0]), lines[0]
    assert not re.search(r"[█|%]|it/s", lines[0]), f"no progress-bar glyphs on a static page: {lines[0]!r}"


def test_final_mode_respects_progress_false(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TQDM_DISABLE", "1")
    _tiny_run(progress=False)
    out, err = capsys.readouterr()
    assert out == "" and err == ""
