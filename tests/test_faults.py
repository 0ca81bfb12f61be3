"""Faults while indexing and summarizing: a killed process, a Chroma server that goes away and comes back,
two writers at once, an LLM server that fails. Finished work is kept, the error says what failed, and a
rerun ends with exactly the right index or summary set.

Real processes (``python -m sac``, ``chroma run``), the real model and a real chromadb throughout; the
LLM server is the local OpenAI-protocol stub. Vectors of texts already embedded in this session are
reused (conftest's ``memo``): they are the real model's, computed once.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import numpy as np
import pytest

from sac.chunking.merge import index_chunks
from sac.cli.main import main
from sac.config import SacConfig
from sac.errors import IndexIncompleteError, StoreError, SummarizerError
from sac.index.store import Index, list_indexes
from sac.methods import parse_methods
from sac.summaries.llm import OpenAISummarizer
from sac.usecases.workbench import Workbench
from tests.openai_stub import Answer, Drop, OpenAIStub
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
CORPUS = "demo-contractnli"  # what `python -m sac ingest --datasets contractnli` indexes as
BASELINE = parse_methods("baseline")
ENV = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def docs(demo_datasets):
    return list(demo_datasets["contractnli"].documents)


def check_index(index: Index, documents, chunk_size: int, embedder=None) -> None:
    """The index holds exactly the chunks of ``documents``: no duplicate, none missing, exact spans and
    text, every record findable by vector search, and (sampled) the right vectors."""
    texts = {d.doc_id: d.text for d in documents}
    hashes = {d.doc_id: d.content_hash for d in documents}
    chunks = [c for d in documents for c in index_chunks(d, chunk_size)]
    expected = {c.chunk_id: c for c in chunks}
    assert len(expected) == len(chunks)
    ids, vectors, metas, stored_texts = index.all_embeddings()
    assert len(ids) == len(set(ids)) == index.count() == len(chunks)
    assert set(ids) == set(expected)
    for rid, meta, text in zip(ids, metas, stored_texts):
        chunk = expected[rid]
        assert (meta["doc_id"], meta["start"], meta["end"]) == (chunk.doc_id, chunk.span.start, chunk.span.end)
        assert meta["doc_hash"] == hashes[chunk.doc_id]
        assert text == chunk.text == texts[chunk.doc_id][chunk.span.start : chunk.span.end]
    # The vector index agrees with the records: a search for everything returns every record once.
    hits = index.search(vectors[:1], len(chunks))[0]
    assert sorted(h.chunk.chunk_id for h in hits) == sorted(expected)
    if embedder is not None:
        rows = np.linspace(0, len(ids) - 1, 5).astype(int)
        fresh = embedder.embed_documents([stored_texts[i] for i in rows])
        assert np.all(np.sum(fresh * vectors[rows], axis=1) > 0.999)


# ---------------------------------------------------------------- a killed indexing process


def _embedded_count(db: Path) -> int | None:
    """Records in an embedded store, read from another process without taking part in its writes."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=0.2)
    except sqlite3.Error:
        return None
    try:
        return int(con.execute("SELECT count(*) FROM embeddings").fetchone()[0])
    except sqlite3.Error:
        return None
    finally:
        con.close()


@pytest.mark.slow
def test_sigkill_mid_indexing_then_rerun_gives_the_exact_index(tmp_path, embedder, docs):
    # 120-character chunks: 546 records, written in two batches (512 + 34), so a kill lands between them.
    size = 120
    total = sum(len(index_chunks(d, size)) for d in docs)
    assert total == 546
    workspace = tmp_path / "workspace"
    cmd = [sys.executable, "-m", "sac", "ingest", "--workspace", str(workspace), "--datasets", "contractnli",
           "--methods", "baseline", "--chunk-size", str(size), "-q"]
    log = tmp_path / "ingest.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=out, stderr=subprocess.STDOUT)
    db = workspace / "chroma" / "chroma.sqlite3"
    seen = None

    def part_way_or_ended() -> bool:
        nonlocal seen
        seen = _embedded_count(db)
        return bool(seen and 0 < seen < total) or proc.poll() is not None

    try:
        wait_until(part_way_or_ended, timeout=600, interval=0.05, what="the ingest to have written part of the index",
                   detail=log.read_text)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, log.read_text()
    assert seen is not None and 0 < seen < total, (seen, log.read_text())
    assert "chunks embedded" not in log.read_text()

    wb = Workbench(SacConfig(workspace=workspace, chunk_size=size), embedder=embedder)
    # Half an index is never searched as if whole: it is listed as incomplete and search names the fix.
    [info] = list_indexes(wb.client)
    assert (info.method, info.complete) == ("baseline", False) and seen <= info.chunks < total
    with pytest.raises(IndexIncompleteError, match=r"incomplete \(\d+ chunks so far\).*Finish building"):
        wb.search(CORPUS, BASELINE, ["What is confidential?"], 8)
    report = wb.build(CORPUS, docs, BASELINE)["baseline"]
    assert [i.complete for i in list_indexes(wb.client)] == [True]
    assert len(wb.search(CORPUS, BASELINE, ["What is confidential?"], 8)["baseline"][0]) == 8
    assert report.kept >= seen and report.added == total - report.kept > 0 and report.deleted == 0
    check_index(wb.index(CORPUS, BASELINE[0]), docs, size, embedder)
    again = wb.build(CORPUS, docs, BASELINE)["baseline"]
    assert (again.added, again.kept, again.deleted) == (0, total, 0)


