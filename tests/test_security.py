"""Secrets and paths: an API key never reaches disk, output or error messages, and no user-supplied name
or document id leads outside the workspace.

HTML escaping of document text, titles and queries is tested in test_highlight.py; unsafe zip member
names in test_corpus.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import subprocess
import sys
import traceback
import uuid
from pathlib import Path

import pytest

from sac.config import SacConfig
from sac.errors import ConfigError, CorpusError, SummarizerError
from sac.ingest.catalog import save_benchmark
from sac.ingest.readers import read_document_bytes
from sac.methods import parse_methods
from sac.summaries.llm import OpenAISummarizer
from sac.types import Dataset, Document
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace
from tests.openai_stub import OpenAIStub, Status, free_port

ROOT = Path(__file__).resolve().parents[1]


def _key() -> str:
    return f"sk-test-SECRET-{secrets.token_hex(16)}"


def _leaks(secret: str, root: Path, texts: list[str]) -> list[str]:
    """Where ``secret`` (or its random part alone) occurs: files under ``root`` and captured output."""
    needles = [secret.encode(), secret.rsplit("-", 1)[-1].encode()]
    found = [str(p) for p in root.rglob("*") if p.is_file() and any(n in p.read_bytes() for n in needles)]
    found += [f"output #{i}" for i, text in enumerate(texts) if any(n.decode() in text for n in needles)]
    return found


def _sac(*args: str, key: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": key, "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"}
    return subprocess.run([sys.executable, "-m", "sac", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)


@pytest.mark.slow
def test_api_key_never_reaches_disk_output_run_configs_or_errors(tmp_path):
    key = _key()
    workspace = tmp_path / "workspace"
    exports = tmp_path / "exports"
    exports.mkdir()
    common = ["--workspace", str(workspace), "--datasets", "contractnli", "-q"]
    outputs: list[str] = []
    with OpenAIStub(api_key=key, default="Non-disclosure agreement between the two parties.") as stub:
        llm = ["--summarizer", "openai", "--base-url", stub.base_url, "--model", "stub-model"]
        done = _sac("summarize", *common, *llm, "--strategy", "generic-llm", "--out", str(exports / "set.json"), key=key)
        outputs += [done.stdout, done.stderr]
        assert done.returncode == 0, done.stderr
        assert stub.calls == 5 and {h["authorization"] for h in stub.headers} == {f"Bearer {key}"}

        # The server rejects the key: the error says so without showing it.
        stub.api_key = "sk-another-key"
        rejected = _sac("summarize", *common, *llm, "--strategy", "expert-llm", key=key)
        outputs += [rejected.stdout, rejected.stderr]
        assert rejected.returncode == 1
        assert f"The API key was rejected by {stub.base_url} (HTTP 401)" in rejected.stderr
        assert "OPENAI_API_KEY" in rejected.stderr

        # A server that echoes the key back in an error: the message is scrubbed.
        stub.api_key = key
        stub.handler = lambda body: Status(500, f"Upstream failure for credential {key}")
        echoed = _sac("summarize", *common, *llm, "--strategy", "echo-llm", key=key)
        outputs += [echoed.stdout, echoed.stderr]
        assert echoed.returncode == 1 and "Upstream failure for credential ***" in echoed.stderr

    evaluated = _sac("eval", *common, "--methods", "baseline", "--k", "1,4", "--out", str(exports / "metrics.csv"),
                     key=key)
    outputs += [evaluated.stdout, evaluated.stderr]
    assert evaluated.returncode == 0, evaluated.stderr
    listed = _sac("runs", "list", "--workspace", str(workspace), key=key)
    outputs += [listed.stdout, listed.stderr]

    (run_config,) = (workspace / "runs").glob("*/config.json")
    assert json.loads(run_config.read_text())["config"]["openai_api_key_set"] is True
    assert (exports / "set.json").is_file() and (exports / "metrics.csv").is_file()
    assert _leaks(key, tmp_path, outputs) == []


def test_config_and_summarizer_never_show_the_key():
    key = _key()
    config = SacConfig.from_env({"OPENAI_API_KEY": key, "SAC_CHUNK_SIZE": "300"})
    assert config.openai_api_key == key
    variants = [config, dataclasses.replace(config, chunk_size=400), SacConfig(openai_api_key=key)]
    for cfg in variants:
        public = cfg.public_dict()
        assert public["openai_api_key_set"] is True and "openai_api_key" not in public
        for shown in (repr(cfg), str(cfg), f"{cfg}", json.dumps(public), str(list(public.values()))):
            assert key not in shown and key[-8:] not in shown
    summarizer = OpenAISummarizer("generic-llm", model="m", base_url="http://127.0.0.1:9/v1", api_key=key)
    assert key not in repr(summarizer) and key not in str(summarizer)


def test_errors_from_the_llm_server_never_show_the_key(tmp_path):
    key = _key()
    doc = Document("nda.txt", "This Non-Disclosure Agreement is made between Alpha Ltd and Beta Inc.")
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"))
    with OpenAIStub(handler=lambda body: Status(400, f"Bad request from {key}")) as stub:
        summarizer = OpenAISummarizer("generic-llm", model="m", base_url=stub.base_url, api_key=key, max_retries=0)
        with pytest.raises(SummarizerError) as info:
            wb.summaries([doc], "generic-llm", summarizer=summarizer)
        assert "Bad request from ***" in str(info.value)
        assert key not in str(info.value) and key not in repr(info.value)
        assert key not in _traceback(info.value)
    # No server: the connection error names the URL, not the key.
    url = f"http://127.0.0.1:{free_port()}/v1"
    summarizer = OpenAISummarizer("generic-llm", model="m", base_url=url, api_key=key, max_retries=0)
    with pytest.raises(SummarizerError) as info:
        wb.summaries([doc], "generic-llm", summarizer=summarizer)
    assert f"Cannot reach {url}" in str(info.value)
    assert key not in _traceback(info.value)
    assert _leaks(key, tmp_path, []) == []


def _traceback(err: BaseException) -> str:
    """What a log or the app would show for ``err``: the traceback with every chained exception shown."""
    return "".join(traceback.format_exception(err))


# ---------------------------------------------------------------- paths

HOSTILE_IDS = [
    "../../escaped.txt",
    "a/../../../escaped2.txt",
    f"/tmp/sac-absolute-{uuid.uuid4().hex}.txt",
    "..\\..\\windows.txt",
    "ü/../../é.txt",
]


def _outside(tmp_path: Path) -> list[Path]:
    """Places the hostile ids above would name if they were ever used as paths."""
    return [tmp_path / "escaped.txt", tmp_path.parent / "escaped.txt", tmp_path.parent.parent / "escaped.txt",
            tmp_path / "escaped2.txt", tmp_path.parent / "escaped2.txt", Path(HOSTILE_IDS[2]), tmp_path / "é.txt"]


@pytest.mark.slow
def test_document_ids_are_data_never_paths(tmp_path, embedder, monkeypatch):
    monkeypatch.chdir(tmp_path)
    texts = [
        f"Agreement {i}. The Receiving Party shall keep the Confidential Information secret. "
        f"This agreement is governed by the laws of State {i}."
        for i in range(len(HOSTILE_IDS))
    ]
    docs = [read_document_bytes(doc_id, text.encode()) for doc_id, text in zip(HOSTILE_IDS, texts)]
    assert [d.doc_id for d in docs] == HOSTILE_IDS

    workspace = Workspace(tmp_path / "workspace")
    path = workspace.save_corpus("uploads", docs)
    assert path == tmp_path / "workspace" / "corpora" / "uploads.jsonl"
    assert {d.doc_id: d.text for d in workspace.load_corpus("uploads")} == dict(zip(HOSTILE_IDS, texts))

    # Indexing with summaries, searching and removing keep the ids as data too.
    wb = Workbench(SacConfig(workspace=tmp_path / "workspace"), embedder=embedder)
    methods = parse_methods("baseline,sac-generic")
    wb.build("uploads", docs, methods)
    hits = wb.search("uploads", methods, ["Which law governs the agreement?"], 10)
    assert {h.span.doc_id for h in hits["sac-generic"][0]} == set(HOSTILE_IDS)
    assert wb.remove_documents("uploads", [HOSTILE_IDS[0]]) == 2
    workspace.remove_documents("uploads", [HOSTILE_IDS[0]])

    created = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert created and all(p.is_relative_to(tmp_path / "workspace") for p in created), created
    assert not any(p.exists() for p in _outside(tmp_path))


def test_benchmark_export_refuses_ids_that_leave_its_folder(tmp_path):
    workspace = Workspace(tmp_path / "workspace")
    good = Document("contractnli/nda.txt", "A non-disclosure agreement.")
    for doc_id in ["contractnli/../../../escaped.txt", f"contractnli//tmp/sac-absolute-{uuid.uuid4().hex}.txt"]:
        bad = Document(doc_id, "text")
        with pytest.raises(CorpusError, match="would be written outside the benchmark folder"):
            save_benchmark(workspace, "mine", [Dataset("contractnli", (good, bad), ())])
        assert not Path(doc_id.removeprefix("contractnli/")).exists()
    for name in ["../x", "/etc", "a/b"]:
        with pytest.raises(ConfigError, match="Invalid benchmark name"):
            save_benchmark(workspace, name, [Dataset("contractnli", (good,), ())])
    with pytest.raises(ConfigError, match="Invalid dataset name"):
        save_benchmark(workspace, "mine", [Dataset("../x", (Document("../x/a.txt", "text"),), ())])
    created = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert all(p.is_relative_to(tmp_path / "workspace") for p in created), created
    assert not (tmp_path / "escaped.txt").exists() and not (tmp_path.parent / "escaped.txt").exists()
