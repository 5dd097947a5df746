"""Chapter 12's design measurements: train a Transformer or an RNN with attention on the Tatoeba pairs, score
greedy and beam-4 translations of held-out sentences with BLEU and chrF. One torch thread; times are CPU
seconds of this process (time.process_time) and wall seconds.

    PYTHONPATH=. python notes/ch12_experiments.py --model T128x2 --steps 200 --seeds 0 1 2
    PYTHONPATH=. python notes/ch12_experiments.py --model RNN256add --cpu-seconds 15 --seeds 0 1 2
"""
import argparse, json, time
from pathlib import Path

import torch
import lib
import lib.translation as tr

MODELS = {  # name -> (kind, size, layers, d_ff)
    "T64x2": ("T", 64, 2, 256), "T128x1": ("T", 128, 1, 512), "T128x2": ("T", 128, 2, 512),
    "T96x2": ("T", 96, 2, 384), "T128x3": ("T", 128, 3, 512), "T256x1": ("T", 256, 1, 1024),
    "RNN128add": ("R", 128, "additive", None), "RNN256add": ("R", 256, "additive", None),
    "RNN128dot": ("R", 128, "dot", None), "RNN256dot": ("R", 256, "dot", None), "RNN192dot": ("R", 192, "dot", None),
}

p = argparse.ArgumentParser()
p.add_argument("--data", default=None)
p.add_argument("--model", required=True)
p.add_argument("--steps", type=int, default=None)
p.add_argument("--cpu-seconds", type=float, default=None, help="steps from a 10-step timing: equal-time runs")
p.add_argument("--lr", type=float, default=None)
p.add_argument("--warmup", type=int, default=None)
p.add_argument("--batch", type=int, default=64)
p.add_argument("--dropout", type=float, default=0.0)
p.add_argument("--smoothing", type=float, default=0.1)
p.add_argument("--min-count", type=int, default=2)
p.add_argument("--n-test", type=int, default=1000)
p.add_argument("--seeds", type=int, nargs="+", default=[0])
p.add_argument("--out", default="notes/ch12_runs.jsonl")
p.add_argument("--tag", default="")
p.add_argument("--norm-first", action="store_true")
p.add_argument("--schedule", default=None)
p.add_argument("--heads", type=int, default=4)
a = p.parse_args()

torch.set_num_threads(1)
if a.data:
    tr.TATOEBA_FILE = Path(a.data)
t0 = time.process_time()
pairs = tr.load_tatoeba()
load_s = time.process_time() - t0
kind, size, extra, d_ff = MODELS[a.model]

for seed in a.seeds:
    c0 = time.process_time()
    train, valid, test = tr.split_pairs(pairs, 500, a.n_test, seed=2**31 + seed)
    sv = tr.WordVocab.from_sentences(pairs[train].english, min_count=a.min_count)
    tv = tr.WordVocab.from_sentences(pairs[train].spanish, min_count=a.min_count)
    data = tr.translation_dataset(pairs[train], sv, tv)
    sources, references = tr.grouped_references(pairs[test])
    prep_s = time.process_time() - c0
    lib.seed_everything(seed)
    if kind == "T":
        cfg = lib.TransformerConfig(len(sv), len(tv), d_model=size, n_heads=a.heads, n_encoder_layers=extra, norm_first=a.norm_first,
                                    n_decoder_layers=extra, d_ff=d_ff, dropout=a.dropout, tie_output=True)
        model = lib.Transformer(cfg)
        lr, warmup = a.lr or 2e-3, a.warmup if a.warmup is not None else 50
        opts = dict(lr=lr, schedule=a.schedule or "noam", warmup_steps=warmup, label_smoothing=a.smoothing)
    else:
        model = lib.Seq2SeqRNN(len(sv), size, attention=extra, tgt_vocab_size=len(tv))
        lr, warmup = a.lr or 3e-3, a.warmup or 0
        opts = dict(lr=lr, schedule=a.schedule or ("noam" if warmup else "constant"), warmup_steps=warmup, label_smoothing=a.smoothing)
    steps = a.steps
    if steps is None:  # time 10 steps on a copy, then as many steps as fit in cpu_seconds
        import copy
        probe = copy.deepcopy(model)
        lib.train(probe, data, steps=3, batch_size=a.batch, progress=False, **opts)
        c = time.process_time()
        lib.train(probe, data, steps=10, batch_size=a.batch, progress=False, **opts)
        steps = max(1, round(a.cpu_seconds / ((time.process_time() - c) / 10)))
        lib.seed_everything(seed)
    c, w = time.process_time(), time.perf_counter()
    hist = lib.train(model, data, steps=steps, batch_size=a.batch, progress=False, **opts)
    train_cpu, train_wall = time.process_time() - c, time.perf_counter() - w
    row = dict(tag=a.tag, data=a.data or "shipped", n_pairs=len(pairs), n_train=len(train), n_test_sent=len(sources),
               model=a.model, seed=seed, norm_first=a.norm_first, schedule=opts["schedule"], heads=a.heads, steps=steps, batch=a.batch, lr=lr, warmup=warmup, dropout=a.dropout,
               smoothing=a.smoothing, src_vocab=len(sv), tgt_vocab=len(tv), load_s=load_s, prep_s=prep_s,
               params=sum(q.numel() for q in model.parameters()), train_cpu=train_cpu, train_wall=train_wall,
               final_loss=sum(hist.loss[-20:]) / 20)
    unk = sum(t not in sv.stoi for s in sources for t in tr.tokenize(s)) / sum(len(tr.tokenize(s)) for s in sources)
    row["test_src_unk_rate"] = unk
    for beam in (1, 4):
        c = time.process_time()
        hyps = tr.translate(model, sources, sv, tv, beam_size=beam)
        dec = time.process_time() - c
        s = tr.corpus_scores(hyps, references)
        row[f"bleu_b{beam}"], row[f"chrf_b{beam}"], row[f"decode_cpu_b{beam}"] = s["bleu"], s["chrf"], dec
        if beam == 1:
            row["examples"] = [(sources[i], hyps[i], references[i][0]) for i in range(5)]
    # cross-attention, teacher-forced, on the first 300 test pairs: how peaked are its rows?
    td = tr.translation_dataset(pairs[test][:300], sv, tv)
    batch = next(td.batches(300, shuffle=False))
    with torch.no_grad(), lib.eval_mode(model):
        if kind == "T":
            with lib.record_attention(model) as maps:
                model(batch.src, batch.tgt_in)
            w = maps[f"decoder_layers.{extra - 1}.cross_attn"].mean(1)  # [B, T, S], mean over heads
        else:
            model(batch.src, batch.tgt_in)
            w = model.last_attention
    q = batch.tgt_out != 0
    s_len = (batch.src != 0).sum(1, keepdim=True).expand_as(batch.tgt_out)
    row["cross_max_weight"] = w.max(-1).values[q].mean().item()
    row["uniform_weight"] = (1.0 / s_len[q].float()).mean().item()
    print(json.dumps({k: (round(v, 3) if isinstance(v, float) else v) for k, v in row.items() if k != "examples"}), flush=True)
    with open(a.out, "a") as f:
        f.write(json.dumps(row, ensure_ascii=False) + "\n")
