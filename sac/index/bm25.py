"""BM25 over rows of tokens: the tokeniser, rank-bm25's Okapi scores as sparse columns, stored and summed by bm25s.

Tokenisation (``tokenize``) is the documented one: lower-case words and numbers, no stopwords, plus each pair of
adjacent words written as one. Scores are rank-bm25's ``BM25Okapi`` with its defaults (k1 1.5, b 0.75,
epsilon 0.25): ``idf = ln((N - n + 0.5) / (n + 0.5))``, a word in more than half the rows gets
``epsilon * mean idf`` instead, and the term part is ``tf (k1 + 1) / (tf + k1 (1 - b + b dl / avgdl))``. Every
(row, word) score is computed here in float64, stored in bm25s's sparse column layout as float32, and a query
sums its (distinct) words' columns with bm25s: the result equals rank-bm25's ``get_scores`` to float32
rounding (relative 1e-6; tests/test_lexical.py checks it on the demo). bm25s's own builder is not used: its
idf variants have no epsilon floor, and building the columns with numpy is faster and simpler to make exact
(bench/notes/2026-12-01-bm25-on-disk.md).

The lexical indexes of sac.index.lexical are ``Lexicon``s kept on disk beside each Chroma collection.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from itertools import chain, count
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import bm25s

K1 = 1.5  # rank-bm25 BM25Okapi's defaults
B = 0.75
EPSILON = 0.25

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
    """Lower-case words and numbers without stopwords, plus each pair of adjacent words written as one.

    "AG Projects" also gives "agprojects", so a name spelt with or without a space still matches."""
    words = [w for w in WORD.findall(text.lower()) if w not in STOPWORDS]
    return words + [a + b for a, b in zip(words, words[1:]) if a.isalpha() and b.isalpha()]


def query_words(query: str) -> list[str]:
    """The distinct words of a query, in order (a word asked twice counts once)."""
    return list(dict.fromkeys(tokenize(query)))


class Lexicon:
    """BM25 over rows of tokens: bm25s's score matrix, the vocabulary, and the token ids of each row.

    The matrix has one float32 column per word; the token ids are kept so that a rebuild does not tokenise again."""

    def __init__(self, model: bm25s.BM25 | None, vocab: list[str], tokens: np.ndarray, offsets: np.ndarray) -> None:
        self.model = model  # None when no row has a token
        self.vocab = vocab
        self.tokens = tokens  # int32, the rows' token ids one after another
        self.offsets = offsets  # int64, row i is tokens[offsets[i]:offsets[i + 1]]
        self._ids: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def word_ids(self) -> dict[str, int]:
        """Word -> its column (its id in ``vocab``)."""
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
        import bm25s  # heavy (scipy): loaded when a lexical index is first built, so `import sac` stays quick

        n = len(offsets) - 1
        tokens = np.asarray(tokens, dtype=np.int64)
        words = list(vocab)
        if not np.bincount(tokens, minlength=len(vocab)).all():  # drop words no row uses any more
            used, tokens = np.unique(tokens, return_inverse=True)
            words = [vocab[i] for i in used]
        lengths = np.diff(offsets)
        model: bm25s.BM25 | None = None
        if len(tokens):
            model = bm25s.BM25(k1=K1, b=B, method="atire", idf_method="robertson", backend="numpy")
            data, indices, indptr = _okapi_columns(tokens, lengths, len(words))
            model.scores = {"data": data, "indices": indices, "indptr": indptr, "num_docs": n}
            model.vocab_dict = {}  # the vocabulary is ``words.json`` (``Lexicon.word_ids``); queries pass column ids
            model.nonoccurrence_array = None  # only bm25l / bm25+ use one
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
        """The tokens of row ``row``, in order."""
        return [self.vocab[i] for i in self.tokens[self.offsets[row]:self.offsets[row + 1]]]

    def rows_with(self, word: str) -> np.ndarray:
        """The rows that hold ``word``, ascending: its score column's row indices (the postings), read, not scanned."""
        i = self.word_ids.get(word)
        if self.model is None or i is None:
            return np.zeros(0, dtype=np.int64)
        columns = self.model.scores
        return np.asarray(columns["indices"][columns["indptr"][i]:columns["indptr"][i + 1]], dtype=np.int64)

    def save(self, folder: Path) -> None:
        """Write the score matrix (bm25s's files), the token ids and the vocabulary into ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        if self.model is not None:
            self.model.save(str(folder), show_progress=False)
        np.save(folder / "tokens.npy", self.tokens)
        np.save(folder / "offsets.npy", self.offsets)
        (folder / "words.json").write_text(json.dumps(self.vocab, ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> Lexicon:
        """Read what ``save`` wrote; the score matrix and token ids are memory-mapped, not read."""
        import bm25s  # heavy (scipy): loaded when a lexical index is first opened, so `import sac` stays quick

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




def assemble(rows: Sequence[list[str] | tuple[Lexicon, int]]) -> Lexicon:
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
