"""Ingest: read documents, archives, LegalBench-RAG benchmarks and distractor pools.

Also the builders of the full-size benchmarks, and the corpus catalog.

Import the modules themselves (``from sac.ingest import readers``): this package exports nothing.
"""
