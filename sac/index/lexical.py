"""The lexical side of an index: BM25 on disk (bm25s), next to the Chroma store, kept in step with the collection.

Two BM25 indexes per Chroma collection, refreshed together:

- ``chunks``: one row per record, over what the record embedded (summary + file and section lines + chunk text),
  for ``+hybrid<w>``;
- ``documents``: one row per document, over its summary and whole text (rebuilt from its chunks; under
  ``+filename`` after its file line, sac.chunking.context), for the document routing of ``+docs<N>``; it keeps
  that text too (``texts.json``), which ``+names`` reads instead of every chunk record.

Tokenisation (``tokenize``) is the documented one: lower-case words and numbers, no stopwords, plus each pair of
adjacent words written as one. Scores are rank-bm25's ``BM25Okapi`` with its defaults (k1 1.5, b 0.75,
epsilon 0.25): ``idf = ln((N - n + 0.5) / (n + 0.5))``, a word in more than half the rows gets
``epsilon * mean idf`` instead, and the term part is ``tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``. Every
(row, word) score is computed here in float64, stored in bm25s's sparse column layout as float32, and a query
sums its (distinct) words' columns with bm25s: the result equals rank-bm25's ``get_scores`` to float32
rounding (relative 1e-6; tests/test_lexical.py checks it on the demo). bm25s's own builder is not used: its
idf variants have no epsilon floor, and it is about 10x slower than building the columns with numpy.

On disk, ``<workspace>/lexical/<collection>/``: ``current.json`` names the generation folder that holds both
indexes, the Chroma fingerprint and record count they were built from; a refresh writes a new generation and
then switches ``current.json`` atomically, so readers never see half an index. Each generation keeps every row's
token ids and a signature of its inputs (document, summary and section-line hashes), so a refresh tokenises only
the rows of documents that changed; bm25s has no incremental add, so the score matrix itself is rebuilt from the
cached tokens (vectorised numpy; bench/README.md gives the times). What ``+names`` derives from the documents'
texts is kept in the generation's ``documents/derived/`` (sac.index.derived); ``Workbench.build`` makes it.

Fresh means: the same Chroma fingerprint, or both empty and the same record count (``is_mirror``).
``Workbench.build`` refreshes after each sync; a search refreshes first when it finds the index stale (an index
built before this module, documents removed, another process's build). Loading reads the rows' ids and
memory-maps the arrays: no vector is read.
"""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, count
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from sac.chunking.context import context_lines, read_text
from sac.index.derived import Keep, kept
from sac.index.records import row_bounds
from sac.index.store import Index, embedding_text, summary_hash
from sac.types import Chunk, Span
from sac.workspace import atomic_write_json, file_lock

if TYPE_CHECKING:
    from sac.retrieval.methods import Method

K1 = 1.5  # rank-bm25 BM25Okapi's defaults
B = 0.75
EPSILON = 0.25
FORMAT = 3  # 2: the documents index keeps each document's text (texts.json) for +names; 3: +filename's file line read
KINDS = ("chunks", "documents")
PREVIOUS = "previous"  # in a generation's documents folder: what the generation it replaced derived, and its rows
MAX_LOADED = 8  # opened generations kept per process

# Function words that carry no topic; legal terms ("party", "agreement") stay: BM25's idf weighs them.
STOPWORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being below between both
but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just may me might more most must my no nor not of off on once only
or other our ours out over own same shall she should so some such than that the their theirs them then there
these they this those through to too under until up upon very was we were what when where which while who whom
why will with would you your yours
""".split())
WORD = re.compile(r"[a-z0-9]+")  # a word of the lower-cased text, as every lexical index splits it


def tokenize(text: str) -> list[str]:
    """Lower-case words and numbers without stopwords, plus each pair of adjacent words written as one
    ("AG Projects" also gives "agprojects"), so a name spelt with or without a space still matches."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]
    return words + [a + b for a, b in zip(words, words[1:]) if a.isalpha() and b.isalpha()]


