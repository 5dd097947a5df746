"""Time per training step (CPU seconds of this process, one torch thread) of the chapter 12 candidates."""
import sys, time
import torch
import lib
from lib.translation import WordVocab, load_tatoeba, split_pairs, translation_dataset

torch.set_num_threads(1)
import lib.translation as tr
if len(sys.argv) > 1:
    tr.TATOEBA_FILE = __import__("pathlib").Path(sys.argv[1])
pairs = load_tatoeba()
train, valid, test = split_pairs(pairs, 500, 1000, seed=2**31)
sv = WordVocab.from_sentences(pairs[train].english, min_count=2)
tv = WordVocab.from_sentences(pairs[train].spanish, min_count=2)
data = translation_dataset(pairs[train], sv, tv)
print(len(sv), len(tv), len(data))

def transformer(d, layers, ff, heads=4):
    return lib.Transformer(lib.TransformerConfig(len(sv), len(tv), d_model=d, n_heads=heads, n_encoder_layers=layers,
                                                 n_decoder_layers=layers, d_ff=ff, dropout=0.0, tie_output=True))
models = {
    "T d64 L2": lambda: transformer(64, 2, 256),
    "T d128 L2": lambda: transformer(128, 2, 512),
    "T d128 L1": lambda: transformer(128, 1, 512),
    "RNN dot h128": lambda: lib.Seq2SeqRNN(len(sv), 128, attention="dot", tgt_vocab_size=len(tv)),
    "RNN add h128": lambda: lib.Seq2SeqRNN(len(sv), 128, attention="additive", tgt_vocab_size=len(tv)),
    "RNN dot h256": lambda: lib.Seq2SeqRNN(len(sv), 256, attention="dot", tgt_vocab_size=len(tv)),
    "RNN add h256": lambda: lib.Seq2SeqRNN(len(sv), 256, attention="additive", tgt_vocab_size=len(tv)),
}
for bs in (64,):
    for name, make in models.items():
        lib.seed_everything(0)
        m = make()
        lib.train(m, data, steps=5, batch_size=bs, progress=False)  # warm-up
        c, w = time.process_time(), time.perf_counter()
        lib.train(m, data, steps=40, batch_size=bs, progress=False, lr=1e-3)
        c, w = time.process_time() - c, time.perf_counter() - w
        n = sum(p.numel() for p in m.parameters())
        print(f"bs {bs} {name:14s} params {n/1e6:.2f}M  cpu {1e3*c/40:.1f} ms/step  wall {1e3*w/40:.1f} ms/step", flush=True)
