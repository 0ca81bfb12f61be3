"""Sharded ingestion (``python -m sac ingest --shard I/N``): N processes fill one index on a Chroma server.

Real ``python -m sac`` processes, a real ``chroma run`` server, the real model and the demo's ContractNLI
NDAs throughout. Every sharded index is compared record by record (ids, spans, hashes, texts, vectors)
with an unsharded build of the same documents.
"""

from __future__ import annotations

import dataclasses
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sac.chunking.merge import index_chunks
from sac.config import SacConfig
from sac.errors import ConfigError, IndexIncompleteError
from sac.index.client import make_client
from sac.index.shard_book import Shard, shard_of
from sac.index.shards import parse_shard, sync_shard
from sac.index.store import Index, IndexKey, list_indexes
from sac.methods import parse_methods
from sac.usecases.workbench import Workbench
from tests.conftest import _reset_server
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
CORPUS = "demo-contractnli"  # what `python -m sac ingest --datasets contractnli` indexes as
BASELINE = parse_methods("baseline")
ENV = {**os.environ, "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"}
# The five demo NDAs and their shard of 2 and of 3 (sha256 of the id, checked by hand once).
SHARDS = {
    "contractnli/AGProjects-NDA.txt": (1, 3),
    "contractnli/Mutual-Non-Disclosure-Agreement-Inventor-Product-Development-Experts-Inc..txt": (2, 3),
    "contractnli/NDA_ResConnect.txt": (1, 3),
    "contractnli/VELCO%20NDA%20rev0%20Dec%2014%202015.txt": (1, 2),
    "contractnli/ceii-and-nda.txt": (1, 1),
}


@pytest.fixture(scope="module")
def docs(demo_datasets):
    return list(demo_datasets["contractnli"].documents)


@pytest.fixture
def server(chroma_server):
    """The session's Chroma server, emptied of what earlier tests left."""
    _reset_server(chroma_server)
    return chroma_server


def contents(index: Index) -> dict[str, tuple[dict, str, np.ndarray]]:
    ids, vectors, metas, texts = index.all_embeddings()
    assert len(ids) == len(set(ids)) == index.count()
    return {rid: (meta, text, vector) for rid, meta, text, vector in zip(ids, metas, texts, vectors)}


def assert_same_records(got: Index, want: Index) -> None:
    """Same record ids, metadata and texts; vectors equal up to float noise (the same model, other batches)."""
    a, b = contents(got), contents(want)
    assert sorted(a) == sorted(b)
    for rid, (meta, text, vector) in a.items():
        assert (meta, text) == b[rid][:2], rid
        assert float(vector @ b[rid][2]) > 0.9999, rid


def ingest_cmd(workspace: Path, url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "sac", "ingest", "--workspace", str(workspace), "--datasets", "contractnli",
            "--methods", "baseline", "--chroma-url", url, "-q", *extra]


# ---------------------------------------------------------------- which document goes where


def test_shard_arguments_are_parsed_and_bad_ones_named():
    assert parse_shard("1/2") == Shard(1, 2) and parse_shard(" 3 / 3 ") == Shard(3, 3)
    assert parse_shard("1/1").owns("anything")
    for bad in ("3/2", "0/0", "0/2", "1/0"):
        with pytest.raises(ConfigError, match=rf"1 <= I <= N .*got {bad}$"):
            parse_shard(bad)
    for bad in ("a/b", "1", "1/2/3", "-1/2", "1.5/2", ""):
        with pytest.raises(ConfigError, match=r"Expected --shard I/N with whole numbers"):
            parse_shard(bad)


