"""Removing documents and corpora leaves none of their text anywhere under the workspace (sac.usecases.remove)."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import pytest

from sac.config import SacConfig
from sac.errors import ConfigError, CorpusError
from sac.evaluation.review import ChunkLabel, ReviewStore, make_gold_span
from sac.evaluation.runs import list_runs, save_run
from sac.index.documents import DocumentIndex
from sac.index.store import list_indexes
from sac.ingest.catalog import save_benchmark
from sac.methods import parse_methods
from sac.summaries.llm import OpenAISummarizer
from sac.types import Dataset, Document, Query, Span
from sac.usecases.evaluate import evaluate
from sac.usecases.remove import remove_corpus, remove_documents
from sac.usecases.workbench import Workbench
from tests.conftest import DEMO
from tests.openai_stub import OpenAIStub

NDA = DEMO / "corpus" / "contractnli"
CORPUS = "mine-set"  # an uploaded corpus; evaluate(benchmark="mine") names dataset "set"'s corpus like it
BUILT = "baseline,sac-generic,sac-expert,sac-generic-llm,sac-expert-llm"
SEARCHED = [*BUILT.split(","), "sac-generic-llm+hybrid0.5", "sac-expert+docs1", "baseline+hybrid0.5"]


class Counting:
    """The session's model, counting the texts it embeds (queries included)."""

    def __init__(self, inner):
        self.inner, self.name, self.dim, self.texts = inner, inner.name, inner.dim, 0

    def __getattr__(self, attr):
        if attr == "inner":
            raise AttributeError(attr)
        return getattr(self.inner, attr)

    def embed_documents(self, texts):
        texts = list(texts)
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def _planted(name: str, marker: str) -> Document:
    text = (NDA / name).read_text(encoding="utf-8")
    cut = text.find("\n", len(text) // 2)
    return Document(name, f"{text[:cut]}\nThe parties record the code word {marker} here.\n{text[cut:]}")


def _files_with(root: Path, marker: str) -> list[str]:
    """Every file under ``root`` whose bytes hold ``marker`` (SQLite files, HNSW files and JSON alike)."""
    needle = marker.encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes())


def _summarizers(stub: OpenAIStub) -> list[OpenAISummarizer]:
    return [OpenAISummarizer(s, model="stub-model", base_url=stub.base_url, backoff_s=0.01)
            for s in ("generic-llm", "expert-llm")]


def _echo(body) -> str:
    """The LLM's answer names the code word of the document it was sent: summaries (the answer cache) hold it."""
    prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
    words = [w for w in prompt.replace(".", " ").split() if w.startswith("cw") and len(w) == 34]
    return f"Non-disclosure agreement; code word {words[0] if words else 'none'}."


