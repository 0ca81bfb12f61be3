"""What every embedder shares: the name a configured embedder gives its indexes, and unit-length rows."""

from __future__ import annotations

import numpy as np

MINILM_NAME = "all-MiniLM-L6-v2"


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (an all-zero row stays zero)."""
    vectors = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(vectors, axis=-1, keepdims=True)
    out: np.ndarray = vectors / np.maximum(norms, 1e-12)
    return out


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
