"""Review what was retrieved: label each hit for its question, mark the words that answer it as new ground truth, see
how reviewers agree, and export both (the app's Review page; ``sac eval --corpus`` scores the ground truth)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from sac.evaluation.agreement import agreement_table, disagreements, format_agreement, labels_against_flags
from sac.evaluation.review import (
    LABELS,
    ChunkLabel,
    GoldSpan,
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
from sac.types import Document, Query
from sac.usecases.workbench import Workbench

# The review stage's label and span types, the store a page reads them from, and its pure helpers: where a quote
# lies in a chunk, a saved run's hits for one question, the exports.
__all__ = [
    "LABELS", "ChunkLabel", "GoldSpan", "LabelReport", "ReviewStore", "add_ground_truth", "benchmark_json",
    "find_quote", "label_report", "review_store", "reviewed_counts", "reviewed_questions", "run_hits",
    "save_labels",
]


def review_store(wb: Workbench) -> ReviewStore:
    """The labels and reviewed ground truth of the workbench's workspace."""
    return ReviewStore(wb.workspace.reviews_dir)


def save_labels(wb: Workbench, labels: Iterable[ChunkLabel]) -> list[ChunkLabel]:
    """Keep labels in the workspace (each checked: a reviewer, a label, a note of bounded length), and say so in the
    audit trail."""
    saved = review_store(wb).save_labels(labels)
    for corpus in sorted({label.corpus for label in saved}):  # one event per corpus a save touched
        mine = [label for label in saved if label.corpus == corpus]
        wb.audit.record("review", f"corpus {corpus!r}", labels=len(mine),
                        counts={v: sum(label.label == v for label in mine) for v in sorted({m.label for m in mine})},
                        questions=sorted({label.query_id for label in mine}),
                        methods=sorted({label.method for label in mine}))
    return saved


def add_ground_truth(wb: Workbench, *, corpus: str, query_id: str, query: str, document: Document, start: int, end: int,
                     reviewer: str, note: str = "") -> GoldSpan:
    """Mark ``document``'s characters [start, end) as the answer to ``query``, checked against its text."""
    span = make_gold_span(corpus=corpus, query_id=query_id, query=query, doc_id=document.doc_id,
                          doc_text=document.text, start=start, end=end, reviewer=reviewer, note=note)
    added = review_store(wb).add_gold(span)
    wb.audit.record("review", f"corpus {corpus!r}", query_id=query_id, doc_id=document.doc_id, span=[start, end],
                    label="ground truth")
    return added


def reviewed_questions(wb: Workbench, corpus: str, documents: Sequence[Document]) -> dict[str, Query]:
    """The questions with ground truth marked on Review for ``corpus``, by query id (none when nothing is marked).
    Raises CorpusError naming the span where a marked span no longer holds its words."""
    spans = review_store(wb).gold(corpus=corpus)
    if not spans:
        return {}
    return {q.query_id: q for q in reviewed_dataset(corpus, documents, spans).queries}


def reviewed_counts(wb: Workbench) -> dict[str, tuple[int, int]]:
    """Per corpus with reviewed ground truth: its questions and its marked spans."""
    spans = review_store(wb).gold()
    return {c: (len({g.query for g in spans if g.corpus == c}), sum(g.corpus == c for g in spans))
            for c in sorted({g.corpus for g in spans})}


@dataclass(frozen=True)
class LabelReport:
    """Every label of a workspace, as the Review page shows it and exports it."""

    summary: pd.DataFrame  # per method: chunks per label and the share relevant
    table: pd.DataFrame  # one row per label
    csv: str  # the table as CSV
    agreement: pd.DataFrame | None  # Cohen's kappa per pair of reviewers on the chunks both labelled; None: no pair
    disagreements: pd.DataFrame  # the chunks reviewers labelled differently
    flags: pd.DataFrame  # labels against the benchmark's wrong-document flags (benchmark questions only)

    @property
    def flagged(self) -> bool:
        """Whether any label falls on a benchmark question (``flags`` counts something)."""
        return bool(self.flags[self.flags.columns[1:]].to_numpy().sum())


def label_report(labels: Sequence[ChunkLabel], questions: Mapping[str, Sequence[Query]]) -> LabelReport:
    """Counts per method, the reviewers' agreement (with a bootstrap interval) and where they differ, and the labels
    set against the benchmark's flags; ``questions``: each labelled benchmark corpus's questions, by corpus."""
    agreement = agreement_table(labels)
    truth = {(corpus, q.query_id): {s.doc_id for s in q.gold} for corpus, queries in questions.items() for q in queries}
    return LabelReport(label_summary(labels), labels_frame(labels), labels_csv(labels),
                       None if agreement.empty else format_agreement(agreement), disagreements(labels),
                       labels_against_flags(labels, truth))