@pytest.mark.slow
def test_removing_a_document_leaves_its_text_nowhere(memo):
    a, b = "cw" + uuid.uuid4().hex, "cw" + uuid.uuid4().hex
    doc_a, doc_b = _planted("AGProjects-NDA.txt", a), _planted("NDA_ResConnect.txt", b)
    doc_c = Document("ceii-and-nda.txt", (NDA / "ceii-and-nda.txt").read_text(encoding="utf-8"))
    embedder = Counting(memo)
    wb = Workbench(SacConfig.from_env(), embedder=embedder)
    ws = wb.workspace
    docs = ws.add_documents(CORPUS, [doc_a, doc_b, doc_c])
    methods = parse_methods(BUILT)
    with OpenAIStub(handler=_echo) as stub:
        wb.build(CORPUS, docs, methods, summarizers=_summarizers(stub))
    wb.summary_store.save_edit(doc_a, "generic", f"Edited by hand: NDA with code word {a}.")
    hits = wb.search(CORPUS, parse_methods(",".join(SEARCHED)), [f"code word {a}"], 8)
    assert any(h.span.doc_id == doc_a.doc_id for h in hits["sac-expert+docs1"][0])

    question = Query("q1", "Which code word do the parties record?", (Span(doc_a.doc_id, *_where(doc_a, a)),))
    dataset = Dataset("set", tuple(docs), (question,))
    result = evaluate(wb, [dataset], parse_methods("baseline,sac-generic"), [1, 8], benchmark="mine")
    run = save_run(ws, result, wb.config, {"benchmark": "mine", "datasets": ["set"], "methods": ["baseline"]})
    assert any(h["file_path"] == doc_a.doc_id for row in run.retrieved() for h in row["retrieved"])
    reviews = ReviewStore(ws.reviews_dir)
    start, end = _where(doc_a, a)
    reviews.add_gold(make_gold_span(corpus=CORPUS, query_id="q1", query=question.text, doc_id=doc_a.doc_id,
                                    doc_text=doc_a.text, start=start - 10, end=end + 5, reviewer="expert"))
    reviews.save_labels([ChunkLabel(CORPUS, "q1", question.text, "baseline", d.doc_id, 0, 50, "relevant", "expert")
                         for d in (doc_a, doc_b)])

    root = ws.root
    before = _files_with(root, a)  # the test can fail: the code word is on disk in every kind of store
    for where in ("corpora/", "chroma/chroma.sqlite3", "summaries/", "reviews/ground_truth.jsonl", "lexical/"):
        assert any(f.startswith(where) for f in before), (where, before)

    report = remove_documents(wb, CORPUS, [doc_a.doc_id])

    assert _files_with(root, a) == []
    assert _files_with(root, f"code word {a}") == []
    after_b = _files_with(root, b)
    for where in ("corpora/", "chroma/chroma.sqlite3", "summaries/", "lexical/"):
        assert any(f.startswith(where) for f in after_b), (where, after_b)
    assert report.documents == (doc_a.doc_id,) and report.chunks > 0 and report.indexes == 5
    assert report.summaries == 4 and report.labels == 1 and report.gold_spans == 1
    assert report.runs == (run.run_id,) and list_runs(ws) == [] and report.compacted
    message = report.message()
    assert f"Deleted 1 saved run that held its text: {run.run_id}" in message and "compacted" in message
    assert [lab.doc_id for lab in reviews.labels()] == [doc_b.doc_id]
    assert [d.doc_id for d in ws.load_corpus(CORPUS)] == [doc_b.doc_id, doc_c.doc_id]

    # The indexes stay complete and answer at once: nothing is embedded again but the question.
    fresh = Workbench(SacConfig.from_env(), embedder=embedder)
    for method in methods:
        index = fresh.index(CORPUS, method)
        assert index.is_complete()
        if method.strategy:
            assert DocumentIndex(index).is_fresh()
    embedder.texts = 0
    hits = fresh.search(CORPUS, parse_methods(",".join(SEARCHED)), ["code word of the parties"], 8)
    assert embedder.texts == 1
    assert {h.span.doc_id for per in hits.values() for h in per[0]} <= {doc_b.doc_id, doc_c.doc_id}
    assert any(h.span.doc_id == doc_b.doc_id for h in hits["baseline+hybrid0.5"][0])
    reports = fresh.build(CORPUS, fresh.workspace.load_corpus(CORPUS), methods)
    assert all(r.embedded == 0 for r in reports.values()) and embedder.texts == 1


def _where(doc: Document, marker: str) -> tuple[int, int]:
    start = doc.text.index(marker)
    return start, start + len(marker)


@pytest.mark.slow
def test_a_summary_another_document_shares_stays(memo):
    text = f"Supply agreement between Acme and Bolt, reference {uuid.uuid4().hex}. Governed by Dutch law.\n"
    wb = Workbench(SacConfig.from_env(), embedder=memo)
    docs = wb.workspace.add_documents("twins", [Document("one.txt", text), Document("two.txt", text)])
    wb.build("twins", docs, parse_methods("sac-generic"))
    folder = wb.summary_store.root / docs[0].content_hash
    assert list(folder.glob("*.json"))

    report = remove_documents(wb, "twins", ["one.txt"])

    assert report.summaries == 0 and report.shared_texts == 1 and "Kept the summaries of 1 text" in report.message()
    assert list(folder.glob("*.json"))
    report = remove_documents(wb, "twins", ["two.txt"])
    assert report.summaries == 1 and not folder.exists()


