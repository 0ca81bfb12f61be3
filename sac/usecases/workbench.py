"""The pipeline in one object: documents -> chunks -> summaries -> embedded indexes -> hits.

The CLI, the app and the benchmarks all go through ``Workbench``, so they share caches and behaviour.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from sac.audit import AuditLog
from sac.chunking.merge import index_chunks
from sac.chunking.recipe import index_inputs
from sac.config import SacConfig
from sac.embedding.models import make_embedder, preload
from sac.embedding.seeds import SeededEmbedder, VectorSeed, benchmark_seed
from sac.embedding.vectors import embedder_name
from sac.errors import SummarizerError
from sac.index import lexical, snapshot
from sac.index.client import make_client, release_store
from sac.index.compaction import settle_collection
from sac.index.documents import collection_name as doc_collection_name
from sac.index.documents import document_index
from sac.index.records import embedding_text, records_fingerprint
from sac.index.shard_book import Shard
from sac.index.shards import require_server, sync_shard
from sac.index.store import Index, IndexKey, SyncReport, list_indexes, write_lock
from sac.methods import MethodSpec
from sac.progress import Progress
from sac.retrieval import pipeline, targets
from sac.retrieval.rerank import make_reranker
from sac.retrieval.trace import SearchResult
from sac.summaries.registry import make_summarizer
from sac.summaries.runs import summarize_corpus
from sac.summaries.store import SummaryStore
from sac.types import Chunk, Document, Hit, Summary, check_k, check_query
from sac.usecases.estimates import PlannedIndex, embed_units
from sac.workspace import Workspace

# What the app shares across its sessions (one model per embedder, one store client per store, held in its caches)
# and starts when a page opens, from the stages.
__all__ = ["BUILTIN_STRATEGIES", "Workbench", "embedder_name", "make_client", "make_embedder", "preload"]

BUILTIN_STRATEGIES = ("generic", "expert")


class Workbench:
    """Shared state of one configuration: the embedder, the store client, the summary store."""

    def __init__(self, config: SacConfig, *, embedder: Any = None, client: Any = None) -> None:
        self.config = config
        self.workspace = Workspace(config.workspace)
        self.audit = AuditLog(self.workspace.root)
        self.summary_store = SummaryStore(self.workspace.summaries_dir, audit=self.audit)
        self._embedder = embedder
        # The configured embedder whose model the workbench runs: config.embedder's, or what a caller's own embedder
        # says it loads (``configured``, as the app's lazy one does); None for any other, which ships no vectors.
        self._runs_configured: str | None = config.embedder if embedder is None else getattr(embedder, "configured", None)
        # The embedder's part of every index key, decided once here: building and searching read this
        # attribute, never the name a model reports after loading. A caller's own embedder names its indexes.
        self.embedder_name: str = str(embedder.name) if embedder is not None else embedder_name(config.embedder)
        self._client = client
        self._lock = threading.Lock()
        self._chunks: dict[tuple[str, str, str], list[Chunk]] = {}
        self._unread_seeds: list[Path] = []  # benchmark folders whose shipped vectors the next build reads
        self._seeds: dict[Path, VectorSeed | None] = {}  # and once read: what this model can use of them

    @property
    def embedder(self) -> Any:
        with self._lock:
            if self._embedder is None:
                self._embedder = make_embedder(self.config)
            return self._embedder

    def use_shipped_vectors(self, folder: Path) -> None:
        """Let builds copy the vectors a benchmark folder ships (``sac.embedding.seeds``) for the texts they hold,
        where they were made with this workbench's model. Read at the first build after this call, not here."""
        key = folder.resolve()
        with self._lock:
            if key not in self._seeds and key not in self._unread_seeds:
                self._unread_seeds.append(key)

    def shipped_vectors(self) -> list[VectorSeed]:
        """The shipped vectors builds copy: those of the folders ``use_shipped_vectors`` named that this model can use
        (each folder read once)."""
        with self._lock:
            while self._unread_seeds:
                folder = self._unread_seeds.pop(0)
                self._seeds[folder] = benchmark_seed(folder, self._runs_configured) if self._runs_configured else None
            return [seed for seed in self._seeds.values() if seed is not None]

    def _build_embedder(self, seeds: Sequence[VectorSeed]) -> Any:
        """What a build embeds with: the shipped vectors first where there are any, the model (loaded only when a
        text misses them) for the rest."""
        return SeededEmbedder(seeds, lambda: self.embedder, self.embedder_name) if seeds else self.embedder

    @property
    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                self._client = make_client(self.config)
            return self._client

    # -- chunks and summaries --------------------------------------------------------------
    def chunks(self, document: Document) -> list[Chunk]:
        key = (document.doc_id, document.content_hash, self.config.chunking_key)
        cached = self._chunks.get(key)
        if cached is None:
            cached = index_chunks(document, self.config.chunk_size, self.config.chunk_overlap, self.config.chunking)
            self._chunks[key] = cached
        return cached

    def summaries(
        self, documents: Sequence[Document], strategy: str, *, progress: Progress | None = None,
        summarizer: Any = None,
    ) -> dict[str, Summary]:
        """The current summary of each document for ``strategy`` (hand edits win over generated ones).

        Built-in strategies are generated on demand; others (LLM sets) come from the summary store,
        filled by ``sac summarize`` or by importing a shipped summary set.
        """
        if summarizer is None and strategy in BUILTIN_STRATEGIES:
            summarizer = make_summarizer("builtin", strategy, self.config)
        if summarizer is not None:
            step = (lambda done, total, _doc: progress("summarizing", done, total)) if progress else None
            return summarize_corpus(
                documents, summarizer, self.summary_store, concurrency=self.config.llm_concurrency, progress=step,
            )
        found = {d.doc_id: s for d in documents if (s := self.summary_store.current(d, strategy)) is not None}
        missing = [d.doc_id for d in documents if d.doc_id not in found]
        if missing:
            raise SummarizerError(
                f"No {strategy!r} summaries for {len(missing)} of {len(documents)} documents "
                f"(first: {missing[0]!r}). Generate them with `python -m sac summarize --strategy {strategy} "
                "--summarizer openai` or import a summary set."
            )
        return found

    # -- indexes --------------------------------------------------------------------------
    def index(self, corpus: str, method: MethodSpec) -> Index:
        key = IndexKey(corpus, method.index_name, self.embedder_name, self.config.chunking_key)
        return Index(self.client, key, self.config)

    def plan_build(self, corpus: str, documents: Sequence[Document], methods: Sequence[MethodSpec], *,
                   step: int = 0) -> list[PlannedIndex]:
        """What ``build`` of these methods will do, per index, before it does any of it (``sac.usecases.estimates``).

        The records each index will hold, how many this build writes (none where the index is complete and current),
        how many of their vectors the shipped vectors hold, and the characters the model embeds. Built-in summaries
        are made here (and kept: the build reads them); a strategy whose summaries are not stored yet (an LLM's, made
        during the build) counts its summaries at the configured length. Nothing is written to the index."""
        seeds = self.shipped_vectors()
        doc_hashes = {d.doc_id: d.content_hash for d in documents}
        planned: list[PlannedIndex] = []
        for method in methods:
            if any(p.name == method.index_name for p in planned):
                continue
            summary_text: dict[str, str | None] = {}
            if method.strategy is not None:
                stored = {d.doc_id: s.text for d in documents if (s := self.summary_store.current(d, method.strategy))}
                if method.strategy in BUILTIN_STRATEGIES and len(stored) < len(documents):
                    stored = {k: s.text for k, s in self.summaries(documents, method.strategy).items()}
                placeholder = "x" * self.config.summary_chars  # an LLM summary still to come: its length only
                summary_text = {d.doc_id: stored.get(d.doc_id, placeholder) for d in documents}
            chunks, prefixes = index_inputs(method.index, documents, self.chunks, self.config.chunk_size)
            index = self.index(corpus, method)
            held = index.count() if index.exists() else 0
            if held and index.is_complete() and held == len(chunks) and index.fingerprint() == records_fingerprint(
                    chunks, doc_hashes, summary_text, prefixes):
                planned.append(PlannedIndex(step, method.index_name, len(chunks)))
                continue
            texts = [embedding_text(c, summary_text.get(c.doc_id), prefixes.get(c.chunk_id)) for c in chunks]
            missing = [t for t in texts if not any(seed.get(t) is not None for seed in seeds)]
            share = 1.0 - min(held, len(chunks)) / len(chunks) if chunks else 0.0  # a resumed build: what is left
            planned.append(PlannedIndex(
                step, method.index_name, len(chunks), to_write=round(len(chunks) * share),
                copied=round((len(texts) - len(missing)) * share),
                embed_units=round(sum(embed_units(t) for t in missing) * share)))
        return planned

    def build(
        self, corpus: str, documents: Sequence[Document], methods: Sequence[MethodSpec], *,
        progress: Progress | None = None, summarizers: Sequence[Any] = (), shard: Shard | None = None,
    ) -> dict[str, SyncReport]:
        """Bring the index of every method up to date with ``documents``; returns what each sync did.

        ``summarizers`` (e.g. an LLM for ``sac-generic-llm``) make their strategies' missing summaries
        on a background thread while the indexes that do not need them are embedded, so a remote LLM
        and the local embedder work at the same time; the indexes of those strategies follow. If a
        summarizer fails, the other indexes are still finished (and its finished summaries kept)
        before its error is raised.

        With ``shard``, only that shard's documents are chunked, summarized and written (``documents`` is
        still the whole corpus: the version every shard must agree on); it needs a Chroma server.
        """
        remote = self.config.embedder.startswith("openai:")
        sent_to = (self.config.embed_base_url or self.config.llm_base_url or "https://api.openai.com/v1") if remote else None
        with _audited_build(self.audit, corpus, methods, documents, shard, self.embedder_name, sent_to) as audited:
            audited.update(self._build_all(corpus, documents, methods, progress, summarizers, shard))
            return audited

    def _build_all(
        self, corpus: str, documents: Sequence[Document], methods: Sequence[MethodSpec], progress: Progress | None,
        summarizers: Sequence[Any], shard: Shard | None,
    ) -> dict[str, SyncReport]:
        doc_hashes = {d.doc_id: d.content_hash for d in documents}
        if shard is not None:
            require_server(self.config, shard)
            documents = [d for d in documents if shard.owns(d.doc_id)]
        relay = _Relay(progress) if progress else None
        waiting = {s.strategy for s in summarizers}
        errors: list[BaseException] = []

        def summarize() -> None:
            for summarizer in summarizers:
                label = f"summarizing ({summarizer.strategy})"
                try:
                    self.summaries(documents, summarizer.strategy, summarizer=summarizer,
                                   progress=functools.partial(_relay_as, relay, label) if relay else None)
                except Exception as err:  # reported after the other indexes are built
                    errors.append(err)

        worker = threading.Thread(target=summarize, name="sac-build-summaries", daemon=True) if summarizers else None
        if worker:
            worker.start()
        reports = self._build(corpus, documents, [m for m in methods if m.strategy not in waiting], relay,
                              doc_hashes, shard)
        if worker:
            while worker.is_alive():
                worker.join(0.2)
                if relay:
                    relay.flush()
            if errors:
                raise errors[0]
            reports.update(self._build(corpus, documents, [m for m in methods if m.strategy in waiting], relay,
                                       doc_hashes, shard))
        return reports

    def _build(
        self, corpus: str, documents: Sequence[Document], methods: Sequence[MethodSpec], progress: Progress | None,
        doc_hashes: Mapping[str, str], shard: Shard | None,
    ) -> dict[str, SyncReport]:
        if not methods:
            return {}
        for i, doc in enumerate(documents, start=1):
            self.chunks(doc)  # chunked once here, cached for the methods below
            if progress and (i % 50 == 0 or i == len(documents)):
                progress("chunking", i, len(documents))
        reports: dict[str, SyncReport] = {}
        seeds = self.shipped_vectors()
        embedder = self._build_embedder(seeds)
        for method in methods:
            if method.index_name in reports:
                continue
            if method.strategy is None:
                summary_text: Mapping[str, str | None] = {}
            else:
                summary_text = {k: s.text for k, s in self.summaries(documents, method.strategy, progress=progress).items()}
            step = (lambda done, total, m=method: progress(f"embedding and indexing {m.index_name}", done, total)) if progress else None
            method_chunks, prefixes = index_inputs(method.index, documents, self.chunks, self.config.chunk_size)
            index = self.index(corpus, method)
            if not index.exists() and not seeds:
                self._check_embedder()
            shipped_before = getattr(embedder, "shipped", 0)
            if shard is None:
                reports[method.index_name] = index.sync(
                    method_chunks, doc_hashes, summary_text, embedder, prefixes=prefixes, progress=step,
                )
            else:
                reports[method.index_name] = sync_shard(
                    index, method_chunks, doc_hashes, summary_text, embedder, shard=shard, prefixes=prefixes,
                    progress=step,
                )
            shipped = getattr(embedder, "shipped", 0) - shipped_before
            if shipped:
                reports[method.index_name] = dataclasses.replace(reports[method.index_name], shipped=shipped)
            if reports[method.index_name].added or reports[method.index_name].deleted:
                snapshot.forget(self.client, index.key.collection_name)
            # BM25 (+hybrid, +docs) and the document collection (+docs) follow the records now, so the first such
            # search does not wait for them (about half a minute for 100k chunks from scratch, less when few changed).
            # A shard leaves them to the first search after the last shard: before that the index is not searched.
            if shard is not None and not index.is_complete():
                continue
            if progress:
                progress(f"BM25 and document index {method.index_name}", 0, 1)
            targets.prepare(lexical.for_method(index, self.summary_store, method))
            document_index(index, self.summary_store, strategy=method.strategy, embedder=embedder)
            settled = self._settle(index)
            if settled:
                reports[method.index_name] = dataclasses.replace(reports[method.index_name], settled=settled)
            if progress:
                progress(f"BM25 and document index {method.index_name}", 1, 1)
        return reports

    def _settle(self, index: Index) -> int:
        """Flush the index's HNSW graphs (chunks, documents) to disk whole, so every process searching the embedded
        store reads the same graph and gets the same hits (``sac.index.compaction.settle_collection``); returns the
        records written back (this process's own searches then read its in-memory graph: ``evaluate``'s
        ``reopen_store``)."""
        if self.config.chroma_url:
            return 0  # a server keeps one graph in its own process
        present = {c.name for c in self.client.list_collections()}
        written = 0
        # The document collection is always searched for all its records (DocumentIndex.summary_scores).
        for name, read_whole in ((index.key.collection_name, False), (doc_collection_name(index), True)):
            if name in present:
                with write_lock(self.config.workspace / "locks", name):
                    written += settle_collection(self.client, name, self.config.workspace / "chroma",
                                                 read_whole=read_whole)
        return written

    def _check_embedder(self) -> None:
        """Let an embeddings server answer one request before a new index is created: a wrong URL, key or
        model then fails with nothing stored, not with an empty index left behind."""
        check = getattr(self.embedder, "check_connection", None)
        if check is not None:
            check()

    def close_store(self) -> None:
        """Close the embedded store (its files may then be rewritten, or deleted); the next use opens it again. Other
        holders of the old client (a cache of clients, say) must drop it: it is stopped."""
        with self._lock:
            self._client = None
        release_store(self.config)

    def remove_documents(self, corpus: str, doc_ids: Sequence[str]) -> int:
        """Delete these documents' records from every index of ``corpus``; returns records removed. Their text stays in
        the store's files, and their summaries, reviews and runs stay: ``sac.usecases.remove.remove_documents`` removes all."""
        removed = 0
        for info in list_indexes(self.client):
            if info.corpus == corpus:
                removed += Index(self.client, info.key, self.config).delete_documents(doc_ids)
        return removed

    # -- search ---------------------------------------------------------------------------
    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self.embedder.embed_documents([check_query(t) for t in texts]), dtype=np.float32)

    def search(
        self, corpus: str, methods: Sequence[MethodSpec], queries: Sequence[str], k: int, *,
        query_vectors: np.ndarray | None = None,
    ) -> dict[str, list[list[Hit]]]:
        """Top-k hits per method and query. Each query is embedded once and shared by all methods."""
        found = self.search_traced(corpus, methods, queries, k, query_vectors=query_vectors)
        return {name: [list(r.hits) for r in results] for name, results in found.items()}

    def search_traced(
        self, corpus: str, methods: Sequence[MethodSpec], queries: Sequence[str], k: int, *,
        query_vectors: np.ndarray | None = None, within: Sequence[str] = (),
    ) -> dict[str, list[SearchResult]]:
        """Per method and query, the top-k hits and the trace of how the search found them (sac.retrieval.trace).

        ``within``: the documents a user pinned; every method then searches those alone."""
        check_k(k)
        for method in methods:
            self.index(corpus, method).require_complete()  # never search half an index as if whole
        vectors = self.embed_queries(queries) if query_vectors is None else query_vectors
        if within:
            return {m.name: pipeline.search_within(self.search_sources(corpus, m), m.search, queries, vectors, k,
                                                   within) for m in methods}
        return {m.name: pipeline.search(self.search_sources(corpus, m), m.search, queries, vectors, k)
                for m in methods}

    def search_sources(self, corpus: str, method: MethodSpec) -> pipeline.SearchSources:
        """What a search of ``method``'s index reads, each part opened when a stage asks for it."""
        index = self.index(corpus, method)

        def embedded_texts(chunk_ids: Sequence[str]) -> list[str]:
            snap = snapshot.snapshot(self.client, index, vectors=False)  # embedded texts: no vectors needed
            texts = snapshot.embedded_texts(snap, method, self.summary_store)
            return [texts[snap.row_of[cid]] for cid in chunk_ids]

        return pipeline.SearchSources(
            index=index, recipe=method.index, embed=self.embed_queries,
            lexicons=lambda: lexical.for_method(index, self.summary_store, method),
            document_summaries=lambda: document_index(index, self.summary_store, strategy=method.strategy,
                                                      embedder=self.embedder),
            reranker=lambda: make_reranker(self.config), embedded_texts=embedded_texts)


