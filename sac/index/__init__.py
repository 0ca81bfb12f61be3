"""Index: chromadb collections per (corpus, method, embedder, chunking), kept in sync; their BM25 on disk; in-memory
snapshots.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.index.lexical import LexicalIndex, lexical_indexes, tokenize
    from sac.index.snapshot import IndexSnapshot
    from sac.index.store import ADD_BATCH, Index, IndexKey, SyncReport, embedding_text, list_indexes, make_client

_EXPORTS = {
    "ADD_BATCH": "store",
    "Index": "store",
    "IndexKey": "store",
    "IndexSnapshot": "snapshot",
    "LexicalIndex": "lexical",
    "SyncReport": "store",
    "embedding_text": "store",
    "lexical_indexes": "lexical",
    "list_indexes": "store",
    "make_client": "store",
    "tokenize": "lexical",
}

__all__ = [
    "ADD_BATCH",
    "Index",
    "IndexKey",
    "IndexSnapshot",
    "LexicalIndex",
    "SyncReport",
    "embedding_text",
    "lexical_indexes",
    "list_indexes",
    "make_client",
    "tokenize",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
