"""Search as a short chain of stages, each leaving a trace entry (sac.retrieval.trace).

The stages, in order:

1. rewrite names (``+names``): squashed company names written as the corpus writes them (sac.retrieval.names);
2. resolve targets (``+names`` with ``+docs<N>``): the documents the question names, and how many documents to
   search inside (sac.retrieval.targets);
3. rank documents (``+docs<N>``): the top N documents by summary, best chunk and whole-document BM25, the named
   ones first (sac.retrieval.document_ranking);
4. rank chunks: dense, or fused with BM25 (``+hybrid<w>``, sac.retrieval.hybrid), across the corpus or inside
   the ranked documents, by the question or, with ``+inner``, by the question without its title;
5. rerank (``+rerank[N]``): a reranker reorders the top N (sac.retrieval.rerank).

A recipe without search options is the plain dense top-k of its index. The stages read the index, its lexical
indexes and its document collection through ``SearchSources``, which the caller opens: never every vector.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from sac.index.documents import DocumentIndex
from sac.index.lexical import LexicalIndex
from sac.index.store import Index
from sac.methods import IndexRecipe, SearchRecipe
from sac.protocols import Reranker
from sac.retrieval import document_ranking, hybrid, names, rerank, targets
from sac.retrieval.trace import (
    ChunksRanked,
    DocumentsPinned,
    DocumentsRanked,
    NamesRewritten,
    Reranked,
    SearchResult,
    SearchTrace,
    TargetsResolved,
    TraceEntry,
)
from sac.types import Hit


@dataclass(frozen=True)
class SearchSources:
    """What a search of one index reads, each opened only when a stage asks for it."""

    index: Index
    recipe: IndexRecipe
    embed: Callable[[Sequence[str]], np.ndarray]  # questions -> (n, dim) vectors, as the index's embedder makes them
    lexicons: Callable[[], dict[str, LexicalIndex]]  # the index's BM25s: "chunks" and "documents"
    document_summaries: Callable[[], DocumentIndex | None]  # the document collection (None without summaries)
    reranker: Callable[[], Reranker]  # the configured reranker (a ConfigError when none is)
    embedded_texts: Callable[[Sequence[str]], list[str]]  # chunk ids -> the text embedded for each


def search(
    sources: SearchSources, recipe: SearchRecipe, questions: Sequence[str], vectors: np.ndarray, k: int,
) -> list[SearchResult]:
    """The top ``k`` hits of each question, with the trace of how they were found.

    ``vectors``: the questions' embeddings, one row each."""
    index = sources.index
    if recipe.plain:
        plain = ChunksRanked("", False, (), None, k)
        return [_result(hits, [_by(plain, q)]) for q, hits in zip(questions, index.search(vectors, k))]
    reranker = sources.reranker() if recipe.rerank else None  # fails before any work
    lexicons = sources.lexicons() if (recipe.names or recipe.hybrid is not None or recipe.docs is not None) else None
    asked = list(questions)
    traces: list[list[TraceEntry]] = [[] for _ in questions]
    if recipe.names:
        assert lexicons is not None
        questions, vectors = rewrite_names(sources, lexicons["documents"], asked, vectors)
        traces = [[NamesRewritten(a, q)] for a, q in zip(asked, questions)]
        if recipe == SearchRecipe(names=True):
            plain = ChunksRanked("", False, (), None, k)
            return [_result(hits, [*trace, _by(plain, q)])
                    for q, hits, trace in zip(questions, index.search(vectors, k), traces)]
    first_k = max(k, recipe.rerank_candidates or rerank.DEFAULT_CANDIDATES) if reranker is not None else k
    weight = recipe.hybrid
    pool = max(first_k, hybrid.CANDIDATES) if weight is not None else first_k
    summaries = sources.document_summaries() if recipe.docs is not None else None
    inner_questions, inner_vectors = (question_vectors(sources, questions, vectors) if recipe.inner
                                      else (list(questions), vectors))
    dense_all = index.search(vectors, pool) if recipe.docs is None and weight is None else None
    out: list[SearchResult] = []
    for i, question in enumerate(questions):
        vector = np.asarray(vectors[i], dtype=np.float32)
        trace = traces[i]
        ranking = None
        if recipe.docs is not None:
            assert lexicons is not None
            ranking = _rank_documents(sources, lexicons, summaries, recipe, asked[i] if recipe.names else None,
                                      question, vector, trace)
        inner = (inner_questions[i], np.asarray(inner_vectors[i], dtype=np.float32))
        hits = rank_chunks(sources, lexicons, ranking, (question, vector), inner, dense_all[i] if dense_all else None,
                           weight, pool, first_k, trace)
        if reranker is not None:
            hits = _reranked(sources, reranker, hits, trace, question, k, first_k)
        out.append(_result(hits[:k], trace))
    return out


