"""Shared fixtures: a temporary workspace per test, the real packaged model once per session (and ``memo``,
the same model remembering each text's vector for the session), the demo's ContractNLI dataset loaded once
through the home page into a session workspace (``demo_workspace``; tests that write copy it), and a real
Chroma server (the one CI started, named by SAC_TEST_CHROMA_URL, or one started here)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from tests.waiting import wait_until

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
APP = str(ROOT / "app.py")
CLEAN_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SAC_CHROMA_URL", "SAC_LLM_BASE_URL", "SAC_EMBEDDER")

# Markers that only run when asked for on the command line (pytest.ini describes every marker), and those that
# always mean "not in the few-minute tier" as well.
OPT_IN = {"large": "--large", "external": "--external"}
ALSO_SLOW = ("large", "external", "browser")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("sac tiers")
    group.addoption("--large", action="store_true", default=False,
                    help="also run the tests marked large (pools of hundreds of documents, full-size benchmarks)")
    group.addoption("--external", action="store_true", default=False,
                    help="also run the tests marked external (they need a network service no CI has)")


@pytest.hookimpl(tryfirst=True)  # before -m: a large, external or browser test is slow too
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if any(item.get_closest_marker(name) for name in ALSO_SLOW) and not item.get_closest_marker("slow"):
            item.add_marker(pytest.mark.slow)
    wanted = {name for name, flag in OPT_IN.items() if config.getoption(flag.removeprefix("--"))}
    kept, deselected = [], []
    for item in items:
        opt_in = {name for name in OPT_IN if item.get_closest_marker(name)}
        (deselected if opt_in - wanted else kept).append(item)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture(autouse=True)
def env_setup(monkeypatch, tmp_path):
    """Every test gets its own workspace and no real credentials or servers from the environment."""
    monkeypatch.setenv("SAC_WORKSPACE", str(tmp_path / "workspace"))
    for name in CLEAN_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def embedder():
    """The real packaged all-MiniLM-L6-v2, loaded once."""
    from sac.embedding.models import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


class MemoEmbedder:
    """The real model; a text embedded once is not embedded again. Every vector is the real model's,
    computed the first time some test embeds that exact text (a race between threads only computes the
    same vector twice). Anything else the model exposes (``dim``, ``max_tokens``, ``batch_size``, ...)
    is the model's own."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.cache: dict[str, np.ndarray] = {}
        self._lock = threading.Lock()

    def __getattr__(self, attr: str):
        if attr == "inner":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def embed_documents(self, texts):
        texts = list(texts)
        with self._lock:
            todo = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if todo:
            vectors = self.inner.embed_documents(todo)
            with self._lock:
                self.cache.update(zip(todo, vectors))
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            return np.stack([self.cache[t] for t in texts])  # a new array: callers may change it freely

    def embed_query(self, text):
        return self.embed_documents([text])[0]


@pytest.fixture(scope="session")
def memo(embedder) -> MemoEmbedder:
    """The real packaged model, each distinct text embedded once per session."""
    return MemoEmbedder(embedder)


def _memo_factory(memo: MemoEmbedder):
    """``make_embedder`` that gives the session's memo for the packaged model, the real factory otherwise."""
    from sac.embedding.models import make_embedder

    return lambda config: memo if config.embedder.strip() == "minilm" else make_embedder(config)


@pytest.fixture
def cli(monkeypatch, memo, capsys):
    """Run ``python -m sac ARGS`` in this process, its Workbench on the session's ``memo``;
    returns (code, stdout, stderr)."""
    from sac.cli.main import main

    monkeypatch.setattr("sac.usecases.workbench.make_embedder", _memo_factory(memo))

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    return run


def _patch_app_embedder(mp: pytest.MonkeyPatch, memo: MemoEmbedder) -> None:
    """The app's shared model (webapp.settings' ``st.cache_resource``) becomes ``memo`` until ``mp`` undoes it."""
    from webapp import settings

    mp.setattr(settings, "make_embedder", _memo_factory(memo))
    settings._load_embedder.clear()


@pytest.fixture
def app_memo(memo):
    """Pages driven with AppTest in this process embed through the session's ``memo``."""
    from webapp import settings

    mp = pytest.MonkeyPatch()
    _patch_app_embedder(mp, memo)
    yield memo
    mp.undo()
    settings._load_embedder.clear()


