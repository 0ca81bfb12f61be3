"""Embedding: the packaged MiniLM (PyTorch or ONNX), any sentence-transformers model, OpenAI.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sac.embedding.models import SentenceTransformerEmbedder, make_embedder
    from sac.embedding.onnx import OnnxMiniLMEmbedder

_EXPORTS = {
    "OnnxMiniLMEmbedder": "onnx",
    "SentenceTransformerEmbedder": "models",
    "make_embedder": "models",
}

__all__ = [
    "OnnxMiniLMEmbedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
