"""Evaluation: metrics, benchmark runs and their folders, comparisons, reviews and reviewers' agreement, diagnostics.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.evaluation.agreement import agreement_table, cohen_kappa, disagreements
    from sac.evaluation.compare import (
        Comparison,
        ComparisonRequest,
        compare_methods,
        dataset_scores,
        document_diffs,
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
        make_gold_span,
        reviewed_dataset,
        run_hits,
    )
    from sac.evaluation.runs import (
        EvalResult,
        RunFolder,
        compare_runs,
        corpus_name,
        evaluate,
        list_runs,
        open_run,
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
    "RunFolder": "runs",
    "aggregate": "metrics",
    "agreement_table": "agreement",
    "benchmark_json": "review",
    "bootstrap_intervals": "uncertainty",
    "char_overlap": "metrics",
    "cohen_kappa": "agreement",
    "compare_methods": "compare",
    "compare_runs": "runs",
    "compare_to_reference": "uncertainty",
    "corpus_name": "runs",
    "dataset_scores": "compare",
    "disagreements": "agreement",
    "document_diffs": "compare",
    "document_retrieval_mismatch": "metrics",
    "evaluate": "runs",
    "find_quote": "review",
    "format_interval": "uncertainty",
    "interval_table": "uncertainty",
    "label_summary": "review",
    "labels_csv": "review",
    "labels_frame": "review",
    "list_runs": "runs",
    "make_gold_span": "review",
    "merge_spans": "metrics",
    "metrics_frame": "compare",
    "nearest_neighbours": "compare",
    "open_run": "runs",
    "paired_difference": "uncertainty",
    "precision_recall": "metrics",
    "query_diff": "runs",
    "reviewed_dataset": "review",
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
    "RunFolder",
    "aggregate",
    "agreement_table",
    "benchmark_json",
    "bootstrap_intervals",
    "char_overlap",
    "cohen_kappa",
    "compare_methods",
    "compare_runs",
    "compare_to_reference",
    "corpus_name",
    "dataset_scores",
    "disagreements",
    "document_diffs",
    "document_retrieval_mismatch",
    "evaluate",
    "find_quote",
    "format_interval",
    "interval_table",
    "label_summary",
    "labels_csv",
    "labels_frame",
    "list_runs",
    "make_gold_span",
    "merge_spans",
    "metrics_frame",
    "nearest_neighbours",
    "open_run",
    "paired_difference",
    "precision_recall",
    "query_diff",
    "reviewed_dataset",
    "run_hits",
    "save_run",
    "score_method",
    "score_query",
    "summary_table",
    "wrong_document_flags",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
