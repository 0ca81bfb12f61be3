"""Core data types: frozen dataclasses that do no I/O.

They hash (cache keys), pickle (Streamlit caches, worker processes) and compare by value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import unquote

from sac.errors import QueryError

MAX_QUERY_CHARS = 8000  # far beyond any question; longer input is almost surely a pasted document
MAX_K = 1000


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


def merge_spans(spans: Iterable[Span], gap: int = 0) -> list[Span]:
    """Union of spans per document, sorted; spans at most ``gap`` characters apart join (touching ones always).

    Not used for scoring (retrieved snippets are never merged before scoring). Benchmark construction merges
    gold spans with ``gap=1``, as LegalBench-RAG does (sac.ingest.builders).
    """
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: (s.doc_id, s.start, s.end)):
        if out and out[-1].doc_id == s.doc_id and s.start <= out[-1].end + gap:
            last = out[-1]
            out[-1] = Span(last.doc_id, last.start, max(last.end, s.end))
        else:
            out.append(s)
    return out


def document_title(doc_id: str) -> str:
    """A document's display name: the file name without folders, extension or %-escapes.

    The one rule for every page and table ("cuad/VELCO%20NDA.txt" -> "VELCO NDA").
    """
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
        """``text_hash`` of the text: what summaries and index records are keyed on."""
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
        """The document the chunk belongs to."""
        return self.span.doc_id

    @property
    def chunk_id(self) -> str:
        """``<doc_id>@<start>-<end>``: the chunk's record id in every index."""
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
        """The documents the ground-truth spans lie in."""
        return frozenset(s.doc_id for s in self.gold)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved chunk with its similarity score, in rank order (rank 1 is best)."""

    chunk: Chunk
    score: float
    rank: int

    @property
    def span(self) -> Span:
        """The retrieved chunk's span."""
        return self.chunk.span


@dataclass(frozen=True, slots=True)
class RetrievalResult:
    """The hits of one method for one query, best first."""

    query_id: str
    method: str
    hits: tuple[Hit, ...]

    def top(self, k: int) -> tuple[Hit, ...]:
        """The first ``k`` hits."""
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
        """The documents the tests are about, then the distractors: everything the index holds."""
        return self.documents + self.distractors


def check_query(text: str) -> str:
    """The query stripped, or a QueryError for an empty, over-long or content-free query."""
    stripped = text.strip()
    if not stripped:
        raise QueryError("The query is empty: type a question about the documents.")
    if len(stripped) > MAX_QUERY_CHARS:
        raise QueryError(
            f"The query has {len(stripped):,} characters; the limit is {MAX_QUERY_CHARS:,}. "
            "Ask a question rather than pasting a document."
        )
    if not any(ch.isalnum() for ch in stripped):
        raise QueryError("The query has no letters or digits: it cannot match anything meaningful.")
    return stripped


def check_k(k: int) -> int:
    """``k`` if it is a whole number from 1 to MAX_K, else a QueryError."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise QueryError(f"k must be a whole number >= 1, got {k!r}")
    if k > MAX_K:
        raise QueryError(f"k must be at most {MAX_K}, got {k}")
    return k
