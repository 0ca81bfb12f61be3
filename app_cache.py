"""Every Streamlit cache of the app, and the few UI helpers the pages share.

This is the only shared module that imports streamlit (``sac`` never does). ``st.cache_resource`` holds
the shared, never-mutated heavy objects: one embedding model per model name, one Chroma client per
store, one ``Workbench`` per configuration. ``st.cache_data`` holds corpora, search results and
listings; writes (building, editing, removing) call ``invalidate()`` so no page shows stale results.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sac import audit, matters
from sac import jobs as sac_jobs
from sac.config import SacConfig
from sac.embedding.models import embedder_name, make_embedder, preload
from sac.errors import SacError
from sac.evaluation.compare import dataset_scores, nearest_neighbours
from sac.evaluation.mismatch import Mismatch, mismatch_tables
from sac.evaluation.review import ReviewStore, reviewed_dataset
from sac.evaluation.runs import RunFolder
from sac.evaluation.uncertainty import compare_to_reference, few_units_note
from sac.index import snapshot as index_snapshot
from sac.index.client import make_client
from sac.index.snapshot import IndexSnapshot
from sac.index.store import IndexInfo, list_indexes
from sac.ingest import catalog
from sac.progress import StageClock
from sac.retrieval.methods import method_label, parse_method
from sac.retrieval.options import Routing, explain
from sac.types import Dataset, Document, Hit, Query, text_hash
from sac.workbench import Workbench
from sac.workspace import Workspace

SETTINGS_KEY = "sac_settings"  # session state: index settings shared by every page
EMBEDDER_CHOICES = ("minilm", "minilm-onnx", "minilm-onnx-int8")


# -- settings ------------------------------------------------------------------------------
def settings() -> dict[str, Any]:
    """The index settings of this session (chunk size and chunking, summary length, embedder), defaults from SAC_*."""
    if SETTINGS_KEY not in st.session_state:
        env = SacConfig.from_env()
        st.session_state[SETTINGS_KEY] = {
            "chunk_size": env.chunk_size, "chunk_overlap": env.chunk_overlap, "chunking": env.chunking,
            "summary_chars": env.summary_chars, "embedder": env.embedder,
        }
    return dict(st.session_state[SETTINGS_KEY])


def set_settings(**values: Any) -> None:
    current = settings()
    current.update(values)
    st.session_state[SETTINGS_KEY] = current


def root_config() -> SacConfig:
    """The deployment's configuration (``SAC_*`` and this session's index settings), before any matter."""
    return SacConfig.from_env(**settings())


def config() -> SacConfig:
    """The session's configuration: its matter's workspace when matters are on (``open_matter`` checks the
    access file on every call). The API key comes only from the server's environment, never from a page: a
    key typed into the app goes straight to the summarizer it was typed for."""
    root = root_config()
    if root.access_file is None:
        return root
    return matters.open_matter(root, identity(), st.session_state.get(MATTER_KEY, ""))


def _config_key(cfg: SacConfig) -> str:
    return json.dumps(cfg.public_dict(), sort_keys=True)


# -- shared resources ----------------------------------------------------------------------
@st.cache_resource(show_spinner=False)  # the spinner is LazyEmbedder.model's: it also covers a load by a build
def _load_embedder(_cfg: SacConfig, key: str) -> Any:
    return make_embedder(_cfg)


def _embedder_key(cfg: SacConfig) -> str:
    """The settings that decide the loaded embedder (``embed*``, the server it may share with the LLM, the
    workspace that caches ONNX exports); keys appear only as whether they are set."""
    shared = ("llm_base_url", "openai_api_key_set", "workspace")
    return json.dumps({k: v for k, v in cfg.public_dict().items() if k.startswith("embed") or k in shared},
                      sort_keys=True)


class LazyEmbedder:
    """Loads the shared model on first use, so pages that only list things never load it."""

    def __init__(self, cfg: SacConfig, name: str) -> None:
        self._cfg = cfg
        self.name = name
        self.configured = cfg.embedder  # the model it loads, as configured: Workbench.use_shipped_vectors checks it
        self._model: Any = None
        self._loading = threading.Lock()

    @property
    def model(self) -> Any:
        """Kept once loaded: a background build embeds through it without touching Streamlit's caches. A page
        loads it through the shared cache; a build whose page was left before that loads it itself (no page to
        show a spinner on). A page shows the spinner whoever loads it: the build it just started may have taken
        the load first (its connection check wants the model), and the page waits for it."""
        if self._model is None:
            on_page = get_script_run_ctx(suppress_warning=True) is not None
            with st.spinner("Loading the embedding model…") if on_page else contextlib.nullcontext():
                with self._loading:  # one load: whoever comes second waits for it
                    if self._model is None:
                        self._model = (_load_embedder(self._cfg, _embedder_key(self._cfg)) if on_page
                                       else make_embedder(self._cfg))
        return self._model

    @property
    def dim(self) -> int:
        return int(self.model.dim)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        return self.model.embed_query(text)

    def check_connection(self) -> None:
        check = getattr(self.model, "check_connection", None)
        if check is not None:
            check()


@st.cache_resource(show_spinner=False)
def _client(_cfg: SacConfig, workspace: str, chroma_url: str | None) -> Any:
    return make_client(_cfg)


@st.cache_resource(show_spinner=False)
def _workbench(_cfg: SacConfig, key: str) -> Workbench:
    # Every matter shares the deployment's embedding model (and its ONNX export under the root workspace).
    shared = dataclasses.replace(_cfg, workspace=root_config().workspace, chroma_database=None)
    wb = Workbench(
        _cfg, embedder=LazyEmbedder(shared, embedder_name(_cfg.embedder)),
        client=_client(_cfg, str(_cfg.workspace), _cfg.chroma_url),
    )
    # The demo's vectors, where this model made them: loading the demo (or finishing it on Corpus) copies them. Read
    # by the first build, not here.
    wb.use_shipped_vectors(catalog.DEMO_DIR)
    return wb


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


def reviewed_questions(wb: Workbench, corpus: str, documents: Sequence[Document]) -> dict[str, Query]:
    """The questions with ground truth marked on Review for ``corpus``, by query id (``sac.evaluation.review.
    reviewed_dataset``); none, with a warning naming the span, where a marked span no longer holds its words."""
    spans = ReviewStore(wb.workspace.reviews_dir).gold(corpus=corpus)
    if not spans:
        return {}
    try:
        return {q.query_id: q for q in reviewed_dataset(corpus, documents, spans).queries}
    except SacError as err:
        st.warning(f"Reviewed ground truth not shown: {err}")
        return {}


@st.cache_data(show_spinner=False, max_entries=8)
def _indexes(key: str, _wb: Workbench) -> list[IndexInfo]:
    return list_indexes(_wb.client)


def indexes(wb: Workbench) -> list[IndexInfo]:
    """Every index in the store: corpus, method, embedder, chunking and chunk count."""
    return _indexes(_config_key(wb.config), wb)


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


def incomplete_notice(wb: Workbench, corpus: str) -> None:
    """While a build of ``corpus`` runs, a note that it is being built; otherwise a warning naming every incomplete
    index of ``corpus``: they are not searched until finished."""
    if jobs().building(corpus):
        st.info("This corpus is being built now (progress in the sidebar). Each index is searched as soon as it is "
                "complete.", icon=":material/hourglass_top:")
        return
    partial = incomplete_methods(wb, corpus)
    if partial:
        listed = ", ".join(f"{m} ({n:,} chunks so far)" for m, n in partial.items())
        st.warning(f"Incomplete index: {listed}. A build stopped part-way, so it is not searched. Finish it on "
                   "**Corpus** (Finish building); it continues where it stopped.", icon=":material/pending:")


@st.cache_data(show_spinner="Searching…", max_entries=256)
def _search(key: str, corpus: str, methods: tuple[str, ...], query: str, k: int, _wb: Workbench) -> dict[str, list[Hit]]:
    hits = _wb.search(corpus, [parse_method(m) for m in methods], [query], k)
    return {m: hits[m][0] for m in methods}


def search(wb: Workbench, corpus: str, methods: Sequence[str], query: str, k: int) -> dict[str, list[Hit]]:
    """Top-k hits of one query for every method; the query is embedded once for all of them."""
    return _search(_config_key(wb.config), corpus, tuple(methods), query.strip(), int(k), wb)


@st.cache_data(show_spinner=False, max_entries=256)
def _routing(key: str, corpus: str, method: str, query: str, _wb: Workbench) -> Routing | None:
    return explain(_wb, corpus, parse_method(method), query)


def routing(wb: Workbench, corpus: str, method: str, query: str) -> Routing | None:
    """How a ``+names`` / ``+docs<N>`` method read the question (the documents it chose and why); None for others."""
    return _routing(_config_key(wb.config), corpus, method, query.strip(), wb)


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
    run = RunFolder(Path(path))
    if reference is None:
        return run.intervals(resample), None
    return run.intervals(resample), compare_to_reference(run.per_query(), reference, resample=resample)


def run_uncertainty(
    run: RunFolder, reference: str | None, resample: str = "question",
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A saved run's 95 % bootstrap intervals and, with a reference method, every method's paired difference;
    ``resample``: "question" or "document" (sac.evaluation.uncertainty)."""
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
    """Where a saved run's wrong-document hits go, whose questions they come from, and the pairs between
    (sac.evaluation.mismatch)."""
    return _run_mismatch(str(run.path), run.stamp, dataset, method, k)