class _Relay:
    """Progress from two threads into a callback that must run on the calling thread (a Streamlit page).

    Calls from the thread that made the relay go straight through (after any updates waiting); calls
    from other threads keep their latest value per stage until ``flush``.
    """

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._owner = threading.get_ident()
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[int, int]] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if threading.get_ident() != self._owner:
            with self._lock:
                self._pending[stage] = (done, total)
            return
        self.flush()
        self._progress(stage, done, total)

    def flush(self) -> None:
        with self._lock:
            waiting, self._pending = self._pending, {}
        for stage, (done, total) in waiting.items():
            self._progress(stage, done, total)


def _relay_as(relay: _Relay, label: str, _stage: str, done: int, total: int) -> None:
    """Report a summarizing run's progress under ``label`` (its own stage name is per strategy)."""
    relay(label, done, total)


@contextlib.contextmanager
def _audited_build(
    audit: AuditLog, corpus: str, methods: Sequence[MethodSpec], documents: Sequence[Document], shard: Shard | None,
    embedder: str, embed_server: str | None,
) -> Iterator[dict[str, SyncReport]]:
    """Record a build that changed an index (or failed) in the audit trail; a build with nothing to do is not.
    With an embeddings server, the entry names it: the chunks' text went there."""
    reports: dict[str, SyncReport] = {}
    detail: dict[str, Any] = {"methods": [m.name for m in methods], "documents": len(documents), "embedder": embedder}
    if embed_server:
        detail["embeddings_server"] = embed_server
    if shard is not None:
        detail["shard"] = f"{shard.number}/{shard.count}"
    try:
        yield reports
    except BaseException as err:
        audit.record("build", f"corpus {corpus!r}", **detail, failed=type(err).__name__,
                     indexes={k: dataclasses.asdict(r) for k, r in reports.items()})
        raise
    if any(r.added or r.deleted for r in reports.values()):
        audit.record("build", f"corpus {corpus!r}", **detail,
                     indexes={k: dataclasses.asdict(r) for k, r in reports.items()})
