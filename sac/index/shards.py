"""Sharded ingestion: N processes, on N machines, fill one index on a Chroma server, each with its own documents.

A document belongs to shard ``sha256(doc_id) mod N + 1`` (the digest's first 8 bytes as an integer;
shards are numbered 1..N), the same on every machine and in every Python process. ``sync_shard`` is
``Index.sync`` for one shard: it writes and deletes only its own documents' records, so shards never
touch each other's work, and chunk ids as record ids keep every record once.

Which shards finished is kept in a small side collection next to the index (``sacshards_<digest>``),
one record per shard, each written by its own shard alone: concurrent shards never overwrite each
other's bookkeeping, which one collection-metadata dict could not promise (Chroma's ``modify``
replaces the whole dict, and N machines share no lock). Each record names the corpus version it was
built from (a hash of every document id and text hash of the whole corpus), so shards of different
versions never add up to a complete index. While a sharded build is under way the index's fingerprint
is a marker naming the shard count and corpus version (``shards_marker``); the index is complete when
every shard of that marker is done (``index_complete``), or when an unsharded build ran to the end.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.index import store
from sac.index.records import records_fingerprint, same_inputs, wanted_records
from sac.index.shard_book import (
    DONE,
    STARTED,
    Shard,
    ShardBook,
    corpus_fingerprint,
    marked_complete,
    shards_marker,
)
from sac.index.store import Index, Progress, SyncReport, write_lock
from sac.protocols import Embedder
from sac.types import Chunk

if TYPE_CHECKING:
    from chromadb.api.models.Collection import Collection


def parse_shard(text: str) -> Shard:
    """``"2/3"`` -> Shard(2, 3); anything else is a ConfigError that shows the expected form."""
    match = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
    if not match:
        raise ConfigError(
            f"Expected --shard I/N with whole numbers 1 <= I <= N (e.g. 1/2 on one machine, 2/2 on another), "
            f"got {text!r}"
        )
    return Shard(int(match.group(1)), int(match.group(2)))


def require_server(config: SacConfig, shard: Shard) -> None:
    """Shards must write one shared store: a Chroma server, never each machine's embedded store."""
    if not config.chroma_url:
        raise ConfigError(
            f"--shard {shard.label} needs a Chroma server that every shard writes to: set --chroma-url or "
            "SAC_CHROMA_URL (e.g. http://127.0.0.1:8000 for `chroma run --path DIR --port 8000`). An embedded "
            "store is one folder on one machine, written by one process at a time: each shard would build a "
            "partial index of its own that never becomes complete."
        )


def sync_shard(
    index: Index,
    chunks: Sequence[Chunk],
    doc_hashes: Mapping[str, str],
    summaries: Mapping[str, str | None],
    embedder: Embedder,
    *,
    shard: Shard,
    prefixes: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> SyncReport:
    """``Index.sync`` for one shard: make the shard's part of ``index`` hold exactly its documents' chunks.

    ``doc_hashes`` names every document of the whole corpus: the version the shard records it was built
    from. ``chunks`` may be the whole corpus's or the shard's; records of other shards' documents are never
    written or deleted. Safe to interrupt (a rerun embeds only what is missing), and to run beside the other
    shards on other machines against one Chroma server: the index is complete once every shard has
    finished for the same corpus version, and searchable from then on.

    Order matters for readers: a shard with work first records itself as started and marks the index
    incomplete, and records itself done only after its last write.
    """
    prefixes = prefixes or {}
    own = [c for c in chunks if shard.owns(c.doc_id)]
    corpus = corpus_fingerprint(doc_hashes)
    marker = shards_marker(shard.count, corpus)
    book = ShardBook(index._client, index.key.collection_name)
    # A lock per shard lets shards run side by side on one machine; an embedded store is written by one
    # process at a time (chromadb's PersistentClient is not process-safe), so there the lock is per index.
    name = index.key.collection_name
    lock = f"{name}.shard-{shard.number}-of-{shard.count}" if index._config.chroma_url else name
    with write_lock(index._config.workspace / "locks", lock):
        col = index._open(create=True)
        wanted = wanted_records(own, doc_hashes, summaries, prefixes)
        existing = {rid: m for rid, m in index.records().items() if shard.owns(str(m.get("doc_id", "")))}
        stale = [rid for rid, meta in existing.items() if rid not in wanted or not same_inputs(meta, wanted[rid][1])]
        stale_set = set(stale)
        todo = [rid for rid in wanted if rid not in existing or rid in stale_set]
        fingerprint = records_fingerprint(own, doc_hashes, summaries, prefixes)
        mine = [r for r in index.shard_status().records if r.label == shard.label]
        if stale or todo:
            with index._chroma(f"recording the start of shard {shard.label}"):
                book.write(shard, corpus, STARTED)
            index._set_fingerprint(marker, complete=False)  # from now on only the shard records make it whole
            report = _write(index, col, stale, todo, wanted, summaries, prefixes, embedder, progress)
        else:
            report = SyncReport(added=0, deleted=0, kept=len(wanted), documents_changed=0)
            meta = index._stored_metadata()
            if not marked_complete(meta) and meta.get("sac_fingerprint") != marker:
                index._set_fingerprint(marker, complete=False)  # e.g. an unsharded build stopped after its last write
        if stale or todo or [(r.state, r.corpus, r.fingerprint) for r in mine] != [(DONE, corpus, fingerprint)]:
            with index._chroma(f"recording the end of shard {shard.label}"):
                book.write(shard, corpus, DONE, fingerprint, len(wanted))
        return report


def _write(
    index: Index, col: Collection, stale: Sequence[str], todo: Sequence[str],
    wanted: Mapping[str, tuple[Chunk, dict[str, Any]]], summaries: Mapping[str, str | None], prefixes: Mapping[str, str],
    embedder: Embedder, progress: Progress | None,
) -> SyncReport:
    """Delete a shard's stale records, then write its missing ones (copied from another index, or embedded)."""
    for i in range(0, len(stale), store.ADD_BATCH):
        with index._chroma("deleting stale records"):
            col.delete(ids=list(stale[i : i + store.ADD_BATCH]))
    if progress:
        progress(0, len(todo))
    borrowed = index._borrow({rid: wanted[rid][1] for rid in todo}) if todo else {}
    index._write_copied(col, borrowed, wanted, len(todo), progress)
    rest = [rid for rid in todo if rid not in borrowed]
    index._embed_and_write(col, [wanted[rid] for rid in rest], summaries, prefixes, embedder, len(borrowed), progress)
    return SyncReport(
        added=len(todo), deleted=len([r for r in stale if r not in wanted]), kept=len(wanted) - len(todo),
        documents_changed=len({wanted[rid][1]["doc_id"] for rid in todo}), copied=len(borrowed),
    )
