"""Document-first retrieval: pick the documents first, then the chunks inside them.

Method option ``+docs<N>``. Most wrong-document hits are chunks that read like the right answer but sit in a
look-alike contract; ranking whole documents first asks a different question ("which contract is this
about?"), and the chunk search then runs only inside the top N documents
(``Index.search(where={"doc_id": {"$in": [...]}})``), dense or ``+hybrid<w>``.

A document's score, per query:

- dense: the mean of the cosine of the query to the document's summary (SAC methods; each summary is
  embedded on its own once per index) and its best chunk cosine; the best chunk cosine alone for the
  baseline;
- lexical: BM25 over whole documents (summary + full text, rebuilt from the chunks): a contract's names and
  defined terms count once per document, and words every contract shares weigh little;
- ``score = DENSE_SHARE * minmax(dense) + (1 - DENSE_SHARE) * minmax(lexical)`` over the documents;
- with ``+names``, documents whose letters-and-digits-only text holds the question's squashed company name
  ("BELLRINGBRANDS,INC" in "BellRing Brands, Inc.") come first, when at most ``MAX_NAMED_DOCS`` do.

``DENSE_SHARE`` = 0.25 was the best of 1, 0.75, 0.5, 0.25 for picking the right NDA among 183 (bench/README.md;
on the 5 demo NDAs 0.5 does better). When the top N documents hold fewer than k chunks, fewer than k hits
come back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from sac.index.lexical import LexicalIndex
from sac.index.snapshot import IndexSnapshot
from sac.retrieval import names
from sac.retrieval.hybrid import minmax

DENSE_SHARE = 0.25
NAMED_BONUS = 2.0  # above any fused score (each part is min-max scaled to [0, 1])
MAX_NAMED_DOCS = 3  # a name found in more documents than this names none of them


def summary_vectors(snap: IndexSnapshot, summaries: Mapping[str, str], embedder: Any) -> dict[str, np.ndarray]:
    """Document id -> its summary's embedding, embedded once per snapshot and embedder."""
    def make() -> dict[str, np.ndarray]:
        ids = [d for d in snap.documents if summaries.get(d)]
        if not ids:
            return {}
        vectors = np.asarray(embedder.embed_documents([summaries[d] for d in ids]), dtype=np.float32)
        return dict(zip(ids, vectors))

    return snap.derived(f"summary_vectors:{getattr(embedder, 'name', '')}", make)


def document_lexical_scores(snap: IndexSnapshot, documents: LexicalIndex, query: str) -> np.ndarray:
    """BM25 over whole documents (summary + text; sac.index.lexical's ``documents`` index), in the order of
    ``snap.documents``."""
    scores = documents.scores(query)
    row_of = documents.row_of
    return np.asarray([scores[row_of[d]] if d in row_of else 0.0 for d in snap.documents], dtype=np.float64)


def best_per_document(snap: IndexSnapshot, row_scores: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Documents (in row order) and the highest row score of each."""
    bounds = snap.doc_bounds
    docs = list(bounds)
    if not docs:
        return [], np.zeros(0)
    starts = np.asarray([bounds[d][0] for d in docs])
    return docs, np.maximum.reduceat(row_scores, starts)


def document_scores(
    snap: IndexSnapshot,
    query_vector: np.ndarray,
    *,
    summary_vecs: Mapping[str, np.ndarray] | None = None,
    lexical: np.ndarray | None = None,
    weight: float = DENSE_SHARE,
    named: frozenset[str] = frozenset(),
) -> list[tuple[str, float]]:
    """Every document of the index with its score for the query, best first.

    Args:
        lexical: one BM25 score per document of ``snap.documents`` (``document_lexical_scores``); without it,
            dense only.
        weight: the dense share of the fusion.
        named: documents whose own text holds the name the question gives its document (``+names``): they
            rank above all others, in the order of their fused score.
    """
    if len(snap) == 0:
        return []
    q = np.asarray(query_vector, dtype=np.float32)
    docs, best_dense = best_per_document(snap, snap.vectors @ q)
    dense = best_dense.astype(np.float64)
    if summary_vecs:
        summary = np.asarray([float(summary_vecs[d] @ q) if d in summary_vecs else best_dense[i]
                              for i, d in enumerate(docs)])
        dense = (dense + summary) / 2
    score = dense
    if lexical is not None and weight < 1.0:
        score = weight * minmax(dense) + (1.0 - weight) * minmax(np.asarray(lexical, dtype=np.float64))
    if named:
        score = score + np.asarray([NAMED_BONUS if d in named else 0.0 for d in docs])
    order = sorted(range(len(docs)), key=lambda i: (-score[i], docs[i]))
    return [(docs[i], float(score[i])) for i in order]


def named_documents(snap: IndexSnapshot, query: str) -> frozenset[str]:
    """The documents whose squashed text holds one of the question's squashed names (at most MAX_NAMED_DOCS)."""
    keys = names.squashed_names(query)
    if not keys:
        return frozenset()
    texts = snap.derived("squashed_texts", lambda: {d: names.squash(snap.document_text(d)) for d in snap.documents})
    for key in keys:  # the fullest form first: "bellringbrandsinc" before "bellringbrands"
        hits = frozenset(d for d, text in texts.items() if key in text)
        if 0 < len(hits) <= MAX_NAMED_DOCS:
            return hits
    return frozenset()


def top_documents(scored: list[tuple[str, float]], n: int) -> list[str]:
    return [d for d, _ in scored[:n]]
