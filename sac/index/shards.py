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

import hashlib
import re
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.index import store
from sac.index.store import (
    Index,
    Progress,
    SyncReport,
    _complete,
    _fingerprint,
    _same_inputs,
    _wanted_records,
    write_lock,
)
from sac.types import Chunk
from sac.workspace import utc_now

SIDE_PREFIX = "sacshards_"  # not "sac_": list_indexes takes every "sac_" collection for an index
STARTED, DONE = "started", "done"


def shard_of(doc_id: str, count: int) -> int:
    """The shard (1..count) a document belongs to: a hash of its id, stable across machines and runs
    (never Python's ``hash``, which changes with every process)."""
    digest = hashlib.sha256(doc_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


@dataclass(frozen=True, slots=True)
class Shard:
    """Shard ``number`` of ``count`` (1-based: ``1/2`` and ``2/2`` make a whole index)."""

    number: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.number <= self.count:
            raise ConfigError(
                f"Expected a shard I/N with 1 <= I <= N (shards are numbered from 1, e.g. 1/2 and 2/2), "
                f"got {self.number}/{self.count}"
            )

    @property
    def label(self) -> str:
        return f"{self.number}/{self.count}"

    def owns(self, doc_id: str) -> bool:
        return shard_of(doc_id, self.count) == self.number


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


def corpus_fingerprint(doc_hashes: Mapping[str, str]) -> str:
    """Hash of the whole corpus (every document id and text hash): which version a shard was built from."""
    digest = hashlib.sha256()
    for doc_id in sorted(doc_hashes):
        digest.update(f"{doc_id}\0{doc_hashes[doc_id]}\n".encode())
    return digest.hexdigest()[:32]


def shards_marker(count: int, corpus: str) -> str:
    """What a sharded build writes as the index's fingerprint while it is under way. Only an index that
    carries it can be complete by its shard records: an unsharded build overwrites it, so shard records
    left from before never vouch for records it has changed since."""
    return f"shards:{count}:{corpus}"


@dataclass(frozen=True, slots=True)
class ShardRecord:
    """One shard's entry in the side collection."""

    number: int
    count: int
    state: str  # "started" (its last run has not finished: running, or killed) | "done"
    corpus: str  # corpus_fingerprint of the whole corpus it was built from
    fingerprint: str  # hash of exactly what its documents' records hold ("" until done)
    records: int  # its documents' records (when done)
    host: str
    time: str

    @property
    def label(self) -> str:
        return f"{self.number}/{self.count}"

    def as_metadata(self) -> dict[str, Any]:
        return {"number": self.number, "count": self.count, "state": self.state, "corpus": self.corpus,
                "fingerprint": self.fingerprint, "records": self.records, "host": self.host, "time": self.time}

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> ShardRecord:
        return cls(int(meta["number"]), int(meta["count"]), str(meta["state"]), str(meta["corpus"]),
                   str(meta.get("fingerprint", "")), int(meta.get("records", 0)), str(meta.get("host", "")),
                   str(meta.get("time", "")))


@dataclass(frozen=True, slots=True)
class ShardStatus:
    """The shard records of one index, and what they add up to."""

    records: tuple[ShardRecord, ...]

    @property
    def all_done(self) -> bool:
        """Whether every shard 1..N finished for one corpus version, and no record of another run is left."""
        if not self.records:
            return False
        first = self.records[0]
        same = all((r.count, r.corpus, r.state) == (first.count, first.corpus, DONE) for r in self.records)
        return same and sorted(r.number for r in self.records) == list(range(1, first.count + 1))

    def complete_for(self, marker: str) -> bool:
        """``all_done``, for the (N, corpus version) that ``marker`` (the index's fingerprint) names."""
        return self.all_done and shards_marker(self.records[0].count, self.records[0].corpus) == marker

    def describe(self) -> str:
        """One clause for messages: which shards are done, which started and did not finish, which are missing."""
        if not self.records:
            return "no shard has recorded its work yet"
        counts = sorted({r.count for r in self.records})
        count = max(counts, key=lambda n: sum(r.count == n for r in self.records))
        ours = {r.number: r for r in self.records if r.count == count}
        corpora = {r.corpus for r in ours.values()}
        done = [f"{n}/{count}" for n in sorted(ours) if ours[n].state == DONE]
        started = [f"{n}/{count} (on {ours[n].host}, since {ours[n].time})" for n in sorted(ours) if ours[n].state != DONE]
        missing = [f"{n}/{count}" for n in range(1, count + 1) if n not in ours]
        parts = [f"it is built in {count} shards"]
        if done:
            parts.append(f"done: {', '.join(done)}")
        if started:
            parts.append(f"started but not finished (still running, or stopped): {', '.join(started)}")
        if missing:
            parts.append(f"not run yet: {', '.join(missing)}")
        if len(corpora) > 1:
            parts.append("the shards were built from different versions of the corpus: run every shard "
                         "again on the same documents")
        if len(counts) > 1:
            parts.append(f"records of runs with another shard count ({', '.join(str(n) for n in counts if n != count)}) "
                         "are left")
        return "; ".join(parts)


class ShardBook:
    """The side collection that records which shards of one index finished. Chroma errors pass through:
    ``Index`` wraps them into one-line StoreErrors."""

    def __init__(self, client: Any, collection_name: str) -> None:
        self._client = client
        self.name = SIDE_PREFIX + collection_name.removeprefix("sac_")

    def _collection(self, create: bool) -> Any:
        if create:
            return self._client.get_or_create_collection(self.name, embedding_function=None)
        try:
            return self._client.get_collection(self.name, embedding_function=None)
        except Exception as err:  # noqa: BLE001 - NotFoundError over HTTP, ValueError/NotFoundError embedded
            if "does not exist" in str(err) or type(err).__name__ == "NotFoundError":
                return None
            raise

    def status(self) -> ShardStatus:
        col = self._collection(create=False)
        if col is None:
            return ShardStatus(())
        got = col.get(include=["metadatas"])
        records = [ShardRecord.from_metadata(m or {}) for m in got["metadatas"] or []]
        return ShardStatus(tuple(sorted(records, key=lambda r: (r.count, r.number))))

    def write(self, shard: Shard, corpus: str, state: str, fingerprint: str = "", records: int = 0) -> None:
        """Record this shard's state, after deleting the records of other runs (another corpus version or
        shard count): they can never add up to a complete index with this one."""
        col = self._collection(create=True)
        got = col.get(include=["metadatas"])
        other = [rid for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True)
                 if (int((meta or {}).get("count", 0)), str((meta or {}).get("corpus", ""))) != (shard.count, corpus)]
        if other:
            col.delete(ids=other)
        record = ShardRecord(shard.number, shard.count, state, corpus, fingerprint, records,
                             socket.gethostname(), utc_now())
        # Chroma stores a vector with every record: one constant dimension, never searched.
        col.upsert(ids=[f"shard-{shard.number}-of-{shard.count}"], embeddings=[[1.0]],
                   metadatas=[record.as_metadata()])

    def drop(self) -> None:
        if self._collection(create=False) is not None:
            self._client.delete_collection(self.name)