@pytest.mark.slow
def test_the_cli_removes_documents_and_whole_corpora(cli, tmp_path):
    marker = "cw" + uuid.uuid4().hex
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.txt").write_text(f"Supply agreement between Acme and Bolt. Code word {marker}.\n", encoding="utf-8")
    (folder / "b.txt").write_text("Licence agreement between Cora and Dune, governed by Dutch law.\n", encoding="utf-8")
    (folder / "c.txt").write_text("Lease between Eden and Fox for the warehouse at 4 Quay Street.\n", encoding="utf-8")
    root = Path(SacConfig.from_env().workspace)
    assert cli("ingest", "--docs", str(folder), "--corpus", "tiny", "--methods", "baseline,sac-generic", "-q")[0] == 0
    assert _files_with(root, marker)
    (tmp_path / "one.txt").write_text("Option agreement between Gale and Hart.\n", encoding="utf-8")
    code, out, err = cli("ingest", "--docs", str(tmp_path / "one.txt"), "--corpus", "one", "--methods", "baseline")
    assert code == 0 and "one / baseline: 1 chunk embedded, 0 already indexed, 0 removed" in out, (out, err)
    assert "one: 1 document in " in out

    code, out, err = cli("remove", "--corpus", "tiny", "a.txt")
    assert code == 0, err
    assert "Removed 1 document from 'tiny' (a.txt)" in out and "compacted" in out
    assert _files_with(root, marker) == []

    code, out, err = cli("remove", "--corpus", "tiny", "--all")
    assert code == 0, err
    assert "Removed corpus 'tiny' (2 documents)" in out
    assert _files_with(root, "Cora and Dune") == [] and _files_with(root, "Eden and Fox") == []
    assert not (root / "corpora" / "tiny.jsonl").exists()
    assert [i for i in list_indexes(Workbench(SacConfig.from_env()).client) if i.corpus == "tiny"] == []


@pytest.mark.slow
def test_bad_input_removes_nothing(cli, memo):
    wb = Workbench(SacConfig.from_env(), embedder=memo)
    docs = wb.workspace.add_documents("tiny", [Document("a.txt", "Supply agreement between Acme and Bolt.")])
    wb.build("tiny", docs, parse_methods("baseline"))
    corpus_file = wb.workspace.corpus_path("tiny").read_text()
    with pytest.raises(CorpusError, match="No document 'nope.txt' in corpus 'tiny'.*Nothing was removed"):
        remove_documents(wb, "tiny", ["a.txt", "nope.txt"])
    with pytest.raises(ConfigError, match="No corpus named 'ghost'"):
        remove_documents(wb, "ghost", ["a.txt"])
    with pytest.raises(ConfigError, match="No corpus named 'ghost'"):
        remove_corpus(wb, "ghost")
    with pytest.raises(ConfigError, match="Name the documents"):
        remove_documents(wb, "tiny", [])
    with pytest.raises(CorpusError, match="benchmark corpus.*--all"):
        remove_documents(wb, "demo-cuad", ["cuad/x.txt"])
    assert wb.workspace.corpus_path("tiny").read_text() == corpus_file
    assert wb.index("tiny", parse_methods("baseline")[0]).count() > 0

    code, _, err = cli("remove", "--corpus", "tiny", "--all", "a.txt")
    assert code == 1 and err.startswith("error: Name the documents")
    code, _, err = cli("remove", "--corpus", "tiny", "nope.txt")
    assert code == 1 and "No document 'nope.txt'" in err
    assert wb.workspace.corpus_path("tiny").read_text() == corpus_file


@pytest.mark.slow
def test_an_uploaded_benchmark_is_removed_whole_with_its_runs(cli, demo_datasets):
    nda = demo_datasets["contractnli"]
    kept = {q.gold[0].doc_id for q in nda.queries[:2]}
    small = dataclasses.replace(nda, documents=tuple(d for d in nda.documents if d.doc_id in kept),
                                queries=nda.queries[:2])
    root = Path(SacConfig.from_env().workspace)
    from sac.workspace import Workspace

    folder = save_benchmark(Workspace(root), "upl", [small])
    code, _, err = cli("eval", "--benchmark", str(folder), "--methods", "baseline", "--k", "1,2", "-q")
    assert code == 0, err
    assert len(list_runs(Workspace(root))) == 1
    unique = small.documents[0].text[200:260]
    assert _files_with(root, unique)

    code, out, err = cli("remove", "--corpus", "upl-contractnli", "--all")
    assert code == 0, err
    assert "Deleted 1 saved run" in out and "Deleted benchmark 'upl'" in out
    assert not folder.exists() and list_runs(Workspace(root)) == []
    assert _files_with(root, unique) == []


