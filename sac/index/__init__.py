"""Index: chromadb collections per (corpus, method, embedder, chunking), kept in sync (whole, or shard by shard
from several machines); in-memory snapshots.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.index.shards import Shard, ShardStatus, parse_shard, shard_of, sync_shard
    from sac.index.snapshot import IndexSnapshot
    from sac.index.store import ADD_BATCH, Index, IndexKey, SyncReport, embedding_text, list_indexes, make_client

_EXPORTS = {
    "ADD_BATCH": "store",
    "Index": "store",
    "IndexKey": "store",
    "IndexSnapshot": "snapshot",
    "Shard": "shards",
    "ShardStatus": "shards",
    "SyncReport": "store",
    "embedding_text": "store",
    "list_indexes": "store",
    "make_client": "store",
    "parse_shard": "shards",
    "shard_of": "shards",
    "sync_shard": "shards",
}

__all__ = [
    "ADD_BATCH",
    "Index",
    "IndexKey",
    "IndexSnapshot",
    "Shard",
    "ShardStatus",
    "SyncReport",
    "embedding_text",
    "list_indexes",
    "make_client",
    "parse_shard",
    "shard_of",
    "sync_shard",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