def index_complete(client: Any, collection_name: str, meta: Mapping[str, Any]) -> bool:
    """Whether an index is complete: its last build ran to the end, or it carries a sharded build's marker
    and every shard of that build finished for the corpus version the marker names."""
    if _complete(meta):
        return True
    marker = str(meta.get("sac_fingerprint", ""))
    return marker.startswith("shards:") and ShardBook(client, collection_name).status().complete_for(marker)


def sync_shard(
    index: Index,
    chunks: Sequence[Chunk],
    doc_hashes: Mapping[str, str],
    summaries: Mapping[str, str | None],
    embedder: Any,
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
        wanted = _wanted_records(own, doc_hashes, summaries, prefixes)
        existing = {rid: m for rid, m in index.records().items() if shard.owns(str(m.get("doc_id", "")))}
        stale = [rid for rid, meta in existing.items() if rid not in wanted or not _same_inputs(meta, wanted[rid][1])]
        stale_set = set(stale)
        todo = [rid for rid in wanted if rid not in existing or rid in stale_set]
        fingerprint = _fingerprint(own, doc_hashes, summaries, prefixes)
        mine = [r for r in index.shard_status().records if r.label == shard.label]
        if stale or todo:
            with index._chroma(f"recording the start of shard {shard.label}"):
                book.write(shard, corpus, STARTED)
            index._set_fingerprint(marker, complete=False)  # from now on only the shard records make it whole
            report = _write(index, col, stale, todo, wanted, summaries, prefixes, embedder, progress)
        else:
            report = SyncReport(added=0, deleted=0, kept=len(wanted), documents_changed=0)
            meta = index._stored_metadata()
            if not _complete(meta) and meta.get("sac_fingerprint") != marker:
                index._set_fingerprint(marker, complete=False)  # e.g. an unsharded build stopped after its last write
        if stale or todo or [(r.state, r.corpus, r.fingerprint) for r in mine] != [(DONE, corpus, fingerprint)]:
            with index._chroma(f"recording the end of shard {shard.label}"):
                book.write(shard, corpus, DONE, fingerprint, len(wanted))
        return report


def _write(
    index: Index, col: Any, stale: Sequence[str], todo: Sequence[str], wanted: Mapping[str, tuple[Chunk, dict[str, Any]]],
    summaries: Mapping[str, str | None], prefixes: Mapping[str, str], embedder: Any, progress: Progress | None,
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