@pytest.mark.slow
def test_the_demo_is_forgotten_not_deleted(memo, demo_datasets):
    wb = Workbench(SacConfig.from_env(), embedder=memo)
    nda = demo_datasets["contractnli"]
    wb.build("demo-contractnli", nda.documents[:2], parse_methods("baseline"))
    report = remove_corpus(wb, "demo-contractnli")
    assert report.whole_corpus and report.indexes == 1
    assert "stay in" in report.message() and (DEMO / "benchmarks" / "contractnli.json").is_file()
    assert [i for i in list_indexes(wb.client) if i.corpus == "demo-contractnli"] == []


@pytest.mark.slow
def test_a_chroma_server_deletes_the_records_and_its_operator_compacts(memo, chroma_server):
    config = dataclasses.replace(SacConfig.from_env(), chroma_url=chroma_server)
    corpus = f"srv-{uuid.uuid4().hex[:8]}"  # the server is shared by the session's tests
    wb = Workbench(config, embedder=memo)
    docs = wb.workspace.add_documents(corpus, [Document("a.txt", "Supply agreement between Acme and Bolt."),
                                               Document("b.txt", "Lease between Eden and Fox.")])
    method = parse_methods("baseline")[0]
    wb.build(corpus, docs, [method])
    report = remove_documents(wb, corpus, ["a.txt"])
    assert report.chunks == 1 and report.server == chroma_server and not report.compacted
    assert "its operator" in report.message()
    assert {m["doc_id"] for m in wb.index(corpus, method).records().values()} == {"b.txt"}
    assert wb.index(corpus, method).is_complete()


@pytest.mark.slow
def test_the_corpus_page_removes_documents_and_the_whole_corpus(app_memo):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP

    marker = "cw" + uuid.uuid4().hex
    wb = Workbench(SacConfig.from_env(), embedder=app_memo)
    docs = wb.workspace.add_documents("tiny", [Document("a.txt", f"Supply agreement, code word {marker}."),
                                               Document("b.txt", "Lease between Eden and Fox.")])
    wb.build("tiny", docs, parse_methods("baseline"))
    root = wb.workspace.root
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/1_Corpus.py").run()
    at.selectbox(key="corpus_shown").set_value("tiny").run()
    at.multiselect(key="corpus_remove_pick").set_value(["a.txt"]).run()
    at.button(key="corpus_remove").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert any("Removed 1 document from 'tiny' (a.txt)" in s.value for s in at.success)
    assert _files_with(root, marker) == []

    at.checkbox(key="corpus_remove_all_sure").check().run()
    at.button(key="corpus_remove_all").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert any("Removed corpus 'tiny' (1 document)" in s.value for s in at.success)
    assert not wb.workspace.corpus_path("tiny").exists() and _files_with(root, "Eden and Fox") == []


@pytest.mark.slow
def test_a_locked_store_is_reported_not_claimed_compacted(memo, monkeypatch):
    import sqlite3

    def locked(_path):
        raise sqlite3.OperationalError("database is locked")

    monkeypatch.setattr("sac.usecases.remove.vacuum_store", locked)
    wb = Workbench(SacConfig.from_env(), embedder=memo)
    docs = wb.workspace.add_documents("tiny", [Document("a.txt", "Supply agreement between Acme and Bolt."),
                                               Document("b.txt", "Lease between Eden and Fox.")])
    wb.build("tiny", docs, parse_methods("baseline"))
    report = remove_documents(wb, "tiny", ["a.txt"])
    assert not report.compacted and report.chunks == 1
    assert "Compacting the Chroma store failed (database is locked)" in report.message()
    assert "was compacted" not in report.message()


