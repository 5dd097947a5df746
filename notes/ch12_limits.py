"""Where the chapter 12 models fail: BLEU by source length, unknown words, examples (seed 0, the recommended setup)."""
import time
import torch
import lib
import lib.translation as tr

torch.set_num_threads(1)
t = time.perf_counter(); pairs = tr.load_tatoeba(); print(f"load_tatoeba {time.perf_counter() - t:.2f} s wall")
t = time.perf_counter()
train, valid, test = tr.split_pairs(pairs, 500, 1000, seed=2**31)
sv = tr.WordVocab.from_sentences(pairs[train].english, min_count=2)
tv = tr.WordVocab.from_sentences(pairs[train].spanish, min_count=2)
data = tr.translation_dataset(pairs[train], sv, tv)
sources, references = tr.grouped_references(pairs[test])
print(f"split + vocabularies + dataset {time.perf_counter() - t:.2f} s wall; vocab {len(sv)} / {len(tv)}")
lib.seed_everything(0)
T = lib.Transformer(lib.TransformerConfig(len(sv), len(tv), d_model=128, n_heads=4, n_encoder_layers=1,
                                          n_decoder_layers=1, d_ff=512, dropout=0.0, tie_output=True))
t = time.perf_counter()
lib.train(T, data, steps=330, batch_size=64, lr=5e-3, schedule="noam", warmup_steps=30, progress=False)
print(f"Transformer 330 steps {time.perf_counter() - t:.1f} s wall")
lib.seed_everything(1)
R = lib.Seq2SeqRNN(len(sv), 128, attention="dot", tgt_vocab_size=len(tv))
t = time.perf_counter()
lib.train(R, data, steps=480, batch_size=64, lr=1e-2, progress=False)
print(f"RNN 480 steps {time.perf_counter() - t:.1f} s wall")
counts = {w: 0 for w in sv.itos}
for s in pairs[train].english:
    for w in tr.tokenize(s):
        counts[w] = counts.get(w, 0) + 1
for name, m in (("Transformer", T), ("RNN", R)):
    t = time.perf_counter(); hyps = tr.translate(m, sources, sv, tv); g = time.perf_counter() - t
    t = time.perf_counter(); beams = tr.translate(m, sources, sv, tv, beam_size=4); b = time.perf_counter() - t
    print(f"\n{name}: greedy {tr.corpus_scores(hyps, references)} ({g:.2f} s), beam {tr.corpus_scores(beams, references)} ({b:.2f} s)")
    for n in range(1, 6):
        idx = [i for i, s in enumerate(sources) if len(s.split()) == n]
        sc = tr.corpus_scores([beams[i] for i in idx], [references[i] for i in idx])
        print(f"  {n} English words: {len(idx):4d} sentences, beam BLEU {sc['bleu']:.1f}, chrF {sc['chrf']:.1f}")
    rare = [i for i, s in enumerate(sources) if min(counts.get(w, 0) for w in tr.tokenize(s)) <= 3]
    common = [i for i in range(len(sources)) if i not in set(rare)]
    for label, idx in (("a word seen <= 20 times in training", rare), ("only words seen > 20 times", common)):
        if not idx:
            continue
        sc = tr.corpus_scores([beams[i] for i in idx], [references[i] for i in idx])
        print(f"  {label}: {len(idx)} sentences, beam BLEU {sc['bleu']:.1f}, chrF {sc['chrf']:.1f}")
    exact = [i for i in range(len(sources)) if beams[i].lower() in [r.lower() for r in references[i]]]
    print(f"  exact (some reference, case-blind): {len(exact)}/{len(sources)}")
    for i in list(range(6)):
        print(f"    {sources[i]!r:32} -> {beams[i]!r:34} ref {references[i][0]!r}")
    outside = ["I would like a cup of coffee.", "The elephant is reading a newspaper.",
               "Tom gave Mary the book that he bought yesterday in the old bookshop near the station."]
    for s, h in zip(outside, tr.translate(m, outside, sv, tv, beam_size=4)):
        print(f"    outside: {s!r} -> {h!r}")
