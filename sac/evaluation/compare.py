"""One query, several methods side by side.

Per-method metrics, wrong-document flags, document set differences against the baseline, and look-alike
summaries.

The target of a query is its ground truth when it comes from a benchmark, or the documents the user
pinned ("this question is about document X"). Without a target there are no flags and no metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sac.evaluation.metrics import aggregate, document_retrieval_mismatch, score_query, wrong_document_flags
from sac.types import Hit, Query, Span


@dataclass(frozen=True, slots=True)
class ComparisonRequest:
    """What the Compare page last ran, for the Review page to open: one question against some methods."""

    corpus: str
    query: str
    k: int
    methods: tuple[str, ...]
    query_id: str | None = None
    gold: tuple[Span, ...] = ()
    pinned: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MethodResult:
    """What one method retrieved for the query, with flags and figures where a target is known."""

    method: str
    hits: tuple[Hit, ...]
    wrong: tuple[bool | None, ...]  # per hit; None when no target is known
    precision: float | None  # None without ground truth spans
    recall: float | None
    drm: float | None  # None without a target

    @property
    def documents(self) -> list[str]:
        """Documents in the order they first appear in the ranking."""
        return list(dict.fromkeys(h.span.doc_id for h in self.hits))


@dataclass(frozen=True, slots=True)
class Comparison:
    """One query's results under several methods, with its target documents."""

    query: str
    targets: frozenset[str]  # target documents (empty: none known)
    has_gold: bool
    results: tuple[MethodResult, ...]

    def result(self, method: str) -> MethodResult:
        """The result of ``method``; KeyError when it was not compared."""
        for r in self.results:
            if r.method == method:
                return r
        raise KeyError(method)


def compare_methods(
    query: str,
    hits_by_method: Mapping[str, Sequence[Hit]],
    *,
    gold: Sequence[Span] = (),
    pinned: Iterable[str] = (),
) -> Comparison:
    """Score each method's hits: precision/recall/DRM with ground truth, DRM alone with pinned documents."""
    gold = tuple(gold)
    targets = frozenset(g.doc_id for g in gold) or frozenset(pinned)
    results = []
    precision: float | None
    recall: float | None
    drm: float | None
    for method, hits in hits_by_method.items():
        spans = [h.span for h in hits]
        if gold:
            score = score_query(spans, gold)
            precision, recall, drm = score.precision, score.recall, score.drm
        else:
            precision = recall = None
            drm = document_retrieval_mismatch(spans, targets) if targets else None
        flags: tuple[bool | None, ...] = (
            tuple(wrong_document_flags(spans, targets)) if targets else tuple(None for _ in spans)
        )
        results.append(MethodResult(method, tuple(hits), flags, precision, recall, drm))
    return Comparison(query, targets, bool(gold), tuple(results))


@dataclass(frozen=True, slots=True)
class DocumentDiff:
    """Which documents one method retrieved that the reference did not, and the reverse.

    ``gained`` and ``lost`` hold only the question's right documents (its gold or pinned documents): a
    gain is a right document the reference missed. Every other document retrieved by one side only is in
    ``only_method`` / ``only_reference`` (wrong documents when the right ones are known, plain differences
    when they are not)."""

    method: str
    reference: str
    gained: tuple[str, ...]  # right documents the method retrieved and the reference did not
    lost: tuple[str, ...]  # right documents the reference retrieved and the method did not
    only_method: tuple[str, ...] = ()  # other documents only the method retrieved
    only_reference: tuple[str, ...] = ()  # other documents only the reference retrieved

    @property
    def same(self) -> bool:
        """Whether the method retrieved the same documents as the reference."""
        return not (self.gained or self.lost or self.only_method or self.only_reference)


def document_diffs(comparison: Comparison, reference: str = "baseline") -> list[DocumentDiff]:
    """``DocumentDiff`` of every method other than ``reference``; empty when the reference was not run."""
    names = [r.method for r in comparison.results]
    if reference not in names:
        return []
    ref_docs = comparison.result(reference).documents
    right = comparison.targets
    out = []
    for r in comparison.results:
        if r.method == reference:
            continue
        docs = r.documents
        only_method = tuple(d for d in docs if d not in ref_docs)
        only_reference = tuple(d for d in ref_docs if d not in docs)
        out.append(DocumentDiff(
            r.method, reference,
            gained=tuple(d for d in only_method if d in right),
            lost=tuple(d for d in only_reference if d in right),
            only_method=tuple(d for d in only_method if d not in right),
            only_reference=tuple(d for d in only_reference if d not in right),
        ))
    return out


def metrics_frame(comparison: Comparison) -> pd.DataFrame:
    """One row per method: precision, recall, DRM (NaN where unknown) and wrong hits."""
    rows = []
    for r in comparison.results:
        rows.append({
            "method": r.method,
            "precision": r.precision,
            "recall": r.recall,
            "drm": r.drm,
            "wrong": sum(1 for w in r.wrong if w) if comparison.targets else None,
            "hits": len(r.hits),
        })
    return pd.DataFrame(rows, columns=["method", "precision", "recall", "drm", "wrong", "hits"])


def dataset_scores(queries: Sequence[Query], hits_by_method: Mapping[str, Sequence[Sequence[Hit]]]) -> pd.DataFrame:
    """Per method over every query (hits in query order): mean precision and recall, pooled DRM, in percent."""
    rows = []
    for method, per_query in hits_by_method.items():
        agg = aggregate([score_query([h.span for h in hits], q.gold) for q, hits in zip(queries, per_query)])
        rows.append({"method": method, "precision %": round(agg.precision * 100, 1),
                     "recall %": round(agg.recall * 100, 1), "DRM %": round(agg.drm * 100, 1), "questions": agg.queries})
    return pd.DataFrame(rows, columns=["method", "precision %", "recall %", "DRM %", "questions"])


def nearest_neighbours(ids: Sequence[str], vectors: np.ndarray) -> pd.DataFrame:
    """For each row, the most similar other row and their cosine similarity (rows L2-normalised).

    Returns columns ``doc_id``, ``most_similar``, ``similarity``, sorted by similarity, highest first.
    """
    ids = list(ids)
    if len(ids) != len(vectors):
        raise ValueError(f"Expected one vector per id, got {len(vectors)} vectors for {len(ids)} ids")
    if len(ids) < 2:
        return pd.DataFrame({"doc_id": ids, "most_similar": [None] * len(ids), "similarity": [np.nan] * len(ids)})
    v = np.asarray(vectors, dtype=np.float32)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    sims = v @ v.T
    np.fill_diagonal(sims, -np.inf)
    best = sims.argmax(axis=1)
    frame = pd.DataFrame({
        "doc_id": ids,
        "most_similar": [ids[j] for j in best],
        "similarity": [float(sims[i, j]) for i, j in enumerate(best)],
    })
    return frame.sort_values("similarity", ascending=False, kind="stable").reset_index(drop=True)
