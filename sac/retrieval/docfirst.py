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
- with ``+names``, the documents the question's title names come first (``named_documents``): those whose
  letters-and-digits-only text quotes the whole title (a heading: "Non-Disclosure Agreement for Project
  Proposals"), else those holding its squashed company name ("BELLRINGBRANDS,INC" in "BellRing Brands,
  Inc."), else those holding the most of its rare words (a word of the title found in at most
  ``MAX_NAMED_DOCS`` documents and a tenth of the corpus: "Munt" in "Consider Munt's Non-Disclosure
  Agreement"), when at most ``MAX_NAMED_DOCS`` do, else those that write out the initials an all-caps word of
  the title is and no document writes ("ATI": "AMPHENOL Tuchel Industrial GmbH"; ``by_initials``). The corpus
  decides which words are names; no list of them exists. When the title names no document, the BM25 reads the
  title alone (``lexical_query``): the words of the question proper ("Does the Receiving Party ... return ...
  Confidential Information?") are shared by every contract of its kind and lift the short ones full of them (on
  ContractNLI dev one 2-page NDA took 33 of the 130 such questions); the dense part still reads the whole
  question. Where the title names two or more documents (two NDAs of one company under one title), the whole
  question tells them apart. Chosen on dev; on test it moved CUAD first-page titles a little and nothing else
  beyond noise (bench/README.md, "names v4"). A question without a title (no benchmark question) names documents
  by its squashed names and capitalised rare words; when it names none it is about the corpus, not one document,
  and is not routed, and when it names several it is searched inside each (``routed_count``).

Nothing reads every chunk vector: the best chunk cosines come from the ``ROUTE_CHUNKS`` chunks nearest the
question (Chroma's HNSW), the summary cosines from the document collection (sac.index.documents), the BM25 from
the lexical ``documents`` index (sac.index.lexical). A document with no chunk among the nearest ones has a best
cosine at most the last of them, and that bound stands in for it; a document that would be chosen on a bound is
scored exactly from its own chunk vectors first, so the chosen documents are always scored exactly (the bound can
still move the min-max scaling a little: bench/README.md, "Document-level index", measures how often the choice
differs from scoring every chunk). The chunks inside the chosen documents are the nearest ones when enough of
them were among the ``ROUTE_CHUNKS`` (then they are exactly the documents' top chunks), else their own vectors,
read by id, are scored.

``DENSE_SHARE`` = 0.25 was first the best of 1, 0.75, 0.5, 0.25 for picking the right NDA among 183; on the dev
splits 0.5 is within noise of it (bench/README.md, "Method selection"), so it stays. ``ROUTE_CHUNKS`` = 256
loses nothing against 1,024 on the CUAD dev split (bench/README.md, "Document routing"). When the top N
documents hold fewer than k chunks, fewer than k hits come back.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sac.index import substrings
from sac.index.derived import Keep, code_version
from sac.index.documents import DocumentIndex
from sac.index.lexical import STOPWORDS, WORD, LexicalIndex
from sac.index.store import Index
from sac.index.substrings import SubstringIndex, signatures_of
from sac.retrieval import names
from sac.retrieval.hybrid import minmax

DENSE_SHARE = 0.25
NAMED_BONUS = 2.0  # above any fused score (each part is min-max scaled to [0, 1])
MAX_NAMED_DOCS = 3  # a name found in more documents than this names none of them
RARE_SHARE = 0.1  # a title word names documents only when at most this share of the corpus holds it
ROUTE_CHUNKS = 256  # nearest chunks read per question for the documents' best chunk cosines
MAX_EXACT_ROUNDS = 4  # rounds of scoring bound-chosen documents exactly before the choice stands


def document_scores(
    docs: Sequence[str],
    best_chunk: np.ndarray,
    *,
    summary: np.ndarray | None = None,
    lexical: np.ndarray | None = None,
    weight: float = DENSE_SHARE,
    named: frozenset[str] = frozenset(),
) -> list[tuple[str, float]]:
    """Every document with its score for the query, best first.

    Args:
        best_chunk: per document, the cosine of its best chunk.
        summary: per document, the cosine of its summary (NaN where it has none: the best chunk counts twice).
        lexical: per document, its BM25 score; without it, dense only.
        weight: the dense share of the fusion.
        named: documents whose own text holds the name the question gives its document (``+names``): they
            rank above all others, in the order of their fused score.
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
        score = score + np.asarray([NAMED_BONUS if d in named else 0.0 for d in docs])
    order = sorted(range(len(docs)), key=lambda i: (-score[i], docs[i]))
    return [(docs[i], float(score[i])) for i in order]


@dataclass
class Routed:
    """The documents a question was routed to and the cosines of their chunks that routing learnt."""

    documents: list[str]
    cosines: dict[str, float]  # chunk id -> cosine, for chunks of ``documents``
    complete: set[str]  # documents all of whose chunks are in ``cosines``
    bound: float = -1.0  # every chunk not among the nearest ones has a cosine at most this
    scores: dict[str, float] = field(default_factory=dict)  # ``documents``' fused scores (``document_scores``)


def route(
    index: Index, lexicons: dict[str, LexicalIndex], summaries: DocumentIndex | None, query: str,
    query_vector: np.ndarray, n_docs: int, *, weight: float = DENSE_SHARE, named: frozenset[str] = frozenset(),
    nearest: int | None = None,
) -> Routed:
    """The top ``n_docs`` documents for one question (module docstring), read from the stores. ``query``: the
    text the document BM25 reads (``lexical_query`` under ``+names``); ``query_vector``: the whole question's;
    ``nearest``: how many nearest chunks to read (default ``ROUTE_CHUNKS``)."""
    nearest = nearest or ROUTE_CHUNKS
    chunks, documents = lexicons["chunks"], lexicons["documents"]
    docs = documents.ids
    if not docs:
        return Routed([], {}, set(), -1.0)
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
    return Routed(chosen, cosines, complete, bound, dict(scored[:n_docs]))


def chunk_cosines(index: Index, chunks: LexicalIndex, doc_ids: Sequence[str], query_vector: np.ndarray) -> dict[str, float]:
    """Chunk id -> cosine to the query for every chunk of these documents, from their vectors read by id."""
    ids = [chunks.ids[int(r)] for r in chunks.rows(doc_ids)]
    if not ids:
        return {}
    return dict(zip(ids, (index.vectors_of(ids) @ np.asarray(query_vector, dtype=np.float32)).tolist()))


def dense_inside(
    index: Index, chunks: LexicalIndex, routed: Routed, query_vector: np.ndarray, n: int,
) -> list[tuple[str, float]]:
    """The top ``n`` chunks (id, cosine) of the routed documents, best first; ties by row (document, start)."""
    row_of = chunks.row_of
    mine = set(routed.documents)
    known = [(cid, cos) for cid, cos in routed.cosines.items() if chunks.doc_ids[row_of[cid]] in mine]
    # Every chunk of these documents above the nearest-chunk bound is known: n of them are the top n.
    if not (sum(cos >= routed.bound for _, cos in known) >= n or mine <= routed.complete):
        routed.cosines.update(chunk_cosines(index, chunks, [d for d in routed.documents if d not in routed.complete],
                                            query_vector))
        routed.complete |= mine
        known = [(cid, cos) for cid, cos in routed.cosines.items() if chunks.doc_ids[row_of[cid]] in mine]
    known.sort(key=lambda item: (-item[1], row_of[item[0]]))
    return known[:n]


@dataclass(frozen=True)
class Naming:
    """What a question's title names (``naming``): the documents, how they were found, and what matched."""

    documents: frozenset[str]
    how: str  # "title": their text quotes the whole title; "name": a squashed company name; "words": rare words;
    # "initials": words whose initials an all-caps word of the title is; "": the title names no document (or
    # there is no title)
    key: str = ""  # the squashed title or name, the rare words (", "-joined), or the all-caps word ("ATI")
    spelled: str = ""  # "initials": what the word stands for in the first named document ("AMPHENOL Tuchel Industrial")
    rare: int = field(default=MAX_NAMED_DOCS, compare=False)  # a word held by at most this many documents is rare here


def named_documents(documents: LexicalIndex, query: str) -> frozenset[str]:
    """The documents the question's title names (at most MAX_NAMED_DOCS; none when the title names none)."""
    return naming(documents, query).documents


def naming(documents: LexicalIndex, query: str) -> Naming:
    """The documents the question's title names and how (``named_documents``).

    First the whole title, squashed, when it has two words or more: the documents whose squashed text quotes it
    (a heading the text gives, "Non-Disclosure Agreement for Project Proposals", where no word is rare). Then
    the squashed names ("BELLRINGBRANDS,INC"): the documents whose squashed text holds one. Else the title's
    rare words (``title_words``; rare: held by at most MAX_NAMED_DOCS documents and RARE_SHARE of the corpus, so
    none under 10 documents, with a title or without, where a word one contract happens to use says little: of
    the 5 demo NDAs only VELCO's writes "NDA", so "Which NDA lets the Receiving Party keep copies?" would name
    it, and "the Mutual NDA of <a name its text never writes>" too; bench/README.md, "A handful of contracts",
    measures the alternative): the documents holding the most of them. Else an all-caps word of the title that
    no document writes, read as initials (``by_initials``). The title is read as asked, not as ``+names``
    rewrote it: the pieces of a squashed name its contract never writes are plain words
    ("MRSFIELDSORIGINALCOOKIESINC" -> "Cookies") that other contracts hold (on CUAD dev, file-name titles: 64
    questions named only wrong documents that way, none as asked). A question without a title names documents by
    its squashed names and by its capitalised rare words (``name_words``: "Does Glamis ...?"; it is not routed
    otherwise, ``routed_count``); lower-case words of a question are what it asks, not whom. The texts and words are
    the lexical ``documents`` index's; a squashed key is looked up through ``sac.index.substrings``, which reads
    only the texts that can hold it."""
    title = names.split_title(query)[0]
    whole = [names.squash(title)] if len(title.split()) > 1 else []
    keys = whole + names.squashed_names(query)
    if keys:
        texts = squashed_texts(documents)
        for key in keys:  # the fullest form first: the title, then "bellringbrandsinc" before "bellringbrands"
            hits = frozenset(documents.ids[i] for i in texts.holding(key))
            if 0 < len(hits) <= MAX_NAMED_DOCS:
                return Naming(hits, "title" if key in whole else "name", key)
    votes: Counter[str] = Counter()
    voters: dict[str, list[str]] = {}
    rare = min(MAX_NAMED_DOCS, int(RARE_SHARE * len(documents)))
    for word in [] if rare < 1 else name_words(query):
        holders = documents.ids_with(word)
        if 0 < len(holders) <= rare:
            votes.update(holders)
            for d in holders:
                voters.setdefault(d, []).append(word)
    if votes:
        most = max(votes.values())
        named = frozenset(d for d, n in votes.items() if n == most)
        if len(named) <= MAX_NAMED_DOCS:
            return Naming(named, "words", ", ".join(dict.fromkeys(w for d in sorted(named) for w in voters[d])), rare=rare)
    return by_initials(documents, query, rare)


def by_initials(documents: LexicalIndex, query: str, rare: int) -> Naming:
    """The documents that write out what an all-caps word of the title abbreviates, where no document writes the
    word itself (``names.acronyms``): "ATI's Mutual Non-Disclosure Agreement" names the NDA between "AMPHENOL
    Tuchel Industrial GmbH" and a blank. Read only when nothing else of the title names a document, and, like a
    rare word, only when at most ``rare`` documents hold the initials; the key says what they stand for."""
    for acronym in [] if rare < 1 else names.acronyms(query):
        if acronym.casefold() in STOPWORDS or documents.ids_with(acronym.casefold()):
            continue  # a word the corpus writes is read as a word, above; every text writes "AND", "THE"
        key = acronym.casefold()
        rows = [i for i, text in enumerate(initials_texts(documents)) if key in text]
        if 0 < len(rows) <= rare:
            spelled = names.spelled_out(acronym, documents.document_texts()[rows[0]]) or ""
            return Naming(frozenset(documents.ids[i] for i in rows), "initials", acronym, spelled, rare)
    return Naming(frozenset(), "", rare=rare)


_SQUASH_VERSION = code_version(names, substrings, sys.modules[__name__])  # what squashes, signs and writes them


def squashed_texts(documents: LexicalIndex) -> SubstringIndex:
    """The documents' squashed texts (one line each: a squashed text has no line break) and their substring
    signatures, as ``naming`` reads them: made once per index generation and kept beside it (sac.index.derived).
    Asked once per question, so past the first it is one look-up."""
    return documents.derived("substrings", lambda: _substring_index(documents))


def _substring_index(documents: LexicalIndex) -> SubstringIndex:
    def read_signatures(path: Path, rows: int) -> np.ndarray:
        signatures = np.load(path)
        if signatures.shape != (rows, substrings.BITS // 8):
            raise ValueError(f"kept signatures of shape {signatures.shape} for {rows} documents")
        return signatures

    texts = _kept_lines(documents, "squashed_texts", names.squash)

    def make() -> np.ndarray:
        before = _previous_rows(documents, "squashed_signatures", read_signatures)
        keys = _row_keys(documents)
        fresh = [i for i, key in enumerate(keys) if key not in before]
        made = signatures_of([texts[i] for i in fresh])
        signatures = np.zeros((len(keys), substrings.BITS // 8), dtype=np.uint8)
        for i, key in enumerate(keys):
            if key in before:
                signatures[i] = before[key]
        signatures[fresh] = made
        return signatures

    signatures = documents.derived(
        "squashed_signatures", make,
        Keep(_SQUASH_VERSION, write=lambda signatures, out: np.save(out, signatures),
             read=lambda path: read_signatures(path, len(documents))))
    return SubstringIndex(texts, signatures)


def initials_texts(documents: LexicalIndex) -> list[str]:
    """The documents' initials (``names.initials``: one line each), as ``by_initials`` reads them: made once per
    index generation and kept beside it (sac.index.derived). About a twentieth of the text's length (1.4 MB for
    the 509 CUAD contracts), so read whole."""
    return _kept_lines(documents, "initials", names.initials)


def _kept_lines(documents: LexicalIndex, key: str, line: Callable[[str], str]) -> list[str]:
    """``line`` of each document's text (one line: no line break in it), made once per index generation, for the
    documents the generation before did not have (``_previous_rows``), and kept beside it under ``key`` as one text
    file."""

    def read(path: Path, rows: int) -> list[str]:
        lines = path.read_text(encoding="utf-8").split("\n") if rows else []
        if len(lines) != rows:
            raise ValueError(f"{len(lines)} kept {key} for {rows} documents")
        return lines

    def make() -> list[str]:
        before = _previous_rows(documents, key, read)
        return [before[k] if k in before else line(text)
                for k, text in zip(_row_keys(documents), documents.document_texts())]

    return documents.derived(
        key, make, Keep(_SQUASH_VERSION, write=lambda lines, out: out.write("\n".join(lines).encode("utf-8")),
                        read=lambda path: read(path, len(documents))))


def _row_keys(documents: LexicalIndex) -> list[tuple[str, str]]:
    return list(zip(documents.ids, documents.signatures))


def _previous_rows(documents: LexicalIndex, key: str, read: Callable[[Path, int], Any]) -> dict[tuple[str, str], Any]:
    """(document id, signature) -> its row of what the generation this one replaced kept under ``key``
    (``LexicalIndex.previous``; ``read(path, rows)`` reads it); empty where it kept nothing this code can use."""
    before = documents.previous(key, _SQUASH_VERSION)
    if before is None:
        return {}
    where, path = before
    try:
        data = read(path, len(where))
    except (OSError, ValueError, EOFError):
        return {}
    return {k: data[row] for k, row in where.items()}


_QUESTION_WORD = re.compile(r"[^\W_][\w'’]*")


def title_words(query: str) -> list[str]:
    """The words of a "Consider <title>; <question>" title that could name a document, as the lexical index
    writes single words (no word pairs: "CEII and NDA" gives no "ceiinda"): 3+ characters with a letter, no
    stopword, possessives dropped ("Munt's" -> "munt"); none without a title. Which of them name a document
    is left to the corpus: a word few documents hold ("Munt", "Visp", "Fonterra"), not one most contracts
    share ("Agreement", "Supply")."""
    return _words_of(names.split_title(query)[0])


def _words_of(text: str) -> list[str]:
    text = re.sub(r"(?<=\w)['’]s?(?!\w)", "", text)
    words = dict.fromkeys(WORD.findall(text.lower()))
    return [w for w in words if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS]


def name_words(query: str) -> list[str]:
    """The words that may name the question's document: its title's (``title_words``), or, for a question without
    a title, its capitalised words, filtered alike ("Glamis" in "Can Glamis terminate the agreement on notice?";
    a capitalised common word, "Can", is held by too many documents to name any). A sentence's first word is
    capitalised anyway, so it counts only when it looks like a name by more than that: capitals inside it or a
    possessive ("VELCO", "GluMobile", "Glamis's"); "Summarize ..." and "Highlight ..." ask, they do not name (each
    is held by one to three contracts of the dev pools)."""
    if names.split_title(query)[0]:
        return title_words(query)
    kept = []
    for m in _QUESTION_WORD.finditer(query):
        word = m.group(0)
        if not word[0].isupper():
            continue
        starts_sentence = query[:m.start()].rstrip()[-1:] in ("", ".", "?", "!", ";", ":")
        if starts_sentence and not (any(c.isupper() for c in word[1:]) or re.search(r"['’]s?$", word)):
            continue
        kept.append(word)
    return _words_of(" ".join(kept))


def routed_count(naming: Naming, query: str, n_docs: int) -> int:
    """How many documents ``+docs<N>`` searches inside under ``+names``; 0: the question is not routed.

    A title says the question is about one document: N, even where the title names none (LegalBench-RAG's form),
    and the whole question chooses among the documents it names (two NDAs of one company). A question without a
    title is about every document it names, so it is searched inside each where it names more than N ("Does the
    Sponsor have exclusive rights?" names the two sponsorship agreements of the 29 demo contracts, and routing it
    to one would hide the other); one that names none is about the whole corpus ("Which agreements can be
    terminated for convenience?") and is searched across it, since routing it would give the k hits of one
    document the words happen to favour."""
    return n_docs if names.split_title(query)[0] else max(n_docs, len(naming.documents)) if naming.documents else 0


def lexical_query(query: str, named: frozenset[str]) -> str:
    """What the document BM25 reads under ``+names`` (module docstring): the title of a "Consider <title>;
    <question>" question that names no document, else the whole question (a question without a title, or one
    whose title names documents)."""
    title = names.split_title(query)[0]
    return query if named or not title else title


def top_documents(scored: list[tuple[str, float]], n: int) -> list[str]:
    return [d for d, _ in scored[:n]]