def test_shard_of_a_document_is_a_stable_hash_that_splits_the_corpus(docs):
    assert {d.doc_id: (shard_of(d.doc_id, 2), shard_of(d.doc_id, 3)) for d in docs} == SHARDS
    for count in range(1, 6):
        owners = [[n for n in range(1, count + 1) if Shard(n, count).owns(d.doc_id)] for d in docs]
        assert all(len(o) == 1 for o in owners)  # every document in exactly one shard
    # The same in any other process, whatever its string-hash seed (Python's hash() would differ).
    code = "import sys; from sac.index.shard_book import shard_of; print([shard_of(a, 3) for a in sys.argv[1:]])"
    for seed in ("1", "4242"):
        out = subprocess.run([sys.executable, "-c", code, *SHARDS], cwd=ROOT, capture_output=True, text=True,
                             env={**ENV, "PYTHONHASHSEED": seed}, check=True).stdout
        assert out.strip() == str([third for _, third in SHARDS.values()])


def test_bad_shard_and_embedded_store_are_one_line_errors(cli):
    code, out, err = cli("ingest", "--datasets", "contractnli", "--shard", "3/2")
    assert (code, out) == (1, "") and err == (
        "error: Expected a shard I/N with 1 <= I <= N (shards are numbered from 1, e.g. 1/2 and 2/2), got 3/2\n")
    code, out, err = cli("ingest", "--datasets", "contractnli", "--shard", "a/b")
    assert code == 1 and err.startswith("error: Expected --shard I/N with whole numbers") and err.count("\n") == 1
    code, out, err = cli("ingest", "--datasets", "contractnli", "--shard", "1/2")
    assert code == 1 and err.startswith("error: --shard 1/2 needs a Chroma server that every shard writes to: "
                                        "set --chroma-url or SAC_CHROMA_URL")
    assert not (Path(os.environ["SAC_WORKSPACE"]) / "chroma").exists()  # nothing was built


# ---------------------------------------------------------------- the bookkeeping, in one process


@pytest.mark.slow
def test_shards_make_a_complete_index_only_together(store_config, memo, embedder, docs):
    """On both stores: each shard writes only its own documents; the index is complete (and exactly the
    unsharded one) once every shard has finished; a finished shard run again changes nothing."""
    client = make_client(store_config)
    hashes = {d.doc_id: d.content_hash for d in docs}
    chunks = [c for d in docs for c in index_chunks(d)]
    index = Index(client, IndexKey(CORPUS, "baseline", embedder.name, "c500o0m25"), store_config)

    first = sync_shard(index, chunks, hashes, {}, memo, shard=Shard(1, 2))
    own = [c for c in chunks if SHARDS[c.doc_id][0] == 1]
    assert (first.added, first.kept, first.deleted) == (len(own), 0, 0)
    assert {m["doc_id"] for m in index.records().values()} == {d for d, (two, _) in SHARDS.items() if two == 1}
    assert not index.is_complete() and [i.complete for i in list_indexes(client)] == [False]
    with pytest.raises(IndexIncompleteError) as info:
        index.require_complete()
    assert str(info.value) == (
        f"The baseline index of {CORPUS!r} is incomplete ({len(own)} chunks so far): it is built in 2 shards; "
        "done: 1/2; not run yet: 2/2. Run the missing shards (`python -m sac ingest ... --shard I/N` against the "
        "same server, same corpus and methods), or finish it in one go with the same command without --shard; "
        "either continues where it stopped.")

    second = sync_shard(index, chunks, hashes, {}, memo, shard=Shard(2, 2))
    assert (second.added, second.kept, second.deleted) == (len(chunks) - len(own), 0, 0)
    assert index.is_complete() and [i.complete for i in list_indexes(client)] == [True]
    index.require_complete()
    assert index.shard_status().all_done
    reference = Index(client, IndexKey("reference", "baseline", embedder.name, "c500o0m25"), store_config)
    reference.sync(chunks, hashes, {}, memo)
    assert_same_records(index, reference)

    again = sync_shard(index, chunks, hashes, {}, memo, shard=Shard(1, 2))
    assert (again.added, again.kept, again.deleted) == (0, len(own), 0) and index.is_complete()
    # An unsharded sync afterwards finds every record in place and embeds nothing.
    whole = index.sync(chunks, hashes, {}, memo)
    assert (whole.added, whole.kept, whole.deleted) == (0, len(chunks), 0) and index.is_complete()
    index.drop()
    assert [i.collection for i in list_indexes(client)] == [reference.key.collection_name]
    assert not index.shard_status().records  # the shard records went with the index


