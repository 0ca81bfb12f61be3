"""Index: chromadb collections per (corpus, index recipe, embedder, chunking), kept in sync, with what follows them.

An index is synced whole, or shard by shard from several machines; each has a document-level collection of summary
vectors and its BM25 on disk, and in-memory snapshots.

Import the modules themselves (``from sac.index import store``): this package exports nothing.
"""
