"""Ingest: read documents, archives, LegalBench-RAG benchmarks and distractor pools; the corpus catalog.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.ingest.archives import read_zip
    from sac.ingest.benchmark import load_benchmark, load_benchmark_zip
    from sac.ingest.catalog import DEMO_DIR, DEMO_NAME, find_corpus, list_corpora, load_dataset, save_benchmark
    from sac.ingest.pools import attach_pool, load_pool
    from sac.ingest.readers import SUPPORTED_SUFFIXES, merge_documents, read_document_bytes, read_folder, read_path

_EXPORTS = {
    "DEMO_DIR": "catalog",
    "DEMO_NAME": "catalog",
    "SUPPORTED_SUFFIXES": "readers",
    "attach_pool": "pools",
    "find_corpus": "catalog",
    "list_corpora": "catalog",
    "load_benchmark": "benchmark",
    "load_benchmark_zip": "benchmark",
    "load_dataset": "catalog",
    "load_pool": "pools",
    "merge_documents": "readers",
    "read_document_bytes": "readers",
    "read_folder": "readers",
    "read_path": "readers",
    "read_zip": "archives",
    "save_benchmark": "catalog",
}

__all__ = [
    "DEMO_DIR",
    "DEMO_NAME",
    "SUPPORTED_SUFFIXES",
    "attach_pool",
    "find_corpus",
    "list_corpora",
    "load_benchmark",
    "load_benchmark_zip",
    "load_dataset",
    "load_pool",
    "merge_documents",
    "read_document_bytes",
    "read_folder",
    "read_path",
    "read_zip",
    "save_benchmark",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
