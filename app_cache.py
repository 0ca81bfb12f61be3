"""Every Streamlit cache of the app, and the few UI helpers the pages share.

This is the only shared module that imports streamlit (``sac`` never does). ``st.cache_resource`` holds
the shared, never-mutated heavy objects: one embedding model per model name, one Chroma client per
store, one ``Workbench`` per configuration. ``st.cache_data`` holds corpora, search results and
listings; writes (building, editing, removing) call ``invalidate()`` so no page shows stale results.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from sac.config import SacConfig
from sac.embedding.models import make_embedder
from sac.evaluation.compare import dataset_scores, nearest_neighbours
from sac.evaluation.review import load_retrieved
from sac.evaluation.runs import load_intervals, load_metrics, load_per_query
from sac.evaluation.uncertainty import compare_to_reference
from sac.index.store import list_indexes, make_client
from sac.ingest import catalog
from sac.retrieval.methods import parse_method
from sac.types import Dataset, Document, Hit, Query, text_hash
from sac.workbench import Workbench
from sac.workspace import Workspace

SETTINGS_KEY = "sac_settings"  # session state: index settings shared by every page
EMBEDDER_CHOICES = ("minilm", "minilm-onnx", "minilm-onnx-int8")


# -- settings ------------------------------------------------------------------------------
def settings() -> dict[str, Any]:
    """The index settings of this session (chunk size, summary length, embedder), defaults from SAC_*."""
    if SETTINGS_KEY not in st.session_state:
        env = SacConfig.from_env()
        st.session_state[SETTINGS_KEY] = {
            "chunk_size": env.chunk_size, "chunk_overlap": env.chunk_overlap,
            "summary_chars": env.summary_chars, "embedder": env.embedder,
        }
    return dict(st.session_state[SETTINGS_KEY])


def set_settings(**values: Any) -> None:
    current = settings()
    current.update(values)
    st.session_state[SETTINGS_KEY] = current


def config() -> SacConfig:
    """The session's configuration. The API key comes only from the server's environment, never
    from a page: a key typed into the app goes straight to the summarizer it was typed for."""
    return SacConfig.from_env(**settings())


def _config_key(cfg: SacConfig) -> str:
    return json.dumps(cfg.public_dict(), sort_keys=True)


# -- shared resources ----------------------------------------------------------------------
@st.cache_resource(show_spinner="Loading the embedding model…")
def _load_embedder(_cfg: SacConfig, name: str, batch_size: int) -> Any:
    return make_embedder(_cfg)


class LazyEmbedder:
    """Loads the shared model on first use, so pages that only list things never load it."""

    def __init__(self, cfg: SacConfig, name: str) -> None:
        self._cfg = cfg
        self.name = name

    @property
    def model(self) -> Any:
        return _load_embedder(self._cfg, self._cfg.embedder, self._cfg.embed_batch_size)

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.model.embed_query(text)


@st.cache_resource(show_spinner=False)
def _client(_cfg: SacConfig, workspace: str, chroma_url: str | None) -> Any:
    return make_client(_cfg)


@st.cache_resource(show_spinner=False)
def _workbench(_cfg: SacConfig, key: str) -> Workbench:
    name = Workbench(_cfg).embedder_name  # known without loading the model
    return Workbench(
        _cfg, embedder=LazyEmbedder(_cfg, name), client=_client(_cfg, str(_cfg.workspace), _cfg.chroma_url),
    )


def workbench(cfg: SacConfig | None = None) -> Workbench:
    """The shared Workbench of a configuration (the session's by default)."""
    cfg = cfg or config()
    return _workbench(cfg, _config_key(cfg))


def workspace() -> Workspace:
    return Workspace(config().workspace)


# -- cached data ---------------------------------------------------------------------------
def _mtime(path: Path | None) -> float:
    try:
        return path.stat().st_mtime if path else 0.0
    except OSError:
        return 0.0


def corpora() -> list[catalog.CorpusEntry]:
    """Every corpus the app knows (a directory listing: cheap, never stale)."""
    return catalog.list_corpora(workspace())


@st.cache_data(show_spinner="Reading the corpus…", max_entries=16)
def _dataset(_entry: catalog.CorpusEntry, folder: str, name: str, stamp: float) -> Dataset:
    return catalog.load_dataset(_entry)


@st.cache_data(show_spinner="Reading the corpus…", max_entries=16)
def _uploaded(root: str, name: str, stamp: float) -> list[Document]:
    return Workspace(Path(root)).load_corpus(name)


def dataset(entry: catalog.CorpusEntry) -> Dataset:
    """Documents and queries of a corpus; an uploaded corpus comes back with no queries."""
    if entry.kind == "benchmark":
        stamp = _mtime(entry.benchmark_dir / "benchmarks" / f"{entry.dataset}.json") if entry.benchmark_dir else 0.0
        return _dataset(entry, str(entry.benchmark_dir), entry.name, stamp)
    ws = workspace()
    docs = _uploaded(str(ws.root), entry.name, _mtime(ws.corpus_path(entry.name)))
    return Dataset(entry.name, tuple(docs), ())


@st.cache_data(show_spinner=False, max_entries=8)
def _indexes(key: str, _wb: Workbench) -> list[dict[str, Any]]:
    return list_indexes(_wb.client)


def indexes(wb: Workbench) -> list[dict[str, Any]]:
    """Every index in the store: corpus, method, embedder, chunking and chunk count."""
    return _indexes(_config_key(wb.config), wb)


def built_methods(wb: Workbench, corpus: str) -> list[str]:
    """Methods with a non-empty index for ``corpus`` under the workbench's embedder and chunking."""
    names = [
        i["method"] for i in indexes(wb)
        if i.get("corpus") == corpus and i.get("embedder") == wb.embedder_name
        and i.get("chunking") == wb.config.chunking_key and i.get("chunks", 0) > 0
    ]
    order = {"baseline": 0, "sac-generic": 1, "sac-expert": 2}
    return sorted(set(names), key=lambda m: (order.get(m, 3), m))


@st.cache_data(show_spinner="Searching…", max_entries=256)
def _search(key: str, corpus: str, methods: tuple[str, ...], query: str, k: int, _wb: Workbench) -> dict[str, list[Hit]]:
    hits = _wb.search(corpus, [parse_method(m) for m in methods], [query], k)
    return {m: hits[m][0] for m in methods}


def search(wb: Workbench, corpus: str, methods: Sequence[str], query: str, k: int) -> dict[str, list[Hit]]:
    """Top-k hits of one query for every method; the query is embedded once for all of them."""
    return _search(_config_key(wb.config), corpus, tuple(methods), query.strip(), int(k), wb)


@st.cache_data(show_spinner="Running every question…", max_entries=32)
def _all_questions(key: str, corpus: str, methods: tuple[str, ...], k: int, stamp: str, _wb: Workbench,
                   _queries: tuple[Query, ...]) -> pd.DataFrame:
    hits = _wb.search(corpus, [parse_method(m) for m in methods], [q.text for q in _queries], k)
    return dataset_scores(_queries, hits)


def all_questions(wb: Workbench, corpus: str, methods: Sequence[str], k: int, queries: Sequence[Query]) -> pd.DataFrame:
    """Every benchmark question of a corpus at ``k``: precision, recall and DRM per method."""
    stamp = text_hash("\n".join(q.query_id + q.text for q in queries))
    return _all_questions(_config_key(wb.config), corpus, tuple(methods), int(k), stamp, wb, tuple(queries))


@st.cache_data(show_spinner=False, max_entries=64)
def _summaries(key: str, corpus: str, strategy: str, doc_hashes: tuple[tuple[str, str], ...],
               _wb: Workbench, _docs: tuple[Document, ...]) -> dict[str, Any]:
    return dict(_wb.summaries(list(_docs), strategy))


def summaries(wb: Workbench, corpus: str, documents: Sequence[Document], strategy: str) -> dict[str, Any]:
    """The current summary per document for ``strategy`` (hand edits win)."""
    hashes = tuple((d.doc_id, d.content_hash) for d in documents)
    return _summaries(_config_key(wb.config), corpus, strategy, hashes, wb, tuple(documents))


@st.cache_data(show_spinner="Embedding summaries…", max_entries=32)
def _lookalikes(key: str, ids: tuple[str, ...], texts: tuple[str, ...], _wb: Workbench) -> pd.DataFrame:
    return nearest_neighbours(ids, _wb.embedder.embed_documents(list(texts)))


def lookalikes(wb: Workbench, ids: Sequence[str], texts: Sequence[str]) -> pd.DataFrame:
    """Each summary's most similar other summary and their cosine similarity, with the workbench embedder."""
    return _lookalikes(wb.embedder_name, tuple(ids), tuple(texts), wb)


@st.cache_data(show_spinner=False, max_entries=32)
def _run_files(run_dir: str, stamp: float) -> tuple[pd.DataFrame, dict[str, Any]]:
    meta = json.loads((Path(run_dir) / "config.json").read_text(encoding="utf-8"))
    return load_metrics(Path(run_dir)), meta


def run_metrics(run_dir: Path) -> tuple[pd.DataFrame, dict[str, Any]]:
    """A saved run's metrics frame and its config.json (a saved run never changes)."""
    return _run_files(str(run_dir), _mtime(run_dir / "config.json"))


@st.cache_data(show_spinner="Bootstrapping intervals…", max_entries=8)
def _run_uncertainty(run_dir: str, stamp: float, reference: str | None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    intervals = load_intervals(Path(run_dir))
    if reference is None:
        return intervals, None
    return intervals, compare_to_reference(load_per_query(Path(run_dir)), reference)


def run_uncertainty(run_dir: Path, reference: str | None) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A saved run's 95 % bootstrap intervals and, with a reference method, every method's paired difference."""
    return _run_uncertainty(str(run_dir), _mtime(run_dir / "config.json"), reference)


@st.cache_data(show_spinner=False, max_entries=8)
def _run_retrieved(run_dir: str, stamp: float) -> list[dict[str, Any]]:
    return load_retrieved(Path(run_dir))


def run_retrieved(run_dir: Path) -> list[dict[str, Any]]:
    """A saved run's retrieved hits (``retrieved.jsonl``), read once."""
    return _run_retrieved(str(run_dir), _mtime(run_dir / "config.json"))


def invalidate() -> None:
    """Forget cached listings, summaries and search results after anything was written."""
    _indexes.clear()
    _search.clear()
    _all_questions.clear()
    _summaries.clear()


# -- UI helpers shared by pages ------------------------------------------------------------
FLASH_KEY = "sac_flash"


def flash(kind: str, text: str) -> None:
    """A message to show after the next rerun (``kind``: success, info, warning, error)."""
    st.session_state.setdefault(FLASH_KEY, []).append((kind, text))


def show_flashes() -> None:
    for kind, text in st.session_state.pop(FLASH_KEY, []):
        getattr(st, kind)(text)


class ProgressReporter:
    """A progress bar per stage with a time estimate from the rate measured so far.

    Call it as the ``progress(stage, done, total)`` callback of ``Workbench.build`` or ``evaluate``.
    """

    def __init__(self, container: Any, unit: str = "items") -> None:
        self._container = container
        self._bars: dict[str, Any] = {}
        self._started: dict[str, tuple[float, int]] = {}
        self.unit = unit
        self.log: list[str] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.perf_counter()
        if stage not in self._bars:
            self._bars[stage] = self._container.progress(0.0, text=f"{_stage_label(stage)}…")
            self._started[stage] = (now, done)
        t0, d0 = self._started[stage]
        fraction = min(done / total, 1.0) if total else 1.0
        text = f"{_stage_label(stage)}: {done:,} / {total:,}"
        elapsed = now - t0
        if done > d0 and elapsed > 0.2 and done < total:
            rate = (done - d0) / elapsed
            left = (total - done) / rate
            text += f" · {rate:,.0f} {self.unit}/s · about {_duration(left)} left"
        elif done >= total and total:
            text += f" · done in {_duration(elapsed)}"
            self.log.append(text)
        self._bars[stage].progress(fraction, text=text)


def _stage_label(stage: str) -> str:
    """Workbench stages read as the user's steps: "embedding sac-expert" embeds and writes the index."""
    return re.sub(r"\bembedding (\S+)", r"embedding and indexing \1", stage)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    return f"{seconds // 60:.0f} min {seconds % 60:02.0f} s"


def index_settings_caption(cfg: SacConfig) -> str:
    return (f"Index settings: chunks of {cfg.chunk_size} characters (overlap {cfg.chunk_overlap}), "
            f"summaries of about {cfg.summary_chars} characters, embedder {cfg.embedder}.")

def compare_link(corpus: str, query_text: str, page: str = "Compare") -> str:
    """A relative URL that opens one benchmark question on the Compare page: its corpus and question
    widgets are bound to these query parameters (the question by its text, as the page shows it).
    The widget keys belong to the pages, so the link is made here, not in the library."""
    return f"{page}?{urlencode({'cmp_corpus': corpus, 'cmp_query_pick': query_text})}"
