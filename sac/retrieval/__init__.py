"""Retrieval at query time, as stages that each leave a trace entry (sac.retrieval.pipeline).

The stages resolve the documents a question names, rank documents, rank chunks inside them, and fuse or rerank.

Import the modules themselves (``from sac.index import store``): this package exports nothing.
"""
