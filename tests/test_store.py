"""The vector store on real data with the real model, embedded and over HTTP against a real server.

Indexes are filled through conftest's ``memo`` (the real model, each distinct text embedded once per
session); vectors a test checks against are computed afresh by the real ``embedder``."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from sac.chunking.split import chunk_document
from sac.config import SacConfig
from sac.index.store import Index, IndexKey
from sac.methods import parse_method
from sac.usecases.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


def _chunks(docs, size=500):
    return [c for d in docs for c in chunk_document(d, size, 0)]


@pytest.mark.slow
def test_sync_is_idempotent_and_incremental(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    index = Index(_client(store_config), IndexKey("t", "baseline", embedder.name, "c500o0"), store_config)
    first = index.sync(_chunks(docs[:4]), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    assert first.added == len(_chunks(docs[:4])) and first.kept == 0
    again = index.sync(_chunks(docs[:4]), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    assert (again.added, again.deleted, again.kept) == (0, 0, first.added)
    grown = index.sync(_chunks(docs), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    assert grown.added == len(_chunks(docs[4:])) and grown.documents_changed == 1
    assert index.count() == len(_chunks(docs))


@pytest.mark.slow
def test_records_keep_original_text_and_exact_spans(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    by_id = {d.doc_id: d for d in docs}
    summaries = {d.doc_id: f"SUMMARY OF {d.doc_id}" for d in docs}
    index = Index(_client(store_config), IndexKey("t", "sac-x", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), {d.doc_id: d.content_hash for d in docs}, summaries, memo)
    ids, vectors, metas, texts = index.all_embeddings()
    assert len(ids) == len(_chunks(docs))
    for meta, text in zip(metas, texts):
        assert "SUMMARY OF" not in text
        assert by_id[meta["doc_id"]].text[meta["start"] : meta["end"]] == text
    # The stored vector is the summary-augmented one, not the chunk alone.
    first = _chunks(docs)[0]
    row = ids.index(first.chunk_id)
    augmented = embedder.embed_documents([f"{summaries[first.doc_id]}\n\n{first.text}"])[0]
    assert float(vectors[row] @ augmented) > 0.999
    assert float(vectors[row] @ embedder.embed_query(first.text)) < 0.999


@pytest.mark.slow
def test_changed_summary_reembeds_only_that_document(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    hashes = {d.doc_id: d.content_hash for d in docs}
    summaries = {d.doc_id: f"Summary {i}" for i, d in enumerate(docs)}
    index = Index(_client(store_config), IndexKey("t", "sac-y", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), hashes, summaries, memo)
    edited = dict(summaries, **{docs[2].doc_id: "An edited summary"})
    report = index.sync(_chunks(docs), hashes, edited, memo)
    assert report.added == len(_chunks([docs[2]]))
    assert report.documents_changed == 1 and report.deleted == 0
    assert index.count() == len(_chunks(docs))


def test_delete_documents_removes_every_chunk_of_them(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    index = Index(_client(store_config), IndexKey("t", "baseline", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    removed = index.delete_documents([docs[0].doc_id])
    assert removed == len(_chunks([docs[0]]))
    assert {m["doc_id"] for m in index.records().values()} == {d.doc_id for d in docs[1:]}


@pytest.mark.slow
def test_hnsw_top64_agrees_with_exact_search(store_config, memo, embedder, demo_datasets):
    """chromadb's approximate search against a brute-force cosine oracle on real embeddings."""
    cuad = demo_datasets["cuad"]
    docs = list(cuad.documents[:8])
    index = Index(_client(store_config), IndexKey("t", "baseline", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    ids, matrix, _, _ = index.all_embeddings()
    queries = [q.text for q in cuad.queries[:40]]
    qv = memo.embed_documents(queries)
    hits = index.search(qv, 64)
    agree = []
    for row, got in zip(qv, hits):
        exact = {ids[i] for i in np.argsort(-(matrix @ row))[:64]}
        agree.append(len(exact & {h.chunk.chunk_id for h in got}) / 64)
        scores = [h.score for h in got]
        assert scores == sorted(scores, reverse=True)
    assert len(ids) > 64 * 4
    assert np.mean(agree) >= 0.99, f"top-64 agreement {np.mean(agree):.4f}"


@pytest.mark.slow
def test_ingest_is_idempotent_across_processes(tmp_path, cli):
    """An ingest in this process, then the same ingest in a new process: the second embeds nothing."""
    env_args = ["--workspace", str(tmp_path / "ws"), "--benchmark", str(DEMO), "--datasets", "contractnli",
                "--methods", "baseline,sac-expert", "-q"]
    code, out, err = cli("ingest", *env_args)
    assert code == 0, err
    lines = [line for line in out.splitlines() if "chunks embedded" in line]
    assert len(lines) == 2 and "0 chunks embedded" not in out, out
    second = subprocess.run([sys.executable, "-m", "sac", "ingest", *env_args], cwd=ROOT, capture_output=True,
                            text=True, timeout=600)
    assert second.returncode == 0, second.stderr
    lines = [line for line in second.stdout.splitlines() if "chunks embedded" in line]
    assert len(lines) == 2 and all(": 0 chunks embedded" in line for line in lines), second.stdout


@pytest.mark.slow
def test_workbench_build_uses_summaries_per_method(store_config, memo, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    wb = Workbench(store_config, embedder=memo)
    methods = [parse_method("baseline"), parse_method("sac-generic")]
    reports = wb.build("nda", docs, methods)
    assert set(reports) == {"baseline", "sac-generic"}
    n = sum(len(wb.chunks(d)) for d in docs)
    assert all(r.added == n for r in reports.values())
    again = wb.build("nda", docs, methods)
    assert all(r.added == 0 for r in again.values())
    smaller = dataclasses.replace(store_config, chunk_size=300)
    assert Workbench(smaller, embedder=memo).index("nda", methods[0]).count() == 0


class _Counting:
    """The real embedder, counting the texts it embeds."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.texts = inner, inner.name, []

    def embed_documents(self, texts):
        self.texts.extend(texts)
        return self.inner.embed_documents(texts)


@pytest.mark.slow
def test_an_index_copies_vectors_another_index_embedded_from_the_same_text(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    hashes = {d.doc_id: d.content_hash for d in docs}
    client = _client(store_config)
    generic = {d.doc_id: f"Generic summary of {d.doc_id}" for d in docs}
    # A mixed set: the same summaries except for one document.
    mixed = {**generic, docs[0].doc_id: "A different summary of the first NDA"}
    Index(client, IndexKey("t", "sac-generic", embedder.name, "c500o0"), store_config).sync(
        _chunks(docs), hashes, generic, memo)

    counting = _Counting(memo)
    index = Index(client, IndexKey("t", "sac-mixed", embedder.name, "c500o0"), store_config)
    report = index.sync(_chunks(docs), hashes, mixed, counting)
    first = _chunks(docs[:1])
    assert (report.added, report.copied, report.embedded) == (len(_chunks(docs)), len(_chunks(docs[1:])), len(first))
    assert counting.texts == [f"{mixed[c.doc_id]}\n\n{c.text}" for c in first]  # only the document that differs
    # A copied vector is exactly what embedding the record's own text gives.
    ids, vectors, _, _ = index.all_embeddings()
    sample = [c for c in _chunks(docs[1:]) if c.text.strip()][:5]
    fresh = embedder.embed_documents([f"{mixed[c.doc_id]}\n\n{c.text}" for c in sample])
    for chunk, vector in zip(sample, fresh):
        assert float(vectors[ids.index(chunk.chunk_id)] @ vector) > 0.99999

    # An index of another corpus is never a donor.
    other = Index(client, IndexKey("t2", "sac-generic", embedder.name, "c500o0"), store_config)
    counting.texts.clear()
    assert other.sync(_chunks(docs[1:2]), hashes, generic, counting).copied == 0
    assert len(counting.texts) == len(_chunks(docs[1:2]))


@pytest.mark.slow
def test_reads_by_id_come_back_in_the_order_asked_across_batches(store_config, memo, embedder, demo_datasets, monkeypatch):
    """Vectors and chunks read by id arrive in the order asked, duplicates included, however many reads it takes
    (one read of more than about 32,000 ids fails in SQLite; READ_BATCH splits it)."""
    from sac.index import store

    docs = list(demo_datasets["contractnli"].documents[:3])
    index = Index(_client(store_config), IndexKey("t", "baseline", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), {d.doc_id: d.content_hash for d in docs}, {}, memo)
    ids, matrix, metas, texts = index.all_embeddings()
    asked = ids[::-1] + ids[:3]
    whole_vectors, whole_chunks = index.vectors_of(asked), index.get_chunks(asked)
    monkeypatch.setattr(store, "READ_BATCH", 7)
    assert len(ids) > 7 * 5
    vectors, chunks = index.vectors_of(asked), index.get_chunks(asked)
    np.testing.assert_array_equal(vectors, whole_vectors)
    np.testing.assert_array_equal(vectors, matrix[[ids.index(i) for i in asked]])
    assert [c.chunk_id for c in chunks] == [c.chunk_id for c in whole_chunks] == asked
    by_id = {d.doc_id: d for d in docs}
    assert all(by_id[c.doc_id].text[c.span.start : c.span.end] == c.text for c in chunks)


def _client(config):
    from sac.index.client import make_client

    return make_client(config)



@pytest.mark.slow
def test_unchanged_sync_skips_and_any_change_is_still_seen(store_config, memo, embedder, demo_datasets):
    docs = list(demo_datasets["contractnli"].documents)
    hashes = {d.doc_id: d.content_hash for d in docs}
    summaries = {d.doc_id: f"Summary {i}" for i, d in enumerate(docs)}
    index = Index(_client(store_config), IndexKey("t", "sac-z", embedder.name, "c500o0"), store_config)
    index.sync(_chunks(docs), hashes, summaries, memo)
    assert index.sync(_chunks(docs), hashes, summaries, memo).added == 0
    # Records deleted behind the index's back are found again despite the stored fingerprint.
    index.delete_documents([docs[1].doc_id])
    assert index.sync(_chunks(docs), hashes, summaries, memo).added == len(_chunks([docs[1]]))
    edited = dict(summaries, **{docs[0].doc_id: "Edited"})
    assert index.sync(_chunks(docs), hashes, edited, memo).added == len(_chunks([docs[0]]))
    assert index.count() == len(_chunks(docs))


@pytest.mark.slow
def test_exact_ties_come_back_in_document_order_whatever_the_order_of_insertion(store_config, memo, embedder, demo_datasets):
    """Look-alike templates hold chunks with the same text, hence the same vector: an exact tie. Where it falls at
    the last rank, the index returns the tied chunk of the first document by id and offset, so a rerun, or the
    same corpus indexed in another order, gives the same hits."""
    from sac.types import Document

    nda = demo_datasets["contractnli"].documents[0]
    twins = [Document(f"{name}.txt", nda.text) for name in ("twin-b", "twin-a", "twin-c")]
    others = list(demo_datasets["contractnli"].documents[1:4])
    query = memo.embed_documents([_chunks([twins[0]])[3].text])
    got = []
    for n, order in enumerate((twins + others, others + twins[::-1])):
        index = Index(_client(store_config), IndexKey(f"tie{n}", "baseline", embedder.name, "c500o0"), store_config)
        index.sync(_chunks(order), {d.doc_id: d.content_hash for d in order}, {}, memo)
        got.append([(h.chunk.doc_id, h.chunk.span.start, h.score) for h in index.search(query, 2)[0]])
    assert got[0] == got[1], got
    assert [doc for doc, _, _ in got[0]] == ["twin-a.txt", "twin-b.txt"] and got[0][0][2] == got[0][1][2], got


def _waiting(store_dir: Path) -> dict[str, int]:
    """Records each collection's write-ahead log holds beyond what its HNSW graph on disk has (chromadb's tables)."""
    import sqlite3

    con = sqlite3.connect(store_dir / "chroma.sqlite3")
    out = {}
    for col_id, name in con.execute("SELECT id, name FROM collections"):
        seg = con.execute("SELECT id FROM segments WHERE collection = ? AND scope = 'VECTOR'", (col_id,)).fetchone()
        flushed = con.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (seg[0],)).fetchone()
        out[name] = con.execute("SELECT COUNT(*) FROM embeddings_queue WHERE topic LIKE ? AND seq_id > ?",
                                (f"%/{col_id}", (flushed[0] or 0) if flushed else 0)).fetchone()[0]
    con.close()
    return out


_QUERY_IN_A_NEW_PROCESS = """
import json, sys, numpy as np, chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
col = client.get_collection("settled", embedding_function=None)
print(json.dumps(col.query(query_embeddings=np.load(sys.argv[2]), n_results=64, include=[])["ids"]))
"""


@pytest.mark.slow
def test_a_settled_graph_answers_the_same_in_every_process(tmp_path):
    """Records past chromadb's last flush are added to the graph again, in parallel, by every process that opens the
    store, so two processes could answer one unchanged index differently; once settled, they cannot."""
    import chromadb
    from chromadb.config import Settings

    from sac.index.compaction import settle_collection

    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((1643, 384)).astype(np.float32) + 2 * rng.standard_normal((1, 384)).astype(np.float32)
    queries = vectors[:200] + rng.standard_normal((200, 384)).astype(np.float32)
    np.save(tmp_path / "q.npy", queries)
    store = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
    col = client.create_collection("settled", configuration={"hnsw": {"space": "cosine", "ef_search": 256,
                                   "ef_construction": 256, "max_neighbors": 32}}, embedding_function=None)
    for i in range(0, len(vectors), 500):
        col.add(ids=[str(j) for j in range(i, min(i + 500, len(vectors)))], embeddings=vectors[i:i + 500],
                documents=[f"chunk {j}" for j in range(i, min(i + 500, len(vectors)))])
    assert _waiting(store) == {"settled": 643}  # 1,000 flushed, the rest only in the log
    assert settle_collection(client, "settled", store) == 357  # up to the next flush, 2,000 writes
    assert _waiting(store) == {"settled": 0} and settle_collection(client, "settled", store) == 0
    assert col.count() == 1643 and col.get(ids=["7"], include=["documents"])["documents"] == ["chunk 7"]
    answers = [subprocess.run([sys.executable, "-c", _QUERY_IN_A_NEW_PROCESS, str(store), str(tmp_path / "q.npy")],
                              capture_output=True, text=True, timeout=300, check=True).stdout for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]


@pytest.mark.slow
def test_a_build_leaves_no_chunk_record_only_in_the_log(tmp_path, memo, demo_datasets):
    """Every chunk collection a build writes is flushed whole, however small. The document collection of +docs, read
    whole by every search, is left in the log while its graph is too small for hnswlib to prune a link: 5 NDAs."""
    config = SacConfig(workspace=tmp_path / "workspace")
    wb = Workbench(config, embedder=memo)
    nda = list(demo_datasets["contractnli"].documents)
    reports = wb.build("nda", nda, [parse_method("baseline"), parse_method("sac-generic+docs1")])
    waiting = _waiting(config.workspace / "chroma")
    documents = [name for name in waiting if name.startswith("sacdoc_")]
    assert len(waiting) == 3 and len(documents) == 1, waiting  # baseline, sac-generic, its documents
    assert {n: v for n, v in waiting.items() if n not in documents} == dict.fromkeys(set(waiting) - set(documents), 0)
    assert waiting[documents[0]] == len(nda) == 5
    chunk_records = {m: r.added + r.kept for m, r in reports.items()}
    assert all(r.settled == 1000 - chunk_records[m] % 1000 for m, r in reports.items()), (reports, chunk_records)


_READ_WHOLE_IN_A_NEW_PROCESS = """
import json, sys, numpy as np, chromadb
from chromadb.config import Settings
client = chromadb.PersistentClient(path=sys.argv[1], settings=Settings(anonymized_telemetry=False))
col = client.get_collection(sys.argv[2], embedding_function=None)
got = col.query(query_embeddings=np.load(sys.argv[3]), n_results=col.count(), include=["distances"])
print(json.dumps([dict(zip(ids, dists)) for ids, dists in zip(got["ids"], got["distances"])]))
"""


@pytest.mark.slow
@pytest.mark.parametrize("records", [33, 34])
def test_a_collection_read_whole_is_settled_only_when_its_graph_could_lose_a_record(tmp_path, records):
    """``read_whole`` (the document collection): up to 2M + 1 = 33 records (M = 16) the graph is left in the log and
    every new process, replaying it, still finds every record at its exact cosine; at 34 it is settled as before."""
    import chromadb
    from chromadb.config import Settings

    from sac.index.compaction import _HEADER, settle_collection

    rng = np.random.default_rng(records)
    vectors = rng.standard_normal((records, 384)).astype(np.float32) + 2 * rng.standard_normal((1, 384)).astype(np.float32)
    queries = rng.standard_normal((50, 384)).astype(np.float32)
    np.save(tmp_path / "q.npy", queries)
    store = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
    col = client.create_collection("whole", configuration={"hnsw": {"space": "cosine"}}, embedding_function=None)
    for i in range(records):  # one write each, as documents are refreshed
        col.add(ids=[f"d{i}"], embeddings=vectors[i:i + 1])
    written = settle_collection(client, "whole", store, read_whole=True)
    headers = [p / "header.bin" for p in store.iterdir() if (p / "header.bin").is_file()]
    on_disk = [_HEADER.unpack_from(h.read_bytes())[3] for h in headers]  # the elements of the graph on disk
    if records == 33:
        assert (written, _waiting(store)["whole"], on_disk) == (0, 33, [0])  # nothing flushed: all in the log
    else:
        assert (written, on_disk) == (1000 - 34, [34])  # flushed: the graph on disk holds every record
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosines = (queries / np.linalg.norm(queries, axis=1, keepdims=True)) @ unit.T
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", _READ_WHOLE_IN_A_NEW_PROCESS, str(store), "whole",
                              str(tmp_path / "q.npy")], capture_output=True, text=True, timeout=300, check=True).stdout
        for q, found in enumerate(json.loads(out)):
            assert sorted(found) == sorted(f"d{i}" for i in range(records))
            assert max(abs(1 - found[f"d{i}"] - cosines[q, i]) for i in range(records)) < 1e-4


_OPEN_NEW_STORES = """
import sys, time
from pathlib import Path
from sac.config import SacConfig
from sac.errors import StoreError
from sac.index.client import make_client
from tests.waiting import wait_for_clock
start, workspaces = float(sys.argv[1]), sys.argv[2:]
for n, workspace in enumerate(workspaces):
    wait_for_clock(start + n * 0.5, clock=time.time)  # every process opens this store at the same moment
    try:
        make_client(SacConfig(workspace=Path(workspace))).get_or_create_collection("opened")
    except StoreError as err:
        print(err)
"""


@pytest.mark.slow
def test_processes_opening_a_new_store_at_once_all_open_it(tmp_path):
    """Two CLI runs started together on a new workspace both create the store's tables; unguarded, one of them
    failed ("table collections already exists", "database is locked") in 13 of 20 such rounds. Four processes
    open each of 12 new stores at the same moment; every opening succeeds."""
    workspaces = [str(tmp_path / f"w{n}") for n in range(12)]
    start = time.time() + 8  # after every process has imported chromadb
    procs = [subprocess.Popen([sys.executable, "-c", _OPEN_NEW_STORES, str(start), *workspaces], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err for _, err in outputs]
    assert [out for out, _ in outputs] == [""] * 4
    for workspace in workspaces:
        assert [c.name for c in _client(SacConfig(workspace=Path(workspace))).list_collections()] == ["opened"]