def snapshot(wb: Workbench, corpus: str, method: str) -> IndexSnapshot:
    """Every record of one index in memory (for look-alike risk and the embedding map), read once per
    index version and shared by every session (``sac.index.snapshot`` caches it per store client)."""
    return index_snapshot.snapshot(wb.client, wb.index(corpus, parse_method(method)))


# -- background builds ---------------------------------------------------------------------
MY_JOBS_KEY = "sac_my_jobs"  # session state: ids of the jobs this session started
JOB_GENERATION_KEY = "sac_job_generation"  # session state: (job id, generation) this session last showed


def jobs() -> sac_jobs.JobBoard:
    """The background builds of this workspace (shared by every session of the server)."""
    return sac_jobs.board(config().workspace)


def start_build(wb: Workbench, label: str, steps: Sequence[sac_jobs.BuildStep], note: str = "",
                notices: Sequence[tuple[str, str]] = ()) -> sac_jobs.BuildJob:
    """Start a background build; every page's sidebar shows its progress, and it keeps running when the page is
    left. Raises SacError while another build of this workspace runs.

    ``notices`` ((kind, text): files of the upload not read, a benchmark saved) go with the job, so they stay on
    show while it runs and with how it ended, not for one rerun.

    The job starts before anything shows on the page: a user who leaves at once (the model can take seconds to
    load) stops this script run at its next element, and a build not yet started would be lost without a word.
    The model then loads here, under its spinner, or in the job if the page was left (one load: the cache locks)."""
    job = jobs().start(sac_jobs.BuildJob(wb, label, steps, on_change=invalidate, note=note,
                                           notices=tuple(notices)))
    st.session_state.setdefault(MY_JOBS_KEY, []).append(job.job_id)
    st.session_state[JOB_GENERATION_KEY] = None
    _ = wb.embedder.dim
    return job


