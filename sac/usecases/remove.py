"""Removing documents, or a whole corpus, so that nothing of their text is left under the workspace.

What goes with each removed document (``remove_documents``), or with every document of a corpus (``remove_corpus``):

- its records in every index of the corpus (every method, embedder and chunking), in each index's document
  collection (``sacdoc_``) and BM25 indexes (``lexical/``: a new generation without it; the old ones, with their
  cached tokens and texts, are deleted). A whole corpus loses its collections, shard records and lexical folders,
  its distractor-pool variants (``<corpus>+pool…``) included;
- its summaries: every strategy and version, generated (the LLM answer cache) or hand-edited, and its lines in
  ``logs/summarize.jsonl``, unless a live document of the workspace (any corpus, after the removal) has the same
  text: summaries are keyed by text, and that document still uses them;
- review labels on its chunks and ground-truth spans in it (their quotes);
- saved runs that hold it: a run over the corpus that retrieved it (for a whole corpus: every run over it). A
  run is one measurement and never changes, so such runs are deleted whole and listed in the report;
- the document's line in ``corpora/<name>.jsonl`` last, so a removal cut short leaves the document listed:
  running it again finishes the job.

Then the embedded Chroma store is compacted (``sac.index.compaction``): each collection that held a removed
record is written again from its surviving records (no vector is computed again; marked incomplete while it is
rewritten), ``chroma.sqlite3`` is vacuumed and HNSW folders of deleted segments are removed. With a Chroma server
(``SAC_CHROMA_URL``) the records are deleted through its API, and compacting the server's disk is its operator's
job: the report says so.

Benchmark corpora (the bundled demo, benchmarks uploaded as zips) are read-only document by document: their
questions point into exact documents. They can be removed whole: an uploaded benchmark's dataset files under
``<workspace>/benchmarks/`` go too; the demo's documents stay in ``data/demo`` (it stays listed), and its
indexes, summaries, runs and reviews in this workspace are forgotten.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sac.audit import ids_detail
from sac.errors import ConfigError, CorpusError
from sac.evaluation.review import ReviewStore
from sac.evaluation.runs import RunFolder, list_runs
from sac.files import atomic_write_text, file_lock, read_jsonl
from sac.index import lexical, snapshot
from sac.index.compaction import rewrite_collection, scrub_store, settle_collection, vacuum_store
from sac.index.documents import DocumentIndex, drop_index
from sac.index.store import Index, IndexInfo, list_indexes, write_lock
from sac.ingest import catalog
from sac.methods import MethodSpec, parse_method
from sac.retrieval import targets
from sac.summaries.log import summary_log_path
from sac.types import Document
from sac.usecases.job_board import board
from sac.usecases.workbench import Workbench
from sac.wording import counted
from sac.workspace import Workspace


@dataclass(frozen=True)
class RemovalReport:
    """What a removal took away, for people (``message``) and tests (the counts)."""

    corpus: str
    documents: tuple[str, ...]  # the documents removed (every one of the corpus for a whole corpus)
    whole_corpus: bool = False
    chunks: int = 0  # index records deleted
    indexes: int = 0  # indexes that held any (rewritten without them, or dropped with the corpus)
    summaries: int = 0  # summary files deleted (one per text and strategy, every version inside)
    shared_texts: int = 0  # removed texts whose summaries stay: another live document has the same text
    labels: int = 0  # review labels deleted
    gold_spans: int = 0  # ground-truth spans (with their quotes) deleted
    runs: tuple[str, ...] = ()  # saved runs deleted
    files_note: str = ""  # what happened to the corpus's own files
    compacted: bool = False  # the embedded store was rewritten and vacuumed
    server: str | None = None  # a Chroma server's URL: compacting its disk is its operator's job
    notes: tuple[str, ...] = field(default_factory=tuple)

    def message(self) -> str:
        """A few sentences: what was removed, which runs went, and whether the text is gone from disk."""
        what = (f"Removed corpus {self.corpus!r} ({counted(len(self.documents), 'document')})" if self.whole_corpus
                else f"Removed {counted(len(self.documents), 'document')} from {self.corpus!r} ({_listed(self.documents)})")
        parts = [f"{counted(self.chunks, 'indexed chunk')} in {counted(self.indexes, 'index', 'indexes')}",
                 counted(self.summaries, "summary file"), counted(self.labels, "review label"),
                 counted(self.gold_spans, "ground-truth span")]
        lines = [f"{what}: {', '.join(parts)}."]
        if self.files_note:
            lines.append(self.files_note)
        if self.shared_texts:
            lines.append(f"Kept the summaries of {counted(self.shared_texts, 'text')} that another document of the "
                         "workspace has too.")
        if self.runs:
            lines.append(f"Deleted {counted(len(self.runs), 'saved run')} that held its text: {_listed(self.runs)}.")
        if self.server:
            lines.append(f"The Chroma server at {self.server} deleted the records; its own files may still hold the "
                         "text until its operator compacts them (this workspace holds none of it).")
        elif self.compacted:
            lines.append("The Chroma store was compacted: the text is gone from the workspace's files.")
        lines.extend(self.notes)
        return " ".join(lines)


def _listed(names: Sequence[str], limit: int = 5) -> str:
    shown = ", ".join(names[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


# -- the two entry points ------------------------------------------------------------------------------------
def remove_documents(wb: Workbench, corpus: str, doc_ids: Iterable[str]) -> RemovalReport:
    """Remove these documents of an uploaded corpus and everything made from them (see the module docstring).

    Raises ConfigError or CorpusError, with nothing removed, for an unknown corpus or document, a benchmark
    corpus, or while a build of this workspace runs.
    """
    ids = list(dict.fromkeys(doc_ids))
    entry = _entry(wb, corpus)
    if entry.kind != "upload":
        raise CorpusError(
            f"{corpus!r} is a benchmark corpus: its questions point into these exact documents, so single documents "
            f"cannot be removed. Remove the whole corpus instead (`python -m sac remove --corpus {corpus} --all`)."
        )
    if not ids:
        raise ConfigError(f"Name the documents of {corpus!r} to remove, or remove the whole corpus (--all).")
    documents = wb.workspace.load_corpus(corpus)
    by_id = {d.doc_id: d for d in documents}
    unknown = [d for d in ids if d not in by_id]
    if unknown:
        known = sorted(by_id)
        raise CorpusError(f"No document {_listed([repr(u) for u in unknown])} in corpus {corpus!r} ({len(known)} documents; first: "
                          f"{known[:5]}). Nothing was removed.")
    _check_idle(wb)
    kept = [d for d in documents if d.doc_id not in set(ids)]
    live = _live_hashes(wb.workspace, skip=corpus) | {d.content_hash for d in kept}
    chunks, indexes = 0, 0
    for info in _indexes_of(wb, lambda name: name == corpus):
        removed = _purge_index(wb, info, ids)
        chunks += removed
        indexes += removed > 0
    summaries, shared = _purge_summaries(wb, {by_id[d].content_hash for d in ids}, live)
    labels, gold = _purge_reviews(wb.workspace, lambda row: row.get("corpus") == corpus and row.get("doc_id") in ids)
    runs = _purge_runs(wb.workspace, corpus, set(ids))
    wb.workspace.save_corpus(corpus, kept)
    return _finish(wb, RemovalReport(corpus, tuple(ids), chunks=chunks, indexes=indexes, summaries=summaries,
                                     shared_texts=shared, labels=labels, gold_spans=gold, runs=runs))


def remove_corpus(wb: Workbench, corpus: str) -> RemovalReport:
    """Remove a whole corpus and everything made from it (see the module docstring): an uploaded corpus's file, an
    uploaded benchmark's dataset files; the bundled demo's documents stay where they are.

    Raises ConfigError for an unknown corpus, or while a build of this workspace runs, with nothing removed.
    """
    entry = _entry(wb, corpus)
    documents = wb.workspace.load_corpus(corpus) if entry.kind == "upload" else list(catalog.load_dataset(entry).documents)
    _check_idle(wb)
    live = _live_hashes(wb.workspace, skip=corpus)
    chunks, indexes = 0, 0
    for info in _indexes_of(wb, lambda name: name == corpus or name.startswith(f"{corpus}+pool")):
        index = Index(wb.client, info.key, wb.config)
        snapshot.forget(wb.client, info.collection)
        drop_index(index)
        chunks += info.chunks
        indexes += 1
    summaries, shared = _purge_summaries(wb, {d.content_hash for d in documents}, live)
    labels, gold = _purge_reviews(wb.workspace, lambda row: row.get("corpus") == corpus)
    runs = _purge_runs(wb.workspace, corpus, None)
    files_note = _remove_corpus_files(wb.workspace, entry)
    return _finish(wb, RemovalReport(corpus, tuple(d.doc_id for d in documents), whole_corpus=True, chunks=chunks,
                                     indexes=indexes, summaries=summaries, shared_texts=shared, labels=labels,
                                     gold_spans=gold, runs=runs, files_note=files_note))


# -- checks ---------------------------------------------------------------------------------------------------
def _entry(wb: Workbench, corpus: str) -> catalog.CorpusEntry:
    entries = catalog.list_corpora(wb.workspace)
    try:
        return catalog.find_corpus(entries, corpus)
    except ConfigError:
        raise ConfigError(f"No corpus named {corpus!r} in {wb.workspace.root}. Known: {[e.name for e in entries]}. "
                          "Nothing was removed.") from None


def _check_idle(wb: Workbench) -> None:
    """A build running beside a removal would write the records back (and compaction rewrites the store)."""
    running = board(wb.workspace.root).running()
    if running is not None:
        raise ConfigError(f"A build is running in this workspace ({running.label}); remove documents when it has "
                          "finished. Nothing was removed.")


def _live_hashes(ws: Workspace, *, skip: str) -> set[str]:
    """Text hashes of every document of every corpus but ``skip``: their summaries must stay. Read before anything
    is removed, so an unreadable corpus stops the removal with nothing removed."""
    live: set[str] = set()
    for entry in catalog.list_corpora(ws):
        if entry.name == skip:
            continue
        docs: Sequence[Document] = ws.load_corpus(entry.name) if entry.kind == "upload" else catalog.load_dataset(entry).documents
        live.update(d.content_hash for d in docs)
    return live


# -- indexes --------------------------------------------------------------------------------------------------
def _indexes_of(wb: Workbench, wanted: Callable[[str], bool]) -> list[IndexInfo]:
    return [info for info in list_indexes(wb.client) if wanted(info.corpus)]


def _purge_index(wb: Workbench, info: IndexInfo, doc_ids: Sequence[str]) -> int:
    """Delete the documents' records from one index, its document collection and its BM25 indexes; on the
    embedded store also rewrite the collections that held any. Returns the chunk records deleted."""
    index = Index(wb.client, info.key, wb.config)
    docs = DocumentIndex(index)
    docs_there = docs.exists()
    docs_fresh = docs_there and docs.is_fresh()
    removed = index.delete_documents(doc_ids)
    docs_removed = docs.remove(doc_ids, mirror=docs_fresh) if docs_there else 0
    if not removed and not docs_removed:
        return 0
    snapshot.forget(wb.client, info.collection)
    if not wb.config.chroma_url:
        locks = wb.config.workspace / "locks"
        store = wb.config.workspace / "chroma"
        if removed:
            with write_lock(locks, info.collection):
                rewrite_collection(wb.client, info.collection)
                settle_collection(wb.client, info.collection, store)  # rewritten: flush its graph whole again
        if docs_removed:
            with file_lock(locks / f"{docs.name}.lock"):
                rewrite_collection(wb.client, docs.name)
                settle_collection(wb.client, docs.name, store)
        index = Index(wb.client, info.key, wb.config)  # the old one holds the deleted collection's handle
    if (lexical.lexical_dir(index) / "current.json").is_file():
        lexical.forget(index)
        try:
            method = parse_method(info.method)
        except ConfigError:  # a name this version cannot read: its records are read as plain chunks
            method = MethodSpec()
        targets.prepare(lexical.for_method(index, wb.summary_store, method, rebuild=True))
    return removed


def _finish(wb: Workbench, report: RemovalReport) -> RemovalReport:
    """Compact the embedded store (a server's disk is its operator's), say so in the report, and record the removal
    in the audit trail (ids and counts: the one place a removed document's id stays)."""
    if wb.config.chroma_url:
        report = dataclasses.replace(report, server=wb.config.chroma_url)
    else:
        try:
            vacuum_store(wb.config.workspace / "chroma")
            wb.close_store()  # the HNSW files are scrubbed closed; the next search opens the store again
            try:
                scrub_store(wb.config.workspace / "chroma")
                report = dataclasses.replace(report, compacted=True)
            except (ValueError, OSError) as err:  # a layout this code does not know: said, never claimed done
                report = dataclasses.replace(report, notes=(*report.notes, (
                    f"The vector files were not scrubbed ({err}): unused slots of chroma/*/data_level0.bin, "
                    "link_lists.bin and length.bin may still hold bytes the process held before.")))
        except sqlite3.Error as err:  # another process holds the file (an app server, a CLI run)
            note = (f"Compacting the Chroma store failed ({err}): its records are deleted and rewritten, but "
                    "chroma.sqlite3 may keep the text in free pages until the next removal compacts it (with no other "
                    "program using the workspace).")
            report = dataclasses.replace(report, notes=(*report.notes, note))
    wb.audit.record("delete", f"corpus {report.corpus!r}" + ("" if report.whole_corpus else " (documents)"),
                    documents=ids_detail(report.documents), whole_corpus=report.whole_corpus, chunks=report.chunks,
                    indexes=report.indexes, summaries=report.summaries, labels=report.labels,
                    gold_spans=report.gold_spans, runs=list(report.runs), compacted=report.compacted,
                    server=report.server)
    return report


# -- summaries, reviews, runs, files ------------------------------------------------------------------------
def _purge_summaries(wb: Workbench, hashes: set[str], live: set[str]) -> tuple[int, int]:
    """Delete every summary file of these texts but the live ones, and their lines in the summarize log; returns
    (files deleted, texts kept because live)."""
    gone = hashes - live
    root = wb.summary_store.root
    files = 0
    if gone and root.is_dir():
        with file_lock(root / ".lock"):
            for doc_hash in sorted(gone):
                folder = root / doc_hash
                if folder.is_dir():
                    files += sum(1 for _ in folder.glob("*.json"))
                    shutil.rmtree(folder)
    _filter_jsonl(summary_log_path(wb.workspace.root), lambda row: row.get("doc_hash") in gone)
    return files, len(hashes & live)


def _filter_jsonl(path: Path, drop: Callable[[Mapping[str, Any]], bool]) -> int:
    """Rewrite a JSON-lines file without the rows ``drop`` picks (under the lock its writers take); returns how
    many went."""
    if not path.is_file():
        return 0
    with file_lock(path):
        rows = read_jsonl(path)
        kept = [row for row in rows if not (isinstance(row, dict) and drop(row))]
        if len(kept) != len(rows):
            atomic_write_text(path, "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in kept))
    return len(rows) - len(kept)


def _purge_reviews(ws: Workspace, drop: Callable[[Mapping[str, Any]], bool]) -> tuple[int, int]:
    """Delete review labels and ground-truth spans ``drop`` picks; returns how many of each were current."""
    store = ReviewStore(ws.reviews_dir)
    labels, gold = len(store.labels()), len(store.gold())
    _filter_jsonl(store.labels_path, drop)
    _filter_jsonl(store.gold_path, drop)
    return labels - len(store.labels()), gold - len(store.gold())


def _run_holds(run: RunFolder, corpus: str, doc_ids: set[str] | None) -> bool:
    """Whether a saved run searched ``corpus`` (one of its datasets' corpus, with or without a distractor pool)
    and, given ``doc_ids``, retrieved one of them."""
    if corpus not in {run.corpus_of(str(d)) for d in run.settings.get("datasets", [])}:
        return False
    if doc_ids is None:
        return True
    return any(run.corpus_of(str(row.get("dataset"))) == corpus
               and any(str(hit.get("file_path")) in doc_ids for hit in row.get("retrieved", []))
               for row in run.retrieved())


def _purge_runs(ws: Workspace, corpus: str, doc_ids: set[str] | None) -> tuple[str, ...]:
    """Delete the saved runs that hold the corpus's (or these documents') text; returns their ids."""
    gone = [run for run in list_runs(ws) if _run_holds(run, corpus, doc_ids)]
    for run in gone:
        shutil.rmtree(run.path)
    return tuple(sorted(run.run_id for run in gone))


def _remove_corpus_files(ws: Workspace, entry: catalog.CorpusEntry) -> str:
    """Delete the corpus's own files: an uploaded corpus's file, an uploaded benchmark's dataset (and the benchmark
    folder once it has no dataset left). The bundled demo's are not the workspace's: they stay."""
    if entry.kind == "upload":
        ws.corpus_path(entry.name).unlink(missing_ok=True)
        return ""
    folder = entry.benchmark_dir
    if folder is None or entry.dataset is None or not folder.resolve().is_relative_to(ws.root.resolve()):
        return (f"Its documents stay in {folder} (they are not the workspace's), so it is still listed; its indexes, "
                "summaries, runs and reviews in this workspace are gone.")
    shutil.rmtree(folder / "corpus" / entry.dataset, ignore_errors=True)
    (folder / "benchmarks" / f"{entry.dataset}.json").unlink(missing_ok=True)
    if not catalog.benchmark_datasets(folder):
        shutil.rmtree(folder, ignore_errors=True)
        return f"Deleted benchmark {entry.benchmark!r} from the workspace (this was its last dataset)."
    return f"Deleted dataset {entry.dataset!r} of benchmark {entry.benchmark!r} from the workspace."
