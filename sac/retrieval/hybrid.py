"""Hybrid retrieval: dense cosine and BM25 fused with a user weight.

Method option ``+hybrid<w>``, ``w`` = the dense share (``hybrid0.75``: 75 % dense, 25 % BM25). BM25 runs
over what each record embedded (summary + section line + chunk text for SAC), so the party names in a
summary count for every chunk of its document. The BM25 index lives on disk beside the Chroma store and
follows the collection (sac.index.lexical); ``tokenize`` is the documented tokenisation.

Fusion, per query: the candidates are the union of the dense top N (Chroma) and the BM25 top N (N = max(k,
``CANDIDATES``)); each score is min-max normalised over the candidates, and
``fused = w * dense + (1 - w) * bm25``. With ``w = 1`` the order is the dense order. Nothing but the candidates'
records is read: the cosine of a BM25-only candidate comes from its own vector.

``CANDIDATES`` = 100 is a knob; docs/methods.md lists it (no measurement recorded).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from sac.index.lexical import LexicalIndex, Lexicon, tokenize
from sac.index.store import Index
from sac.types import Hit

CANDIDATES = 100
__all__ = ["CANDIDATES", "BM25Index", "fuse", "hybrid_hits", "minmax", "tokenize"]  # tokenize: sac.index.lexical's


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
    ids: Sequence[str], dense: np.ndarray, lexical: np.ndarray, order: Sequence[int], weight: float, k: int,
) -> list[tuple[str, float]]:
    """The top-k candidates (id, fused score) by ``weight * minmax(dense) + (1 - weight) * minmax(lexical)``.

    Args:
        ids, dense, lexical: the candidates, their cosine and their BM25 score.
        order: a position per candidate (its row in document, start order): ties that the dense score does not
            break (e.g. two identical boilerplate chunks) go to the earlier row.
    """
    if not len(ids):
        return []
    fused = weight * minmax(np.asarray(dense, dtype=np.float64)) + (1.0 - weight) * minmax(np.asarray(lexical, dtype=np.float64))
    ranked = sorted(range(len(ids)), key=lambda j: (-fused[j], -dense[j], order[j]))[:k]
    return [(ids[j], float(fused[j])) for j in ranked]


def hybrid_hits(
    index: Index, chunks: LexicalIndex, query: str, query_vector: np.ndarray, dense: Sequence[tuple[str, float]],
    weight: float, k: int, *, allowed_rows: np.ndarray | None = None, candidates: int = CANDIDATES,
) -> list[Hit]:
    """``+hybrid<w>``: the top ``k`` hits of the dense top N fused with the BM25 top N of the lexical index.

    ``dense``: ids and cosines, already restricted like ``allowed_rows``. The cosines of BM25-only candidates are
    read from their vectors; only the candidates' records are read from the store."""
    n = max(k, candidates)
    scores = chunks.scores(query)
    if allowed_rows is not None:
        masked = np.zeros_like(scores)
        masked[allowed_rows] = scores[allowed_rows]
        scores = masked
    row_of = chunks.row_of
    cosine = {cid: s for cid, s in dense if cid in row_of}
    lexical_only = [chunks.ids[int(r)] for r in _top(scores, n) if scores[r] > 0 and chunks.ids[int(r)] not in cosine]
    if lexical_only:
        vectors = index.vectors_of(lexical_only)
        cosine.update(zip(lexical_only, (vectors @ np.asarray(query_vector, dtype=np.float32)).tolist()))
    ids = list(cosine)
    rows = [row_of[cid] for cid in ids]
    fused = fuse(ids, np.asarray([cosine[c] for c in ids]), scores[rows], rows, weight, k)
    read = index.get_chunks([cid for cid, _ in fused])
    return [Hit(chunk, score, rank) for rank, (chunk, (_, score)) in enumerate(zip(read, fused), start=1)]


def _top(scores: np.ndarray, n: int) -> np.ndarray:
    """Indexes of the n highest scores, highest first (stable for ties)."""
    if scores.size <= n:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, n - 1)[:n]
    return part[np.argsort(-scores[part], kind="stable")]