def _job_panel() -> None:
    """The sidebar's build panel: the running build (whoever started it) and the builds queued behind it, then how
    this session's last build ended. While a build runs it refreshes every second, and reruns the page each time
    an index is completed, a build starts or one ends."""
    board = jobs()
    running = board.running()
    mine = st.session_state.get(MY_JOBS_KEY, [])
    my_last = board.find(mine[-1]) if mine else None
    if running is not None:
        status = running.status()
        with st.container(border=True, key="sac_job_panel"):
            st.progress(status.fraction, text=status.overall)
            st.caption(status.stage)
            for queued in board.queued():
                st.caption(f"Queued next: {queued.label}" + (" (yours)" if queued.job_id in mine else "")
                           + ". It starts when the build above ends.")
            st.caption("Runs in the background: other pages can be used meanwhile.")
    if my_last is not None and not my_last.status().active:
        with st.container(border=True, key="sac_job_done"):
            for kind, text in my_last.status().messages:
                getattr(st, kind)(text)
    seen = st.session_state.get(JOB_GENERATION_KEY)
    now = board.signature()
    st.session_state[JOB_GENERATION_KEY] = now
    ctx = get_script_run_ctx()
    if seen is not None and seen != now and ctx is not None and ctx.fragment_ids_this_run:
        # An index was completed, or a build started or ended: show it on the page. Only from the panel's own
        # timed run: a whole page's run draws the page afresh anyway, and a rerun there would drop the click
        # that started it (someone else's build starting in the moment before it).
        st.rerun(scope="app")


