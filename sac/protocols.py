"""The pluggable roles. Implementations match by shape; they do not inherit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sac.types import Chunk, Document, Summary


@runtime_checkable
class Summarizer(Protocol):
    name: str  # e.g. "builtin-generic", "openai-expert"
    strategy: str  # the summary set it writes: "generic", "expert", "generic-llm", ...
    model: str
    target_chars: int

    @property
    def prompt_hash(self) -> str: ...

    def summarize(self, document: Document) -> Summary: ...


@runtime_checkable
class Embedder(Protocol):
    name: str  # e.g. "all-MiniLM-L6-v2", "openai-text-embedding-3-small": sac.embedding.models.embedder_name
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray: ...  # (n, dim) float32, L2-normalised

    def embed_query(self, text: str) -> np.ndarray: ...  # (dim,)


@runtime_checkable
class Reranker(Protocol):
    name: str

    def rerank(self, query: str, chunks: Sequence[Chunk], top_k: int) -> list[tuple[Chunk, float]]: ...
