"""An in-memory copy of one index's records: ids, vectors, spans, chunk texts, and what was embedded.

Reranking needs the text of every record of an index at once (``vectors=False``), the diagnostics every
vector; hybrid search, document routing and ``+names`` need neither (sac.index.lexical, sac.index.documents). ``snapshot()``
reads them once per (store client, collection, record count) and keeps them in memory; ``forget()`` drops a
collection after its index was written.

The embedded text (summary + file and section lines + chunk text) is not stored in Chroma, only the chunk text
and the hashes of the summary and of those lines. ``embedded_texts()`` rebuilds it: the summary from the
summary store (the version whose hash the record carries), the lines from the document's id and text
(sac.chunking.context), which the chunks of a document tile. A part whose hash does not match is left out.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from sac.chunking.context import context_lines
from sac.index.records import embedding_text, row_bounds, summary_hash
from sac.index.store import Index
from sac.methods import MethodSpec
from sac.summaries.store import SummaryStore
from sac.types import Chunk, Span

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

T = TypeVar("T")

MAX_SNAPSHOTS_PER_CLIENT = 6  # a 100k-chunk MiniLM index is about 150 MB in memory


@dataclass(eq=False)
class IndexSnapshot:
    """Every record of one index, rows sorted by (document, start) so a document's rows are contiguous."""

    collection: str
    ids: list[str]
    vectors: np.ndarray  # (n, dim) float32, L2-normalised
    doc_ids: list[str]
    starts: np.ndarray
    ends: np.ndarray
    texts: list[str]  # the original chunk texts
    metas: list[dict[str, Any]]
    cache: dict[str, Any] = field(default_factory=dict)  # derived data (BM25, summary vectors, ...)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def documents(self) -> list[str]:
        """Document ids in row order."""
        return list(dict.fromkeys(self.doc_ids))

    @property
    def doc_bounds(self) -> dict[str, tuple[int, int]]:
        """Document id -> its rows ``[first, last + 1)``."""
        got = self.cache.get("doc_bounds")
        if got is None:
            got = self.cache["doc_bounds"] = row_bounds(self.doc_ids)
        return dict(got)

    @property
    def row_of(self) -> dict[str, int]:
        """Chunk id -> row."""
        return self.derived("row_of", lambda: {cid: i for i, cid in enumerate(self.ids)})

    def chunk(self, row: int) -> Chunk:
        """The chunk of row ``row``."""
        return Chunk(Span(self.doc_ids[row], int(self.starts[row]), int(self.ends[row])), self.texts[row])

    def rows(self, doc_ids: Iterable[str]) -> np.ndarray:
        """Row numbers of these documents' chunks."""
        bounds = self.doc_bounds
        parts = [np.arange(*bounds[d]) for d in doc_ids if d in bounds]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=int)

    def derived(self, key: str, make: Callable[[], T]) -> T:
        """``make()`` once per snapshot and key (BM25 models, summary vectors, ...)."""
        with self.lock:
            if key not in self.cache:
                self.cache[key] = make()
            return cast(T, self.cache[key])

    def document_text(self, doc_id: str) -> str:
        """The document's text, rebuilt from its chunks (they tile it; overlaps are skipped)."""
        first, last = self.doc_bounds[doc_id]
        out = ""
        for row in range(first, last):
            start, text = int(self.starts[row]), self.texts[row]
            if start + len(text) > len(out):
                out += text[len(out) - start:] if start < len(out) else text
        return out


_snapshots: weakref.WeakKeyDictionary[ClientAPI, OrderedDict[tuple[str, int], IndexSnapshot]] = weakref.WeakKeyDictionary()
_snapshots_lock = threading.Lock()


