"""The vector store: chromadb, embedded (``PersistentClient``) or a ``chroma run`` server (``HttpClient``).

One collection per (corpus, method, embedder, chunking). Each record is one chunk: id = chunk id,
metadata = document id, start, end, document hash and summary hash, document = the ORIGINAL chunk
text (never the summary). Syncing an index is idempotent and incremental: it embeds only chunks that
are missing or whose document or summary changed, and deletes records of documents that left the corpus.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sac.config import SacConfig
from sac.errors import IndexIncompleteError, IndexNotBuiltError, SacError, StoreError
from sac.files import file_lock
from sac.index.client import describe_store, is_missing
from sac.index.records import embedding_text, records_fingerprint, same_inputs, wanted_records
from sac.index.shard_book import ShardBook, ShardStatus, index_complete
from sac.protocols import Embedder
from sac.types import Chunk, Hit, Span

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import Include, Where
    from chromadb.base_types import InclusionExclusionOperator, LiteralValue

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

ADD_BATCH = 512  # records per embed + upsert round trip (chromadb accepts about 5,400)
READ_BATCH = 5000  # ids per read by id (one read fails above about 32,000: SQLite's variable limit)
Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class IndexKey:
    """What an index is of: a corpus, a method, an embedder and a chunking (``SacConfig.chunking_key``)."""

    corpus: str
    method: str
    embedder: str
    chunking: str

    @property
    def collection_name(self) -> str:
        """``sac_<hash of the key>``: a Chroma collection name for any corpus or method name."""
        digest = hashlib.sha256(json.dumps(self.as_dict(), sort_keys=True).encode()).hexdigest()[:24]
        return f"sac_{digest}"

    def as_dict(self) -> dict[str, str]:
        """The four fields by name (the collection's metadata carries them, prefixed ``sac_``)."""
        return {"corpus": self.corpus, "method": self.method, "embedder": self.embedder, "chunking": self.chunking}


@dataclass(frozen=True, slots=True)
class IndexInfo:
    """One index as ``list_indexes`` finds it in the store: its key, collection and record count."""

    key: IndexKey
    collection: str
    chunks: int
    complete: bool  # its last build ran to the end (an interrupted build leaves it False until finished)

    @property
    def corpus(self) -> str:
        """The key's corpus."""
        return self.key.corpus

    @property
    def method(self) -> str:
        """The key's method."""
        return self.key.method

    @property
    def embedder(self) -> str:
        """The key's embedder."""
        return self.key.embedder

    @property
    def chunking(self) -> str:
        """The key's chunking."""
        return self.key.chunking


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What one ``Index.sync`` did."""

    added: int  # chunks written (embedded, or copied from another index)
    deleted: int  # stale records removed
    kept: int  # records already up to date
    documents_changed: int
    copied: int = 0  # of ``added``: vectors taken from another index that embedded the same text
    settled: int = 0  # records written back unchanged to flush the graphs whole (``Workbench._settle``)
    shipped: int = 0  # of ``added``: vectors the benchmark ships for the same text (``sac.embedding.seeds``)

    @property
    def embedded(self) -> int:
        """Chunks that went through the embedder."""
        return self.added - self.copied - self.shipped

    def describe(self) -> str:
        """One line for a person: "12 chunks embedded, 3 copied from another index, 40 already indexed, 0 removed"."""
        copied = "".join(f", {n} copied from {of}" for n, of in ((self.copied, "another index"), (self.shipped, "shipped vectors")) if n)
        return f"{self.embedded} chunk{'s' * (self.embedded != 1)} embedded{copied}, {self.kept} already indexed, {self.deleted} removed"


def write_lock(lock_dir: Path, name: str) -> AbstractContextManager[None]:
    """Serialise writers of one index across threads (app sessions) and processes (CLI runs)."""
    return file_lock(lock_dir / f"{name}.lock")


MAX_RESULTS_PER_CALL = 8192  # queries x n_results per chromadb query call
# Look-alike documents hold chunks with the same text, hence the same vector: an exact tie in score, which the
# vector store breaks either way from one run (or one order of insertion) to the next. A search reads this many
# results beyond k and orders ties by document id and offset, so the same question gets the same hits.
TIE_MARGIN = 8


class Index:
    """One chromadb collection for one (corpus, method, embedder, chunking)."""

    def __init__(self, client: ClientAPI, key: IndexKey, config: SacConfig) -> None:
        self.key = key
        self._client = client
        self._config = config
        self._collection: Collection | None = None

    def _error(self, action: str, err: BaseException) -> StoreError:
        """A one-line StoreError naming the store, the index and what failed (for chromadb's many error types)."""
        where = describe_store(self._config)
        hint = (
            " Check that the server is running (`chroma run --path DIR --host 127.0.0.1 --port 8000`) and try "
            "again; an interrupted indexing run resumes where it stopped."
            if self._config.chroma_url else ""
        )
        detail = " ".join(str(err).split()) or "no details"
        return StoreError(
            f"{where[0].upper()}{where[1:]} failed while {action} ({self.key.method} index of corpus "
            f"{self.key.corpus!r}): {type(err).__name__}: {detail}.{hint}"
        )

    @contextmanager
    def _chroma(self, action: str) -> Iterator[None]:
        try:
            yield
        except SacError:
            raise
        except Exception as err:  # noqa: BLE001 - see _error
            raise self._error(action, err) from err

    # -- collection handling -------------------------------------------------------------
    def _open(self, create: bool) -> Collection:
        if self._collection is not None:
            return self._collection
        name = self.key.collection_name
        try:
            if create:
                self._collection = self._client.get_or_create_collection(
                    name,
                    configuration={
                        "hnsw": {
                            "space": "cosine",
                            "ef_search": self._config.hnsw_ef_search,
                            "ef_construction": self._config.hnsw_ef_construction,
                            "max_neighbors": self._config.hnsw_max_neighbors,
                        }
                    },
                    metadata={f"sac_{k}": v for k, v in self.key.as_dict().items()},
                    embedding_function=None,
                )
            else:
                self._collection = self._client.get_collection(name, embedding_function=None)
        except Exception as err:  # noqa: BLE001
            if not create and is_missing(err):
                raise IndexNotBuiltError(
                    f"No index for corpus {self.key.corpus!r}, method {self.key.method!r}, embedder "
                    f"{self.key.embedder!r}, chunking {self.key.chunking}: build it first (`python -m sac ingest`)."
                ) from err
            raise self._error(f"opening collection {name}", err) from err
        return self._collection

    @property
    def config(self) -> SacConfig:
        """The settings the index was opened with."""
        return self._config

    @property
    def client(self) -> ClientAPI:
        """The Chroma client the index reads and writes through."""
        return self._client

    def chroma(self, action: str) -> AbstractContextManager[None]:
        """Turn any chromadb error while doing ``action`` into a one-line StoreError naming this index."""
        return self._chroma(action)

    @property
    def workspace(self) -> Path:
        """The workspace this index belongs to (its locks and lexical indexes live there)."""
        return self._config.workspace

    def exists(self) -> bool:
        """Whether the collection is in the store."""
        try:
            self._open(create=False)
            return True
        except IndexNotBuiltError:
            return False

    def count(self) -> int:
        """How many records the collection holds (0 when it does not exist)."""
        if not self.exists():
            return 0
        with self._chroma("counting records"):
            return int(self._open(create=False).count())

    def drop(self) -> None:
        """Delete the collection and its shard records (``sac.index.documents.drop_index`` drops all of it)."""
        if self.exists():
            with self._chroma("deleting the collection"):
                self._client.delete_collection(self.key.collection_name)
        with self._chroma("deleting the shard records"):
            ShardBook(self._client, self.key.collection_name).drop()
        self._collection = None

    def records(self) -> dict[str, dict[str, Any]]:
        """All record ids with their metadata (paged, so large collections stay cheap)."""
        col = self._open(create=False)
        out: dict[str, dict[str, Any]] = {}
        page = 5000
        offset = 0
        while True:
            with self._chroma("reading records"):
                got = col.get(include=["metadatas"], limit=page, offset=offset)
            for rid, meta in zip(got["ids"], got["metadatas"] or []):
                out[rid] = dict(meta or {})
            if len(got["ids"]) < page:
                return out
            offset += page

    # -- writing -----------------------------------------------------------------------
    def sync(
        self,
        chunks: Sequence[Chunk],
        doc_hashes: Mapping[str, str],
        summaries: Mapping[str, str | None],
        embedder: Embedder,
        *,
        prefixes: Mapping[str, str] | None = None,
        progress: Progress | None = None,
    ) -> SyncReport:
        """Make the index hold exactly ``chunks``, embedded with their document's summary.

        ``prefixes`` maps a chunk id to extra context embedded after the summary (section headings).
        Safe to interrupt at any point: records are keyed by chunk id and carry the hashes they were
        embedded with, so a rerun adds only what is missing or stale and never duplicates.
        """
        prefixes = prefixes or {}
        with write_lock(self._config.workspace / "locks", self.key.collection_name):
            col = self._open(create=True)
            fingerprint = records_fingerprint(chunks, doc_hashes, summaries, prefixes)
            if self._stored_fingerprint() == fingerprint and self.count() == len(chunks):
                # Unchanged since the last complete sync: skip reading every record.
                return SyncReport(added=0, deleted=0, kept=len(chunks), documents_changed=0)
            wanted = wanted_records(chunks, doc_hashes, summaries, prefixes)
            existing = self.records()
            stale = [rid for rid, meta in existing.items() if rid not in wanted or not same_inputs(meta, wanted[rid][1])]
            stale_set = set(stale)
            todo = [rid for rid in wanted if rid not in existing or rid in stale_set]
            if stale or todo:
                self._set_fingerprint("", complete=False)  # a sync cut short must not look complete
            for i in range(0, len(stale), ADD_BATCH):
                with self._chroma("deleting stale records"):
                    col.delete(ids=stale[i : i + ADD_BATCH])
            changed_docs = {wanted[rid][1]["doc_id"] for rid in todo}
            if progress:
                progress(0, len(todo))
            borrowed = self._borrow({rid: wanted[rid][1] for rid in todo}) if todo else {}
            self._write_copied(col, borrowed, wanted, len(todo), progress)
            copied = len(borrowed)
            todo = [rid for rid in todo if rid not in borrowed]
            self._embed_and_write(col, [wanted[rid] for rid in todo], summaries, prefixes, embedder, copied, progress)
            self._set_fingerprint(fingerprint, complete=True)
            return SyncReport(
                added=copied + len(todo), deleted=len([r for r in stale if r not in wanted]),
                kept=len(wanted) - copied - len(todo), documents_changed=len(changed_docs), copied=copied,
            )

    def _write_copied(
        self, col: Collection, borrowed: Mapping[str, np.ndarray], wanted: Mapping[str, tuple[Chunk, dict[str, Any]]],
        total: int, progress: Progress | None,
    ) -> None:
        """Write records whose vector another index already holds (same embedder, same text): nothing to embed."""
        ids_all = list(borrowed)
        for i in range(0, len(ids_all), ADD_BATCH):
            ids = ids_all[i : i + ADD_BATCH]
            with self._chroma(f"writing copied records {i + 1}-{i + len(ids)} of {len(ids_all)}"):
                col.upsert(
                    ids=ids,
                    embeddings=np.stack([borrowed[r] for r in ids]).astype(np.float32),
                    metadatas=[wanted[r][1] for r in ids],
                    documents=[wanted[r][0].text for r in ids],
                )
            if progress:
                progress(i + len(ids), total)

    def _embed_and_write(
        self, col: Collection, records: Sequence[tuple[Chunk, dict[str, Any]]], summaries: Mapping[str, str | None],
        prefixes: Mapping[str, str], embedder: Embedder, done_before: int, progress: Progress | None,
    ) -> None:
        """Embed ``records`` batch by batch and write them.

        Batch N is written to chromadb on a second thread while batch N + 1 is embedded, so the HNSW inserts of a
        large index do not stall the embedder. One write at a time, in order; a failed write stops the loop before
        the next one starts.
        """
        total = done_before + len(records)

        def write(i: int, batch: Sequence[tuple[Chunk, dict[str, Any]]], vectors: np.ndarray) -> int:
            with self._chroma(f"writing records {i + 1}-{i + len(batch)} of {len(records)}"):
                col.upsert(
                    ids=[c.chunk_id for c, _ in batch],
                    embeddings=np.asarray(vectors, dtype=np.float32),
                    metadatas=[m for _, m in batch],
                    documents=[c.text for c, _ in batch],
                )
            return i + len(batch)

        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sac-upsert") as writer:
            pending: Future[int] | None = None
            try:
                for i in range(0, len(records), ADD_BATCH):
                    batch = records[i : i + ADD_BATCH]
                    vectors = embedder.embed_documents(
                        [embedding_text(c, summaries.get(c.doc_id), prefixes.get(c.chunk_id)) for c, _ in batch])
                    if pending is not None:
                        written = pending.result()
                        if progress:
                            progress(done_before + written, total)
                    pending = writer.submit(write, i, batch, vectors)
                if pending is not None:
                    written = pending.result()
                    pending = None
                    if progress:
                        progress(done_before + written, total)
            finally:
                if pending is not None:
                    wait([pending])  # an error or Ctrl-C above: let the write under way finish

    # -- a sharded build (written by sac.index.shards.sync_shard) --------------------------
    def shard_status(self) -> ShardStatus:
        """The records of a sharded build of this index: which shards finished, for which corpus version."""
        with self._chroma("reading the shard records"):
            return ShardBook(self._client, self.key.collection_name).status()

    def _borrow(self, wanted: Mapping[str, Mapping[str, Any]]) -> dict[str, np.ndarray]:
        """Vectors of records of ``wanted`` (chunk id -> metadata) that an index of this corpus and embedder holds.

        Only vectors of the same embedded text: a chunk id fixes the span, and equal document, summary and prefix hashes fix the rest of the
        text, so such a vector is exactly what embedding would give. Baseline and ``+merge`` indexes
        share their unmerged chunks, and an index whose summaries match another's for some documents
        (a mixed summary set, a strategy copied from another) embeds only the documents that differ.
        """
        found: dict[str, np.ndarray] = {}
        for info in list_indexes(self._client):
            if (info.collection == self.key.collection_name or not info.chunks
                    or info.corpus != self.key.corpus or info.embedder != self.key.embedder):
                continue
            ids = [rid for rid in wanted if rid not in found]
            if not ids:
                break
            with self._chroma(f"reading vectors of the {info.method} index"):
                donor = self._client.get_collection(info.collection, embedding_function=None)
                for i in range(0, len(ids), ADD_BATCH):
                    # Metadata first: most donors (a baseline beside a SAC index) match nothing, and their
                    # vectors are most of what reading them would cost.
                    got = donor.get(ids=ids[i : i + ADD_BATCH], include=["metadatas"])
                    same = [rid for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True)
                            if all((meta or {}).get(f) == wanted[rid][f] for f in ("doc_hash", "summary_hash", "prefix_hash"))]
                    if same:
                        vectors = donor.get(ids=same, include=["embeddings"])
                        embeddings = vectors["embeddings"]
                        for rid, vector in zip(vectors["ids"], embeddings if embeddings is not None else [], strict=True):
                            found[rid] = np.asarray(vector, dtype=np.float32)
        return found

    def _stored_metadata(self) -> dict[str, Any]:
        """The collection's metadata as the store holds it now (another process may have written it)."""
        with self._chroma("reading the index metadata"):
            return dict(self._client.get_collection(self.key.collection_name, embedding_function=None).metadata or {})

    def _stored_fingerprint(self) -> str:
        return str(self._stored_metadata().get("sac_fingerprint", ""))

    def fingerprint(self) -> str:
        """What the last complete sync wrote; empty during a sync, after one stopped part-way or a removal, or no index."""
        return self._stored_fingerprint() if self.exists() else ""

    def _set_fingerprint(self, value: str, *, complete: bool) -> None:
        """Record what the index was built from, and whether its last build (or removal) ran to the end."""
        meta: dict[str, Any] = {f"sac_{k}": v for k, v in self.key.as_dict().items()}
        meta["sac_fingerprint"] = value
        meta["sac_complete"] = complete
        with self._chroma("writing the index fingerprint"):
            self._open(create=True).modify(metadata=meta)

    def is_complete(self) -> bool:
        """Whether it exists and its last build, or every shard of a sharded one for one corpus version, ran to the end."""
        if not self.exists():
            return False
        with self._chroma("reading the shard records"):
            return index_complete(self._client, self.key.collection_name, self._stored_metadata())

    def require_complete(self) -> None:
        """Raise IndexNotBuiltError / IndexIncompleteError unless the index can be searched as a whole."""
        self._open(create=False)
        if self.is_complete():
            return
        if str(self._stored_metadata().get("sac_fingerprint", "")).startswith("shards:"):
            raise IndexIncompleteError(
                f"The {self.key.method} index of {self.key.corpus!r} is incomplete ({self.count():,} chunks so far): "
                f"{self.shard_status().describe()}. Run the missing shards (`python -m sac ingest ... --shard I/N` "
                "against the same server, same corpus and methods), or finish it in one go with the same command "
                "without --shard; either continues where it stopped."
            )
        raise IndexIncompleteError(
            f"The {self.key.method} index of {self.key.corpus!r} is incomplete ({self.count():,} chunks so far): "
            "its last build stopped part-way. Finish building it (Corpus page, or `python -m sac ingest` with "
            "the same corpus and methods); it continues where it stopped."
        )

    def delete_documents(self, doc_ids: Sequence[str]) -> int:
        """Remove every record of these documents; returns how many were removed."""
        if not self.exists() or not doc_ids:
            return 0
        with write_lock(self._config.workspace / "locks", self.key.collection_name):
            col = self._open(create=False)
            complete = self.is_complete()
            self._set_fingerprint("", complete=False)  # the next sync reads every record again
            with self._chroma("deleting documents"):
                before = col.count()
                for doc_id in doc_ids:
                    col.delete(where={"doc_id": doc_id})
                removed = int(before - col.count())
            self._set_fingerprint("", complete=complete)
            return removed

    # -- reading -----------------------------------------------------------------------
    def search(self, query_vectors: np.ndarray, k: int, *, where: Mapping[str, Any] | None = None) -> list[list[Hit]]:
        """Top-k hits per row of ``query_vectors``, best first, scored by cosine; exact ties by document, offset (``TIE_MARGIN``)."""
        col = self._open(create=False)
        with self._chroma("counting records"):
            n = int(col.count())
        if n == 0 or k <= 0:
            return [[] for _ in range(len(query_vectors))]
        vectors = np.asarray(query_vectors, dtype=np.float32)
        n_results = min(k + TIE_MARGIN, n)
        # chromadb reads the results' records in one SQL statement: queries x n_results must stay under
        # SQLite's variable limit (859 questions x 64 results exceed it: "too many SQL variables").
        step = max(1, MAX_RESULTS_PER_CALL // n_results)
        metas_all: list[Any] = []
        docs_all: list[Any] = []
        dists_all: list[Any] = []
        for i in range(0, len(vectors), step):
            with self._chroma("searching"):
                got = col.query(
                    query_embeddings=vectors[i : i + step], n_results=n_results,
                    include=["metadatas", "documents", "distances"], where=dict(where) if where else None,
                )
            metas_all += got["metadatas"] or []
            docs_all += got["documents"] or []
            dists_all += got["distances"] or []
        out: list[list[Hit]] = []
        for metas, docs, dists in zip(metas_all, docs_all, dists_all):
            hits = []
            ranked = sorted(zip(metas, docs, dists), key=lambda r: (float(r[2]), str(r[0]["doc_id"]), int(r[0]["start"])))
            for rank, (meta, text, dist) in enumerate(ranked[:k], start=1):
                span = Span(str(meta["doc_id"]), int(meta["start"]), int(meta["end"]))
                hits.append(Hit(chunk=Chunk(span=span, text=text or ""), score=1.0 - float(dist), rank=rank))
            out.append(hits)
        return out

    def chunk_texts(self, doc_ids: Sequence[str] | None = None) -> tuple[list[str], list[dict[str, Any]], list[str]]:
        """Ids, metadata and chunk texts of every record (of these documents), without the vectors."""
        if doc_ids is not None and not doc_ids:
            return [], [], []
        col = self._open(create=False)
        where = _of_documents(doc_ids) if doc_ids is not None else None
        ids: list[str] = []
        metas: list[dict[str, Any]] = []
        texts: list[str] = []
        page, offset = 5000, 0
        while True:
            with self._chroma("reading chunk texts"):
                got = col.get(include=["metadatas", "documents"], where=where, limit=page, offset=offset)
            ids.extend(got["ids"])
            metas.extend(dict(m or {}) for m in got["metadatas"] or [])
            texts.extend(t or "" for t in got["documents"] or [])
            if len(got["ids"]) < page:
                return ids, metas, texts
            offset += page

    def nearest(self, query_vector: np.ndarray, n: int) -> list[tuple[str, float]]:
        """The ids and cosines of the ``n`` records nearest to one query vector (no texts: the cheapest query)."""
        col = self._open(create=False)
        with self._chroma("searching"):
            got = col.query(query_embeddings=np.asarray(query_vector, dtype=np.float32)[None, :], n_results=n,
                            include=["distances"])
        return [(rid, 1.0 - float(d)) for rid, d in zip(got["ids"][0], (got["distances"] or [[]])[0])]

    def vectors_of(self, ids: Sequence[str]) -> np.ndarray:
        """The vectors of these record ids, in that order (rows of a matrix), read by id."""
        if not ids:
            return np.zeros((0, 0), np.float32)
        got = self._get_by_ids(ids, ["embeddings"], "reading vectors")
        return np.asarray(got["embeddings"], dtype=np.float32)[[got["at"][rid] for rid in ids]]

    def get_chunks(self, ids: Sequence[str]) -> list[Chunk]:
        """The chunks of these record ids, in that order, read by id."""
        if not ids:
            return []
        got = self._get_by_ids(ids, ["metadatas", "documents"], "reading chunks")
        metas, texts = got["metadatas"], got["documents"]
        return [Chunk(Span(str(metas[i]["doc_id"]), int(metas[i]["start"]), int(metas[i]["end"])), texts[i] or "")
                for i in (got["at"][rid] for rid in ids)]

    def _get_by_ids(self, ids: Sequence[str], include: Include, action: str) -> dict[str, Any]:
        """The ``include`` fields of these records, with ``at``: each id's position in the lists.

        Read by id ``READ_BATCH`` at a time: one read of more ids than SQLite has variables fails.
        """
        unique = list(dict.fromkeys(ids))
        got: dict[str, Any] = {"ids": [], **{field: [] for field in include}}
        for i in range(0, len(unique), READ_BATCH):
            with self._chroma(action):
                part: Mapping[str, Any] = self._open(create=False).get(ids=unique[i : i + READ_BATCH], include=include)
            got["ids"].extend(part["ids"])
            for field in include:
                got[field].extend(part[field] if part[field] is not None else [])
        got["at"] = {rid: i for i, rid in enumerate(got["ids"])}
        if len(got["at"]) < len(unique):
            raise StoreError(f"The {self.key.method} index of {self.key.corpus!r} changed while being searched; search again.")
        return got

    def all_embeddings(self, doc_ids: Sequence[str] | None = None) -> tuple[list[str], np.ndarray, list[dict[str, Any]], list[str]]:
        """Ids, embeddings, metadata and chunk texts (for exact-search checks and the embedding map)."""
        col = self._open(create=False)
        where = _of_documents(doc_ids) if doc_ids else None
        ids: list[str] = []
        vecs: list[np.ndarray] = []
        metas: list[dict[str, Any]] = []
        texts: list[str] = []
        page, offset = 5000, 0
        while True:
            with self._chroma("reading embeddings"):
                got = col.get(include=["embeddings", "metadatas", "documents"], where=where, limit=page, offset=offset)
            ids.extend(got["ids"])
            if len(got["ids"]):
                vecs.append(np.asarray(got["embeddings"], dtype=np.float32))
            metas.extend(dict(m or {}) for m in got["metadatas"] or [])
            texts.extend(got["documents"] or [])
            if len(got["ids"]) < page:
                break
            offset += page
        matrix = np.concatenate(vecs) if vecs else np.zeros((0, 0), np.float32)
        return ids, matrix, metas, texts


def _of_documents(doc_ids: Sequence[str]) -> Where:
    """The Chroma filter that keeps the records of these documents."""
    values: dict[InclusionExclusionOperator, list[LiteralValue]] = {"$in": list(doc_ids)}
    return {"doc_id": values}


def list_indexes(client: ClientAPI) -> list[IndexInfo]:
    """Every sac collection in the store with its key and record count."""
    out = []
    try:
        for col in client.list_collections():
            name = col if isinstance(col, str) else col.name
            if not name.startswith("sac_"):
                continue
            c = client.get_collection(name, embedding_function=None)
            meta = c.metadata or {}
            key = IndexKey(*(str(meta.get(f"sac_{field}", "")) for field in ("corpus", "method", "embedder", "chunking")))
            out.append(IndexInfo(key, name, int(c.count()), index_complete(client, name, meta)))
    except Exception as err:  # noqa: BLE001 - chromadb raises httpx, sqlite and its own error types
        detail = " ".join(str(err).split()) or "no details"
        raise StoreError(f"Cannot list the indexes in the Chroma store: {type(err).__name__}: {detail}") from err
    return out
