"""Index: chromadb collections per (corpus, method, embedder, chunking), kept in sync, each with a document-level
collection of summary vectors and its BM25 on disk; in-memory snapshots.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.index.client import make_client
    from sac.index.documents import DocumentIndex, document_index
    from sac.index.lexical import LexicalIndex, lexical_indexes, tokenize
    from sac.index.snapshot import IndexSnapshot
    from sac.index.store import ADD_BATCH, Index, IndexKey, SyncReport, embedding_text, list_indexes

_EXPORTS = {
    "ADD_BATCH": "store",
    "DocumentIndex": "documents",
    "Index": "store",
    "IndexKey": "store",
    "IndexSnapshot": "snapshot",
    "LexicalIndex": "lexical",
    "SyncReport": "store",
    "document_index": "documents",
    "embedding_text": "store",
    "lexical_indexes": "lexical",
    "list_indexes": "store",
    "make_client": "client",
    "tokenize": "lexical",
}

__all__ = [
    "ADD_BATCH",
    "DocumentIndex",
    "Index",
    "IndexKey",
    "IndexSnapshot",
    "LexicalIndex",
    "SyncReport",
    "document_index",
    "embedding_text",
    "lexical_indexes",
    "list_indexes",
    "make_client",
    "tokenize",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
