"""Every cached read and search of the app (``st.cache_data``: each hit returns a copy).

Corpora, listings, search results, summaries and saved runs. A saved run never changes, so its files are cached by
path and stamp; everything else a write can change is dropped by ``invalidate()``, which every write from a page calls
(editing, removing, starting a build), so no page shows stale results. A background build drops nothing: it bumps the
stamps in the keys of the listing (``listing_changed``) and of one corpus's searches (``index_completed``), so other
corpora's answers stay cached while it runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import streamlit as st

from sac.errors import SacError
from sac.methods import parse_method
from sac.types import Dataset, Document, Hit, Query, text_hash
from sac.usecases import corpus as corpus_cases
from sac.usecases import diagnostics, review
from sac.usecases import evaluate as evaluation
from sac.usecases import summaries as summary_cases
from sac.usecases import survey as survey_cases
from sac.usecases.compare import SearchResult, score_questions, search_question
from sac.usecases.corpus import CorpusEntry, IndexInfo
from sac.usecases.diagnostics import IndexSnapshot
from sac.usecases.evaluate import Mismatch, RunFolder, few_units_note, mismatch_tables
from sac.usecases.names import DisplayName
from sac.usecases.names import display_names as names_of
from sac.usecases.survey import SurveyTable
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace
from webapp.settings import config_key, forget_clients, workspace


def _mtime(path: Path | None) -> float:
    try:
        return path.stat().st_mtime if path else 0.0
    except OSError:
        return 0.0


def corpora() -> list[CorpusEntry]:
    """Every corpus the app knows (a directory listing: cheap, never stale)."""
    return corpus_cases.list_corpora(workspace())


@st.cache_data(show_spinner="Reading the corpus…", max_entries=16)
def _dataset(_entry: CorpusEntry, folder: str, name: str, stamp: float) -> Dataset:
    return corpus_cases.load_dataset(_entry)


@st.cache_data(show_spinner="Reading the corpus…", max_entries=16)
def _uploaded(root: str, name: str, stamp: float) -> list[Document]:
    return Workspace(Path(root)).load_corpus(name)


def dataset(entry: CorpusEntry) -> Dataset:
    """Documents and queries of a corpus; an uploaded corpus comes back with no queries."""
    if entry.kind == "benchmark":
        stamp = _mtime(entry.benchmark_dir / "benchmarks" / f"{entry.dataset}.json") if entry.benchmark_dir else 0.0
        return _dataset(entry, str(entry.benchmark_dir), entry.name, stamp)
    ws = workspace()
    docs = _uploaded(str(ws.root), entry.name, _mtime(ws.corpus_path(entry.name)))
    return Dataset(entry.name, tuple(docs), ())


def reviewed_questions(wb: Workbench, corpus: str, documents: Sequence[Document]) -> dict[str, Query]:
    """The questions with ground truth marked on Review for ``corpus``, by query id.

    None, with a warning naming the span, where a marked span no longer holds its words.
    """
    try:
        return review.reviewed_questions(wb, corpus, documents)
    except SacError as err:
        st.warning(f"Reviewed ground truth not shown: {err}")
        return {}


# What a background build changed, as stamps in the cache keys (shared by every session of the server): the listing's
# when an index appears or is completed, a corpus's when one of its indexes is completed. A build's progress clears no
# cache, and an index completed in one corpus leaves every other corpus's cached answers as they are.
_listing_stamp = [0]
_corpus_stamps: dict[str, int] = {}


def listing_changed() -> None:
    """An index appeared or was completed, or a build started or ended: the index listing is read again."""
    _listing_stamp[0] += 1


def index_completed(corpus: str, index: str = "") -> None:
    """An index of ``corpus`` was completed: its listing, and that corpus's searches, are read again."""
    _corpus_stamps[corpus] = _corpus_stamps.get(corpus, 0) + 1
    _listing_stamp[0] += 1


@st.cache_data(show_spinner=False, max_entries=8)
def _indexes(key: str, stamp: int, _wb: Workbench) -> list[IndexInfo]:
    return corpus_cases.list_indexes(_wb)


def indexes(wb: Workbench) -> list[IndexInfo]:
    """Every index in the store: corpus, method, embedder, chunking and chunk count."""
    return _indexes(config_key(wb.config), _listing_stamp[0], wb)


