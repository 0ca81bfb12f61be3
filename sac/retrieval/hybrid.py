"""Hybrid retrieval: dense cosine and BM25 fused with a user weight.

Method option ``+hybrid<w>``, ``w`` = the dense share (``hybrid0.75``: 75 % dense, 25 % BM25). BM25 runs
over what each record embedded (summary + section line + chunk text for SAC), so the party names in a
summary count for every chunk of its document. The BM25 index lives on disk beside the Chroma store and
follows the collection (sac.index.lexical); ``tokenize`` is the documented tokenisation.

Fusion, per query: the candidates are the union of the dense top N and the BM25 top N (N = max(k,
``CANDIDATES``)); each score is min-max normalised over the candidates, and
``fused = w * dense + (1 - w) * bm25``. With ``w = 1`` the order is the dense order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sac.index.lexical import Lexicon, tokenize
from sac.index.snapshot import IndexSnapshot
from sac.types import Hit

CANDIDATES = 100
__all__ = ["CANDIDATES", "BM25Index", "fuse", "minmax", "tokenize"]  # tokenize: sac.index.lexical's


class BM25Index:
    """BM25 (rank-bm25's Okapi scores, sac.index.lexical) over a list of texts, in memory."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.size = len(texts)
        self._lexicon = Lexicon.from_tokens([tokenize(t) for t in texts])

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per text (0 where no query word occurs)."""
        return self._lexicon.scores(query)


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1]; all-equal values give 0."""
    if values.size == 0:
        return values.astype(np.float64)
    lo, hi = float(values.min()), float(values.max())
    if hi - lo <= 1e-12:
        return np.zeros(values.shape, dtype=np.float64)
    return (values.astype(np.float64) - lo) / (hi - lo)


def fuse(
    snap: IndexSnapshot,
    query_vector: np.ndarray,
    dense_hits: Sequence[Hit],
    bm25_scores: np.ndarray,
    weight: float,
    k: int,
    *,
    allowed_rows: np.ndarray | None = None,
    candidates: int = CANDIDATES,
) -> list[Hit]:
    """The top-k of the union of the dense hits and the BM25 top N, by the weighted min-max fusion.

    Args:
        dense_hits: the dense top N from the store (already restricted like ``allowed_rows``).
        bm25_scores: one BM25 score per snapshot row.
        allowed_rows: rows the result may come from (document-first retrieval); all by default.
    """
    row_of = snap.row_of
    n = max(k, candidates)
    lexical = bm25_scores if allowed_rows is None else _masked(bm25_scores, allowed_rows)
    top_lexical = _top(lexical, n)
    rows = list(dict.fromkeys([*(row_of[h.chunk.chunk_id] for h in dense_hits if h.chunk.chunk_id in row_of),
                               *(int(i) for i in top_lexical if lexical[i] > 0)]))
    if not rows:
        return []
    idx = np.asarray(rows)
    dense = snap.vectors[idx] @ np.asarray(query_vector, dtype=np.float32)
    fused = weight * minmax(dense) + (1.0 - weight) * minmax(bm25_scores[idx])
    # Ties (e.g. two identical boilerplate chunks) break by the dense score, then by the row.
    order = sorted(range(len(rows)), key=lambda j: (-fused[j], -dense[j], rows[j]))[:k]
    return [Hit(snap.chunk(rows[j]), float(fused[j]), rank) for rank, j in enumerate(order, start=1)]


def _masked(scores: np.ndarray, allowed_rows: np.ndarray) -> np.ndarray:
    out = np.zeros_like(scores)
    out[allowed_rows] = scores[allowed_rows]
    return out


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indexes of the n highest scores, highest first (stable for ties)."""
    if scores.size <= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, n - 1)[:n]
    return part[np.argsort(-scores[part], kind="stable")]