def job_panel() -> None:
    try:
        running = jobs().running() is not None
    except SacError:
        return  # bad settings: the page itself says what is wrong
    st.fragment(_job_panel, run_every=1.0 if running else None)()


def invalidate() -> None:
    """Forget cached listings, summaries and search results after anything was written."""
    _indexes.clear()
    _search.clear()
    _routing.clear()
    _all_questions.clear()
    _summaries.clear()


# -- UI helpers shared by pages ------------------------------------------------------------
def labelled(frame: pd.DataFrame, column: str = "method") -> pd.DataFrame:
    """``frame`` for display, its methods named as every list names them ("recommended (…)", "(reads file names)");
    runs and downloads keep the names a method resolved to."""
    return frame.assign(**{column: frame[column].map(method_label)})


PAGES = (
    ("app.py", "Home", ":material/home:"),
    ("pages/1_Corpus.py", "Corpus", ":material/upload_file:"),
    ("pages/2_Summaries.py", "Summaries", ":material/edit_note:"),
    ("pages/3_Compare.py", "Compare", ":material/compare:"),
    ("pages/4_Evaluate.py", "Evaluate", ":material/monitoring:"),
    ("pages/5_Review.py", "Review", ":material/rate_review:"),
    ("pages/6_Embedding_map.py", "Embedding map", ":material/scatter_plot:"),
    ("pages/7_Audit_trail.py", "Audit trail", ":material/history:"),
)
GLOSSARY = """
**DRM** (document-level retrieval mismatch): the share of retrieved chunks that come from a document other
than the question's. Lower is better.

**k**: how many chunks a method retrieves for a question (its top k). Figures are given at k = 1 … 64 and as
their mean over k.

**SAC** (summary-augmented chunking): one short summary per document is put in front of each of its chunks
before embedding; the chunk still points at its exact characters in the original text.
**baseline**: no summary. **sac-generic**: a generic summary. **sac-expert**: an expert-guided summary
(document type, then a legal template). **-llm**: the summaries come from a language model.

**precision / recall**: the share of retrieved characters that lie inside the answer / the share of the
answer's characters that were retrieved. "—": not measurable (no known answer).

**score** (on a hit): the cosine similarity of the chunk's embedded text to the question; under `+hybrid<w>`
(`recommended` among them) the fused score `w × cosine + (1 − w) × BM25`, each scaled to 0…1 over the candidates,
so it ranks hits within one column and is not comparable across columns.

**chunking**: *merged* (default) splits like the paper, then joins pieces with fewer than 25 non-space
characters to a neighbour; *paper* is the paper's splitter exactly. Index key `c500o0m25` = chunks of 500
characters, overlap 0, merged at 25 (`c500o0`: the paper's splitter).

**silhouette**: how clearly a method's chunk embeddings fall into one cluster per document, from −1 to 1;
higher means documents sit further apart (fewer wrong-document hits).

**wrong-document neighbours**: the share of a chunk's 8 nearest chunks that belong to another document.
"""


