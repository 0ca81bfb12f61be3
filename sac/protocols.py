"""The pluggable roles. Implementations match by shape; they do not inherit."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from sac.types import Chunk, Document, Summary


@runtime_checkable
class Summarizer(Protocol):
    """Writes one summary per document for one summary set (``strategy``)."""

    name: str  # e.g. "builtin-generic", "openai-expert"
    strategy: str  # the summary set it writes: "generic", "expert", "generic-llm", ...
    model: str
    target_chars: int

    @property
    def prompt_hash(self) -> str:
        """Hash of the instructions the summaries follow: a summary made under other instructions is stale."""
        ...

    def summarize(self, document: Document) -> Summary:
        """The summary of ``document``, at most about ``target_chars`` characters."""
        ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised vectors; documents and queries go through separate methods."""

    name: str  # e.g. "all-MiniLM-L6-v2", "openai-text-embedding-3-small": sac.embedding.vectors.embedder_name
    dim: int

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: (n, dim) float32, L2-normalised."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The vector of one query: (dim,) float32, L2-normalised."""
        ...


@runtime_checkable
class Reranker(Protocol):
    """Reorders a search's candidate chunks by their relevance to the query."""

    name: str

    def rerank(self, query: str, chunks: Sequence[Chunk], top_k: int) -> list[tuple[Chunk, float]]:
        """The best ``top_k`` of ``chunks`` with their scores, best first."""
        ...