def rank_chunks(
    sources: SearchSources, lexicons: dict[str, LexicalIndex] | None,
    ranking: document_ranking.DocumentRanking | None, asked: tuple[str, np.ndarray], inner: tuple[str, np.ndarray],
    dense: list[Hit] | None, weight: float | None, pool: int, first_k: int, trace: list[TraceEntry],
) -> list[Hit]:
    """Stage 4 for one question: the top ``first_k`` chunks, inside the ranked documents or across the corpus.

    Inside the ranked documents where there are some (by the question without its title where ``inner`` differs
    from ``asked``), else across the corpus; dense, or fused with the chunk BM25 at dense share ``weight``.
    ``dense``: the question's dense top ``pool`` where a batch search found it already."""
    index = sources.index
    question, vector = asked
    allowed = None
    without_title = False
    dense_ids: list[tuple[str, float]] = []
    hits: list[Hit] = []
    if ranking is not None:
        assert lexicons is not None
        allowed = lexicons["chunks"].rows(ranking.documents)
        if inner[0] != question:  # +inner: rank inside by the question proper, not the ranking's cosines
            question, vector = inner
            ranking = document_ranking.DocumentRanking(ranking.documents, {}, set())
            without_title = True
        dense_ids = document_ranking.rank_inside(index, lexicons["chunks"], ranking, vector, pool)
        if weight is None:
            chunks = index.get_chunks([cid for cid, _ in dense_ids[:first_k]])
            hits = [Hit(c, cos, r) for r, (c, (_, cos)) in enumerate(zip(chunks, dense_ids), start=1)]
    elif weight is not None:
        dense_ids = index.nearest(vector, pool)  # ids and cosines: texts are read for the fused top k only
    else:
        hits = (dense if dense is not None else index.search(vector[None, :], pool)[0])[:first_k]
    if weight is not None:
        assert lexicons is not None
        hits = hybrid.hybrid_hits(index, lexicons["chunks"], question, vector, dense_ids, weight, first_k,
                                  allowed_rows=allowed)
    within = tuple(ranking.documents) if ranking is not None else ()
    trace.append(ChunksRanked(question, without_title, within, weight, pool))
    return hits


def search_within(
    sources: SearchSources, recipe: SearchRecipe, questions: Sequence[str], vectors: np.ndarray, k: int,
    within: Sequence[str],
) -> list[SearchResult]:
    """The top ``k`` hits of each question from the documents ``within`` alone: the contract a user pinned.

    No document is chosen (``+docs<N>`` and the target stage do not run); ``+names`` still writes the question's
    names as the corpus does, ``+inner`` ranks by the question without its title, ``+hybrid<w>`` fuses the chunk
    BM25, ``+rerank`` reorders, as they do in ``search``."""
    reranker = sources.reranker() if recipe.rerank else None
    lexicons = sources.lexicons()
    asked = list(questions)
    traces: list[list[TraceEntry]] = [[DocumentsPinned(tuple(within))] for _ in questions]
    if recipe.names:
        questions, vectors = rewrite_names(sources, lexicons["documents"], asked, vectors)
        traces = [[NamesRewritten(a, q), *t] for a, q, t in zip(asked, questions, traces)]
    first_k = max(k, recipe.rerank_candidates or rerank.DEFAULT_CANDIDATES) if reranker is not None else k
    pool = max(first_k, hybrid.CANDIDATES) if recipe.hybrid is not None else first_k
    inner_questions, inner_vectors = (question_vectors(sources, questions, vectors) if recipe.inner
                                      else (list(questions), vectors))
    out = []
    for i, question in enumerate(questions):
        vector = np.asarray(vectors[i], dtype=np.float32)
        ranking = document_ranking.DocumentRanking(list(within), {}, set())
        inner = (inner_questions[i], np.asarray(inner_vectors[i], dtype=np.float32))
        hits = rank_chunks(sources, lexicons, ranking, (question, vector), inner, None, recipe.hybrid, pool, first_k,
                           traces[i])
        if reranker is not None:
            hits = _reranked(sources, reranker, hits, traces[i], question, k, first_k)
        out.append(_result(hits[:k], traces[i]))
    return out