def _closed_hnsw_index(tmp_path, name: str, n: int, seed: int, *, settle: bool = False, queries: int = 25, k: int = 8):
    """A real persisted HNSW index of ``n`` random vectors (flushed every 100 writes; ``settle``: flushed whole), closed
    as removal closes it before scrubbing. Returns the store folder, the index's segment folder, a search (the
    first ``queries`` vectors, top ``k``) to run on the store reopened, and what that search found before."""
    import random

    import chromadb
    from chromadb.config import Settings

    from sac.index.client import release_store
    from sac.index.compaction import settle_collection

    rng = random.Random(seed)
    store = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
    col = client.create_collection(name, configuration={"hnsw": {"space": "cosine", "sync_threshold": 100}})
    vectors = [[rng.random() for _ in range(16)] for _ in range(n)]
    col.add(ids=[f"c{i}" for i in range(n)], embeddings=vectors)
    if settle:
        settle_collection(client, name, store)

    def search() -> list:
        opened = chromadb.PersistentClient(path=str(store), settings=Settings(anonymized_telemetry=False))
        return opened.get_collection(name).query(query_embeddings=vectors[:queries], n_results=k)["ids"]

    before = col.query(query_embeddings=vectors[:queries], n_results=k)["ids"]
    del col, client
    release_store(SacConfig(workspace=tmp_path))
    [segment] = [d for d in store.iterdir() if (d / "header.bin").is_file()]
    return store, segment, search, before


def test_scrubbing_zeroes_the_norms_an_index_keeps_past_its_elements(tmp_path):
    """length.bin holds one norm per element but is written for the index's capacity (100 elements when new): the
    entries past the element count are uncleared memory. A planted string there is zeroed; the records' own norms
    and every search stay as they were."""
    import struct

    from sac.index.compaction import scrub_store

    store, segment, search, before = _closed_hnsw_index(tmp_path, "norms", 7, 11, settle=True, queries=7, k=3)
    count = struct.unpack_from("<Q", (segment / "header.bin").read_bytes(), 4 + 8 * 2)[0]
    norms = bytearray((segment / "length.bin").read_bytes())
    assert count == 7 and len(norms) == 4 * 100  # settled: the header counts the 7 elements
    kept = bytes(norms[:4 * count])
    planted = uuid.uuid4().hex[:12].encode()
    norms[200:200 + len(planted)] = planted
    (segment / "length.bin").write_bytes(norms)

    assert scrub_store(store) >= len(planted)
    after = (segment / "length.bin").read_bytes()
    assert planted not in after and after[:4 * count] == kept and not any(after[4 * count:])
    assert search() == before


def test_scrubbing_zeroes_what_hnsw_left_in_unused_slots_and_changes_no_search(tmp_path):
    """hnswlib writes its link lists whole, unused slots included, without clearing them first: bytes the process
    held before can reach the disk there. A planted string in unused slots of a real persisted index is zeroed, and
    every query returns what it returned before."""
    import struct

    from sac.index.compaction import scrub_store

    store, segment, search, before = _closed_hnsw_index(tmp_path, "scrub-me", 600, 7)
    level0 = bytearray((segment / "data_level0.bin").read_bytes())
    per_element = struct.unpack_from("<Q", (segment / "header.bin").read_bytes(), 4 + 8 * 3)[0]
    planted = uuid.uuid4().hex[:12].encode()
    end = 4 + 4 * 32  # maxM0 = 2 * M = 32 neighbour slots (chromadb's default M is 16)
    roomy = [i for i in range(600) if struct.unpack_from("<H", level0, i * per_element)[0] * 4 + 4 + len(planted) <= end]
    assert len(roomy) >= 12
    for i in roomy[::len(roomy) // 12][:12]:  # in the last neighbour slots of some elements, past their counts
        start = i * per_element
        level0[start + end - len(planted):start + end] = planted
    (segment / "data_level0.bin").write_bytes(level0)
    assert planted in (segment / "data_level0.bin").read_bytes()

    assert scrub_store(store) >= 12 * len(planted)
    assert planted not in (segment / "data_level0.bin").read_bytes()
    assert scrub_store(store) == 0  # nothing left to zero
    assert search() == before