@pytest.mark.slow
@pytest.mark.chroma_server
def test_shards_of_different_corpus_versions_are_never_one_index(tmp_path, server, memo, docs):
    """Shard 2 built from a newer corpus (one of shard 1's documents removed): not complete, and shard 2
    leaves shard 1's records alone; shard 1 on the newer corpus removes that document and completes it."""
    wb = Workbench(SacConfig(workspace=tmp_path / "ws", chroma_url=server), embedder=memo)
    gone = "contractnli/NDA_ResConnect.txt"  # in shard 1 of 2
    newer = [d for d in docs if d.doc_id != gone]
    wb.build(CORPUS, docs, BASELINE, shard=Shard(1, 2))
    wb.build(CORPUS, newer, BASELINE, shard=Shard(2, 2))
    index = wb.index(CORPUS, BASELINE[0])
    assert gone in {m["doc_id"] for m in index.records().values()}
    assert not index.is_complete()
    with pytest.raises(IndexIncompleteError, match=r"it is built in 2 shards; done: 2/2; not run yet: 1/2\."):
        wb.search(CORPUS, BASELINE, ["What is confidential information?"], 4)

    report = wb.build(CORPUS, newer, BASELINE, shard=Shard(1, 2))["baseline"]
    assert report.deleted == len(wb.chunks(next(d for d in docs if d.doc_id == gone)))
    assert report.added == 0 and index.is_complete()
    reference = Workbench(SacConfig(workspace=tmp_path / "ref"), embedder=memo)
    reference.build(CORPUS, newer, BASELINE)
    assert_same_records(index, reference.index(CORPUS, BASELINE[0]))
    assert len(wb.search(CORPUS, BASELINE, ["What is confidential information?"], 4)["baseline"][0]) == 4


# ---------------------------------------------------------------- real processes against one server


@pytest.mark.slow
@pytest.mark.chroma_server
def test_concurrent_shard_processes_build_exactly_the_unsharded_index(tmp_path, server, memo, docs, cli):
    """Two `ingest --shard` processes at once, each with its own workspace (two machines), into one server:
    the index holds exactly the unsharded build's records, is complete, and an eval embeds nothing."""
    procs = [subprocess.Popen(ingest_cmd(tmp_path / f"machine{n}", server, "--shard", f"{n}/2"), cwd=ROOT,
                              env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for n in (1, 2)]
    outputs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outputs]
    total = sum(len(index_chunks(d)) for d in docs)
    own = {n: sum(len(index_chunks(d)) for d in docs if SHARDS[d.doc_id][0] == n) for n in (1, 2)}
    for n, (out, _) in zip((1, 2), outputs):
        assert (f"{CORPUS} / baseline (shard {n}/2, {4 if n == 1 else 1} of 5 documents): "
                f"{own[n]} chunks embedded, 0 already indexed, 0 removed") in out
    # Whichever finished last saw the whole index.
    assert any(f"{CORPUS} / baseline: index complete: all 2 shards done" in out for out, _ in outputs)

    client = make_client(SacConfig(chroma_url=server))
    [info] = list_indexes(client)
    assert (info.corpus, info.method, info.chunks, info.complete) == (CORPUS, "baseline", total, True)
    wb = Workbench(SacConfig(workspace=tmp_path / "reader", chroma_url=server), embedder=memo)
    reference = Workbench(SacConfig(workspace=tmp_path / "unsharded"), embedder=memo)
    reference.build(CORPUS, docs, BASELINE)
    assert_same_records(wb.index(CORPUS, BASELINE[0]), reference.index(CORPUS, BASELINE[0]))
    assert len(wb.search(CORPUS, BASELINE, ["Which law governs the agreement?"], 8)["baseline"][0]) == 8

    code, out, err = cli("eval", "--workspace", str(tmp_path / "evaluator"), "--datasets", "contractnli",
                         "--methods", "baseline", "--k", "1,8", "--chroma-url", server)
    assert code == 0, err
    assert f"contractnli / baseline: 0 chunks embedded, {total} already indexed, 0 removed" in err
    assert [(i.chunks, i.complete) for i in list_indexes(client)] == [(total, True)]


