"""Character-level precision and recall (LegalBench-RAG) and Document-Level Retrieval Mismatch.

Worked example: ground truth ``[5, 15)`` in file A; retrieved ``[0, 10)`` in A and ``[0, 10)`` in B.
Overlap = 5 (only the A/A pair shares characters), precision = 5 / 20, recall = 5 / 10,
DRM = 1 / 2 (one of the two retrieved snippets comes from a file outside the ground truth).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sac.types import Span


def char_overlap(retrieved: Sequence[Span], gold: Sequence[Span]) -> int:
    """Sum over every (retrieved, gold) pair in the same file of the length of their intersection.

    Retrieved snippets are not merged first (LegalBench-RAG's definition), so two overlapping
    retrieved snippets both count the characters they share with the ground truth.
    """
    return sum(r.overlap(g) for r in retrieved for g in gold)


def precision_recall(retrieved: Sequence[Span], gold: Sequence[Span]) -> tuple[float, float]:
    """``precision = overlap / retrieved characters``, ``recall = overlap / gold characters``; 0 on a 0 denominator."""
    overlap = char_overlap(retrieved, gold)
    retrieved_chars = sum(len(s) for s in retrieved)
    gold_chars = sum(len(s) for s in gold)
    precision = overlap / retrieved_chars if retrieved_chars else 0.0
    recall = overlap / gold_chars if gold_chars else 0.0
    return precision, recall


def wrong_document_flags(retrieved: Sequence[Span], gold_doc_ids: Iterable[str]) -> list[bool]:
    """One flag per retrieved snippet: True when its file is not among the query's ground-truth files."""
    targets = frozenset(gold_doc_ids)
    return [s.doc_id not in targets for s in retrieved]


def document_retrieval_mismatch(retrieved: Sequence[Span], gold_doc_ids: Iterable[str]) -> float:
    """Share of retrieved snippets from a wrong document (the per-query DRM); 0 when nothing was retrieved."""
    flags = wrong_document_flags(retrieved, gold_doc_ids)
    return sum(flags) / len(flags) if flags else 0.0


@dataclass(frozen=True, slots=True)
class QueryScore:
    """One query's figures at one k (the worked example of the module docstring: P 0.25, R 0.5, DRM 0.5)."""

    precision: float
    recall: float
    drm: float
    wrong: int  # retrieved snippets from a wrong document
    retrieved: int  # retrieved snippets
    retrieved_chars: int


def score_query(retrieved: Sequence[Span], gold: Sequence[Span]) -> QueryScore:
    """Precision, recall and DRM of one query's retrieved snippets against its gold spans, with the counts behind them."""
    precision, recall = precision_recall(retrieved, gold)
    wrong = sum(wrong_document_flags(retrieved, (g.doc_id for g in gold)))
    return QueryScore(
        precision=precision,
        recall=recall,
        drm=wrong / len(retrieved) if retrieved else 0.0,
        wrong=wrong,
        retrieved=len(retrieved),
        retrieved_chars=sum(len(s) for s in retrieved),
    )


@dataclass(frozen=True, slots=True)
class DatasetScore:
    """A dataset's figures at one k (``aggregate``)."""

    precision: float  # mean over queries
    recall: float  # mean over queries
    drm: float  # pooled: wrong snippets / retrieved snippets over all queries
    retrieved_chars: float  # mean characters retrieved per query
    queries: int


def aggregate(scores: Sequence[QueryScore]) -> DatasetScore:
    """Per-dataset figures: precision and recall are query means; DRM is pooled over all snippets."""
    n = len(scores)
    if n == 0:
        return DatasetScore(0.0, 0.0, 0.0, 0.0, 0)
    retrieved = sum(s.retrieved for s in scores)
    return DatasetScore(
        precision=sum(s.precision for s in scores) / n,
        recall=sum(s.recall for s in scores) / n,
        drm=sum(s.wrong for s in scores) / retrieved if retrieved else 0.0,
        retrieved_chars=sum(s.retrieved_chars for s in scores) / n,
        queries=n,
    )


