"""Shared fixtures: a temporary workspace per test, the real packaged model once per session, and a
real Chroma server (the one CI started, named by SAC_TEST_CHROMA_URL, or one started here)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


@pytest.fixture(autouse=True)
def env_setup(monkeypatch, tmp_path):
    """Every test gets its own workspace and no real credentials or servers from the environment."""
    monkeypatch.setenv("SAC_WORKSPACE", str(tmp_path / "workspace"))
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "SAC_CHROMA_URL", "SAC_LLM_BASE_URL", "SAC_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def embedder():
    """The real packaged all-MiniLM-L6-v2, loaded once."""
    from sac.embedding.models import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def demo_datasets():
    from sac.ingest.benchmark import load_benchmark

    return {d.name: d for d in load_benchmark(DEMO)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


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