def _corpus_indexes(wb: Workbench, corpus: str) -> list[IndexInfo]:
    """The indexes of ``corpus`` under the workbench's embedder and chunking, paper methods first."""
    order = {"baseline": 0, "sac-generic": 1, "sac-expert": 2}
    found = [i for i in indexes(wb)
             if i.corpus == corpus and i.embedder == wb.embedder_name and i.chunking == wb.config.chunking_key]
    return sorted(found, key=lambda i: (order.get(i.method, 3), i.method))


def built_methods(wb: Workbench, corpus: str) -> list[str]:
    """Methods whose index of ``corpus`` is complete (its last build ran to the end) and not empty."""
    return [i.method for i in _corpus_indexes(wb, corpus) if i.complete and i.chunks > 0]


def incomplete_methods(wb: Workbench, corpus: str) -> dict[str, int]:
    """Methods whose index of ``corpus`` a build left part-way, with the chunks it holds so far."""
    return {i.method: i.chunks for i in _corpus_indexes(wb, corpus) if not i.complete}


@st.cache_data(show_spinner="Searching…", max_entries=256)
def _search(key: str, corpus: str, methods: tuple[str, ...], query: str, k: int, within: tuple[str, ...], stamp: int,
            _wb: Workbench) -> dict[str, SearchResult]:
    return search_question(_wb, corpus, [parse_method(m) for m in methods], query, k, within=within)


def search_traced(wb: Workbench, corpus: str, methods: Sequence[str], query: str, k: int,
                  within: tuple[str, ...] = ()) -> dict[str, SearchResult]:
    """Top-k hits of one query for every method, each with the trace of its search; embedded once for all.

    ``within``: the documents the user pinned; every method then searches inside them alone."""
    return _search(config_key(wb.config), corpus, tuple(methods), query.strip(), int(k), tuple(within),
                   _corpus_stamps.get(corpus, 0), wb)


def search(wb: Workbench, corpus: str, methods: Sequence[str], query: str, k: int) -> dict[str, list[Hit]]:
    """Top-k hits of one query for every method; the query is embedded once for all of them."""
    return {m: list(r.hits) for m, r in search_traced(wb, corpus, methods, query, k).items()}


@st.cache_data(show_spinner="Running every question…", max_entries=32)
def _all_questions(key: str, corpus: str, methods: tuple[str, ...], k: int, stamp: str, _wb: Workbench,
                   _queries: tuple[Query, ...]) -> pd.DataFrame:
    return score_questions(_wb, corpus, [parse_method(m) for m in methods], k, _queries)


def all_questions(wb: Workbench, corpus: str, methods: Sequence[str], k: int, queries: Sequence[Query]) -> pd.DataFrame:
    """Every benchmark question of a corpus at ``k``: precision, recall and DRM per method."""
    stamp = text_hash("\n".join(q.query_id + q.text for q in queries)) + f":{_corpus_stamps.get(corpus, 0)}"
    return _all_questions(config_key(wb.config), corpus, tuple(methods), int(k), stamp, wb, tuple(queries))


@st.cache_data(show_spinner=False, max_entries=64)
def _summaries(key: str, corpus: str, strategy: str, doc_hashes: tuple[tuple[str, str], ...],
               _wb: Workbench, _docs: tuple[Document, ...]) -> dict[str, Any]:
    return dict(_wb.summaries(list(_docs), strategy))


def summaries(wb: Workbench, corpus: str, documents: Sequence[Document], strategy: str) -> dict[str, Any]:
    """The current summary per document for ``strategy`` (hand edits win)."""
    hashes = tuple((d.doc_id, d.content_hash) for d in documents)
    return _summaries(config_key(wb.config), corpus, strategy, hashes, wb, tuple(documents))


@st.cache_data(show_spinner="Embedding summaries…", max_entries=32)
def _lookalikes(key: str, ids: tuple[str, ...], texts: tuple[str, ...], _wb: Workbench) -> pd.DataFrame:
    return summary_cases.lookalikes(_wb, ids, texts)


def lookalikes(wb: Workbench, ids: Sequence[str], texts: Sequence[str]) -> pd.DataFrame:
    """Each summary's most similar other summary and their cosine similarity, with the workbench embedder."""
    getattr(wb.embedder, "model", None)  # the model loads first, under its own spinner, not drawn over the call's
    return _lookalikes(wb.embedder_name, tuple(ids), tuple(texts), wb)