def page_setup(title: str | None, icon: str) -> None:
    """Every page's first call: the browser tab, the sign-in and matter gates, the embedding model's libraries
    importing in the background (``sac.embedding.models.preload``), the sidebar navigation (Home, not the file
    name) and the glossary."""
    st.set_page_config(page_title=f"{title} · SAC Workbench" if title else "SAC Workbench", page_icon=icon,
                       layout="wide")
    sign_in_gate()
    matter_gate()
    try:
        preload(root_config().embedder)  # the model's libraries import while the user reads the page (once a process)
    except SacError:
        pass  # a bad setting: the page's own config() call shows it where the page can say what to fix
    with st.sidebar:
        for path, label, nav_icon in PAGES:
            st.page_link(path, label=label, icon=nav_icon, query_params=_matter_param())
        with st.expander("Glossary", icon=":material/help:"):
            st.markdown(GLOSSARY)
        job_panel()
        signed_in_panel()


# -- matters and the audit trail -----------------------------------------------------------
MATTER_KEY = "sac_matter"  # session state: the matter this session works in (checked by open_matter)
AUDIT_NOTE = "Logged in the audit trail."


def matter_gate() -> None:
    """With matters on: the sidebar's matter choice, or a refusal and ``st.stop()``.

    A ``?matter=`` in the URL (a shared link, or a crafted one) is opened through ``open_matter``, which
    refuses and logs a matter the signed-in identity may not open; the session keeps its own matter then.
    """
    audit.set_actor(identity())
    try:
        root = root_config()
    except SacError:
        return  # bad settings: the page says what is wrong, and opens nothing
    if root.access_file is None:
        return
    who = identity()
    if who is None:
        st.error("This deployment keeps matters apart (SAC_ACCESS_FILE is set), so it needs sign-in: configure "
                 "an [auth] section in .streamlit/secrets.toml (README, \"Deploying for a team\").")
        st.stop()
    try:
        mine = matters.Access.load(root.access_file).matters_of(who)
        asked = st.query_params.get("matter")
        if asked and asked != st.session_state.get(MATTER_KEY):
            matters.open_matter(root, who, asked)
            st.session_state[MATTER_KEY] = asked
    except SacError as err:
        st.text(str(err))  # as text: it quotes the identity and the URL's matter, neither rendered as markdown
        st.error("This matter cannot be opened.", icon=":material/block:")
        st.stop()
    if not mine:
        st.text(f"{who} has no matters in the access file.")
        st.error("Ask whoever keeps the access file to add one.", icon=":material/block:")
        st.stop()
    if st.session_state.get(MATTER_KEY) not in mine:
        st.session_state[MATTER_KEY] = mine[0]
    with st.sidebar:
        st.selectbox("Matter", mine, index=mine.index(st.session_state[MATTER_KEY]), key="sac_matter_pick",
                     on_change=_pick_matter,
                     help="Each matter is a workspace of its own: its corpora, indexes, runs, reviews and audit log.")
    st.query_params["matter"] = st.session_state[MATTER_KEY]


def _pick_matter() -> None:
    """The sidebar's choice: the session and the URL both name it (the URL's old value would win otherwise)."""
    st.session_state[MATTER_KEY] = st.session_state["sac_matter_pick"]
    st.query_params["matter"] = st.session_state[MATTER_KEY]


def current_matter() -> str | None:
    try:
        on = root_config().access_file is not None
    except SacError:
        return None
    return st.session_state.get(MATTER_KEY) if on else None


def _matter_param() -> dict[str, str] | None:
    matter = current_matter()
    return {"matter": matter} if matter else None


