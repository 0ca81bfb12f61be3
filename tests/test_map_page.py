"""The embedding map and the why-it-went-wrong views: library functions on the demo NDAs with the real model
and a real chromadb, and the map page driven with AppTest."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.errors import ConfigError
from sac.evaluation import diagnostics
from sac.evaluation.runs import save_run
from sac.index import snapshot
from sac.methods import parse_method, parse_methods
from sac.render.map import embedding_map_figure, hover_text
from sac.types import Chunk, Hit, Span
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench
from webapp import widgets

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
CORPUS = "demo-contractnli"


@pytest.fixture(scope="module")
def map_workspace(tmp_path_factory, memo, demo_datasets) -> Path:
    """A workspace with the demo NDAs indexed for the baseline and generic SAC, as the app builds them
    (through the session's ``memo``: texts other tests embedded already are not embedded again)."""
    path = tmp_path_factory.mktemp("map") / "workspace"
    wb = Workbench(SacConfig(workspace=path), embedder=memo)
    wb.build(CORPUS, demo_datasets["contractnli"].documents, parse_methods("baseline,sac-generic"))
    return path


@pytest.fixture(autouse=True)
def _app_on_memo(app_memo):
    """Pages driven with AppTest embed through the session's memo, as the library calls here do."""


@pytest.fixture(scope="module")
def wb(map_workspace, memo) -> Workbench:
    return Workbench(SacConfig(workspace=map_workspace), embedder=memo)


def _snap(wb, name):
    return snapshot.snapshot(wb.client, wb.index(CORPUS, parse_method(name)))


def _map_docs(at):
    """The map's document picker (its key follows the corpus and question, so the defaults do too)."""
    [picker] = [m for m in at.multiselect if m.label == "Documents on the map"]
    return picker


@pytest.mark.slow
def test_sac_pulls_the_documents_apart(wb, demo_datasets):
    """The silhouette by document, over all chunks of the 5 NDAs: SAC's chunks cluster by document."""
    scores = {}
    for name in ("baseline", "sac-generic"):
        snap = _snap(wb, name)
        scores[name] = diagnostics.silhouette_by_document(snap.vectors, snap.doc_ids)
    assert scores["sac-generic"] > scores["baseline"] + 0.1
    assert -1 <= scores["baseline"] <= 1 and scores["sac-generic"] > 0


@pytest.mark.slow
def test_embedding_map_marks_the_query_and_its_hits(wb, demo_datasets):
    nli = demo_datasets["contractnli"]
    query = nli.queries[0]
    hits = wb.search(CORPUS, parse_methods("baseline,sac-generic"), [query.text], 8)
    vector = wb.embed_queries([query.text])[0]
    docs = [d.doc_id for d in nli.documents]
    maps = [diagnostics.embedding_map(_snap(wb, m), m, docs, query_vector=vector, hits=hits[m][0])
            for m in ("baseline", "sac-generic")]
    for m in maps:
        chunks = m.points[m.points["kind"] == "chunk"]
        assert len(chunks) == len(_snap(wb, m.method)) and set(chunks["doc_id"]) == set(docs)
        assert sorted(chunks.loc[chunks["hit_rank"] > 0, "hit_rank"]) == list(range(1, 9))
        assert (m.points["kind"] == "query").sum() == 1 and m.projection == "pca"
        assert np.isfinite(m.points[["x", "y"]].to_numpy()).all()
    fig = embedding_map_figure(maps, sorted(query.gold_doc_ids))
    per_doc = [t for t in fig.data if t.meta["role"] == "document"]
    assert {t.legendgroup for t in per_doc} == set(docs)
    assert len(per_doc) == 2 * len(docs)  # one trace per document in each panel
    assert [len(t.x) for t in fig.data if t.meta["role"] == "hits"] == [8, 8]
    assert "silhouette" in fig.layout.annotations[1].text


def test_hover_text_is_plain_and_escaped():
    shown = hover_text("<script>alert(1)</script> & <b>bold</b>\n\n   the end")
    assert "<script>" not in shown and "&lt;script&gt;" in shown and "&lt;b&gt;" in shown and "&amp;" in shown
    assert hover_text("   \n ") == "(whitespace only)"
    assert len(hover_text("x" * 5000).replace("<br>", "")) <= 400


def test_projection_choices():
    with pytest.raises(ConfigError, match="Unknown projection"):
        diagnostics.project(np.zeros((4, 3)), "tsne")
    if not diagnostics.umap_available():
        with pytest.raises(ConfigError, match="umap-learn"):
            diagnostics.project(np.eye(5), "umap")
    assert diagnostics.project(np.eye(5)).shape == (5, 2)


@pytest.mark.slow
def test_boilerplate_counts_near_duplicates_in_other_documents(wb, demo_datasets):
    snap = _snap(wb, "baseline")
    counts = diagnostics.boilerplate_counts(snap, snap.ids)
    assert len(counts) == len(snap) and all(0 <= n <= 4 for n in counts.values())
    # Brute force on a few rows: other documents with a chunk at cosine >= 0.95.
    sims = snap.vectors @ snap.vectors.T
    for row in range(0, len(snap), 17):
        others = {snap.doc_ids[j] for j in np.flatnonzero(sims[row] >= 0.95) if snap.doc_ids[j] != snap.doc_ids[row]}
        assert counts[snap.ids[row]] == len(others)
    # The default chunking joins whitespace-only pieces to a neighbour, so no index holds a blank chunk
    # (under the paper's splitter they embed identically whatever their document: boilerplate by definition).
    assert [t for t in snap.texts if not t.strip()] == []
    hits = [Hit(snap.chunk(0), 1.0, 1), Hit(Chunk(Span("elsewhere", 0, 3), "abc"), 0.5, 2)]
    assert diagnostics.hit_boilerplate(snap, hits) == [counts[snap.ids[0]], None]


@pytest.mark.slow
def test_document_risk_is_lower_under_sac(wb, demo_datasets):
    table = diagnostics.compare_risk(_snap(wb, "baseline"), _snap(wb, "sac-generic"))
    assert set(table["doc_id"]) == {d.doc_id for d in demo_datasets["contractnli"].documents}
    # Fewer of each document's nearest chunks come from other documents once the summary is embedded.
    assert (table["mix_method"] < table["mix_baseline"]).all()
    assert table["mix_method"].mean() < 0.5 * table["mix_baseline"].mean()
    assert table["risk_baseline"].between(-1, 1.0001).all() and table["boilerplate"].between(0, 1).all()
    # Brute force for one document: share of each chunk's 8 nearest other chunks from another document.
    snap = _snap(wb, "baseline")
    sims = snap.vectors @ snap.vectors.T
    np.fill_diagonal(sims, -np.inf)
    doc = snap.documents[0]
    rows = [i for i, d in enumerate(snap.doc_ids) if d == doc]
    expected = np.mean([np.mean([snap.doc_ids[j] != doc for j in np.argsort(-sims[i])[:8]]) for i in rows])
    assert table.set_index("doc_id").loc[doc, "mix_baseline"] == pytest.approx(expected)
    sampled = diagnostics.document_risk(snap, max_rows=50)
    assert sampled["sampled"].sum() == 50 and (sampled["sampled"] <= sampled["chunks"]).all()


@pytest.mark.slow
def test_query_changes_link_each_question_to_compare(wb, demo_datasets):
    nli = demo_datasets["contractnli"]
    run_a = save_run(wb.workspace, evaluate(wb, [nli], parse_methods("sac-generic"), DEFAULT_K_VALUES), wb.config, {})
    # Run B: the baseline's per-question figures under the same method name, so some questions change.
    base = evaluate(wb, [nli], parse_methods("baseline"), DEFAULT_K_VALUES)
    for row in base.per_query:
        row["method"] = "sac-generic"
    run_b = save_run(wb.workspace, base, wb.config, {})
    changes = diagnostics.query_changes(run_a, run_b, k=8, corpus_of={"contractnli": CORPUS})
    assert len(changes) > 0 and set(changes["change"]) <= {"gained right document", "lost right document"}
    texts = {q.query_id: q.text for q in nli.queries}
    for _, row in changes.iterrows():
        assert row["query"] == texts[row["query_id"]]
        assert row["corpus"] == CORPUS
    assert widgets.compare_link("demo-contractnli", "Is it a & b?") == \
        "Compare?cmp_corpus=demo-contractnli&cmp_query_pick=Is+it+a+%26+b%3F"


def _values(data) -> np.ndarray:
    """A plotly JSON array: a list, or numpy's bytes as {"dtype", "bdata"} (base64)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
    return np.asarray(data)


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.mark.slow
def test_map_page_renders_baseline_beside_sac(map_workspace, monkeypatch, demo_datasets):
    monkeypatch.setenv("SAC_WORKSPACE", str(map_workspace))
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/6_Embedding_map.py").run())
    assert at.selectbox(key="map_corpus").value == CORPUS
    assert (at.selectbox(key="map_left").value, at.selectbox(key="map_right").value) == ("baseline", "sac-generic")
    metrics = {m.label: float(m.value) for m in at.metric}
    assert metrics["Silhouette by document · sac-generic"] > metrics["Silhouette by document · baseline"]
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    docs = _map_docs(at).value
    groups = {t["legendgroup"] for t in chart["data"] if t.get("meta", {}).get("role") == "document"}
    assert groups == set(docs) and len(docs) >= 2
    hits = [t for t in chart["data"] if t.get("meta", {}).get("role") == "hits"]
    assert len(hits) == 2 and all(len(_values(t["x"])) >= 1 for t in hits)
    # Another question and fewer documents: the page follows.
    nli = demo_datasets["contractnli"]
    at.selectbox(key="map_query_pick").set_value(nli.queries[20].query_id).run()
    _map_docs(at).set_value(docs[:2]).run()
    _ok(at)
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert {t["legendgroup"] for t in chart["data"] if t.get("meta", {}).get("role") == "document"} == set(docs[:2])


def test_map_page_on_an_empty_workspace(monkeypatch, tmp_path):
    monkeypatch.setenv("SAC_WORKSPACE", str(tmp_path / "empty"))
    at = AppTest.from_file(APP, default_timeout=120).switch_page("pages/6_Embedding_map.py").run()
    assert not at.exception
    assert any("No corpus is indexed" in w.value for w in at.warning)


@pytest.mark.slow
def test_risk_frame_columns(wb):
    frame = diagnostics.document_risk(_snap(wb, "sac-generic"))
    assert list(frame.columns) == ["doc_id", "chunks", "risk", "mix", "boilerplate", "sampled"]
    assert isinstance(frame, pd.DataFrame) and frame["mix"].is_monotonic_decreasing


@pytest.mark.slow
def test_compare_page_offers_search_options_and_flags_boilerplate_hits(map_workspace, monkeypatch, wb, demo_datasets):
    monkeypatch.setenv("SAC_WORKSPACE", str(map_workspace))
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value(CORPUS).run()
    options = at.multiselect(key="cmp_methods").options
    assert {"sac-generic+hybrid0.5", "sac-generic+docs1", "baseline+hybrid0.5"} <= set(options)
    assert not any("sections" in m or "merge" in m for m in options)  # those need an index of their own
    methods = ["baseline", "sac-generic", "sac-generic+hybrid0.5"]
    at.multiselect(key="cmp_methods").set_value(methods).run()
    _ok(at)
    assert [h.value for h in at.subheader] == methods
    query = demo_datasets["contractnli"].queries[0]
    hits = wb.search(CORPUS, parse_methods(",".join(methods)), [query.text], 8)
    base = _snap(wb, "baseline")
    expected = sum(1 for m in methods for n in diagnostics.hit_boilerplate(base, hits[m][0]) if n)
    flagged = [c.value for c in at.caption if c.value.startswith("Boilerplate:")]
    assert len(flagged) == expected


@pytest.mark.slow
def test_corpus_page_shows_the_look_alike_risk(map_workspace, monkeypatch, demo_datasets):
    monkeypatch.setenv("SAC_WORKSPACE", str(map_workspace))
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/1_Corpus.py").run())
    at.selectbox(key="corpus_shown").set_value(CORPUS).run()
    at.session_state["corpus_risk"] = True
    at.run()
    _ok(at)
    chart = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert [t["name"] for t in chart["data"]] == ["baseline", "sac-generic"]
    assert len(chart["data"][0]["y"]) == len(demo_datasets["contractnli"].documents)
    assert _values(chart["data"][1]["x"]).sum() < _values(chart["data"][0]["x"]).sum()


@pytest.mark.slow
def test_evaluate_page_links_changed_questions_to_compare(map_workspace, monkeypatch, wb, demo_datasets):
    nli = demo_datasets["contractnli"]
    run_a = save_run(wb.workspace, evaluate(wb, [nli], parse_methods("baseline"), DEFAULT_K_VALUES), wb.config,
                     {"benchmark": str(ROOT / "data" / "demo")}, label="diff-a")
    better = evaluate(wb, [nli], parse_methods("sac-generic"), DEFAULT_K_VALUES)
    for rows in (better.per_query, better.metrics, better.retrieved):
        for row in rows:
            row["method"] = "baseline"  # the same method name in both runs: SAC's figures stand in for a new run
    run_b = save_run(wb.workspace, better, wb.config, {"benchmark": str(ROOT / "data" / "demo")}, label="diff-b")
    expected = diagnostics.query_changes(run_a, run_b, k=8, corpus_of={"contractnli": CORPUS})
    assert len(expected) > 0
    monkeypatch.setenv("SAC_WORKSPACE", str(map_workspace))
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/4_Evaluate.py").run())
    at.selectbox(key="eval_cmp_a").set_value(run_a.run_id).run()
    at.selectbox(key="eval_cmp_b").set_value(run_b.run_id).run()
    _ok(at)
    shown = next(df.value for df in at.dataframe if "compare" in df.value.columns)
    assert len(shown) == len(expected) and set(shown["change"]) == set(expected["change"])
    for link, query in zip(shown["compare"], shown["query"]):
        assert link == widgets.compare_link(CORPUS, query)
    assert "sac-generic+hybrid0.5" in at.multiselect(key="eval_methods").options