@st.cache_data(show_spinner=False, max_entries=32)
def _run_files(path: str, stamp: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    run = RunFolder(Path(path))
    return run.metrics(), run.meta


def run_metrics(run: RunFolder) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A saved run's metrics frame and its config.json (a saved run never changes)."""
    return _run_files(str(run.path), run.stamp)


@st.cache_data(show_spinner="Bootstrapping intervals…", max_entries=8)
def _run_uncertainty(
    path: str, stamp: float, reference: str | None, resample: str,
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    return evaluation.run_uncertainty(RunFolder(Path(path)), reference, resample)


def run_uncertainty(
    run: RunFolder, reference: str | None, resample: str = "question",
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A saved run's 95 % bootstrap intervals and, with a reference method, every method's paired difference.

    ``resample``: "question" or "document".
    """
    return _run_uncertainty(str(run.path), run.stamp, reference, resample)


@st.cache_data(show_spinner=False, max_entries=8)
def _run_few_units(path: str, stamp: float, resample: str) -> str | None:
    return few_units_note(RunFolder(Path(path)).per_query(), resample)


def run_few_units(run: RunFolder, resample: str) -> str | None:
    """``few_units_note`` of a saved run: which datasets give its bootstrap too few questions (documents)."""
    return _run_few_units(str(run.path), run.stamp, resample)


@st.cache_data(show_spinner=False, max_entries=8)
def _run_retrieved(path: str, stamp: float) -> list[dict[str, Any]]:
    return RunFolder(Path(path)).retrieved()


def run_retrieved(run: RunFolder) -> list[dict[str, Any]]:
    """A saved run's retrieved hits (``retrieved.jsonl``), read once."""
    return _run_retrieved(str(run.path), run.stamp)


@st.cache_data(show_spinner=False, max_entries=8)
def _run_questions(path: str, stamp: float, dataset: str) -> list[Query] | None:
    return RunFolder(Path(path)).questions(dataset)


def run_questions(run: RunFolder, dataset: str) -> list[Query] | None:
    """A saved run's questions of ``dataset`` with the ground truth it was scored against (``RunFolder.questions``)."""
    return _run_questions(str(run.path), run.stamp, dataset)


@st.cache_data(show_spinner=False, max_entries=16)
def _run_mismatch(path: str, stamp: float, dataset: str, method: str, k: int) -> Mismatch:
    return mismatch_tables(RunFolder(Path(path)), dataset, method, k)


def run_mismatch(run: RunFolder, dataset: str, method: str, k: int) -> Mismatch:
    """Where a saved run's wrong-document hits go, whose questions they come from, and the pairs between."""
    return _run_mismatch(str(run.path), run.stamp, dataset, method, k)


def snapshot(wb: Workbench, corpus: str, method: str) -> IndexSnapshot:
    """Every record of one index in memory, read once per index version and shared by every session.

    The use case caches it per store client, not Streamlit.
    """
    return diagnostics.snapshot(wb, corpus, method)


@st.cache_data(show_spinner=False, max_entries=32, hash_funcs={Document: lambda d: (d.doc_id, d.content_hash)})
def display_names(documents: Sequence[Document]) -> dict[str, DisplayName]:
    """Every document's name by its parties, type and year, with its file title; once per set of document versions."""
    return names_of(documents)


_written = [0]  # bumped by every write (``invalidate``): a session's kept survey is then run again


def survey(wb: Workbench, corpus: str, methods: Sequence[str], question: str, documents: Sequence[Document], *,
           per_document: int, answers: bool = False, progress: Any = None, slot: str = "survey") -> SurveyTable:
    """``sac.usecases.survey.survey``, kept in the session's ``slot`` for the same inputs until anything is written."""
    key = (config_key(wb.config), corpus, tuple(methods), question.strip(), tuple(d.doc_id for d in documents),
           per_document, answers, _written[0])
    kept = st.session_state.get(f"_kept_{slot}")
    if kept is not None and kept[0] == key:
        return kept[1]  # type: ignore[no-any-return]
    table = survey_cases.survey(wb, corpus, [parse_method(m) for m in methods], question, documents=documents,
                                per_document=per_document, progress=progress, answers=answers)
    st.session_state[f"_kept_{slot}"] = (key, table)
    return table


def invalidate() -> None:
    """Forget cached listings, summaries and search results after anything was written."""
    _written[0] += 1
    _indexes.clear()
    _search.clear()
    _all_questions.clear()
    _summaries.clear()


def store_reopened() -> None:
    """Forget every cached client, workbench and listing after a removal closed an embedded store.

    The cached clients and workbenches may hold the store ``Workbench.close_store`` stopped.
    """
    forget_clients()
    invalidate()