def query_words(query: str) -> list[str]:
    """The distinct words of a query, in order (a word asked twice counts once)."""
    return list(dict.fromkeys(tokenize(query)))


class Lexicon:
    """BM25 over rows of tokens: bm25s's score matrix (one float32 column per word), the vocabulary, and the
    token ids each row was built from (kept so that a rebuild does not tokenise again)."""

    def __init__(self, model: Any, vocab: list[str], tokens: np.ndarray, offsets: np.ndarray) -> None:
        self.model = model  # bm25s.BM25 (None when no row has a token)
        self.vocab = vocab
        self.tokens = tokens  # int32, the rows' token ids one after another
        self.offsets = offsets  # int64, row i is tokens[offsets[i]:offsets[i + 1]]
        self._ids: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def word_ids(self) -> dict[str, int]:
        if self._ids is None:
            self._ids = {w: i for i, w in enumerate(self.vocab)}
        return self._ids

    @classmethod
    def from_tokens(cls, rows: Sequence[Sequence[str]]) -> Lexicon:
        """Build from token lists (one per row)."""
        words = list(chain.from_iterable(rows))
        ids = dict(zip(dict.fromkeys(words), count()))
        flat = np.fromiter(map(ids.__getitem__, words), dtype=np.int64, count=len(words))
        offsets = np.zeros(len(rows) + 1, dtype=np.int64)
        np.cumsum([len(row) for row in rows], out=offsets[1:])
        return cls.from_ids(flat, offsets, list(ids))

    @classmethod
    def from_ids(cls, tokens: np.ndarray, offsets: np.ndarray, vocab: Sequence[str]) -> Lexicon:
        """Build from token ids into ``vocab``; words no row uses are dropped from the vocabulary."""
        import bm25s

        n = len(offsets) - 1
        tokens = np.asarray(tokens, dtype=np.int64)
        words = list(vocab)
        if not np.bincount(tokens, minlength=len(vocab)).all():  # drop words no row uses any more
            used, tokens = np.unique(tokens, return_inverse=True)
            words = [vocab[i] for i in used]
        lengths = np.diff(offsets)
        model = bm25s.BM25(k1=K1, b=B, method="atire", idf_method="robertson", backend="numpy")
        if len(tokens):
            data, indices, indptr = _okapi_columns(tokens, lengths, len(words))
            model.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n}
            model.vocab_dict = {}  # the vocabulary is ``words.json`` (``Lexicon.word_ids``); queries pass column ids
            model.nonoccurrence_array = None  # only bm25l / bm25+ use one
        else:
            model = None
        return cls(model, words, tokens.astype(np.int32), np.asarray(offsets, dtype=np.int64))

    def scores(self, query: str) -> np.ndarray:
        """One BM25 score per row (0 where no query word occurs), float64."""
        if self.model is None or len(self) == 0:
            return np.zeros(len(self), dtype=np.float64)
        known = [self.word_ids[w] for w in query_words(query) if w in self.word_ids]
        if not known:
            return np.zeros(len(self), dtype=np.float64)
        return np.asarray(self.model.get_scores_from_ids(known), dtype=np.float64)

    def row_words(self, row: int) -> list[str]:
        return [self.vocab[i] for i in self.tokens[self.offsets[row]:self.offsets[row + 1]]]

    def rows_with(self, word: str) -> np.ndarray:
        """The rows that hold ``word``, ascending: its score column's row indices (the postings), read, not scanned."""
        i = self.word_ids.get(word)
        if self.model is None or i is None:
            return np.zeros(0, dtype=np.int64)
        columns = self.model.scores
        return np.asarray(columns["indices"][columns["indptr"][i]:columns["indptr"][i + 1]], dtype=np.int64)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        if self.model is not None:
            self.model.save(str(folder), show_progress=False)
        np.save(folder / "tokens.npy", self.tokens)
        np.save(folder / "offsets.npy", self.offsets)
        (folder / "words.json").write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Lexicon:
        import bm25s

        vocab = json.loads((folder / "words.json").read_text(encoding="utf-8"))
        model = None
        if (folder / "params.index.json").is_file():
            model = bm25s.BM25.load(str(folder), mmap=True, load_vocab=False, show_progress=False)
        tokens = np.load(folder / "tokens.npy", mmap_mode="r")
        offsets = np.load(folder / "offsets.npy")
        return cls(model, vocab, tokens, offsets)


