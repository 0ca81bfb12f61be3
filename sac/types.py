"""Core data types: frozen dataclasses that do no I/O.

They hash (cache keys), pickle (Streamlit caches, worker processes) and compare by value.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from urllib.parse import unquote


def text_hash(text: str) -> str:
    """Stable content hash (sha256 hex, first 16 characters) of a string."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class Span:
    """Half-open character range [start, end) of one document."""

    doc_id: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(
                f"Expected 0 <= start <= end, got start={self.start}, end={self.end} ({self.doc_id!r})"
            )

    def __len__(self) -> int:
        return self.end - self.start

    def overlap(self, other: Span) -> int:
        """Characters shared with ``other``; 0 when the documents differ."""
        if self.doc_id != other.doc_id:
            return 0
        return max(0, min(self.end, other.end) - max(self.start, other.start))


def document_title(doc_id: str) -> str:
    """A document's display name, the one rule for every page and table: the file name without
    folders, extension or %-escapes ("cuad/VELCO%20NDA.txt" -> "VELCO NDA")."""
    name = doc_id.rsplit("/", 1)[-1]
    stem, dot, ext = name.rpartition(".")
    if dot and stem and 1 <= len(ext) <= 4 and ext.isalnum():
        name = stem
    return unquote(name) or doc_id


@dataclass(frozen=True, slots=True)
class Document:
    """One source document. ``doc_id`` is ``<dataset>/<file name>`` for benchmark corpora."""

    doc_id: str
    text: str
    source: str | None = None  # where it was read from (path or upload name), for display only

    @property
    def content_hash(self) -> str:
        return text_hash(self.text)

    @property
    def title(self) -> str:
        """The document's display name (``document_title``)."""
        return document_title(self.doc_id)


@dataclass(frozen=True, slots=True)
class Chunk:
    """A piece of a document. ``text`` is exactly ``document.text[span.start:span.end]``."""

    span: Span
    text: str

    @property
    def doc_id(self) -> str:
        return self.span.doc_id

    @property
    def chunk_id(self) -> str:
        return f"{self.span.doc_id}@{self.span.start}-{self.span.end}"


@dataclass(frozen=True, slots=True)
class Summary:
    """One document summary and how it was made."""

    doc_id: str
    strategy: str  # "generic", "expert", "generic-llm", ... (method "sac-<strategy>")
    text: str
    doc_hash: str
    model: str  # "builtin" or the LLM's model name, "human" for a hand edit
    prompt_hash: str
    target_chars: int
    cut: bool = False  # True when the text was cut at a word boundary to fit
    created: str = ""  # ISO 8601 UTC
    version: int = 1  # hand edits add versions; the highest one is used


@dataclass(frozen=True, slots=True)
class Query:
    """A question with its ground-truth spans (empty for an ad-hoc query)."""

    query_id: str
    text: str
    gold: tuple[Span, ...] = ()
    dataset: str = ""

    @property
    def gold_doc_ids(self) -> frozenset[str]:
        return frozenset(s.doc_id for s in self.gold)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk with its similarity score, in rank order (rank 1 is best)."""

    chunk: Chunk
    score: float
    rank: int

    @property
    def span(self) -> Span:
        return self.chunk.span


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    query_id: str
    method: str
    hits: tuple[Hit, ...]

    def top(self, k: int) -> tuple[Hit, ...]:
        return self.hits[:k]


@dataclass(frozen=True, slots=True)
class Dataset:
    """A LegalBench-RAG dataset: its corpus and its tests."""

    name: str
    documents: tuple[Document, ...]
    queries: tuple[Query, ...]
    distractors: tuple[Document, ...] = field(default=())  # pool documents added to the index only

    @property
    def all_documents(self) -> tuple[Document, ...]:
        return self.documents + self.distractors
