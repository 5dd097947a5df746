"""The models really learn, on the CPU, in seconds; and the same seed gives the same numbers."""

import lib
from lib import Seq2SeqRNN, TaskStream, Transformer, TransformerConfig, evaluate, greedy_decode, make_task, train


def reverse_run(seed: int, steps: int = 250):
    lib.seed_everything(seed)
    stream = TaskStream("reverse", 64, seed=seed, min_len=8, max_len=8)
    V = len(stream.src_vocab)
    config = TransformerConfig(
        V, V, d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=128, dropout=0.0, max_len=32
    )
    model = Transformer(config)
    history = train(model, stream, steps=steps, lr=1e-3, progress=False)
    return model, history


def test_tiny_transformer_learns_to_reverse():
    model, history = reverse_run(seed=0)
    test = make_task("reverse", 200, seed=123, min_len=8, max_len=8)
    metrics = evaluate(model, test)
    assert metrics["token_accuracy"] > 0.95, metrics
    # and it generates, not only under teacher forcing
    batch = next(test.batches(200, shuffle=False))
    out = greedy_decode(model, batch.src, max_new_tokens=batch.tgt_out.size(1))
    n = min(out.size(1), batch.tgt_out.size(1))
    exact = (out[:, :n] == batch.tgt_out[:, :n]).all(dim=1).float().mean().item()
    assert exact > 0.85, exact
    assert history.loss[-1] < history.loss[0] / 5


def test_same_seed_same_numbers():
    _, a = reverse_run(seed=3, steps=20)
    _, b = reverse_run(seed=3, steps=20)
    assert a.loss == b.loss


def test_rnn_with_attention_learns_to_reverse():
    lib.seed_everything(0)
    stream = TaskStream("reverse", 64, seed=0, min_len=4, max_len=8)
    model = Seq2SeqRNN(len(stream.src_vocab), 64, attention="dot")
    train(model, stream, steps=250, lr=1e-2, progress=False)
    metrics = evaluate(model, make_task("reverse", 200, seed=9, min_len=4, max_len=8))
    assert metrics["token_accuracy"] > 0.9, metrics
    assert model.last_attention is not None and model.last_attention.shape[-1] == 8  # [B, T, S]