def remove_matter(matter: str) -> dict[str, Any]:
    """Delete the whole matter (``sac.matters.remove_matter`` checks the identity may open it), then forget every
    cached store client and listing so no session reads the deleted folder."""
    done = matters.remove_matter(root_config(), identity(), matter)
    store_reopened()
    st.session_state.pop(MATTER_KEY, None)
    return done


def store_reopened() -> None:
    """After a removal closed an embedded store (``Workbench.close_store``): drop every cached client and workbench,
    which may hold the stopped one, and every cached listing."""
    _client.clear()
    _workbench.clear()
    invalidate()


def record_export(what: str, **details: Any) -> None:
    """``on_click`` of a download button: the export goes into the matter's audit trail."""
    try:
        audit.set_actor(identity())
        workbench().audit.record("export", what, **details)
    except SacError:
        pass  # the page already shows why the workspace cannot be opened


@contextlib.contextmanager
def stop_on_error() -> Iterator[None]:
    """A page's steps that can fail on the user's input or data: a SacError inside shows as the page's error message
    (what went wrong and what to do, never a traceback) and the page stops there."""
    try:
        yield
    except SacError as err:
        st.error(str(err))
        st.stop()


FLASH_KEY = "sac_flash"


def flash(kind: str, text: str) -> None:
    """A message to show after the next rerun (``kind``: success, info, warning, error)."""
    st.session_state.setdefault(FLASH_KEY, []).append((kind, text))


def show_flashes() -> None:
    for kind, text in st.session_state.pop(FLASH_KEY, []):
        getattr(st, kind)(text)


class ProgressReporter:
    """A Streamlit progress bar per stage, its text from ``sac.progress.StageClock`` (rate, time left).

    Call it as the ``progress(stage, done, total)`` callback of ``Workbench.build`` or ``evaluate``.
    """

    def __init__(self, container: Any, unit: str = "items") -> None:
        self._container = container
        self._bars: dict[str, Any] = {}
        self._clock = StageClock(unit)
        self.log: list[str] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        if stage not in self._bars:
            self._bars[stage] = self._container.progress(0.0, text=f"{stage}…")
        status = self._clock.update(stage, done, total)
        if status.finished:
            self.log.append(status.text)
        self._bars[stage].progress(status.fraction, text=status.text)


CHUNKING_LABELS = {"merged": "merged (default)", "paper": "paper's splitter"}
CHUNKING_HELP = ("merged: the paper's splitter, then pieces with fewer than 25 non-space characters join a neighbour, "
                 "so no hit is blank. paper's splitter: exactly the paper's chunks, whitespace pieces kept, to reproduce "
                 "its tables. Indexes are kept per chunking: switching builds (or uses) the other set of indexes.")


def chunking_select(key: str) -> None:
    """The chunking setting (shared by every page of this session): merged by default, paper one switch away."""
    current = settings()["chunking"]
    choice = st.selectbox("Chunking", list(CHUNKING_LABELS), index=list(CHUNKING_LABELS).index(current), key=key,
                          format_func=CHUNKING_LABELS.get, help=CHUNKING_HELP)
    if choice != current:
        set_settings(chunking=choice)


# The session's corpus: the one last chosen or built on any page. Every page keeps its own picker (and its URL
# binding, on Compare); a picker moves to the session's corpus when that changed since the picker last showed,
# so a corpus just uploaded on Corpus is the one Summaries, Compare and the map open on.
_CURRENT_CORPUS = "current_corpus"


def set_current_corpus(name: str) -> None:
    st.session_state[_CURRENT_CORPUS] = name


def corpus_picker(names: Sequence[str], key: str, where: Any = None, **kwargs: Any) -> str:
    """A "Corpus" select box over ``names`` that follows the session's corpus; what is picked becomes it."""
    current = st.session_state.get(_CURRENT_CORPUS)
    seen = f"{key}__corpus_seen"
    if current in names and st.session_state.get(seen) != current:
        st.session_state[key] = current
    chosen = (where or st).selectbox("Corpus", list(names), key=key, **kwargs)
    st.session_state[_CURRENT_CORPUS] = st.session_state[seen] = chosen
    return str(chosen)


