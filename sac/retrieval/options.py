"""What the method options do, in one place: ``Workbench.build`` asks ``index_inputs`` what to embed,
``Workbench.search`` asks ``search`` for the hits.

Index options (their own index): ``merge<N>`` (sac.chunking.merge), then ``sections`` (sac.chunking.sections).
Search options, applied in this order per query: ``names`` rewrites the question's company names
(sac.retrieval.names), ``docs<N>`` picks the documents (sac.retrieval.docfirst), the chunk search inside them
is dense or ``hybrid<w>`` (sac.retrieval.hybrid), with ``inner`` by the question without its title, then
``rerank`` reorders the top N (sac.retrieval.rerank).
``hybrid<w>`` weighs the chunk scores only; the document stage has its own fixed fusion.
A method without search options is the plain dense top-k of its index.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from sac.chunking.context import context_lines
from sac.chunking.merge import merge_small_chunks
from sac.index import documents, lexical, snapshot
from sac.index.derived import Keep, code_version
from sac.retrieval import docfirst, hybrid, names
from sac.retrieval import rerank as reranking
from sac.retrieval.methods import Method
from sac.types import Chunk, Document, Hit


def index_inputs(
    method: Method, documents: Sequence[Document], chunks_of: Callable[[Document], list[Chunk]], chunk_size: int,
) -> tuple[list[Chunk], dict[str, str]]:
    """The chunks this method's index holds and the context (chunk id -> file and section lines) it embeds
    between the summary and each chunk (sac.chunking.context; none for most methods)."""
    merge = method.option("merge")
    sections, filename = method.reads_sections, method.reads_file_names
    chunks: list[Chunk] = []
    prefixes: dict[str, str] = {}
    for doc in documents:
        own = chunks_of(doc)
        own = merge_small_chunks(doc, own, int(merge), chunk_size) if merge else own
        chunks.extend(own)
        if sections or filename:
            lines = context_lines(doc.doc_id, doc.text, [(c.span.start, c.span.end) for c in own],
                                  sections=sections, filename=filename)
            prefixes.update((c.chunk_id, line) for c, line in zip(own, lines) if line)
    return chunks, prefixes


_VOCABULARY = Keep(code_version(names, sys.modules[__name__]), write=lambda vocab, out: out.write(vocab.to_json().encode("utf-8")),
                   read=lambda path: names.NameVocabulary.from_json(path.read_text(encoding="utf-8")))


def name_vocabulary(documents: lexical.LexicalIndex) -> names.NameVocabulary:
    """The corpus words ``+names`` spells squashed names with, from the documents' text; made once per index
    generation and kept beside it (sac.index.derived). A generation that holds every text of the one it replaced
    (an upload, a summary edit) counts only its new texts into that one's vocabulary (``NameVocabulary.grown``);
    after a removal or a changed text, every text is counted."""

    def make() -> names.NameVocabulary:
        texts = documents.document_texts()
        before = documents.previous("names_vocabulary", _VOCABULARY.version)
        if before is not None:
            try:
                grown = _VOCABULARY.read(before[1]).grown(texts)
            except (OSError, ValueError):
                grown = None
            if grown is not None:
                return grown
        return names.NameVocabulary.from_texts(texts)

    return documents.derived("names_vocabulary", make, _VOCABULARY)


def prepare(lexicons: dict[str, lexical.LexicalIndex]) -> None:
    """Make and keep what the first ``+names`` question of a new index generation would otherwise wait for (the
    vocabulary, the squashed texts and their signatures, the initials; made only for the documents, or the
    vocabulary only for the texts, the generation before lacked): ``Workbench.build`` and a removal call it after
    the lexical refresh."""
    name_vocabulary(lexicons["documents"])
    docfirst.squashed_texts(lexicons["documents"])
    docfirst.initials_texts(lexicons["documents"])
    lexicons["documents"].drop_previous()  # what the generation before made is in these now


def _rewrite_names(
    wb: Any, documents: lexical.LexicalIndex, queries: Sequence[str], vectors: np.ndarray,
) -> tuple[list[str], np.ndarray]:
    """Queries with company names written as the corpus writes them; changed ones are embedded again. The
    corpus is the documents' text as the lexical ``documents`` index keeps it (no chunk record is read)."""
    vocab = name_vocabulary(documents)
    rewritten = [names.rewrite_query(q, vocab) for q in queries]
    changed = [i for i, (a, b) in enumerate(zip(queries, rewritten)) if a != b]
    if not changed:
        return list(queries), vectors
    out = np.array(vectors, dtype=np.float32, copy=True)
    out[changed] = wb.embed_queries([rewritten[i] for i in changed])
    return rewritten, out