def finish_build(at, timeout: float = 600):
    """Wait for the background build an AppTest page started (sac.usecases.jobs) to end, then run the page again: what
    a user sees after the sidebar's progress bar finished."""
    from sac.usecases.job_board import board

    assert board(os.environ["SAC_WORKSPACE"]).wait_idle(timeout), "the background build did not finish"
    return at.run()


def interrupt_index(workspace: Path, corpus: str, method: str, doc_id: str) -> int:
    """What a build killed part-way leaves: one document's records of the index missing and the index marked
    incomplete (as ``Index.sync`` marks it before its first write). Returns the records left."""
    from sac.config import SacConfig
    from sac.index.client import make_client
    from sac.index.store import Index, list_indexes

    cfg = SacConfig(workspace=workspace)
    client = make_client(cfg)
    [info] = [i for i in list_indexes(client) if i.corpus == corpus and i.method == method]
    index = Index(client, info.key, cfg)
    index._set_fingerprint("", complete=False)
    index._open(create=False).delete(where={"doc_id": doc_id})
    return index.count()


@pytest.fixture(scope="session")
def demo_workspace(tmp_path_factory, memo) -> Path:
    """A workspace where the home page's button loaded the demo's ContractNLI dataset (the three methods and
    the two built from the shipped LLM summary sets), the app embedding through ``memo``. Read-only: a test
    that writes works on its own ``shutil.copytree`` of it (the embedded Chroma store included)."""
    from streamlit.testing.v1 import AppTest

    from webapp import settings

    path = tmp_path_factory.mktemp("demo") / "workspace"
    mp = pytest.MonkeyPatch()
    try:
        mp.setenv("SAC_WORKSPACE", str(path))
        for name in CLEAN_ENV:
            mp.delenv(name, raising=False)
        _patch_app_embedder(mp, memo)
        at = AppTest.from_file(APP, default_timeout=600).run()
        assert not at.exception, [e.value for e in at.exception]
        at.radio(key="home_demo_datasets").set_value("contractnli").run()
        at.button(key="home_load_demo").click().run()
        finish_build(at)
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        assert any("Demo: done in" in s.value for s in at.success)
    finally:
        mp.undo()
        settings._load_embedder.clear()
    return path


@pytest.fixture(scope="session")
def survey_workspace(tmp_path_factory, memo) -> Path:
    """A workspace with tests/survey_corpus.py's three contracts indexed (baseline, sac-generic). Read-only: a test
    that writes works on its own ``shutil.copytree`` of it."""
    from tests import survey_corpus

    workspace = tmp_path_factory.mktemp("survey") / "workspace"
    survey_corpus.build(workspace, memo)
    return workspace


@pytest.fixture(scope="session")
def demo_datasets():
    from sac.ingest.benchmark import load_benchmark

    return {d.name: d for d in load_benchmark(DEMO)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(url: str, timeout: float = 60.0) -> None:
    errors: list[OSError] = []

    def beats() -> bool:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                return True
        except OSError as err:
            errors[:] = [err]
            return False

    wait_until(beats, timeout=timeout, interval=0.3, what=f"the Chroma server at {url} to answer its heartbeat",
               detail=lambda: errors[-1] if errors else "no answer")


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """URL of a real `chroma run` server on 127.0.0.1."""
    url = os.environ.get("SAC_TEST_CHROMA_URL")
    if url:
        _wait_for(url)
        yield url
        return
    chroma = shutil.which("chroma")
    if chroma is None:
        raise RuntimeError("the `chroma` command (from the chromadb package) is not installed")
    port = _free_port()
    path = tmp_path_factory.mktemp("chroma-server")
    log = open(path / "server.log", "w")  # noqa: SIM115 - kept open for the server's life
    proc = subprocess.Popen(
        [chroma, "run", "--path", str(path / "data"), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()


@pytest.fixture(params=["embedded", "http"])
def store_config(request, tmp_path):
    """A config for each store: the embedded PersistentClient and a real Chroma server over HTTP."""
    from sac.config import SacConfig

    if request.param == "embedded":
        return SacConfig(workspace=tmp_path / "workspace")
    url = request.getfixturevalue("chroma_server")
    _reset_server(url)
    return SacConfig(workspace=tmp_path / "workspace", chroma_url=url)


def _reset_server(url: str) -> None:
    """Tests share one server: drop the collections an earlier test left."""
    import chromadb
    from chromadb.config import Settings

    host, port = url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port), settings=Settings(anonymized_telemetry=False))
    for col in client.list_collections():
        client.delete_collection(col if isinstance(col, str) else col.name)
