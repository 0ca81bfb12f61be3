"""Evaluation: metrics, benchmark runs and their folders, comparisons, reviews, diagnostics.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.evaluation.compare import (
        Comparison,
        ComparisonRequest,
        compare_methods,
        dataset_scores,
        document_diffs,
        document_title,
        metrics_frame,
        nearest_neighbours,
    )
    from sac.evaluation.diagnostics import MapData
    from sac.evaluation.metrics import (
        aggregate,
        char_overlap,
        document_retrieval_mismatch,
        merge_spans,
        precision_recall,
        score_query,
        wrong_document_flags,
    )
    from sac.evaluation.review import (
        LABELS,
        ChunkLabel,
        ReviewStore,
        benchmark_json,
        find_quote,
        label_summary,
        labels_csv,
        labels_frame,
        load_retrieved,
        make_gold_span,
        run_hits,
    )
    from sac.evaluation.runs import (
        EvalResult,
        compare_runs,
        corpus_name,
        evaluate,
        load_intervals,
        load_metrics,
        query_diff,
        save_run,
        score_method,
        summary_table,
    )
    from sac.evaluation.uncertainty import bootstrap_intervals, compare_to_reference, format_interval, interval_table, paired_difference

_EXPORTS = {
    "ChunkLabel": "review",
    "Comparison": "compare",
    "ComparisonRequest": "compare",
    "EvalResult": "runs",
    "LABELS": "review",
    "MapData": "diagnostics",
    "ReviewStore": "review",
    "aggregate": "metrics",
    "benchmark_json": "review",
    "bootstrap_intervals": "uncertainty",
    "char_overlap": "metrics",
    "compare_methods": "compare",
    "compare_runs": "runs",
    "compare_to_reference": "uncertainty",
    "corpus_name": "runs",
    "dataset_scores": "compare",
    "document_diffs": "compare",
    "document_retrieval_mismatch": "metrics",
    "document_title": "compare",
    "evaluate": "runs",
    "find_quote": "review",
    "format_interval": "uncertainty",
    "interval_table": "uncertainty",
    "label_summary": "review",
    "labels_csv": "review",
    "labels_frame": "review",
    "load_intervals": "runs",
    "load_metrics": "runs",
    "load_retrieved": "review",
    "make_gold_span": "review",
    "merge_spans": "metrics",
    "metrics_frame": "compare",
    "nearest_neighbours": "compare",
    "paired_difference": "uncertainty",
    "precision_recall": "metrics",
    "query_diff": "runs",
    "run_hits": "review",
    "save_run": "runs",
    "score_method": "runs",
    "score_query": "metrics",
    "summary_table": "runs",
    "wrong_document_flags": "metrics",
}

__all__ = [
    "ChunkLabel",
    "Comparison",
    "ComparisonRequest",
    "EvalResult",
    "LABELS",
    "MapData",
    "ReviewStore",
    "aggregate",
    "benchmark_json",
    "bootstrap_intervals",
    "char_overlap",
    "compare_methods",
    "compare_runs",
    "compare_to_reference",
    "corpus_name",
    "dataset_scores",
    "document_diffs",
    "document_retrieval_mismatch",
    "document_title",
    "evaluate",
    "find_quote",
    "format_interval",
    "interval_table",
    "label_summary",
    "labels_csv",
    "labels_frame",
    "load_intervals",
    "load_metrics",
    "load_retrieved",
    "make_gold_span",
    "merge_spans",
    "metrics_frame",
    "nearest_neighbours",
    "paired_difference",
    "precision_recall",
    "query_diff",
    "run_hits",
    "save_run",
    "score_method",
    "score_query",
    "summary_table",
    "wrong_document_flags",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
