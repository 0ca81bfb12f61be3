"""The lexical side of an index: BM25 on disk (bm25s), next to the Chroma store, kept in step with the collection.

Two BM25 indexes per Chroma collection, refreshed together:

- ``chunks``: one row per record, over what the record embedded (summary + file and section lines + chunk text),
  for ``+hybrid<w>``;
- ``documents``: one row per document, over its summary and whole text (rebuilt from its chunks; under
  ``+filename`` after its file line, sac.chunking.context), for the document routing of ``+docs<N>``; it keeps
  that text too (``texts.json``), which ``+names`` reads instead of every chunk record.

Tokenisation and scoring are sac.index.bm25's: rank-bm25's ``BM25Okapi`` scores, stored and summed by bm25s.

On disk, ``<workspace>/lexical/<collection>/``: ``current.json`` names the generation folder that holds both
indexes, the Chroma fingerprint and record count they were built from; a refresh writes a new generation and
then switches ``current.json`` atomically, so readers never see half an index. Each generation keeps every row's
token ids and a signature of its inputs (document, summary and section-line hashes), so a refresh tokenises only
the rows of documents that changed; bm25s has no incremental add, so the score matrix itself is rebuilt from the
cached tokens (vectorised numpy; times in bench/notes/2026-12-01-bm25-on-disk.md). What ``+names`` derives from the documents'
texts is kept in the generation's ``documents/derived/`` (sac.index.derived); ``Workbench.build`` makes it.

Fresh means: the same Chroma fingerprint, or both empty and the same record count (``is_mirror``).
``Workbench.build`` refreshes after each sync; a search refreshes first when it finds the index stale (no lexical
index yet, documents removed, another process's build). Loading reads the rows' ids and
memory-maps the arrays: no vector is read.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

import numpy as np

from sac.chunking.context import context_lines, read_text
from sac.files import atomic_write_json, file_lock

# The tokeniser and Lexicon are sac.index.bm25's; callers of the lexical indexes import them from here too.
from sac.index.bm25 import STOPWORDS as STOPWORDS
from sac.index.bm25 import WORD as WORD
from sac.index.bm25 import Lexicon as Lexicon
from sac.index.bm25 import assemble
from sac.index.bm25 import query_words as query_words
from sac.index.bm25 import tokenize as tokenize
from sac.index.derived import Keep, kept
from sac.index.records import embedding_text, row_bounds, summary_hash
from sac.index.store import Index
from sac.summaries.store import SummaryStore
from sac.types import Chunk, Span

if TYPE_CHECKING:
    from sac.methods import MethodSpec

T = TypeVar("T")
FORMAT = 3  # of a generation on disk (documents keep their texts, +filename's file line read); others are rebuilt
KINDS = ("chunks", "documents")
PREVIOUS = "previous"  # in a generation's documents folder: what the generation it replaced derived, and its rows
MAX_LOADED = 8  # opened generations kept per process


@dataclass(eq=False)
class LexicalIndex:
    """One kind (``chunks`` or ``documents``) of one collection's lexical index, as one generation holds it.

    Rows are sorted by (document, start) for chunks and by document for documents, so a document's chunk rows are
    contiguous."""

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

    def derived(self, key: str, make: Callable[[], T], keep: Keep | None = None) -> T:
        """``make()`` once per loaded generation and key (the +names vocabulary, squashed texts, ...).

        With ``keep``, once per generation: kept on disk beside it for every later process (sac.index.derived);
        ``keep.read`` gives back what ``make`` made."""
        with self.lock:
            if key not in self.cache:
                self.cache[key] = kept(self.folder, key, make, keep) if keep else make()
            return cast(T, self.cache[key])

    def previous(self, key: str, version: str) -> tuple[dict[tuple[str, str], int], Path] | None:
        """Where the generation this one replaced kept ``key`` by this code ``version`` (sac.index.derived).

        With it, which of its rows holds each (document id, signature) it had; None when it kept none. A row whose
        document and signature this generation has again derives the same data: made once, not at every refresh."""
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
        """One BM25 score per row (``Lexicon.scores``)."""
        return self.lexicon.scores(query)

    def ids_with(self, word: str) -> list[str]:
        """The ids of the rows that hold ``word`` (a token as ``tokenize`` writes it)."""
        return [self.ids[r] for r in self.lexicon.rows_with(word)]

    @property
    def row_of(self) -> dict[str, int]:
        """Row id -> row."""
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
        """Write the lexicon, the rows' ids and signatures, and (documents) the texts into ``folder``."""
        self.lexicon.save(folder)
        rows = {"kind": self.kind, "ids": self.ids, "doc_ids": self.doc_ids, "signatures": self.signatures}
        (folder / "rows.json").write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        if self.kind == "documents":
            (folder / "texts.json").write_text(json.dumps(self.document_texts(), ensure_ascii=False), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path, fingerprint: str, count: int) -> LexicalIndex:
        """Open what ``save`` wrote, for the Chroma ``fingerprint`` and record ``count`` it was built from."""
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
    with no need to count them (Chroma's count is the slow call here). An empty one needs the count too.
    """
    if state is None:
        return False
    fingerprint = index.fingerprint()
    if fingerprint:
        return state.get("fingerprint") == fingerprint
    return state.get("fingerprint") == "" and int(state.get("count", -1)) == index.count()


def for_method(index: Index, summary_store: SummaryStore, method: MethodSpec, *, rebuild: bool = False) -> dict[str, LexicalIndex]:
    """``lexical_indexes`` (``refresh`` with ``rebuild``) over what ``method``'s records embedded: summary, context lines."""
    read = refresh if rebuild else lexical_indexes
    return read(index, summary_store, strategy=method.strategy, sections=method.reads_sections,
                filename=method.reads_file_names)


def lexical_indexes(
    index: Index, summary_store: SummaryStore, *, strategy: str | None, sections: bool = False, filename: bool = False,
) -> dict[str, LexicalIndex]:
    """Both lexical indexes of ``index`` (``chunks`` and ``documents``), refreshed first if stale.

    ``sections`` and ``filename`` say which context lines the records embedded (sac.chunking.context)."""
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
    index: Index, summary_store: SummaryStore, *, strategy: str | None, sections: bool = False, filename: bool = False,
) -> dict[str, LexicalIndex]:
    """Bring the lexical indexes of ``index`` in step with its records; returns both, from the new generation.

    Rows of unchanged documents keep their tokens."""
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
    """Give the documents index in ``folder`` what the generation it replaces derived, and that generation's rows.

    Data made document by document (sac.index.derived) are then made again only for the documents that changed
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
    index: Index, summary_store: SummaryStore, old: Mapping[str, LexicalIndex] | None, *, strategy: str | None,
    sections: bool, filename: bool,
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
        "chunks": LexicalIndex("chunks", order, doc_of, signatures, assemble(chunk_rows)),
        "documents": LexicalIndex("documents", docs, docs, [doc_sigs[d] for d in docs], assemble(doc_rows),
                                  texts=wholes),
    }


@dataclass
class _Texts:
    chunks: dict[str, str]  # chunk id -> embedded text
    wholes: dict[str, str]  # document id -> its text, rebuilt from its chunks
    summaries: dict[str, str | None]  # document id -> the summary its chunks embedded


def summary_of(summary_store: SummaryStore, strategy: str | None, meta: Mapping[str, Any]) -> str | None:
    """The summary a record was embedded with (the stored version whose hash it carries); None for the baseline or none stored."""
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
    """A document's text and, per chunk (in start order), the text its record embedded.

    That is the summary, context lines (``+filename``, ``+sections``: sac.chunking.context, when their hash matches
    the record's) and chunk text."""
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
    summary_store: SummaryStore, doc_ids: Sequence[str], records: Mapping[str, Mapping[str, Any]],
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
