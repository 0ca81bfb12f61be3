"""Embedding: the packaged MiniLM (PyTorch or ONNX), any sentence-transformers model, OpenAI.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

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

__getattr__ = lazy_getattr(__name__, _EXPORTS)