def snapshot(client: ClientAPI, index: Index, *, vectors: bool = True) -> IndexSnapshot:
    """The records of ``index`` (read through ``client``), cached per (client, collection, record count).

    ``vectors=False`` reads ids, spans and texts only (``+names`` needs the documents' text, not their vectors):
    its ``vectors`` has no columns, and a later call that needs vectors reads the records again.
    """
    count = index.count()
    key = (index.key.collection_name, count)
    with _snapshots_lock:
        per_client = _snapshots.setdefault(client, OrderedDict())
        found = per_client.get(key)
        if found is not None and (not vectors or found.vectors.shape[1] or not count):
            per_client.move_to_end(key)
            return found
    if vectors:
        ids, matrix, metas, texts = index.all_embeddings()
    else:
        ids, metas, texts = index.chunk_texts()
        matrix = np.zeros((len(ids), 0), np.float32)
    order = sorted(range(len(ids)), key=lambda i: (str(metas[i]["doc_id"]), int(metas[i]["start"])))
    snap = IndexSnapshot(
        collection=index.key.collection_name,
        ids=[ids[i] for i in order],
        vectors=np.ascontiguousarray(matrix[order]) if len(ids) else np.zeros((0, 0), np.float32),
        doc_ids=[str(metas[i]["doc_id"]) for i in order],
        starts=np.array([int(metas[i]["start"]) for i in order], dtype=np.int64),
        ends=np.array([int(metas[i]["end"]) for i in order], dtype=np.int64),
        texts=[texts[i] or "" for i in order],
        metas=[metas[i] for i in order],
    )
    with _snapshots_lock:
        per_client = _snapshots.setdefault(client, OrderedDict())
        for old in [k for k in per_client if k[0] == key[0]]:
            del per_client[old]  # an older count of the same collection
        per_client[key] = snap
        while len(per_client) > MAX_SNAPSHOTS_PER_CLIENT:
            per_client.popitem(last=False)
    return snap


def forget(client: ClientAPI, collection: str) -> None:
    """Drop the cached snapshot of ``collection`` (after its index was written)."""
    with _snapshots_lock:
        per_client = _snapshots.get(client)
        if per_client:
            for old in [k for k in per_client if k[0] == collection]:
                del per_client[old]


def summary_texts(snap: IndexSnapshot, method: MethodSpec, summary_store: SummaryStore) -> dict[str, str]:
    """Document id -> the summary its records were embedded with (empty for the baseline)."""
    strategy = method.strategy
    if strategy is None:
        return {}

    def make() -> dict[str, str]:
        out: dict[str, str] = {}
        for doc_id, (first, _) in snap.doc_bounds.items():
            meta = snap.metas[first]
            wanted = meta.get("summary_hash", "")
            if not wanted:
                continue
            for version in reversed(summary_store.history(str(meta["doc_hash"]), strategy)):
                if summary_hash(version.text) == wanted:
                    out[doc_id] = version.text
                    break
        return out

    return snap.derived(f"summaries:{strategy}", make)


def embedded_texts(snap: IndexSnapshot, method: MethodSpec, summary_store: SummaryStore) -> list[str]:
    """Per row, the text that was embedded: summary, context lines and chunk text.

    The context lines are those of ``+filename`` and ``+sections`` (sac.chunking.context).
    """

    def make() -> list[str]:
        summaries = summary_texts(snap, method, summary_store)
        sections, filename = method.reads_sections, method.reads_file_names
        out: list[str] = []
        for doc_id, (first, last) in snap.doc_bounds.items():
            rows = range(first, last)
            lines = context_lines(doc_id, snap.document_text(doc_id) if sections else "",
                                  [(int(snap.starts[r]), int(snap.ends[r])) for r in rows],
                                  sections=sections, filename=filename)
            for row, prefix in zip(rows, lines):
                if summary_hash(prefix or None) != snap.metas[row].get("prefix_hash", ""):
                    prefix = ""
                out.append(embedding_text(snap.chunk(row), summaries.get(doc_id), prefix or None))
        return out

    return snap.derived(f"embedded:{method.index_name}", make)
