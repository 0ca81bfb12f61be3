"""Document ranking (``+docs<N>``): rank whole documents for a question, then rank chunks only inside the top N.

Most wrong-document hits are chunks that read like the right answer but sit in a look-alike contract; ranking
whole documents first asks a different question ("which contract is this about?").

A document's score, per question:

- dense: the mean of the cosine of the question to the document's summary (SAC methods; each summary is
  embedded on its own once per index) and its best chunk cosine; the best chunk cosine alone for the
  baseline;
- lexical: BM25 over whole documents (summary + full text, rebuilt from the chunks): a contract's names and
  defined terms count once per document, and words every contract shares weigh little;
- ``score = DENSE_SHARE * minmax(dense) + (1 - DENSE_SHARE) * minmax(lexical)`` over the documents;
- the documents the question names (sac.retrieval.targets, ``+names``) rank above all others. Where a title names
  none, the BM25 reads the title alone (``lexical_query``): the words of the question proper ("Does the Receiving
  Party ... return ... Confidential Information?") are shared by every contract of its kind and lift the short
  ones full of them; the dense part still reads the whole question.

Nothing reads every chunk vector: the best chunk cosines come from the ``NEAREST_CHUNKS`` chunks nearest the
question (Chroma's HNSW), the summary cosines from the document collection (sac.index.documents), the BM25 from
the lexical ``documents`` index (sac.index.lexical). A document with no chunk among the nearest ones has a best
cosine at most the last of them, and that bound stands in for it; a document that would be chosen on a bound is
scored exactly from its own chunk vectors first, so the chosen documents are always scored exactly (the bound can
still move the min-max scaling a little). The chunks inside the chosen documents are the nearest ones when
enough of them were among the ``NEAREST_CHUNKS`` (then they are exactly the documents' top chunks), else their own
vectors, read by id, are scored. When the top N documents hold fewer than k chunks, fewer than k hits come back.

``DENSE_SHARE`` = 0.25 and ``NEAREST_CHUNKS`` = 256 are knobs; docs/methods.md lists each with the data it was
chosen on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sac.index.documents import DocumentIndex
from sac.index.lexical import LexicalIndex
from sac.index.store import Index
from sac.retrieval import names
from sac.retrieval.hybrid import minmax

DENSE_SHARE = 0.25
NAMED_BONUS = 2.0  # above any fused score (each part is min-max scaled to [0, 1])
NEAREST_CHUNKS = 256  # nearest chunks read per question for the documents' best chunk cosines
MAX_EXACT_ROUNDS = 4  # rounds of scoring bound-chosen documents exactly before the choice stands


def document_scores(
    docs: Sequence[str],
    best_chunk: np.ndarray,
    *,
    summary: np.ndarray | None = None,
    lexical: np.ndarray | None = None,
    weight: float = DENSE_SHARE,
    named: Mapping[str, float] | None = None,
) -> list[tuple[str, float]]:
    """Every document with its score for the query, best first.

    Args:
        best_chunk: per document, the cosine of its best chunk.
        summary: per document, the cosine of its summary (NaN where it has none: the best chunk counts twice).
        lexical: per document, its BM25 score; without it, dense only.
        weight: the dense share of the fusion.
        named: the documents the question names (``+names``: sac.retrieval.targets' likely candidates) with their
            probability. NAMED_BONUS is added to their score, so they rank above all others (each fused part lies in
            [0, 1]), and NAMED_BONUS times their probability too: a clearly more probable one comes first, and two
            the evidence cannot tell apart (two NDAs of one company) are ordered by the fused score.
    """
    if not len(docs):
        return []
    best = np.asarray(best_chunk, dtype=np.float64)
    dense = best
    if summary is not None:
        dense = (best + np.where(np.isnan(summary), best, summary)) / 2
    score = dense
    if lexical is not None and weight < 1.0:
        score = weight * minmax(dense) + (1.0 - weight) * minmax(np.asarray(lexical, dtype=np.float64))
    if named:
        score = score + np.asarray([NAMED_BONUS * (1.0 + named[d]) if d in named else 0.0 for d in docs])
    order = sorted(range(len(docs)), key=lambda i: (-score[i], docs[i]))
    return [(docs[i], float(score[i])) for i in order]


@dataclass
class DocumentRanking:
    """The documents a question is searched inside, best first, and the cosines of their chunks the ranking learnt."""

    documents: list[str]
    cosines: dict[str, float]  # chunk id -> cosine, for chunks of ``documents``
    complete: set[str]  # documents all of whose chunks are in ``cosines``
    bound: float = -1.0  # every chunk not among the nearest ones has a cosine at most this
    scores: dict[str, float] = field(default_factory=dict)  # ``documents``' fused scores (``document_scores``)


def rank_documents(
    index: Index, lexicons: dict[str, LexicalIndex], summaries: DocumentIndex | None, query: str,
    query_vector: np.ndarray, n_docs: int, *, weight: float = DENSE_SHARE, named: Mapping[str, float] | None = None,
    nearest: int | None = None,
) -> DocumentRanking:
    """The top ``n_docs`` documents for one question (module docstring), read from the stores.

    ``query``: the text the document BM25 reads (``lexical_query`` under ``+names``); ``query_vector``: the whole
    question's; ``nearest``: how many nearest chunks to read (default ``NEAREST_CHUNKS``)."""
    nearest = nearest or NEAREST_CHUNKS
    chunks, documents = lexicons["chunks"], lexicons["documents"]
    docs = documents.ids
    if not docs:
        return DocumentRanking([], {}, set(), -1.0)
    position = {d: i for i, d in enumerate(docs)}
    q = np.asarray(query_vector, dtype=np.float32)
    found = index.nearest(q, min(nearest, len(chunks))) if len(chunks) else []
    row_of = chunks.row_of
    cosines: dict[str, float] = {}
    per_doc: dict[str, int] = {}
    best = np.full(len(docs), np.nan)
    for cid, cos in found:
        row = row_of.get(cid)
        if row is None:
            continue  # written after the lexical index was read: ignored until the next refresh
        d = chunks.doc_ids[row]
        cosines[cid] = cos
        per_doc[d] = per_doc.get(d, 0) + 1
        if d in position and not best[position[d]] >= cos:
            best[position[d]] = cos
    bound = found[-1][1] if found and len(found) >= nearest else -1.0
    sizes = {d: b - a for d, (a, b) in chunks.doc_bounds.items()}
    complete = {d for d, n in per_doc.items() if n == sizes.get(d)}
    exact = {d for d in docs if not np.isnan(best[position[d]]) or bound <= -1.0}
    best = np.where(np.isnan(best), bound, best)
    summary = None
    if summaries is not None:
        got = summaries.summary_scores(q, len(docs))
        summary = np.asarray([got.get(d, np.nan) for d in docs])
    lexical = documents.scores(query)
    for rounds in range(MAX_EXACT_ROUNDS + 1):
        scored = document_scores(docs, best, summary=summary, lexical=lexical, weight=weight, named=named)
        chosen = top_documents(scored, n_docs)
        guessed = [d for d in chosen if d not in exact]
        if not guessed or rounds == MAX_EXACT_ROUNDS:
            break
        learnt = chunk_cosines(index, chunks, guessed, q)
        cosines.update(learnt)
        for d in guessed:
            rows = range(*chunks.doc_bounds[d])
            best[position[d]] = max((learnt[chunks.ids[r]] for r in rows), default=bound)
            exact.add(d)
            complete.add(d)
    return DocumentRanking(chosen, cosines, complete, bound, dict(scored[:n_docs]))


def chunk_cosines(index: Index, chunks: LexicalIndex, doc_ids: Sequence[str], query_vector: np.ndarray) -> dict[str, float]:
    """Chunk id -> cosine to the query for every chunk of these documents, from their vectors read by id."""
    ids = [chunks.ids[int(r)] for r in chunks.rows(doc_ids)]
    if not ids:
        return {}
    return dict(zip(ids, (index.vectors_of(ids) @ np.asarray(query_vector, dtype=np.float32)).tolist()))


def rank_inside(
    index: Index, chunks: LexicalIndex, ranking: DocumentRanking, query_vector: np.ndarray, n: int,
) -> list[tuple[str, float]]:
    """The top ``n`` chunks (id, cosine) of the ranked documents, best first; ties by row (document, start)."""
    row_of = chunks.row_of
    mine = set(ranking.documents)
    known = [(cid, cos) for cid, cos in ranking.cosines.items() if chunks.doc_ids[row_of[cid]] in mine]
    # Every chunk of these documents above the nearest-chunk bound is known: n of them are the top n.
    if not (sum(cos >= ranking.bound for _, cos in known) >= n or mine <= ranking.complete):
        ranking.cosines.update(chunk_cosines(index, chunks, [d for d in ranking.documents if d not in ranking.complete],
                                            query_vector))
        ranking.complete |= mine
        known = [(cid, cos) for cid, cos in ranking.cosines.items() if chunks.doc_ids[row_of[cid]] in mine]
    known.sort(key=lambda item: (-item[1], row_of[item[0]]))
    return known[:n]


def lexical_query(query: str, named: Collection[str]) -> str:
    """What the document BM25 reads under ``+names`` (module docstring): a title that names nothing, else the question.

    The title of a "Consider <title>; <question>" question that names no document; the whole question for a
    question without a title, or one whose title names documents."""
    title = names.split_title(query)[0]
    return query if named or not title else title


def top_documents(scored: list[tuple[str, float]], n: int) -> list[str]:
    """The ids of the first ``n`` of ``scored`` (``document_scores``: best first)."""
    return [d for d, _ in scored[:n]]