def search(
    wb: Any, corpus: str, method: Method, queries: Sequence[str], vectors: np.ndarray, k: int,
) -> list[list[Hit]]:
    """Top-k hits per query for one method of a ``Workbench``.

    Long because it is the search half of the method grammar: the options apply in this order (names,
    document routing, hybrid, rerank), which reads best top to bottom in one place. Hybrid search and document
    routing read the lexical indexes, the document collection and the candidates' records: never every vector.
    """
    index = wb.index(corpus, method)
    opts = method.search_options
    if not opts:
        return index.search(vectors, k)
    reranker = reranking.make_reranker(wb.config) if "rerank" in opts else None  # fails before any work
    lexicons = None
    if {"names", "hybrid", "docs"} & set(opts):
        lexicons = lexical.for_method(index, wb.summary_store, method)
    named_queries: list[str] | None = None
    if "names" in opts:
        assert lexicons is not None
        named_queries = list(queries)  # as asked: squashed names are matched before they are rewritten
        queries, vectors = _rewrite_names(wb, lexicons["documents"], queries, vectors)
        opts = {key: value for key, value in opts.items() if key != "names"}
        if not opts:
            return index.search(vectors, k)
    first_k = max(k, int(opts["rerank"] or reranking.DEFAULT_CANDIDATES)) if reranker is not None else k
    weight = float(opts["hybrid"]) if "hybrid" in opts else None
    n_docs = int(opts["docs"]) if "docs" in opts else None
    doc_weight = float(opts.get("docw") or docfirst.DENSE_SHARE)
    pool = max(first_k, hybrid.CANDIDATES) if weight is not None else first_k
    summaries = None
    if n_docs is not None:
        summaries = documents.document_index(index, wb.summary_store, strategy=method.strategy, embedder=wb.embedder)

    inner_queries, inner_vectors = _question_vectors(wb, queries, vectors) if "inner" in opts else (queries, vectors)
    dense_all: list[list[Hit]] | None = None
    if n_docs is None and weight is None:
        dense_all = index.search(vectors, pool)  # one round trip for every query
    out: list[list[Hit]] = []
    for i, query in enumerate(queries):
        vector = np.asarray(vectors[i], dtype=np.float32)
        allowed = None
        routed = None
        if n_docs is not None:
            assert lexicons is not None
            routed, _ = _route(index, lexicons, summaries, named_queries[i] if named_queries else None, query, vector,
                               n_docs, doc_weight)
        if routed is not None:
            assert lexicons is not None
            allowed = lexicons["chunks"].rows(routed.documents)
            if inner_queries[i] != query:  # +inner: rank inside by the question proper, not the routing's cosines
                vector, query = np.asarray(inner_vectors[i], dtype=np.float32), inner_queries[i]
                routed = docfirst.Routed(routed.documents, {}, set())
            dense_ids = docfirst.dense_inside(index, lexicons["chunks"], routed, vector, pool)
            if weight is None:
                chunks = index.get_chunks([cid for cid, _ in dense_ids[:first_k]])
                hits = [Hit(c, cos, r) for r, (c, (_, cos)) in enumerate(zip(chunks, dense_ids), start=1)]
        elif weight is not None:
            dense_ids = index.nearest(vector, pool)  # ids and cosines: texts are read for the fused top k only
        else:
            hits = (dense_all[i] if dense_all is not None else index.search(vector[None, :], pool)[0])[:first_k]
        if weight is not None:
            assert lexicons is not None
            hits = hybrid.hybrid_hits(index, lexicons["chunks"], query, vector, dense_ids, weight, first_k,
                                      allowed_rows=allowed)
        if reranker is not None:
            snap = snapshot.snapshot(wb.client, index, vectors=False)  # embedded texts: no vectors needed
            texts = snapshot.embedded_texts(snap, method, wb.summary_store)
            rows = [snap.row_of[h.chunk.chunk_id] for h in hits]
            ranked = reranking.rerank_texts(reranker, query, [h.chunk for h in hits], [texts[r] for r in rows], k)
            hits = [Hit(chunk, score, rank) for rank, (chunk, score) in enumerate(ranked, start=1)]
        out.append(hits[:k])
    return out


