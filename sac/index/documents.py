"""The document-level collection of an index: one record per document, its summary's embedding, for routing.

``+docs<N>`` scores every document by the cosine of the question to its summary (and its best chunk, and BM25
over its whole text; sac.retrieval.document_ranking). The summary vectors live in a Chroma collection of their own beside
the chunk collection, ``sacdoc_<digest of the index key>`` (not ``sac_``: ``list_indexes`` lists chunk collections),
so a question reads D document scores from the store instead of embedding every summary in the process. Record:
id = document id, embedding = the summary the document's chunks were embedded with (the stored version whose hash
the chunk records carry), metadata = document and summary hashes. Baseline indexes embed no summary and have none.

Kept in step with the chunk collection like the lexical indexes: the collection's metadata names the chunk
collection's fingerprint and record count it mirrors. ``document_index()`` finds it fresh or refreshes it: it reads
the chunk records' metadata, embeds only the summaries that are missing or changed (records carry their hashes,
so an interrupted refresh resumes) and deletes documents that left. ``Workbench.build`` refreshes after each sync.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from sac.files import file_lock
from sac.index.client import is_missing
from sac.index.lexical import forget, is_mirror, lexical_dir, summary_of
from sac.index.records import summary_hash
from sac.index.store import ADD_BATCH, Index
from sac.protocols import Embedder
from sac.summaries.store import SummaryStore

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection

PREFIX = "sacdoc_"


def collection_name(index: Index) -> str:
    """``sacdoc_<digest>``: the document collection's name, from its chunk collection's."""
    return PREFIX + index.key.collection_name.removeprefix("sac_")


class DocumentIndex:
    """The ``sacdoc_`` collection of one chunk index."""

    def __init__(self, index: Index) -> None:
        self.index = index
        self.name = collection_name(index)
        self._collection: Collection | None = None

    def _open(self) -> Collection:
        if self._collection is None:
            config = self.index.config
            with self.index.chroma(f"opening collection {self.name}"):
                self._collection = self.index.client.get_or_create_collection(
                    self.name,
                    configuration={"hnsw": {"space": "cosine", "ef_search": config.hnsw_ef_search,
                                            "ef_construction": config.hnsw_ef_construction,
                                            "max_neighbors": config.hnsw_max_neighbors}},
                    metadata={"sac_source": self.index.key.collection_name}, embedding_function=None,
                )
        return self._collection

    def _state(self) -> dict[str, Any]:
        """The collection's metadata as the store holds it now (another process may have written it).

        Empty when there is no collection yet. Keeps the handle it read it through for the searches that follow."""
        with self.index.chroma("reading the document collection's metadata"):
            try:
                self._collection = self.index.client.get_collection(self.name, embedding_function=None)
            except Exception as err:  # noqa: BLE001 - chromadb's error for a missing collection varies by version
                if is_missing(err):
                    return {}
                raise
            return dict(self._collection.metadata or {})

    def is_fresh(self) -> bool:
        """Whether it mirrors the chunk collection's records as they are now (``sac.index.lexical.is_mirror``)."""
        state = self._state()
        return bool(state.get("sac_complete")) and is_mirror(
            {"fingerprint": state.get("sac_fingerprint"), "count": state.get("sac_count", -1)}, self.index)

    def refresh(self, summary_store: SummaryStore, strategy: str, embedder: Embedder) -> int:
        """Mirror the chunk collection's documents and summaries; returns how many summaries were embedded."""
        index = self.index
        with file_lock(index.workspace / "locks" / f"{self.name}.lock"):
            if self.is_fresh():
                return 0
            fingerprint, count = index.fingerprint(), index.count()
            col = self._open()
            wanted: dict[str, dict[str, Any]] = {}
            for meta in index.records().values() if index.exists() else []:
                wanted.setdefault(str(meta["doc_id"]), meta)
            with index.chroma("reading the document collection"):
                got = col.get(include=["metadatas"])
            existing = {rid: dict(m or {}) for rid, m in zip(got["ids"], got["metadatas"] or [])}
            self._set_state(fingerprint, count, complete=False)
            gone = [d for d in existing if d not in wanted]
            for i in range(0, len(gone), ADD_BATCH):
                with index.chroma("deleting documents from the document collection"):
                    col.delete(ids=gone[i:i + ADD_BATCH])
            todo: list[tuple[str, str, Mapping[str, Any]]] = []
            for doc_id, meta in wanted.items():
                summary = summary_of(summary_store, strategy, meta)
                same = existing.get(doc_id, {}).get("summary_hash") == meta.get("summary_hash")
                if summary is None and doc_id in existing:
                    gone.append(doc_id)
                    with index.chroma("deleting a document without summary"):
                        col.delete(ids=[doc_id])
                elif summary is not None and not same:
                    todo.append((doc_id, summary, meta))
            for i in range(0, len(todo), ADD_BATCH):
                batch = todo[i:i + ADD_BATCH]
                vectors = np.asarray(embedder.embed_documents([s for _, s, _ in batch]), dtype=np.float32)
                with index.chroma("writing the document collection"):
                    col.upsert(ids=[d for d, _, _ in batch], embeddings=vectors,
                               metadatas=[{"doc_id": d, "doc_hash": str(m["doc_hash"]), "summary_hash": summary_hash(s)}
                                          for d, s, m in batch])
            self._set_state(fingerprint, count, complete=True)
            return len(todo)

    def _set_state(self, fingerprint: str, count: int, *, complete: bool) -> None:
        meta = {"sac_source": self.index.key.collection_name, "sac_fingerprint": fingerprint, "sac_count": count,
                "sac_complete": complete}
        with self.index.chroma("writing the document collection's metadata"):
            self._open().modify(metadata=meta)

    def summary_scores(self, query_vector: np.ndarray, documents: int) -> dict[str, float]:
        """Document id -> cosine of the question to its summary, for every document that has one.

        ``documents``: how many the index has, at least as many as the collection holds."""
        col = self._open()
        if documents <= 0:
            return {}
        n = documents
        with self.index.chroma("searching the document collection"):
            got = col.query(query_embeddings=np.asarray(query_vector, dtype=np.float32)[None, :], n_results=n,
                            include=["distances"])
        return {d: 1.0 - float(dist) for d, dist in zip(got["ids"][0], (got["distances"] or [[]])[0])}

    def exists(self) -> bool:
        """Whether the collection is in the store (``refresh`` creates it)."""
        with self.index.chroma(f"looking for collection {self.name}"):
            return any((c if isinstance(c, str) else c.name) == self.name for c in self.index.client.list_collections())

    def remove(self, doc_ids: Sequence[str], *, mirror: bool) -> int:
        """Delete these documents' records; returns how many there were.

        With ``mirror`` (it was fresh before the same documents left the chunk collection) it is marked as
        mirroring the chunk collection as it is now, so the next search does not refresh it for nothing."""
        with file_lock(self.index.workspace / "locks" / f"{self.name}.lock"):
            col = self._open()
            with self.index.chroma("deleting documents from the document collection"):
                found = list(col.get(ids=list(doc_ids), include=[])["ids"]) if doc_ids else []
                if found:
                    col.delete(ids=found)
            if mirror:
                self._set_state(self.index.fingerprint(), self.index.count(), complete=True)
            return len(found)

    def drop(self) -> None:
        """Delete the collection, if there is one."""
        if self.exists():
            with self.index.chroma(f"deleting collection {self.name}"):
                self.index.client.delete_collection(self.name)
        self._collection = None


def document_index(
    index: Index, summary_store: SummaryStore, *, strategy: str | None, embedder: Embedder,
) -> DocumentIndex | None:
    """The document collection of ``index``, refreshed first if stale (None for indexes without summaries)."""
    if strategy is None:
        return None
    docs = DocumentIndex(index)
    if not docs.is_fresh():
        docs.refresh(summary_store, strategy, embedder)
    return docs


def drop_index(index: Index) -> None:
    """Delete an index whole: its collection, its shard records, and the document collection and lexical indexes."""
    index.drop()
    DocumentIndex(index).drop()
    forget(index)
    shutil.rmtree(lexical_dir(index), ignore_errors=True)