def _server_count(client, collection: str) -> int | None:
    try:
        return int(client.get_collection(collection, embedding_function=None).count())
    except Exception:  # noqa: BLE001 - not created yet
        return None


@pytest.mark.slow
@pytest.mark.chroma_server
def test_killed_shard_resumes_where_it_stopped(tmp_path, server, memo, docs, cli):
    # 60-character chunks: shard 1 of 2 holds 738 records, written in two batches (512 + 226): the kill
    # lands between them.
    size = 60
    own = sum(len(index_chunks(d, size)) for d in docs if SHARDS[d.doc_id][0] == 1)
    total = sum(len(index_chunks(d, size)) for d in docs)
    assert own == 738
    cmd = ingest_cmd(tmp_path / "machine1", server, "--shard", "1/2", "--chunk-size", str(size))
    config = SacConfig(workspace=tmp_path / "reader", chroma_url=server, chunk_size=size)
    wb = Workbench(config, embedder=memo)
    collection = wb.index(CORPUS, BASELINE[0]).key.collection_name
    client = make_client(config)
    log = tmp_path / "shard1.log"
    with open(log, "w") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=ENV, stdout=out, stderr=subprocess.STDOUT)
    seen = None

    def part_way_or_ended() -> bool:
        nonlocal seen
        seen = _server_count(client, collection)
        return bool(seen and 0 < seen < own) or proc.poll() is not None

    try:
        wait_until(part_way_or_ended, timeout=600, interval=0.05, what="shard 1 to have written part of its records",
                   detail=log.read_text)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL, log.read_text()
    assert seen is not None and 0 < seen < own, (seen, log.read_text())

    # Killed part-way: incomplete, and a search names the shard that did not finish.
    host = socket.gethostname()
    with pytest.raises(IndexIncompleteError, match=r"it is built in 2 shards; started but not finished \(still running, "
                       rf"or stopped\): 1/2 \(on {re.escape(host)}, since 20\d\d-[^)]+\); not run yet: 2/2\. Run the missing shards"):
        wb.search(CORPUS, BASELINE, ["What is confidential?"], 8)

    # The same command again embeds only what is missing.
    rerun = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr
    found = re.search(r"\(shard 1/2, 4 of 5 documents\): (\d+) chunks embedded, (\d+) already indexed, 0 removed",
                      rerun.stdout)
    assert found, rerun.stdout
    embedded, kept = int(found.group(1)), int(found.group(2))
    assert kept >= seen and embedded + kept == own and embedded > 0, rerun.stdout
    assert f"{CORPUS} / baseline: index incomplete: it is built in 2 shards; done: 1/2; not run yet: 2/2" in rerun.stdout

    code, out, err = cli("ingest", "--workspace", str(tmp_path / "machine2"), "--datasets", "contractnli",
                         "--methods", "baseline", "--chunk-size", str(size), "--chroma-url", server, "-q",
                         "--shard", "2/2")
    assert code == 0, err
    assert f"{CORPUS} / baseline: index complete: all 2 shards done" in out
    reference = Workbench(dataclasses.replace(config, workspace=tmp_path / "unsharded", chroma_url=None), embedder=memo)
    reference.build(CORPUS, docs, BASELINE)
    assert_same_records(wb.index(CORPUS, BASELINE[0]), reference.index(CORPUS, BASELINE[0]))
    assert wb.index(CORPUS, BASELINE[0]).count() == total