def _okapi_columns(tokens: np.ndarray, lengths: np.ndarray, vocab_size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """rank-bm25's BM25Okapi score of every (row, word) pair, as CSC columns (data, row indices, indptr)."""
    n = len(lengths)
    rows = np.repeat(np.arange(n, dtype=np.int64), lengths)
    pairs, tf = np.unique(rows * vocab_size + tokens, return_counts=True)  # sorted by row, then word
    row, word = pairs // vocab_size, pairs % vocab_size
    df = np.bincount(word, minlength=vocab_size)
    idf = np.log(n - df + 0.5) - np.log(df + 0.5)
    # rank-bm25: "idf can be negative if word is contained in more than half of documents"; such words get
    # epsilon times the mean idf (the mean taken before the floor, over every word of the corpus).
    idf = np.where(idf < 0, EPSILON * idf.mean(), idf)
    avgdl = lengths.sum() / n
    norm = K1 * (1 - B + B * lengths[row] / avgdl)
    score = idf[word] * (tf * (K1 + 1) / (tf + norm))
    order = np.argsort(word, kind="stable")  # by word, rows ascending inside each column
    indptr = np.zeros(vocab_size + 1, dtype=np.int64)
    np.cumsum(df, out=indptr[1:])
    return score[order].astype(np.float32), row[order].astype(np.int32), indptr


@dataclass(eq=False)
class LexicalIndex:
    """One kind (``chunks`` or ``documents``) of one collection's lexical index, as one generation holds it.

    Rows are sorted by (document, start) for chunks and by document for documents, so a document's chunk rows
    are contiguous."""

    kind: str
    ids: list[str]  # chunk ids, or document ids
    doc_ids: list[str]
    signatures: list[str]  # the inputs each row was built from (hashes), to reuse its tokens
    lexicon: Lexicon
    fingerprint: str = ""
    count: int = 0  # Chroma records the generation was built from
    texts: list[str] | None = None  # documents: each one's text (rebuilt from its chunks)
    folder: Path | None = None  # the generation's folder it was loaded from, where derived data are kept
    cache: dict[str, Any] = field(default_factory=dict)
    lock: threading.RLock = field(default_factory=threading.RLock)

    def __len__(self) -> int:
        return len(self.ids)

    def document_texts(self) -> list[str]:
        """Per row of the documents index, the document's text (without its summary)."""
        if self.texts is None:
            raise ValueError(f"The {self.kind} lexical index keeps no document texts")
        return self.texts

    def derived(self, key: str, make: Callable[[], Any], keep: Keep | None = None) -> Any:
        """``make()`` once per loaded generation and key (the +names vocabulary, squashed texts, ...); with
        ``keep``, once per generation: kept on disk beside it for every later process (sac.index.derived)."""
        with self.lock:
            if key not in self.cache:
                self.cache[key] = kept(self.folder, key, make, keep) if keep else make()
            return self.cache[key]

    def previous(self, key: str, version: str) -> tuple[dict[tuple[str, str], int], Path] | None:
        """Where the generation this one replaced kept ``key`` by this code ``version`` (sac.index.derived), and
        which of its rows holds each (document id, signature) it had; None when it kept none. A row whose document
        and signature this generation has again derives the same data: made once, not at every refresh."""
        if self.folder is None or not version:
            return None
        before = self.folder / PREVIOUS
        path = before / "derived" / f"{key}-{version}"
        try:
            rows = json.loads((before / "rows.json").read_text(encoding="utf-8"))
            where = {(str(i), str(s)): r for r, (i, s) in enumerate(zip(rows["ids"], rows["signatures"], strict=True))}
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return (where, path) if path.is_file() else None

    def drop_previous(self) -> None:
        """Remove what the generation before handed over (``previous``) once all that reads it has been made."""
        if self.folder is not None:
            shutil.rmtree(self.folder / PREVIOUS, ignore_errors=True)

    def scores(self, query: str) -> np.ndarray:
        return self.lexicon.scores(query)

    def ids_with(self, word: str) -> list[str]:
        """The ids of the rows that hold ``word`` (a token as ``tokenize`` writes it)."""
        return [self.ids[r] for r in self.lexicon.rows_with(word)]

    @property
    def row_of(self) -> dict[str, int]:
        got = self.cache.get("row_of")
        if got is None:
            got = self.cache["row_of"] = {rid: i for i, rid in enumerate(self.ids)}
        return got

    @property
    def doc_bounds(self) -> dict[str, tuple[int, int]]:
        """Document id -> its rows ``[first, last + 1)``."""
        got = self.cache.get("doc_bounds")
        if got is None:
            got = self.cache["doc_bounds"] = row_bounds(self.doc_ids)
        return got

    def rows(self, doc_ids: Iterable[str]) -> np.ndarray:
        """Row numbers of these documents."""
        bounds = self.doc_bounds
        parts = [np.arange(*bounds[d]) for d in doc_ids if d in bounds]
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    def save(self, folder: Path) -> None:
        self.lexicon.save(folder)
        rows = {"kind": self.kind, "ids": self.ids, "doc_ids": self.doc_ids, "signatures": self.signatures}
        (folder / "rows.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        if self.kind == "documents":
            (folder / "texts.json").write_text(json.dumps(self.document_texts(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, fingerprint: str, count: int) -> LexicalIndex:
        rows = json.loads((folder / "rows.json").read_text(encoding="utf-8"))
        # Read now, not on first use: a later refresh by another process may remove this generation's folder.
        texts = json.loads((folder / "texts.json").read_text(encoding="utf-8")) if rows["kind"] == "documents" else None
        return cls(rows["kind"], rows["ids"], rows["doc_ids"], rows["signatures"], Lexicon.load(folder),
                   fingerprint, count, texts=texts, folder=folder)


def lexical_dir(index: Index) -> Path:
    """Where ``index``'s lexical indexes live: beside the Chroma store, named like its collection."""
    return index.workspace / "lexical" / index.key.collection_name


_loaded: OrderedDict[tuple[str, str], dict[str, LexicalIndex]] = OrderedDict()
_loaded_lock = threading.Lock()


def _read_current(folder: Path) -> dict[str, Any] | None:
    try:
        current = json.loads((folder / "current.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if current.get("format") != FORMAT or not (folder / str(current.get("generation"))).is_dir():
        return None
    return dict(current)


def _load_generation(folder: Path, current: Mapping[str, Any]) -> dict[str, LexicalIndex]:
    key = (str(folder), str(current["generation"]))
    with _loaded_lock:
        found = _loaded.get(key)
        if found is not None:
            _loaded.move_to_end(key)
            return found
    gen = folder / str(current["generation"])
    got = {kind: LexicalIndex.load(gen / kind, str(current["fingerprint"]), int(current["count"])) for kind in KINDS}
    with _loaded_lock:
        _loaded[key] = got
        while len(_loaded) > MAX_LOADED:
            _loaded.popitem(last=False)
    return got


def is_mirror(state: Mapping[str, Any] | None, index: Index) -> bool:
    """Whether ``state`` (a fingerprint and record count) describes the records ``index`` holds now.

    A non-empty fingerprint is written only at the end of a complete sync, and every other change of the records
    (a sync under way, a removal of documents) clears it first: equal non-empty fingerprints mean the same records,
    with no need to count them (Chroma's count is the slow call here). An empty one needs the count too."""
    if state is None:
        return False
    fingerprint = index.fingerprint()
    if fingerprint:
        return state.get("fingerprint") == fingerprint
    return state.get("fingerprint") == "" and int(state.get("count", -1)) == index.count()


def for_method(index: Index, summary_store: Any, method: Method, *, rebuild: bool = False) -> dict[str, LexicalIndex]:
    """``lexical_indexes`` (``refresh`` with ``rebuild``) reading what ``method``'s records embedded: its summary,
    file and section lines."""
    read = refresh if rebuild else lexical_indexes
    return read(index, summary_store, strategy=method.strategy, sections=method.reads_sections,
                filename=method.reads_file_names)


def lexical_indexes(
    index: Index, summary_store: Any, *, strategy: str | None, sections: bool = False, filename: bool = False,
) -> dict[str, LexicalIndex]:
    """Both lexical indexes of ``index`` (``chunks`` and ``documents``), refreshed first if stale. ``sections``
    and ``filename`` say which context lines the records embedded (sac.chunking.context)."""
    folder = lexical_dir(index)
    current = _read_current(folder)
    if is_mirror(current, index):
        assert current is not None
        try:
            return _load_generation(folder, current)
        except FileNotFoundError:  # a refresh removed that generation in between: read the new one
            pass
    return refresh(index, summary_store, strategy=strategy, sections=sections, filename=filename)


def refresh(
    index: Index, summary_store: Any, *, strategy: str | None, sections: bool = False, filename: bool = False,
) -> dict[str, LexicalIndex]:
    """Bring the lexical indexes of ``index`` in step with its records; rows of unchanged documents keep their
    tokens. Returns both, loaded from the new generation."""
    folder = lexical_dir(index)
    with file_lock(index.workspace / "locks" / f"{index.key.collection_name}.lexical.lock"):
        current = _read_current(folder)
        if is_mirror(current, index):
            assert current is not None
            return _load_generation(folder, current)
        fingerprint, count = index.fingerprint(), index.count()
        old = _load_generation(folder, current) if current is not None else None
        built = _rebuild(index, summary_store, old, strategy=strategy, sections=sections, filename=filename)
        generation = f"g{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:8]}"
        for kind, lex in built.items():
            lex.fingerprint, lex.count = fingerprint, count
            lex.save(folder / generation / kind)
        atomic_write_json(folder / "current.json", {"format": FORMAT, "generation": generation,
                                                    "fingerprint": fingerprint, "count": count})
        if old is not None:
            _hand_over(old["documents"], folder / generation / "documents")
        for stale in folder.iterdir():
            if stale.is_dir() and stale.name != generation:
                shutil.rmtree(stale, ignore_errors=True)  # a reader that mapped its files keeps them (POSIX)
        return _load_generation(folder, {"generation": generation, "fingerprint": fingerprint, "count": count})


def _hand_over(old: LexicalIndex, folder: Path) -> None:
    """Give the documents index in ``folder`` what the generation it replaces derived (sac.index.derived) and that
    generation's rows, so data made document by document are made again only for the documents that changed
    (``LexicalIndex.previous``). Best effort: a move within the workspace, and nothing is lost without it."""
    if old.folder is None or not (old.folder / "derived").is_dir():
        return
    try:
        (folder / PREVIOUS).mkdir()
        atomic_write_json(folder / PREVIOUS / "rows.json", {"ids": old.ids, "signatures": old.signatures})
        (old.folder / "derived").replace(folder / PREVIOUS / "derived")
    except OSError:
        pass


def forget(index: Index) -> None:
    """Drop the opened generations of ``index`` from this process (tests, after deleting the folder)."""
    with _loaded_lock:
        for key in [k for k in _loaded if k[0] == str(lexical_dir(index))]:
            del _loaded[key]


def _signature(meta: Mapping[str, Any]) -> str:
    return f"{meta.get('doc_hash', '')}|{meta.get('summary_hash', '')}|{meta.get('prefix_hash', '')}"


def _rebuild(
    index: Index, summary_store: Any, old: Mapping[str, LexicalIndex] | None, *, strategy: str | None, sections: bool,
    filename: bool,
) -> dict[str, LexicalIndex]:
    """Both kinds from the collection's records: tokens of rows whose signature is unchanged come from ``old``.

    Long because it is one pass over the records for both kinds: read the metadata, find the documents that
    changed, read only their chunk texts, rebuild their embedded texts and whole text, then assemble the rows.
    """
    old_chunks, old_docs = (old["chunks"], old["documents"]) if old else (None, None)
    read: tuple[list[str], list[dict[str, Any]], list[str]] | None = None
    if not index.exists():
        records: dict[str, dict[str, Any]] = {}
    elif old_chunks is None:  # everything is new: one read of metadata and texts
        read = index.chunk_texts()
        records = dict(zip(read[0], read[1]))
    else:
        records = index.records()
    order = sorted(records, key=lambda rid: (str(records[rid]["doc_id"]), int(records[rid]["start"])))
    doc_of = [str(records[rid]["doc_id"]) for rid in order]
    signatures = [_signature(records[rid]) for rid in order]
    per_doc: dict[str, list[int]] = {}
    for i, d in enumerate(doc_of):
        per_doc.setdefault(d, []).append(i)
    doc_sigs = {d: f"{signatures[rows[0]]}|{len(rows)}" for d, rows in per_doc.items()}

    changed = set(per_doc)
    if old_chunks is not None and old_docs is not None:
        old_row = old_chunks.row_of
        old_doc_row = old_docs.row_of
        changed = {d for d, rows in per_doc.items()
                   if d not in old_doc_row or old_docs.signatures[old_doc_row[d]] != doc_sigs[d]
                   or any(old_row.get(order[i]) is None or old_chunks.signatures[old_row[order[i]]] != signatures[i]
                          for i in rows)}
    if read is None:
        read = index.chunk_texts(sorted(changed)) if changed else ([], [], [])
    texts = _texts_of(summary_store, sorted(changed), records, read, strategy=strategy, sections=sections,
                      filename=filename)

    chunk_rows: list[list[str] | tuple[Lexicon, int]] = []
    for i, rid in enumerate(order):
        d = doc_of[i]
        if d in changed:
            chunk_rows.append(tokenize(texts.chunks[rid]))
        else:
            assert old_chunks is not None
            chunk_rows.append((old_chunks.lexicon, old_chunks.row_of[rid]))
    docs = sorted(per_doc)
    doc_rows: list[list[str] | tuple[Lexicon, int]] = []
    wholes: list[str] = []
    for d in docs:
        if d in changed:
            whole = read_text(d, texts.wholes[d], filename=filename)  # the file line too under +filename
            doc_rows.append(tokenize(f"{texts.summaries.get(d) or ''}\n{whole}"))
            wholes.append(whole)
        else:
            assert old_docs is not None
            doc_rows.append((old_docs.lexicon, old_docs.row_of[d]))
            wholes.append(old_docs.document_texts()[old_docs.row_of[d]])
    return {
        "chunks": LexicalIndex("chunks", order, doc_of, signatures, _assemble(chunk_rows)),
        "documents": LexicalIndex("documents", docs, docs, [doc_sigs[d] for d in docs], _assemble(doc_rows),
                                  texts=wholes),
    }


def _assemble(rows: Sequence[list[str] | tuple[Lexicon, int]]) -> Lexicon:
    """A lexicon from new token lists and rows of old lexicons (their token ids mapped to the new vocabulary)."""
    new = [row for row in rows if not isinstance(row, tuple)]
    flat = list(chain.from_iterable(new))
    ids = dict(zip(dict.fromkeys(flat), count()))
    new_ids = np.fromiter(map(ids.__getitem__, flat), dtype=np.int64, count=len(flat))
    remapped: dict[int, tuple[Lexicon, np.ndarray]] = {}
    for row in rows:
        if isinstance(row, tuple) and id(row[0]) not in remapped:
            lex = row[0]
            remap = np.fromiter((ids.setdefault(w, len(ids)) for w in lex.vocab), dtype=np.int64, count=len(lex.vocab))
            remapped[id(lex)] = (lex, remap[np.asarray(lex.tokens, dtype=np.int64)])
    parts: list[np.ndarray] = []
    at = 0
    for row in rows:
        if isinstance(row, tuple):
            lex, tokens = remapped[id(row[0])]
            parts.append(tokens[lex.offsets[row[1]]:lex.offsets[row[1] + 1]])
        else:
            parts.append(new_ids[at:at + len(row)])
            at += len(row)
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in parts], out=offsets[1:])
    flat_ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    return Lexicon.from_ids(flat_ids, offsets, list(ids))


@dataclass
class _Texts:
    chunks: dict[str, str]  # chunk id -> embedded text
    wholes: dict[str, str]  # document id -> its text, rebuilt from its chunks
    summaries: dict[str, str | None]  # document id -> the summary its chunks embedded


def summary_of(summary_store: Any, strategy: str | None, meta: Mapping[str, Any]) -> str | None:
    """The summary a record was embedded with: the stored version of its document and strategy whose hash the
    record carries (None for the baseline, or when the store no longer has it)."""
    wanted = meta.get("summary_hash", "")
    if strategy is None or not wanted:
        return None
    for version in reversed(summary_store.history(str(meta["doc_hash"]), strategy)):
        if summary_hash(version.text) == wanted:
            return str(version.text)
    return None


def document_text(starts: Sequence[int], texts: Sequence[str]) -> str:
    """A document's text rebuilt from its chunks in start order (they tile it; overlaps are skipped)."""
    out = ""
    for start, text in zip(starts, texts):
        if start + len(text) > len(out):
            out += text[len(out) - start:] if start < len(out) else text
    return out


def embedded_texts(
    doc_id: str, metas: Sequence[Mapping[str, Any]], texts: Sequence[str], summary: str | None, *, sections: bool,
    filename: bool = False,
) -> tuple[str, list[str]]:
    """A document's text and, per chunk (in start order), the text its record embedded: summary, context lines
    (``+filename``, ``+sections``: sac.chunking.context, when their hash matches the record's) and chunk text."""
    whole = document_text([int(m["start"]) for m in metas], texts)
    spans = [(int(m["start"]), int(m["end"])) for m in metas]
    lines = context_lines(doc_id, whole, spans, sections=sections, filename=filename)
    out = []
    for meta, text, (start, end), prefix in zip(metas, texts, spans, lines):
        if summary_hash(prefix or None) != meta.get("prefix_hash", ""):
            prefix = ""
        out.append(embedding_text(Chunk(Span(doc_id, start, end), text), summary, prefix or None))
    return whole, out


def _texts_of(
    summary_store: Any, doc_ids: Sequence[str], records: Mapping[str, Mapping[str, Any]],
    read: tuple[list[str], list[dict[str, Any]], list[str]], *, strategy: str | None, sections: bool, filename: bool,
) -> _Texts:
    """Embedded texts of the chunks and whole texts of ``doc_ids``, from ``read`` (ids, metadata, chunk texts)."""
    out = _Texts({}, {}, {})
    ids, metas, texts = read
    grouped: dict[str, list[int]] = {}
    for i, meta in enumerate(metas):
        grouped.setdefault(str(meta["doc_id"]), []).append(i)
    for d in doc_ids:
        rows = sorted(grouped.get(d, []), key=lambda i: int(metas[i]["start"]))
        if not rows:
            continue
        summary = summary_of(summary_store, strategy, metas[rows[0]])
        whole, embedded = embedded_texts(d, [metas[i] for i in rows], [texts[i] or "" for i in rows], summary,
                                         sections=sections, filename=filename)
        out.wholes[d], out.summaries[d] = whole, summary
        out.chunks.update((ids[i], text) for i, text in zip(rows, embedded))
    wanted = set(doc_ids)
    missing = [rid for rid, meta in records.items() if str(meta["doc_id"]) in wanted and rid not in out.chunks]
    for rid in missing:  # written between reading the metadata and the texts: left empty until the next refresh
        out.chunks[rid] = ""
    for d in doc_ids:
        out.wholes.setdefault(d, "")
    return out