def question_proper(query: str) -> str:
    """``+inner``: the question without its "Consider the <title>;" ("" where it has no title, or nothing after it)."""
    title, proper = names.split_title(query)
    return proper if title and proper.strip() else ""


def _question_vectors(wb: Any, queries: Sequence[str], vectors: np.ndarray) -> tuple[list[str], np.ndarray]:
    """``+inner``: each question without its title and its vector (the question and vector as given where it has
    no title)."""
    out = np.array(vectors, dtype=np.float32, copy=True)
    proper = [question_proper(q) for q in queries]
    changed = [i for i, text in enumerate(proper) if text]
    if changed:
        out[changed] = wb.embed_queries([proper[i] for i in changed])
    return [text or q for text, q in zip(proper, queries)], out


def _route(
    index: Any, lexicons: dict[str, lexical.LexicalIndex], summaries: Any, asked: str | None, query: str,
    vector: np.ndarray, n_docs: int, weight: float,
) -> tuple[docfirst.Routed | None, docfirst.Naming | None]:
    """``+docs<N>`` for one question: the documents chosen (None: under ``+names`` a question without a title that
    names no document is searched across the corpus), and under ``+names`` (``asked``: the question as asked)
    what it named; a question without a title is searched inside every document it names, N or more
    (``docfirst.routed_count``)."""
    naming = None
    if asked is not None:
        naming = docfirst.naming(lexicons["documents"], asked)
        n_docs = docfirst.routed_count(naming, asked, n_docs)
        if not n_docs:
            return None, naming
    named = naming.documents if naming else frozenset[str]()
    lexical_query = docfirst.lexical_query(query, named) if naming else query
    routed = docfirst.route(index, lexicons, summaries, lexical_query, vector, n_docs, weight=weight, named=named)
    return routed, naming


@dataclass(frozen=True)
class Routing:
    """How a ``+names`` / ``+docs<N>`` method read one question, as ``search`` reads it (the Compare page shows it)."""

    searched_as: str  # the question as searched: ``+names`` writes squashed company names as the corpus does
    naming: docfirst.Naming | None  # ``+names`` with ``+docs<N>``: what the title names
    documents: tuple[str, ...]  # ``+docs<N>``: the documents searched inside, best first
    file_names: bool = False  # ``+filename``: the file name was read with each document's text
    ranked_by: str = ""  # ``+inner``: the question without its title, by which the chunks inside were ranked
    dense_share: float | None = None  # ``+hybrid<w>``: chunks ranked by dense and BM25 scores fused, w the dense share


def explain(wb: Any, corpus: str, method: Method, query: str) -> Routing | None:
    """What ``search`` does with ``query`` before it reads chunks: the rewritten question and the documents
    chosen and why; None for a method without ``+names`` or ``+docs<N>``."""
    opts = method.search_options
    if not {"names", "docs"} & set(opts):
        return None
    index = wb.index(corpus, method)
    index.require_complete()
    lexicons = lexical.for_method(index, wb.summary_store, method)
    file_names = method.reads_file_names
    vectors = wb.embed_queries([query])
    searched = query
    if "names" in opts:
        [searched], vectors = _rewrite_names(wb, lexicons["documents"], [query], vectors)
    dense_share = float(opts["hybrid"]) if "hybrid" in opts else None
    if "docs" not in opts:
        return Routing(searched, None, (), file_names, dense_share=dense_share)
    summaries = documents.document_index(index, wb.summary_store, strategy=method.strategy, embedder=wb.embedder)
    routed, naming = _route(index, lexicons, summaries, query if "names" in opts else None, searched,
                            np.asarray(vectors[0], dtype=np.float32), int(opts["docs"]),
                            float(opts.get("docw") or docfirst.DENSE_SHARE))
    return Routing(searched, naming, tuple(routed.documents) if routed else (), file_names,
                   question_proper(searched) if "inner" in opts and routed else "", dense_share)
