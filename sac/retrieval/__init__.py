"""Retrieval: the method grammar (``base+options``), dense search, hybrid, document-first, reranking.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.retrieval.docfirst import document_scores
    from sac.retrieval.hybrid import BM25Index, fuse, minmax, tokenize
    from sac.retrieval.methods import (
        ALIASES,
        BASE_METHODS,
        MAX_K,
        MAX_QUERY_CHARS,
        RECOMMENDED,
        Method,
        check_k,
        check_query,
        method_label,
        parse_method,
        parse_methods,
        searchable_methods,
        suggested_methods,
    )
    from sac.retrieval.rerank import LexicalReranker, make_reranker

_EXPORTS = {
    "ALIASES": "methods",
    "BASE_METHODS": "methods",
    "BM25Index": "hybrid",
    "LexicalReranker": "rerank",
    "MAX_K": "methods",
    "MAX_QUERY_CHARS": "methods",
    "Method": "methods",
    "RECOMMENDED": "methods",
    "check_k": "methods",
    "check_query": "methods",
    "document_scores": "docfirst",
    "fuse": "hybrid",
    "make_reranker": "rerank",
    "method_label": "methods",
    "minmax": "hybrid",
    "parse_method": "methods",
    "parse_methods": "methods",
    "searchable_methods": "methods",
    "suggested_methods": "methods",
    "tokenize": "hybrid",
}

__all__ = [
    "ALIASES",
    "BASE_METHODS",
    "BM25Index",
    "LexicalReranker",
    "MAX_K",
    "MAX_QUERY_CHARS",
    "Method",
    "RECOMMENDED",
    "check_k",
    "check_query",
    "document_scores",
    "fuse",
    "make_reranker",
    "method_label",
    "minmax",
    "parse_method",
    "parse_methods",
    "searchable_methods",
    "suggested_methods",
    "tokenize",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
