"""Embedding: the packaged MiniLM (PyTorch or ONNX), any sentence-transformers model, OpenAI-compatible servers.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.embedding.models import SentenceTransformerEmbedder, make_embedder
    from sac.embedding.onnx import OnnxMiniLMEmbedder
    from sac.embedding.remote import OpenAIEmbedder

_EXPORTS = {
    "OnnxMiniLMEmbedder": "onnx",
    "OpenAIEmbedder": "remote",
    "SentenceTransformerEmbedder": "models",
    "make_embedder": "models",
}

__all__ = [
    "OnnxMiniLMEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "make_embedder",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
