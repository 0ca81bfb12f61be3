"""Hybrid retrieval: dense cosine and BM25 (rank-bm25) fused with a user weight.

Method option ``+hybrid<w>``, ``w`` = the dense share (``hybrid0.75``: 75 % dense, 25 % BM25). BM25 runs
over what each record embedded (summary + section line + chunk text for SAC), so the party names in a
summary count for every chunk of its document. The BM25 model is built per index from its records and
kept with the index snapshot (one per collection and record count).

Fusion, per query: the candidates are the union of the dense top N and the BM25 top N (N = max(k,
``CANDIDATES``)); each score is min-max normalised over the candidates, and
``fused = w * dense + (1 - w) * bm25``. With ``w = 1`` the order is the dense order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from sac.index.snapshot import IndexSnapshot
from sac.types import Hit

CANDIDATES = 100

# Function words that carry no topic; legal terms ("party", "agreement") stay: BM25's idf weighs them.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just may me might more most must my no nor not of off on once only
or other our ours out over own same shall she should so some such than that the their theirs them then there
these they this those through to too under until up upon very was we were what when where which while who whom
why will with would you your yours
""".split())
_TOKEN = re.compile(r"[a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Lower-case words and numbers without stopwords, plus each pair of adjacent words written as one
    ("AG Projects" also gives "agprojects"), so a name spelt with or without a space still matches."""
    words = [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]
    return words + [a + b for a, b in zip(words, words[1:]) if a.isalpha() and b.isalpha()]


class BM25Index:
    """BM25 (Okapi, rank-bm25's defaults) over one text per row of a snapshot."""

    def __init__(self, texts: Sequence[str]) -> None:
        from rank_bm25 import BM25Okapi

        self.size = len(texts)
        tokens = [tokenize(t) for t in texts]
        # rank-bm25 divides by the mean document length: an index of empty texts gets one dummy token.
        self._model: Any = BM25Okapi(tokens if any(tokens) else [["\0"]] * max(1, len(tokens)))

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per row (0 where no query word occurs)."""
        words = list(dict.fromkeys(tokenize(query)))
        if not words or self.size == 0:
            return np.zeros(self.size, dtype=np.float64)
        return np.asarray(self._model.get_scores(words), dtype=np.float64)[: self.size]


def bm25_index(snap: IndexSnapshot, texts: Sequence[str], key: str) -> BM25Index:
    """The BM25 model of a snapshot's embedded texts, built once per snapshot and ``key``."""
    return snap.derived(f"bm25:{key}", lambda: BM25Index(texts))


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