def index_settings_caption(cfg: SacConfig) -> str:
    overlap = f", overlap {cfg.chunk_overlap}" if cfg.chunk_overlap else ""
    return (f"Index settings: chunks of {cfg.chunk_size} characters{overlap}, {cfg.chunking} chunking "
            f"(index key `{cfg.chunking_key}`), summaries of about {cfg.summary_chars} characters, "
            f"embedder {cfg.embedder}.")


def compare_link(corpus: str, query_text: str, page: str = "Compare") -> str:
    """A relative URL that opens one benchmark question on the Compare page: its corpus and question
    widgets are bound to these query parameters (the question by its text, as the page shows it).
    The widget keys belong to the pages, so the link is made here, not in the library."""
    return f"{page}?{urlencode({'cmp_corpus': corpus, 'cmp_query_pick': query_text, **(_matter_param() or {})})}"


# -- sign-in (Streamlit's OIDC: st.login / st.user) ------------------------------------------
# On with an [auth] section in .streamlit/secrets.toml (README: Deploying for a team); without one the app is
# open, as on 127.0.0.1. Only the default provider is used: st.login() with no name.
AUTH_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")  # in [auth] itself or in [auth.default]


def _auth_section() -> dict[str, Any] | None:
    """The ``[auth]`` section of the secrets, or None when there is none (or no secrets file at all)."""
    try:
        section = st.secrets.get("auth")
    except FileNotFoundError:  # no secrets file (StreamlitSecretNotFoundError), or one that does not parse
        return None
    return dict(section) if section is not None else None


def _missing_auth_keys(section: dict[str, Any]) -> list[str]:
    provider = section["default"] if isinstance(section.get("default"), Mapping) else section
    return [key for key in AUTH_KEYS if not section.get(key)] + [key for key in PROVIDER_KEYS if not provider.get(key)]


def sign_in_configured() -> bool:
    """Whether sign-in is on: ``[auth]`` holds every key Streamlit's default provider needs."""
    section = _auth_section()
    return section is not None and not _missing_auth_keys(section)


def identity() -> str | None:
    """The signed-in user (the provider's email, lower-cased; its ``sub`` when it gives no email), or None when
    sign-in is off or nobody is signed in (``page_setup`` stops every page before that)."""
    if not sign_in_configured() or not st.user.get("is_logged_in"):
        return None
    for claim in ("email", "sub"):
        value = st.user.get(claim)
        if isinstance(value, str) and value.strip():
            return value.strip().lower() if claim == "email" else value.strip()
    return None


def sign_in_gate() -> None:
    """With sign-in on and nobody signed in: a short explanation and the Sign in button, and nothing else of the app.
    An ``[auth]`` section that lacks keys stops every page too: a broken sign-in never leaves the app open."""
    section = _auth_section()
    if section is None:
        return
    missing = _missing_auth_keys(section)
    if missing:
        st.error(f"Sign-in is half configured: the [auth] section of .streamlit/secrets.toml lacks {', '.join(missing)}. "
                 "Add them (README: Deploying for a team), or remove the section to run without sign-in.")
        st.stop()
    if identity() is None:
        st.title("SAC Workbench")
        st.markdown("This workbench is shared by a team: sign in to see its corpora, runs and reviews. "
                    "Labels and ground truth you save carry the identity you sign in with.")
        if st.button("Sign in", type="primary", icon=":material/login:", key="sac_sign_in"):
            st.login()
        st.stop()


def signed_in_panel() -> None:
    """The sidebar's line saying who is signed in, with the Sign out button (nothing when sign-in is off)."""
    who = identity()
    if who is None:
        return
    st.text(f"Signed in as {who}")  # as text: a provider's claim is never rendered as markdown or HTML
    if st.button("Sign out", icon=":material/logout:", key="sac_sign_out"):
        st.logout()
