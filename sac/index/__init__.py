"""Index: chromadb collections per (corpus, method, embedder, chunking), kept in sync (whole, or shard by shard
from several machines), each with a document-level collection of summary vectors and its BM25 on disk;
in-memory snapshots.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.index.client import make_client
    from sac.index.documents import DocumentIndex, document_index
    from sac.index.lexical import LexicalIndex, lexical_indexes, tokenize
    from sac.index.records import embedding_text
    from sac.index.shards import Shard, ShardStatus, parse_shard, shard_of, sync_shard
    from sac.index.snapshot import IndexSnapshot
    from sac.index.store import ADD_BATCH, Index, IndexKey, SyncReport, list_indexes

_EXPORTS = {
    "ADD_BATCH": "store",
    "DocumentIndex": "documents",
    "Index": "store",
    "IndexKey": "store",
    "IndexSnapshot": "snapshot",
    "LexicalIndex": "lexical",
    "Shard": "shards",
    "ShardStatus": "shards",
    "SyncReport": "store",
    "document_index": "documents",
    "embedding_text": "records",
    "lexical_indexes": "lexical",
    "list_indexes": "store",
    "make_client": "client",
    "parse_shard": "shards",
    "shard_of": "shards",
    "sync_shard": "shards",
    "tokenize": "lexical",
}

__all__ = [
    "ADD_BATCH",
    "DocumentIndex",
    "Index",
    "IndexKey",
    "IndexSnapshot",
    "LexicalIndex",
    "Shard",
    "ShardStatus",
    "SyncReport",
    "document_index",
    "embedding_text",
    "lexical_indexes",
    "list_indexes",
    "make_client",
    "parse_shard",
    "shard_of",
    "sync_shard",
    "tokenize",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