def _reranked(sources: SearchSources, reranker: Reranker, hits: list[Hit], trace: list[TraceEntry], question: str,
              k: int, first_k: int) -> list[Hit]:
    """Stage 5: the reranker's order of ``hits``, reading what was embedded for each."""
    ranked_by = trace[-1].ranked_by if isinstance(trace[-1], ChunksRanked) else question
    texts = sources.embedded_texts([h.chunk.chunk_id for h in hits])
    ranked = rerank.rerank_texts(reranker, ranked_by, [h.chunk for h in hits], texts, k)
    trace.append(Reranked(reranker.name, first_k))
    return [Hit(chunk, score, rank) for rank, (chunk, score) in enumerate(ranked, start=1)]


def _by(entry: ChunksRanked, question: str) -> ChunksRanked:
    return ChunksRanked(question, entry.without_title, entry.within, entry.dense_share, entry.candidates)


def _result(hits: Sequence[Hit], trace: Sequence[TraceEntry]) -> SearchResult:
    return SearchResult(tuple(hits), SearchTrace(tuple(trace)))


def rewrite_names(
    sources: SearchSources, documents: LexicalIndex, questions: Sequence[str], vectors: np.ndarray,
) -> tuple[list[str], np.ndarray]:
    """Stage 1: the questions with company names written as the corpus writes them; changed ones are embedded again.

    The corpus is the documents' text as the lexical ``documents`` index keeps it (no chunk record is read)."""
    vocab = targets.name_vocabulary(documents)
    rewritten = [names.rewrite_query(q, vocab) for q in questions]
    changed = [i for i, (a, b) in enumerate(zip(questions, rewritten)) if a != b]
    if not changed:
        return list(questions), vectors
    out = np.array(vectors, dtype=np.float32, copy=True)
    out[changed] = sources.embed([rewritten[i] for i in changed])
    return rewritten, out


def _rank_documents(
    sources: SearchSources, lexicons: dict[str, LexicalIndex], summaries: DocumentIndex | None, recipe: SearchRecipe,
    asked: str | None, question: str, vector: np.ndarray, trace: list[TraceEntry],
) -> document_ranking.DocumentRanking | None:
    """Stages 2 and 3 for one question: the documents it names and how many to search inside, then the top ones.

    The documents named come only under ``+names`` (``asked``: the question as asked); None: every document."""
    assert recipe.docs is not None
    n_docs = recipe.docs
    resolved: TargetsResolved | None = None
    if asked is not None:
        resolved = targets.resolve_targets(lexicons["documents"], asked, n_docs, file_names=sources.recipe.file_names)
        trace.append(resolved)
        n_docs = resolved.search_inside
        if not n_docs:
            return None
    named = {d: p for d, p in resolved.probability_of.items() if d in resolved.likely} if resolved else {}
    bm25_reads = document_ranking.lexical_query(question, named) if resolved else question
    share = recipe.doc_dense_share if recipe.doc_dense_share is not None else document_ranking.DENSE_SHARE
    ranking = document_ranking.rank_documents(sources.index, lexicons, summaries, bm25_reads, vector, n_docs,
                                              weight=share, named=named)
    trace.append(DocumentsRanked(tuple(ranking.documents), tuple(ranking.scores[d] for d in ranking.documents),
                                 share, bm25_reads))
    return ranking


def question_proper(query: str) -> str:
    """``+inner``: the question without its "Consider the <title>;" ("" where it has no title, or nothing after it)."""
    title, proper = names.split_title(query)
    return proper if title and proper.strip() else ""


def question_vectors(
    sources: SearchSources, questions: Sequence[str], vectors: np.ndarray,
) -> tuple[list[str], np.ndarray]:
    """``+inner``: each question without its title, and its vector.

    A question without a title comes back as given, with its vector."""
    out = np.array(vectors, dtype=np.float32, copy=True)
    proper = [question_proper(q) for q in questions]
    changed = [i for i, text in enumerate(proper) if text]
    if changed:
        out[changed] = sources.embed([proper[i] for i in changed])
    return [text or q for text, q in zip(proper, questions)], out
