"""The shard records of an index built shard by shard (sac.index.shards).

A side collection beside the index says which shards finished, for which corpus version, and so whether the index
is complete.
"""

from __future__ import annotations

import hashlib
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sac.errors import ConfigError
from sac.files import utc_now

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection

SIDE_PREFIX = "sacshards_"  # not "sac_": list_indexes takes every "sac_" collection for an index
STARTED, DONE = "started", "done"


def shard_of(doc_id: str, count: int) -> int:
    """The shard (1..count) a document belongs to: a hash of its id, stable across machines and runs.

    Never Python's ``hash``, which changes with every process.
    """
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
        """"1/2": how flags and messages write a shard."""
        return f"{self.number}/{self.count}"

    def owns(self, doc_id: str) -> bool:
        """Whether ``doc_id`` belongs to this shard (``shard_of``)."""
        return shard_of(doc_id, self.count) == self.number


def marked_complete(meta: Mapping[str, Any]) -> bool:
    """Whether an index's collection metadata says its last build ran to the end.

    Without ``sac_complete`` (metadata that does not record the state), an index counts as complete when its
    fingerprint, written only at the end of a build, is there.
    """
    if "sac_complete" in meta:
        return bool(meta["sac_complete"])
    return bool(meta.get("sac_fingerprint"))


def corpus_fingerprint(doc_hashes: Mapping[str, str]) -> str:
    """Hash of the whole corpus (every document id and text hash): which version a shard was built from."""
    digest = hashlib.sha256()
    for doc_id in sorted(doc_hashes):
        digest.update(f"{doc_id}\0{doc_hashes[doc_id]}\n".encode())
    return digest.hexdigest()[:32]


def shards_marker(count: int, corpus: str) -> str:
    """What a sharded build writes as the index's fingerprint while it is under way.

    Only an index that carries it can be complete by its shard records: an unsharded build overwrites it, so
    shard records of an earlier sharded build never vouch for records that build has changed.
    """
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
        """"1/2": how flags and messages write a shard."""
        return f"{self.number}/{self.count}"

    def as_metadata(self) -> dict[str, Any]:
        """The record as the side collection stores it."""
        return {"number": self.number, "count": self.count, "state": self.state, "corpus": self.corpus,
                "fingerprint": self.fingerprint, "records": self.records, "host": self.host, "time": self.time}

    @classmethod
    def from_metadata(cls, meta: Mapping[str, Any]) -> ShardRecord:
        """The record from what the side collection stores (``as_metadata``)."""
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
    """The side collection that records which shards of one index finished.

    Chroma errors pass through: ``Index`` wraps them into one-line StoreErrors.
    """

    def __init__(self, client: ClientAPI, collection_name: str) -> None:
        self._client = client
        self.name = SIDE_PREFIX + collection_name.removeprefix("sac_")

    def _existing(self) -> Collection | None:
        """The side collection, or None when there is none."""
        try:
            return self._client.get_collection(self.name, embedding_function=None)
        except Exception as err:  # noqa: BLE001 - NotFoundError over HTTP, ValueError/NotFoundError embedded
            if "does not exist" in str(err) or type(err).__name__ == "NotFoundError":
                return None
            raise

    def status(self) -> ShardStatus:
        """The shard records as they are in the store now."""
        col = self._existing()
        if col is None:
            return ShardStatus(())
        got = col.get(include=["metadatas"])
        records = [ShardRecord.from_metadata(m or {}) for m in got["metadatas"] or []]
        return ShardStatus(tuple(sorted(records, key=lambda r: (r.count, r.number))))

    def write(self, shard: Shard, corpus: str, state: str, fingerprint: str = "", records: int = 0) -> None:
        """Record this shard's state, after deleting the records of other runs.

        Records of another corpus version or shard count can never add up to a complete index with this one.
        """
        col = self._client.get_or_create_collection(self.name, embedding_function=None)
        got = col.get(include=["metadatas"])
        other = [rid for rid, meta in zip(got["ids"], got["metadatas"] or [], strict=True)
                 if _run_of(meta or {}) != (shard.count, corpus)]
        if other:
            col.delete(ids=other)
        record = ShardRecord(shard.number, shard.count, state, corpus, fingerprint, records,
                             socket.gethostname(), utc_now())
        # Chroma stores a vector with every record: one constant dimension, never searched.
        col.upsert(ids=[f"shard-{shard.number}-of-{shard.count}"], embeddings=np.ones((1, 1), np.float32),
                   metadatas=[record.as_metadata()])

    def drop(self) -> None:
        """Delete the side collection, if there is one."""
        if self._existing() is not None:
            self._client.delete_collection(self.name)


def _run_of(meta: Mapping[str, Any]) -> tuple[int, str]:
    """The (shard count, corpus version) of the run a stored shard record belongs to."""
    return int(meta.get("count", 0)), str(meta.get("corpus", ""))


def index_complete(client: ClientAPI, collection_name: str, meta: Mapping[str, Any]) -> bool:
    """Whether an index is complete: its last build ran to the end, or its sharded build did.

    A sharded build is complete when the index carries its marker and every shard of that build finished for
    the corpus version the marker names.
    """
    if marked_complete(meta):
        return True
    marker = str(meta.get("sac_fingerprint", ""))
    return marker.startswith("shards:") and ShardBook(client, collection_name).status().complete_for(marker)
