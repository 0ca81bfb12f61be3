"""Compare methods on one question: each method's hits with the trace of how they were found, wrong documents
flagged against the question's ground truth or pinned documents, and the figures where a target is known."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from sac.evaluation.compare import (
    Comparison,
    ComparisonRequest,
    DocumentDiff,
    MethodResult,
    compare_methods,
    dataset_scores,
    document_diffs,
    metrics_frame,
)
from sac.methods import MethodSpec
from sac.retrieval.trace import SearchResult, SearchTrace
from sac.types import Query, Span, check_k, check_query
from sac.usecases.workbench import Workbench

__all__ = [
    "Comparison", "ComparisonRequest", "DocumentDiff", "MethodResult", "SearchResult", "SearchTrace", "compare",
    "compare_methods", "dataset_scores", "document_diffs", "metrics_frame", "search_question", "score_questions",
]


def search_question(wb: Workbench, corpus: str, methods: Sequence[MethodSpec], question: str,
                    k: int, *, within: Sequence[str] = ()) -> dict[str, SearchResult]:
    """Each method's top-k hits for one question and the trace of its search; the question is embedded once.

    ``within``: the contracts a user pinned; every method then searches inside them alone."""
    text, k = check_query(question), check_k(k)
    found = wb.search_traced(corpus, methods, [text], k, within=within)
    return {name: results[0] for name, results in found.items()}


def compare(wb: Workbench, corpus: str, methods: Sequence[MethodSpec], question: str, k: int, *,
            gold: Sequence[Span] = (), pinned: Sequence[str] = ()) -> tuple[Comparison, dict[str, SearchTrace]]:
    """Search one question with every method and score it: precision, recall and DRM with ground truth, DRM alone
    with pinned documents; with the trace of each method's search."""
    found = search_question(wb, corpus, methods, question, k)
    comparison = compare_methods(question, {m: list(r.hits) for m, r in found.items()}, gold=gold, pinned=pinned)
    return comparison, {m: r.trace for m, r in found.items()}


def score_questions(wb: Workbench, corpus: str, methods: Sequence[MethodSpec], k: int,
                    queries: Sequence[Query]) -> pd.DataFrame:
    """Every question of a dataset at ``k``: precision, recall and DRM per method (a table)."""
    hits = wb.search(corpus, methods, [q.text for q in queries], k)
    return dataset_scores(queries, hits)