# ---------------------------------------------------------------- the Chroma server goes away


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """A `chroma run` server of our own, which the test stops and restarts on the same path and port."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        chroma = shutil.which("chroma")
        assert chroma, "the `chroma` command (from the chromadb package) is not installed"
        with open(self.path / "server.log", "a") as log:
            self.proc = subprocess.Popen(
                [chroma, "run", "--path", str(self.path / "data"), "--host", "127.0.0.1", "--port", str(self.port)],
                stdout=log, stderr=subprocess.STDOUT,
            )
        proc = self.proc

        def beats() -> bool:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2):
                    return True
            except OSError as err:
                if proc.poll() is not None:
                    raise RuntimeError(f"chroma run did not start: {(self.path / 'server.log').read_text()}") from err
                return False

        wait_until(beats, timeout=60, interval=0.2, what="chroma run to start",
                   detail=lambda: (self.path / "server.log").read_text())

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=30)


@pytest.fixture
def server(tmp_path):
    srv = ChromaServer(tmp_path)
    srv.start()
    yield srv
    srv.stop()


class StopServerOnBatch:
    """The module's embedder, stopping the Chroma server just before the ``n``-th batch is embedded,
    so that batch's write finds the server gone.

    The store writes batch ``n - 1`` on another thread while batch ``n`` is embedded; with ``written``
    (a count of the records stored) the server is stopped only once the earlier batches have landed,
    so the test knows exactly what the server holds."""

    def __init__(self, inner, server: ChromaServer, n: int, written=None, batch: int = 0) -> None:
        self.inner, self.server, self.n = inner, server, n
        self.written, self.batch = written, batch
        self.name = inner.name
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        if self.calls == self.n:
            if self.written:
                written = self.written
                wait_until(lambda: written() >= (self.n - 1) * self.batch, timeout=60, interval=0.05,
                           what="the earlier batches to be written (they were never written)")
            self.server.stop()
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.inner.embed_query(text)


@pytest.mark.slow
def test_chroma_server_stopped_mid_build_then_restarted(tmp_path, server, memo, docs, monkeypatch):
    monkeypatch.setattr("sac.index.store.ADD_BATCH", 40)  # 156 chunks -> 4 writes
    total = sum(len(index_chunks(d)) for d in docs)
    config = SacConfig(workspace=tmp_path / "workspace", chroma_url=server.url)
    stopper = StopServerOnBatch(memo, server, n=2, batch=40)
    wb = Workbench(config, embedder=stopper)
    stopper.written = lambda: wb.index(CORPUS, BASELINE[0]).count()

    with pytest.raises(StoreError) as info:
        wb.build(CORPUS, docs, BASELINE)
    message = str(info.value)
    assert message.startswith(f"The Chroma server at {server.url} failed while writing records 41-80 of {total} "
                              f"(baseline index of corpus '{CORPUS}'): ConnectError: ")
    assert "Check that the server is running" in message and "\n" not in message

    # While it is down every call says so, in one line naming the server.
    for call in (
        lambda: wb.search(CORPUS, BASELINE, ["governing law"], 5),
        lambda: wb.index(CORPUS, BASELINE[0]).count(),
        lambda: wb.build(CORPUS, docs, BASELINE),
    ):
        with pytest.raises(StoreError, match=re.escape(f"The Chroma server at {server.url} failed while ")):
            call()

    # Restarted on the same path and port, the same session continues where the first write stopped.
    server.start()
    report = wb.build(CORPUS, docs, BASELINE)["baseline"]
    assert (report.kept, report.added, report.deleted) == (40, total - 40, 0)
    check_index(wb.index(CORPUS, BASELINE[0]), docs, 500, memo)
    hits = wb.search(CORPUS, BASELINE, ["Which law governs the agreement?"], 3)["baseline"][0]
    assert len(hits) == 3


def test_unreachable_chroma_server_is_one_line_from_the_cli(tmp_path, capsys):
    url = f"http://127.0.0.1:{_free_port()}"
    code = main(["ingest", "--workspace", str(tmp_path / "ws"), "--datasets", "contractnli", "--methods", "baseline",
                 "--chroma-url", url, "-q"])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert err.startswith(f"error: Cannot reach the Chroma server at {url}: ") and err.count("\n") == 1


# ---------------------------------------------------------------- two writers at once


@pytest.mark.slow
def test_two_sessions_building_the_same_index_at_once(store_config, memo, docs):
    methods = parse_methods("baseline,sac-generic")
    total = sum(len(index_chunks(d)) for d in docs)
    # Two app sessions: separate Workbench objects and store clients on the same workspace and store.
    benches = [Workbench(store_config, embedder=memo) for _ in range(2)]
    barrier = threading.Barrier(2)
    reports: list[dict] = []
    errors: list[BaseException] = []

    def build(wb: Workbench) -> None:
        barrier.wait()
        try:
            reports.append(wb.build(CORPUS, docs, methods))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=build, args=(wb,)) for wb in benches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=600)
    assert not errors, errors
    for method in ("baseline", "sac-generic"):
        assert sorted(r[method].added for r in reports) == [0, total]
        assert sorted(r[method].kept for r in reports) == [0, total]
        check_index(benches[0].index(CORPUS, parse_methods(method)[0]), docs, 500)


@pytest.mark.slow
def test_two_cli_ingests_of_the_same_corpus_at_once(tmp_path, embedder, docs):
    workspace = tmp_path / "workspace"
    cmd = [sys.executable, "-m", "sac", "ingest", "--workspace", str(workspace), "--datasets", "contractnli",
           "--methods", "baseline", "-q"]
    procs = [subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(2)]
    outputs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    total = sum(len(index_chunks(d)) for d in docs)
    lines = sorted(next(line for line in out.splitlines() if "chunks embedded" in line) for out, _ in outputs)
    assert lines == [
        f"{CORPUS} / baseline: 0 chunks embedded, {total} already indexed, 0 removed",
        f"{CORPUS} / baseline: {total} chunks embedded, 0 already indexed, 0 removed",
    ]
    wb = Workbench(SacConfig(workspace=workspace), embedder=embedder)
    check_index(wb.index(CORPUS, BASELINE[0]), docs, 500, embedder)


# ---------------------------------------------------------------- the LLM server fails


def _llm(stub: OpenAIStub, **overrides) -> OpenAISummarizer:
    settings = {"model": "stub-model", "base_url": stub.base_url, "api_key": "sk-test", "max_retries": 1,
                "backoff_s": 0.0, **overrides}
    return OpenAISummarizer("generic-llm", **settings)


def _doc_of(prompt: str, documents) -> str:
    (doc_id,) = [d.doc_id for d in documents if d.text in prompt]
    return doc_id


def _short_answer(documents):
    return lambda body: f"Non-disclosure agreement {_doc_of(body['messages'][-1]['content'], documents)[-30:]}"


def _stored(wb: Workbench, documents, summarizer) -> set[str]:
    return {d.doc_id for d in documents if wb.summary_store.get_cached(d, summarizer) is not None}


def test_llm_timeout_names_the_document_and_a_rerun_continues(tmp_path, docs):
    slow = docs[3]
    answer = _short_answer(docs)
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"))
    with OpenAIStub(handler=lambda body: (
        Answer("late", delay_s=6.0) if slow.text in body["messages"][-1]["content"] else answer(body)
    )) as stub:
        summarizer = _llm(stub, timeout_s=0.5, max_retries=0)
        with pytest.raises(SummarizerError) as info:
            wb.summaries(docs, "generic-llm", summarizer=summarizer)
        assert f"did not answer within 0.5 s for {slow.doc_id!r} (1 attempts)" in str(info.value)
        assert stub.calls == 5
        assert _stored(wb, docs, summarizer) == {d.doc_id for d in docs} - {slow.doc_id}

        stub.handler = answer
        summaries = wb.summaries(docs, "generic-llm", summarizer=summarizer)
        assert stub.calls == 6 and slow.text in stub.prompts()[-1]
        assert set(summaries) == {d.doc_id for d in docs}
        # Let the stub finish the late answer (to a closed connection) while this test still owns stderr.
        stub.release_delays()
        wait_until(lambda: stub.in_flight == 0, timeout=30, what="the stub to finish the late answer")


def test_llm_dropping_connections_part_way_stops_the_run_and_a_rerun_continues(tmp_path, docs):
    answer = _short_answer(docs)
    wb = Workbench(SacConfig(workspace=tmp_path / "ws", llm_concurrency=1))  # documents in order
    answered: list[str] = []

    def first_two_then_drop(body):
        if len(answered) < 2:
            answered.append(_doc_of(body["messages"][-1]["content"], docs))
            return answer(body)
        return Drop()

    with OpenAIStub(handler=first_two_then_drop) as stub:
        summarizer = _llm(stub)
        with pytest.raises(SummarizerError) as info:
            wb.summaries(docs, "generic-llm", summarizer=summarizer)
        message = str(info.value)
        third = docs[2].doc_id
        assert f"Cannot reach {stub.base_url} (" in message and f"while summarizing {third!r}" in message
        assert "(2 documents were not started)" in message
        # Two answered, the third tried twice, the last two never sent: the run stopped at once.
        assert stub.calls == 2 + 2 and answered == [d.doc_id for d in docs[:2]]
        assert _stored(wb, docs, summarizer) == set(answered)

        stub.handler = answer
        summaries = wb.summaries(docs, "generic-llm", summarizer=summarizer)
        assert stub.calls == 4 + 3
        assert [_doc_of(p, docs) for p in stub.prompts()[4:]] == [d.doc_id for d in docs[2:]]
        assert set(summaries) == {d.doc_id for d in docs}
