"""Every page driven in-process with AppTest, doing real work on the demo data with the real packaged model.

The demo's ContractNLI dataset (5 NDAs, 52 questions) is loaded once through the home page's button
into a session workspace (conftest's ``demo_workspace``); tests that write (summary edits, labels, uploads)
work on a copy of it. The app's model is the session's ``memo``: each text is embedded once per session.
"""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.evaluation.review import ReviewStore
from sac.evaluation.runs import list_runs
from sac.index.store import list_indexes
from sac.methods import RECOMMENDED, parse_method
from sac.types import document_title
from sac.workspace import Workspace
from tests.conftest import finish_build, interrupt_index

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
PAGES = ["pages/1_Corpus.py", "pages/2_Summaries.py", "pages/3_Compare.py", "pages/4_Evaluate.py", "pages/5_Review.py",
         "pages/7_Audit_trail.py",
         "pages/6_Embedding_map.py"]
METHODS = ["baseline", "sac-generic", "sac-expert"]
TIMEOUT = 600


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=TIMEOUT)


def _frame(at: AppTest, *columns: str):
    """The first dataframe shown with all these columns (plain dataframes carry no key in AppTest)."""
    for df in at.dataframe:
        value = df.value
        names = set(value.columns) | set(value.index.names or [])
        if set(columns) <= names:
            return value
    raise AssertionError(f"No dataframe with columns {columns}; shown: {[list(d.value.columns) for d in at.dataframe]}")


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


@pytest.fixture(autouse=True)
def _app_on_memo(app_memo):
    """The app embeds through the session's memo: the real model's vectors, each text embedded once."""


@pytest.fixture
def demo(demo_workspace, monkeypatch) -> Path:
    """The shared demo workspace, read-only by convention."""
    monkeypatch.setenv("SAC_WORKSPACE", str(demo_workspace))
    return demo_workspace


@pytest.fixture
def demo_copy(demo_workspace, monkeypatch, tmp_path) -> Path:
    """A private copy of the demo workspace for tests that write."""
    path = tmp_path / "copy"
    shutil.copytree(demo_workspace, path)
    monkeypatch.setenv("SAC_WORKSPACE", str(path))
    return path


def _client(path: Path):
    import chromadb
    from chromadb.config import Settings

    return chromadb.PersistentClient(path=str(path / "chroma"), settings=Settings(anonymized_telemetry=False))


@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_an_empty_workspace(page):
    at = _app().switch_page(page).run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.slow
def test_home_loads_the_demo_and_shows_the_workspace(demo):
    at = _ok(_app().run())
    metrics = {m.label: m.value for m in at.metric}
    # The three methods, and the two LLM methods built from the shipped summary sets (no LLM running).
    # Corpora count once indexed: the demo's ContractNLI, not its CUAD dataset (available, not built).
    assert metrics["Indexes"] == "5" and metrics["Corpora indexed"] == "1"
    frame = _frame(at, "corpus", "method", "chunks")
    assert sorted(frame["method"]) == sorted([*METHODS, "sac-generic-llm", "sac-expert-llm"])
    assert set(frame["corpus"]) == {"demo-contractnli"} and (frame["chunks"] > 100).all()
    assert len(at.button) == 1 and at.button[0].label == "Load the demo corpus"


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_pages_render_on_the_demo(demo, page):
    _ok(_app().switch_page(page).run())


@pytest.mark.slow
def test_compare_benchmark_question_one_column_per_method_with_flags(demo):
    at = _ok(_app().switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    _ok(at)
    assert [h.value for h in at.subheader] == METHODS
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert len(cards) == 3 * 8
    wrong = [c for c in cards if "sac-hit-wrong" in c]
    right = [c for c in cards if "right document" in c]
    assert wrong and right and len(wrong) + len(right) == len(cards)
    table = _frame(at, "method", "wrong-document hits").set_index("method")
    assert list(table.index) == METHODS
    assert (table["wrong-document hits"] == [sum("sac-hit-wrong" in c for c in cards[i * 8:(i + 1) * 8])
                                             for i in range(3)]).all()
    assert any("vs baseline:" in m.value for m in at.markdown)
    # Picking a question whose answer a baseline hit overlaps shows the highlighted ground truth.
    marked = False
    for qid in at.selectbox(key="cmp_query_pick").options[:12]:
        at.selectbox(key="cmp_query_pick").set_value(qid).run()
        marked = any('class="sac-hit' in m.value and "sac-gold" in m.value for m in at.markdown)
        if marked:
            break
    assert marked
    # The recommended method is named the same way in its column and in its line against the baseline.
    at.multiselect(key="cmp_methods").set_value(["baseline", RECOMMENDED]).run()
    _ok(at)
    assert [h.value for h in at.subheader] == ["baseline", f"recommended ({RECOMMENDED})"]
    assert any(f"recommended ({RECOMMENDED}) vs baseline:" in m.value for m in at.markdown)
    assert list(_frame(at, "method", "wrong-document hits")["method"]) == [  # and in the table above them
        "baseline", f"recommended ({RECOMMENDED})"]
    assert any("Ranked inside by:" in m.value for m in at.markdown)  # how its column read the question


@pytest.mark.slow
def test_compare_own_question_searches_inside_the_pinned_document(demo):
    at = _ok(_app().switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    at.radio(key="cmp_source").set_value("Your own question").run()
    at.text_input(key="cmp_query_text").input("Which law governs the agreement?").run()
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert len(cards) == 24 and not any("wrong document" in c or "right document" in c for c in cards)
    target = "contractnli/AGProjects-NDA.txt"
    at.selectbox(key="cmp_pin").set_value(target).run()
    _ok(at)
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert cards and all("AGProjects-NDA" in c.split("score")[0] for c in cards)  # a pin searches inside it alone
    assert at.session_state["last_comparison"].pinned == (target,)
    # A pin belongs to its question: a new question unpins it (and says so), so no right clause is flagged.
    at.text_input(key="cmp_query_text").input("How long do the confidentiality obligations last?").run()
    _ok(at)
    assert at.selectbox(key="cmp_pin").value == ""
    assert any("Unpinned AG Projects · Non-Disclosure Agreement — AGProjects-NDA" in c.value for c in at.caption)
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert not any("wrong document" in c for c in cards)
    assert at.session_state["last_comparison"].pinned == ()


@pytest.mark.slow
def test_summary_edit_is_a_new_version_and_reembeds_only_that_document(demo_copy):
    at = _ok(_app().switch_page("pages/2_Summaries.py").run())
    at.selectbox(key="sum_corpus").set_value("demo-contractnli").run()
    doc_id = "contractnli/NDA_ResConnect.txt"
    at.selectbox(key="sum_edit_doc").set_value(doc_id).run()
    at.selectbox(key="sum_edit_strategy").set_value("generic").run()
    [editor] = [t for t in at.text_area if t.key.startswith("sum_edit_text_")]
    original = editor.value
    assert original
    editor.input("Non-disclosure agreement between ResConnect and its evaluation partner; Delaware law").run()
    at.button(key="sum_save").click().run()
    _ok(at)
    assert any("Saved version 2" in s.value and "Re-embedded" in s.value for s in at.success)
    report = _frame(at, "chunks re-embedded").iloc[0]
    doc = next(d for d in _demo_docs() if d.doc_id == doc_id)
    from sac.chunking.merge import index_chunks

    assert report["chunks re-embedded"] == len(index_chunks(doc)) and report["documents changed"] == 1
    assert report["chunks kept"] == sum(len(index_chunks(d)) for d in _demo_docs()) - len(index_chunks(doc))
    history = _frame(at, "version", "model", "text")
    assert list(history["version"]) == [2, 1] and list(history["model"])[0] == "human"
    assert list(history["text"])[1] == original

    at.button(key="sum_regen_one").click().run()
    _ok(at)
    assert any("Regenerated 1 generic summaries" in s.value and "Re-embedded" in s.value for s in at.success)
    history = _frame(at, "version", "model", "text")
    assert list(history["version"]) == [3, 2, 1] and list(history["text"])[0] == original


def _demo_docs():
    from sac.ingest.benchmark import load_benchmark

    return load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents


@pytest.mark.slow
def test_summaries_flag_look_alikes(demo):
    at = _ok(_app().switch_page("pages/2_Summaries.py").run())
    at.selectbox(key="sum_corpus").set_value("demo-contractnli").run()
    table = _frame(at, "document", "generic")
    assert len(table) == 5
    for strategy in ("generic", "expert"):
        assert table[f"{strategy} similarity"].between(-1, 1).all()
        assert set(table[f"{strategy} most similar"]) <= set(table["document"])
        assert (table[f"{strategy} most similar"] != table["document"]).all()
    at.slider(key="sum_threshold").set_value(0.5).run()
    pairs = _frame(at, "strategy", "look-alike", "cosine")
    assert len(pairs) >= 2 and (pairs["cosine"] >= 0.5).all() and list(pairs["cosine"]) == sorted(pairs["cosine"], reverse=True)
    assert any("look-alike summaries" in w.value for w in at.warning)
    at.selectbox(key="sum_filter").set_value("look-alikes").run()
    assert len(_frame(at, "document", "generic")) >= 2
    at.text_input(key="sum_search").input("VELCO").run()
    assert len(_frame(at, "document", "generic")) >= 1


@pytest.mark.slow
def test_evaluate_contractnli_saves_a_run_and_charts_its_numbers(demo_copy):
    at = _ok(_app().switch_page("pages/4_Evaluate.py").run())
    at.selectbox(key="eval_benchmark").set_value("demo").run()
    at.multiselect(key="eval_datasets_demo").set_value(["contractnli"])
    at.multiselect(key="eval_ks").set_value([1, 4, 8])
    [submit] = [b for b in at.button if b.label == "Run the evaluation"]
    submit.click().run()
    _ok(at)
    [run] = list_runs(Workspace(demo_copy))
    assert any(run.run_id in s.value for s in at.success)
    metrics = run.metrics()
    charts = {json.loads(c.proto.spec)["layout"]["title"]["text"]: json.loads(c.proto.spec)
              for c in at.get("plotly_chart")}
    drm = next(spec for title, spec in charts.items() if title.startswith("DRM against k"))
    assert [t["name"] for t in drm["data"]] == METHODS
    for trace in drm["data"]:
        rows = metrics[(metrics["method"] == trace["name"]) & (metrics["k"] != "mean")]
        assert trace["x"] == [1, 4, 8]
        assert trace["y"] == pytest.approx(list(rows["drm"] * 100))
    bars = next(spec for title, spec in charts.items() if title.startswith("DRM per dataset"))
    assert [t["x"] for t in bars["data"]] == [["contractnli"]] * 3
    assert any(title.startswith("Precision and recall") for title in charts)
    assert any(title.startswith("Precision against recall") for title in charts)
    summary = _frame(at, "drm@mean")
    assert "drm@mean" in summary.columns
    baseline_drm = metrics[(metrics["method"] == "baseline") & (metrics["k"] == "mean")]["drm"].iloc[0]
    assert summary.loc[("contractnli", "baseline"), "drm@mean"] == pytest.approx(round(baseline_drm * 100, 1))
    labels = [b.label for b in at.get("download_button")]
    assert labels == ["Download CSV", "Download JSON"]
    # Each method's mean DRM with its 95 % interval, and the paired difference to the baseline.
    intervals = _frame(at, "DRM % [95 % interval]")
    for method in METHODS:
        est = metrics[(metrics["method"] == method) & (metrics["k"] == "mean")]["drm"].iloc[0]
        assert intervals.loc[("contractnli", method), "DRM % [95 % interval]"].startswith(f"{100 * est:.1f} % [")
    paired = _frame(at, "verdict")
    assert set(paired["method"]) == set(METHODS) - {"baseline"} and set(paired["metric"]) == {"precision", "recall", "drm"}
    assert set(paired["verdict"]) <= {"better", "worse", "within noise"}
    # Resampling documents (the demo's 52 questions are about 5 NDAs): the same estimates, other intervals,
    # read from the run folder's intervals_document.csv.
    at.radio(key="eval_resample").set_value("document").run()
    _ok(at)
    by_document = _frame(at, "DRM % [95 % interval]")
    saved = run.intervals("document")
    for method in METHODS:
        cell = by_document.loc[("contractnli", method), "DRM % [95 % interval]"]
        assert cell.split(" [")[0] == intervals.loc[("contractnli", method), "DRM % [95 % interval]"].split(" [")[0]
        row = saved[(saved["method"] == method) & (saved["k"] == "mean") & (saved["metric"] == "drm")].iloc[0]
        assert cell.endswith(f"[{100 * row['low']:.1f}, {100 * row['high']:.1f}]")
    assert not by_document.equals(intervals)
    assert any(c.value == "Rough: only 5 documents in contractnli to draw from." for c in at.caption)

    # Where the wrong hits go, for the first method other than the baseline at k=8: the documents that took them
    # add up to the run's wrong hits, and the documents asked about to its DRM at k=8.
    at.session_state["eval_mismatch"] = True
    at.run()
    _ok(at)
    takers, asked = _frame(at, "wrong hits", "share of wrong hits"), _frame(at, "wrong first hit", "drm")
    per_query = run.per_query()
    wrong8 = per_query[(per_query["k"] == 8) & (per_query["method"] == "sac-expert")]["wrong"].sum()
    assert takers["wrong hits"].sum() == asked["wrong hits"].sum() == wrong8 > 0
    assert takers["share of wrong hits"].sum() == pytest.approx(100.0)
    drm8 = metrics[(metrics["k"] == "8") & (metrics["method"] == "sac-expert")]["drm"].iloc[0]
    assert asked["wrong hits"].sum() / asked["hits"].sum() == pytest.approx(drm8)
    assert asked["questions"].sum() == 52 and len(asked) == 5
    pairs = _frame(at, "asked about", "took the hits")
    assert pairs["wrong hits"].sum() == wrong8 and pairs["first hits"].sum() == asked["wrong first hit"].sum()
    assert set(pairs["took the hits"]) == set(takers["document"])  # shown by title, as the takers are

    # Compare's "all questions" figures at k=8 are the saved run's k=8 figures.
    cmp = _ok(_app().switch_page("pages/3_Compare.py").run())
    cmp.session_state["cmp_all_questions"] = True
    cmp.run()
    overall = _frame(cmp, "method", "questions").set_index("method")
    at8 = metrics[metrics["k"] == "8"].set_index("method")
    for method in METHODS:
        assert overall.loc[method, "questions"] == 52
        assert overall.loc[method, "DRM %"] == pytest.approx(round(at8.loc[method, "drm"] * 100, 1))
        assert overall.loc[method, "recall %"] == pytest.approx(round(at8.loc[method, "recall"] * 100, 1))

    # The saved run's hits can be reviewed: the same ranking, rebuilt from retrieved.jsonl.
    review = _ok(_app().switch_page("pages/5_Review.py").run())
    review.radio(key="rev_source").set_value("A saved evaluation run").run()
    _ok(review)
    cards = [m.value for m in review.markdown if 'class="sac-hit' in m.value]
    assert len(cards) == 3 * 8
    per_query = run.per_query()
    first = per_query[(per_query["query_id"] == "contractnli-0000") & (per_query["k"] == 8)].set_index("method")
    for i, method in enumerate(METHODS):
        assert sum("sac-hit-wrong" in c for c in cards[i * 8:(i + 1) * 8]) == first.loc[method, "wrong"]


@pytest.mark.slow
def test_recommended_is_one_pick_on_compare_and_evaluate(demo_copy):
    """The method chosen on dev is offered by name on Compare and Evaluate ("recommended (...)"), with no index of its
    own to build. On Compare its column reads so and routes every hit to one document (+docs1); an Evaluate run of it
    records the method it resolved to, and its saved hits are routed the same way."""
    resolved = parse_method("recommended").name
    label = f"recommended ({resolved})"
    at = _ok(_app().switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    assert label in at.multiselect(key="cmp_methods").options
    at.multiselect(key="cmp_methods").set_value(["baseline", resolved]).run()
    _ok(at)
    assert [h.value for h in at.subheader] == ["baseline", label]
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert len(cards) == 2 * 8
    heads = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", c)).split()) for c in cards]
    documents = [re.search(r"#\d+ · (.+?) · score", h).group(1) for h in heads]
    assert len(set(documents[8:])) == 1 and len(set(documents[:8])) > 1  # routed to one NDA; the baseline is not
    # Its column says what the title named and where it searched: the one NDA its hits come from.
    notes = [" ".join(html.unescape(re.sub(r"<[^>]+>", " ", m.value)).split()) for m in at.markdown
             if m.value.startswith('<div class="sac-plain"')]
    [inside] = [n for n in notes if n.startswith("Searched inside:")]
    assert inside.startswith(f"Searched inside: {documents[8]}") and sum(n.startswith("Named:") for n in notes) == 1

    ev = _ok(_app().switch_page("pages/4_Evaluate.py").run())
    ev.selectbox(key="eval_benchmark").set_value("demo").run()
    ev.multiselect(key="eval_datasets_demo").set_value(["contractnli"])
    ev.multiselect(key="eval_ks").set_value([1, 8])
    assert label in ev.multiselect(key="eval_methods").options
    ev.multiselect(key="eval_methods").set_value(["sac-generic", resolved])
    [submit] = [b for b in ev.button if b.label == "Run the evaluation"]
    submit.click().run()
    _ok(ev)
    [run] = list_runs(Workspace(demo_copy))
    metrics = run.metrics()
    assert sorted(set(metrics["method"])) == sorted(["sac-generic", resolved])
    routed = {row["query_id"]: {hit["file_path"] for hit in row["retrieved"]} for row in run.retrieved()
              if row["method"] == resolved}
    assert len(routed) == 52 and all(len(docs) == 1 for docs in routed.values())  # +docs1: one NDA per question
    assert any(len({hit["file_path"] for hit in row["retrieved"]}) > 1 for row in run.retrieved()
               if row["method"] == "sac-generic")
    # Its tables name it as the lists do (the run's files keep the resolved name, as above).
    summary = _frame(ev, "drm@mean", "recall@mean")
    assert sorted(summary.index.get_level_values("method")) == sorted(["sac-generic", label])
    intervals = _frame(ev, "DRM % [95 % interval]")
    assert sorted(intervals.index.get_level_values("method")) == sorted(["sac-generic", label])


@pytest.mark.slow
def test_review_label_survives_a_restart_and_exports(demo_copy):
    at = _ok(_app().switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    query = at.session_state["last_comparison"].query
    at.switch_page("pages/5_Review.py").run()
    _ok(at)
    assert at.text_input(key="rev_query").value == query
    at.text_input(key="rev_reviewer").input("Ada Lovelace").run()
    [radio] = [r for r in at.radio if r.key.endswith("_baseline_1_label")]
    radio.set_value("wrong document")
    [note] = [t for t in at.text_input if t.key.endswith("_baseline_1_note")]
    note.input("a look-alike NDA")
    [save] = [b for b in at.button if b.label == "Save labels for baseline"]
    save.click().run()
    _ok(at)
    assert any("Saved 1 labels for baseline" in s.value for s in at.success)

    restarted = _ok(_app().switch_page("pages/5_Review.py").run())
    restarted.text_input(key="rev_reviewer").input("Ada Lovelace").run()
    restarted.text_input(key="rev_query").input(query).run()
    _ok(restarted)
    [radio] = [r for r in restarted.radio if r.key.endswith("_baseline_1_label")]
    assert radio.value == "wrong document"
    summary = _frame(restarted, "method", "labelled").set_index("method")
    assert summary.loc["baseline", "wrong document"] == 1
    [label] = ReviewStore(Workspace(demo_copy).reviews_dir).labels()
    assert (label.reviewer, label.note, label.label, label.rank) == ("Ada Lovelace", "a look-alike NDA", "wrong document", 1)
    assert [b.label for b in restarted.get("download_button")][0] == "Export labels as CSV"


@pytest.mark.slow
def test_review_opens_with_the_methods_compare_ran_recommended_among_them(demo_copy):
    """A question run on Compare with the recommended method (a search option, no index of its own) is reviewed
    with the same methods: its hits get a tab named as Compare names it, and its labels are saved under the
    method it resolved to."""
    resolved = parse_method("recommended").name
    at = _ok(_app().switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    at.multiselect(key="cmp_methods").set_value(["baseline", resolved]).run()
    _ok(at)
    at.switch_page("pages/5_Review.py").run()
    _ok(at)
    assert at.multiselect(key="rev_methods").value == ["baseline", resolved]
    assert [t.label for t in at.tabs] == ["baseline", f"recommended ({resolved})"]
    at.text_input(key="rev_reviewer").input("Ada Lovelace").run()
    [radio] = [r for r in at.radio if r.key.endswith(f"_{resolved}_1_label")]
    radio.set_value("relevant")
    [save] = [b for b in at.button if b.label == f"Save labels for recommended ({resolved})"]  # as its tab
    save.click().run()
    _ok(at)
    [label] = ReviewStore(Workspace(demo_copy).reviews_dir).labels()
    assert (label.method, label.label, label.rank) == (resolved, "relevant", 1)
    assert list(_frame(at, "method", "labelled")["method"]) == [f"recommended ({resolved})"]


@pytest.mark.slow
def test_review_shows_how_far_two_reviewers_agree_and_where_they_differ(demo_copy):
    from sac.chunking.split import chunk_document
    from sac.evaluation.review import ChunkLabel

    [nda] = [d for d in _demo_docs() if "VELCO" in d.doc_id]
    [other] = [d for d in _demo_docs() if "AGProjects" in d.doc_id]
    spans = [c.span for c in chunk_document(nda)[:4]]
    look_alike = chunk_document(other)[3].span  # another NDA's chunk: DRM flags it
    query = ("Consider VELCO's Non-Disclosure Agreement; Does the document restrict the use of Confidential "
             "Information to the purposes stated in the Agreement?")  # the demo's contractnli-0011
    given = {"Ada": ["relevant", "relevant", "not relevant", "boilerplate"],
             "Grace": ["relevant", "partly relevant", "not relevant", "not relevant"]}
    ReviewStore(Workspace(demo_copy).reviews_dir).save_labels([
        ChunkLabel(corpus="demo-contractnli", query_id="contractnli-0011", query=query, method="baseline",
                   doc_id=span.doc_id, start=span.start, end=span.end, label=label, reviewer=who)
        for who, labels in [*given.items(), ("Ada", ["relevant"])]
        for span, label in zip(spans if len(labels) > 1 else [look_alike], labels)])
    at = _ok(_app().switch_page("pages/5_Review.py").run())
    [row] = _frame(at, "reviewers", "kappa (5 labels)").to_dict("records")
    # 2 of 4 alike; p_e = (2*1 + 1*2 + 0*1 + 1*0) / 16 = 0.25, kappa = (0.5 - 0.25) / 0.75 = 0.33; relevance: all alike
    assert (row["reviewers"], row["chunks both labelled"], row["same label"]) == ("Ada · Grace", 4, "50 %")
    assert row["kappa (5 labels)"].startswith("0.33 [") and row["same relevance"] == "100 %"
    assert row["kappa (relevance)"].startswith("1.00")
    differ = _frame(at, "labels", "document")
    assert sorted(differ["labels"]) == ["Ada: boilerplate · Grace: not relevant",
                                        "Ada: relevant · Grace: partly relevant"]
    assert "Export them as CSV" in [b.label for b in at.get("download_button")]
    assert "2 chunks labelled differently" in [e.label for e in at.expander]
    flags = _frame(at, "label", "another document (flagged)").set_index("label")
    assert flags.loc["relevant"].tolist() == [3, 1] and flags.loc["not relevant"].tolist() == [3, 0]
    assert flags.loc["partly relevant", "right document"] == flags.loc["boilerplate", "right document"] == 1
    assert flags.to_numpy().sum() == 9


@pytest.mark.slow
def test_review_marks_new_ground_truth_and_exports_a_benchmark(demo_copy):
    at = _ok(_app().switch_page("pages/5_Review.py").run())
    at.text_input(key="rev_reviewer").input("Ada").run()
    at.text_input(key="rev_query").input("How long do the confidentiality obligations last?").run()
    _ok(at)
    [mode] = [r for r in at.radio if r.key == "rev_gt_mode"]
    mode.set_value("character range").run()
    [rng] = [s for s in at.slider if s.key.startswith("rev_gt_range_")]
    rng.set_value((0, 40)).run()
    at.button(key="rev_gt_add").click().run()
    _ok(at)
    [span] = ReviewStore(Workspace(demo_copy).reviews_dir).gold()
    assert span.end - span.start == 40 and span.query == "How long do the confidentiality obligations last?"
    doc = next(d for d in _demo_docs() if d.doc_id == span.doc_id)
    assert doc.text[span.start:span.end] == span.answer
    assert any("<mark" in m.value and "sac-selected" in m.value for m in at.markdown)
    assert "Export as LegalBench-RAG benchmark JSON" in [b.label for b in at.get("download_button")]
    # The question's hits now show the marked words as its ground truth, and hits from other documents as wrong.
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert any("sac-gold" in c for c in cards)
    assert all(("sac-hit-wrong" in c) == (f"<b>{document_title(span.doc_id)}</b>" not in c) for c in cards)
    assert any("sac-hit-wrong" in c for c in cards)

    # Compare offers it as a reviewed question, with the marked span as its ground truth.
    cmp = _ok(_app().switch_page("pages/3_Compare.py").run())
    cmp.radio(key="cmp_source").set_value("Reviewed question").run()
    _ok(cmp)
    assert cmp.selectbox(key="cmp_review_pick").options == [span.query]
    table = _frame(cmp, "wrong-document hits")
    assert set(table["method"]) == set(METHODS) and table["recall %"].notna().all()
    assert any("sac-gold" in m.value for m in cmp.markdown if 'class="sac-hit' in m.value)

    # Evaluate offers the reviewed ground truth as a benchmark of its own, searched in the corpus's indexes.
    indexes = {(i.corpus, i.method) for i in list_indexes(_client(demo_copy))}
    ev = _ok(_app().switch_page("pages/4_Evaluate.py").run())
    ev.selectbox(key="eval_benchmark").set_value("reviewed:demo-contractnli").run()
    _ok(ev)
    assert ev.multiselect(key="eval_datasets_reviewed:demo-contractnli").options == ["demo-contractnli"]
    ev.multiselect(key="eval_ks").set_value([1, 8])
    [submit] = [b for b in ev.button if b.label == "Run the evaluation"]
    submit.click().run()
    _ok(ev)
    [run] = list_runs(Workspace(demo_copy))
    assert run.settings["reviewed"] == {"corpus": "demo-contractnli", "questions": 1, "spans": 1}
    assert run.corpus_of("demo-contractnli") == "demo-contractnli"
    assert {(i.corpus, i.method) for i in list_indexes(_client(demo_copy))} == indexes  # nothing new was built
    per_query = run.per_query()
    assert len(per_query) == len(METHODS) * 2 and set(per_query["query_id"]) == {span.query_id}
    # Its figures are the span's overlap with what each method retrieved, as the run recorded it.
    for row in run.retrieved():
        hits = [(h["file_path"], *h["span"]) for h in row["retrieved"][:8]]
        overlap = sum(max(0, min(end, span.end) - max(start, span.start)) for doc, start, end in hits if doc == span.doc_id)
        recall = per_query[(per_query["method"] == row["method"]) & (per_query["k"] == 8)]["recall"].iloc[0]
        assert recall == pytest.approx(overlap / (span.end - span.start))

    # Review opens the run: the reviewed question, its hits, the reviewed span marked as ground truth.
    review = _ok(_app().switch_page("pages/5_Review.py").run())
    review.radio(key="rev_source").set_value("A saved evaluation run").run()
    _ok(review)
    assert review.selectbox(key="rev_run_query").options == [span.query]
    assert len([m for m in review.markdown if 'class="sac-hit' in m.value]) == len(METHODS) * 8


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@pytest.mark.slow
def test_corpus_upload_reports_bad_files_builds_and_removes(demo_copy):
    at = _ok(_app().switch_page("pages/1_Corpus.py").run())
    at.multiselect(key="corpus_methods").set_value(["baseline", "sac-expert"]).run()
    at.text_input(key="corpus_new_name").input("uploads").run()
    nda = (ROOT / "data" / "demo" / "corpus" / "contractnli" / "AGProjects-NDA.txt").read_bytes()
    at.file_uploader(key="corpus_files_0").set_value([
        ("agprojects.txt", nda, "text/plain"),
        ("notes.md", b"# Side letter\n\nThe parties agree that the term is five years.\n", "text/markdown"),
        ("broken.pdf", b"%PDF-1.4 not really a pdf", "application/pdf"),
        ("bundle.zip", _zip({"inner/policy.html": b"<html><body><h1>Privacy policy</h1><p>We keep data for "
                                                  b"30 days.</p></body></html>", "inner/image.png": b"\x89PNG"}),
         "application/zip"),
    ]).run()
    at.button(key="corpus_build").click().run()
    assert not at.exception
    unread = [w.value for w in at.warning]  # the rest is built without them, and they are said with the build
    assert len(unread) == 2 and any("broken.pdf" in w for w in unread) and any("image.png" in w for w in unread)
    assert not at.error
    assert not at.file_uploader(key="corpus_files_1").value  # the uploader is empty again
    finish_build(at)
    assert any("uploads: 3 documents indexed for " in i.value for i in at.info)
    assert any("Building uploads: done in" in s.value for s in at.success)
    assert set(_frame(at, "method", "chunks embedded")["method"]) == {"baseline", "sac-expert"}
    ws = Workspace(demo_copy)
    assert sorted(d.doc_id for d in ws.load_corpus("uploads")) == ["agprojects.txt", "inner/policy.html", "notes.md"]
    counts = {i.method: i.chunks for i in list_indexes(_client(demo_copy)) if i.corpus == "uploads"}
    assert set(counts) == {"baseline", "sac-expert"} and counts["baseline"] == counts["sac-expert"] > 3

    at.selectbox(key="corpus_shown").set_value("uploads").run()
    docs = _frame(at, "document", "characters", "chunks")
    assert list(docs["document"]) == ["agprojects.txt", "inner/policy.html", "notes.md"]
    assert (docs["chunks"] >= 1).all() and docs.loc[0, "characters"] == len(nda.decode("utf-8"))
    at.multiselect(key="corpus_remove_pick").set_value(["agprojects.txt"]).run()
    at.button(key="corpus_remove").click().run()
    _ok(at)
    assert any("Removed 1 document" in s.value for s in at.success)
    after = {i.method: i.chunks for i in list_indexes(_client(demo_copy)) if i.corpus == "uploads"}
    removed = int(docs.loc[0, "chunks"])
    assert after == {m: c - removed for m, c in counts.items()}
    assert [d.doc_id for d in ws.load_corpus("uploads")] == ["inner/policy.html", "notes.md"]


@pytest.mark.slow
def test_a_corpus_just_uploaded_is_the_one_every_page_opens_on(demo_copy):
    # One session, as a user clicks through it: Summaries first (on the demo), then an upload on Corpus.
    at = _ok(_app().switch_page("pages/2_Summaries.py").run())
    first = at.selectbox(key="sum_corpus").value
    assert first != "uploads"
    at.switch_page("pages/1_Corpus.py").run()
    at.multiselect(key="corpus_methods").set_value(["baseline", "sac-generic"]).run()
    at.text_input(key="corpus_new_name").input("uploads").run()
    nda = (ROOT / "data" / "demo" / "corpus" / "contractnli" / "NDA_ResConnect.txt").read_bytes()
    at.file_uploader(key="corpus_files_0").set_value([("resconnect.txt", nda, "text/plain")]).run()
    at.button(key="corpus_build").click().run()
    finish_build(at)
    _ok(at)
    assert at.selectbox(key="corpus_shown").value == "uploads"  # its documents are listed under the upload
    assert list(_frame(at, "document")["document"]) == ["resconnect.txt"]
    for page, key in [("pages/2_Summaries.py", "sum_corpus"), ("pages/3_Compare.py", "cmp_corpus"),
                      ("pages/6_Embedding_map.py", "map_corpus")]:
        _ok(at.switch_page(page).run())
        assert at.selectbox(key=key).value == "uploads", page
    # A corpus picked on one page is the one the next page opens on, until another is picked.
    at.switch_page("pages/3_Compare.py").run()
    at.selectbox(key="cmp_corpus").set_value(first).run()
    for page, key in [("pages/2_Summaries.py", "sum_corpus"), ("pages/5_Review.py", "rev_corpus")]:
        _ok(at.switch_page(page).run())
        assert at.selectbox(key=key).value == first, page


@pytest.mark.slow
def test_corpus_llm_summaries_show_the_estimate_first_then_are_stored(demo_copy):
    """The OpenAI-compatible path of the Corpus page against the loopback OpenAI-protocol stand-in."""
    from sac.summaries.llm import OpenAISummarizer
    from sac.summaries.store import SummaryStore
    from tests.openai_stub import OpenAIStub

    nda = (ROOT / "data" / "demo" / "corpus" / "contractnli" / "NDA_ResConnect.txt").read_bytes()
    with OpenAIStub(default="Mutual NDA between ResConnect and a recipient; confidentiality; five-year term.") as stub:
        at = _ok(_app().switch_page("pages/1_Corpus.py").run())
        at.radio(key="corpus_summarizer").set_value("OpenAI-compatible endpoint").run()
        at.text_input(key="corpus_llm_model").input("stub-model").run()
        at.text_input(key="corpus_llm_base_url").input(stub.base_url).run()
        at.text_input(key="corpus_llm_key").input("sk-test").run()
        assert any("Add sac-generic-llm or sac-expert-llm" in c.value for c in at.caption)
        at.multiselect(key="corpus_methods").set_value(["baseline", "sac-generic-llm", "sac-expert-llm"]).run()
        # Before anything is sent: the demo NDAs' estimate under the rebuild button (5 documents, 2 strategies).
        ahead = [c.value for c in at.caption if "to make" in c.value]
        assert ahead, [c.value for c in at.caption]
        assert "10 summaries to make" in ahead[0] and "estimate: 10 requests" in ahead[0]
        assert "no price known for 'stub-model'" in ahead[0] and stub.calls == 0
        at.multiselect(key="corpus_methods").set_value(["baseline", "sac-generic-llm"]).run()
        at.text_input(key="corpus_new_name").input("llm-uploads").run()
        at.file_uploader(key="corpus_files_0").set_value([("resconnect.txt", nda, "text/plain")]).run()
        at.button(key="corpus_build").click().run()
        _ok(at)
        assert any(i.value.startswith("1 document, strategy generic-llm: 1 summary to make, 0 already stored")
                   and "estimate: 1 request, ~" in i.value for i in at.info), [i.value for i in at.info]
        _ok(finish_build(at))
        assert any("llm-uploads: 1 document indexed for " in i.value for i in at.info)
        assert stub.calls == 1
        at.selectbox(key="corpus_shown").set_value("llm-uploads").run()
        assert any(c.value.startswith("1 document · 0 benchmark questions · ") for c in at.caption), \
            [c.value for c in at.caption]
    ws = Workspace(demo_copy)
    doc = ws.load_corpus("llm-uploads")[0]
    made = SummaryStore(demo_copy / "summaries").get_cached(
        doc, OpenAISummarizer("generic-llm", model="stub-model", base_url=stub.base_url, api_key="sk-test"))
    assert made is not None and made.text.startswith("Mutual NDA between ResConnect")
    assert "sk-test" not in json.dumps([str(p) for p in demo_copy.rglob("*")])


@pytest.mark.slow
def test_corpus_saves_an_uploaded_benchmark_zip_and_compare_lists_it(demo_copy):
    demo = ROOT / "data" / "demo"
    files = {"mini/benchmarks/contractnli.json": (demo / "benchmarks" / "contractnli.json").read_bytes()}
    for path in sorted((demo / "corpus" / "contractnli").iterdir()):
        files[f"mini/corpus/contractnli/{path.name}"] = path.read_bytes()
    at = _ok(_app().switch_page("pages/1_Corpus.py").run())
    at.multiselect(key="corpus_methods").set_value(["baseline"]).run()
    at.file_uploader(key="corpus_files_0").set_value([("lbr-mini.zip", _zip(files), "application/zip")]).run()
    at.button(key="corpus_build").click().run()
    _ok(finish_build(at))
    assert (demo_copy / "benchmarks" / "lbr-mini" / "benchmarks" / "contractnli.json").is_file()
    cmp = _ok(_app().switch_page("pages/3_Compare.py").run())
    assert "lbr-mini-contractnli" in cmp.selectbox(key="cmp_corpus").options
    cmp.selectbox(key="cmp_corpus").set_value("lbr-mini-contractnli").run()
    _ok(cmp)
    assert [h.value for h in cmp.subheader] == ["baseline"]
    evaluate = _ok(_app().switch_page("pages/4_Evaluate.py").run())
    assert evaluate.selectbox(key="eval_benchmark").options == ["demo", "lbr-mini"]


@pytest.mark.slow
def test_a_sac_error_shows_as_a_message_not_a_traceback(demo, monkeypatch):
    monkeypatch.setenv("SAC_CHUNK_SIZE", "0")
    at = _app().switch_page("pages/3_Compare.py").run()
    assert not at.exception
    assert any("chunk_size" in e.value for e in at.error)



@pytest.mark.slow
def test_an_interrupted_build_is_shown_everywhere_never_searched_and_finished_in_one_click(demo_copy):
    left = interrupt_index(demo_copy, "demo-contractnli", "sac-expert", "contractnli/NDA_ResConnect.txt")
    home = _ok(_app().run())
    state = _frame(home, "method", "state").set_index("method")["state"]
    assert state["sac-expert"].startswith("incomplete") and state["baseline"] == "complete"
    cmp = _app().switch_page("pages/3_Compare.py").run()
    assert not cmp.exception
    assert "sac-expert" not in cmp.multiselect(key="cmp_methods").options
    assert any(f"sac-expert ({left:,} chunks so far)" in w.value for w in cmp.warning)
    corpus = _app().switch_page("pages/1_Corpus.py").run()
    corpus.selectbox(key="corpus_shown").set_value("demo-contractnli").run()
    assert any("Incomplete index" in w.value for w in corpus.warning)
    corpus.button(key="corpus_finish").click().run()
    _ok(corpus)
    assert not any(b.key == "corpus_finish" for b in corpus.button)  # one build at a time: no second click
    _ok(finish_build(corpus))
    assert any("Finishing demo-contractnli: done in" in s.value for s in corpus.success)
    [info] = [i for i in list_indexes(_client(demo_copy)) if i.corpus == "demo-contractnli" and i.method == "sac-expert"]
    assert info.complete and info.chunks > left
    cmp = _ok(_app().switch_page("pages/3_Compare.py").run())
    assert "sac-expert" in cmp.multiselect(key="cmp_methods").options and not cmp.warning


@pytest.mark.slow
def test_review_cannot_save_without_a_reviewer(demo):
    at = _ok(_app().switch_page("pages/5_Review.py").run())
    at.text_input(key="rev_query").input("How long do the confidentiality obligations last?").run()
    assert any("Enter your name" in w.value for w in at.warning)
    saves = [b for b in at.button if b.label.startswith("Save labels for")]
    assert saves and all(b.disabled for b in saves)
    assert at.button(key="rev_gt_add").disabled
    at.text_input(key="rev_reviewer").input("Ada").run()
    assert not any(b.disabled for b in at.button if b.label.startswith("Save labels for"))


@pytest.mark.slow
def test_map_keeps_its_documents_after_a_corpus_switch(demo_copy, memo):
    from sac.config import SacConfig
    from sac.methods import parse_methods
    from sac.usecases.workbench import Workbench

    docs = [d for d in _demo_docs()][:3]
    ws = Workspace(demo_copy)
    ws.add_documents("three-ndas", docs)
    Workbench(SacConfig(workspace=demo_copy), embedder=memo).build("three-ndas", docs, parse_methods("baseline,sac-generic"))
    at = _ok(_app().switch_page("pages/6_Embedding_map.py").run())
    at.selectbox(key="map_corpus").set_value("demo-contractnli").run()
    assert len([m for m in at.multiselect if m.label == "Documents on the map"][0].value) >= 2
    at.selectbox(key="map_corpus").set_value("three-ndas").run()
    at.text_input(key="map_query_text").input("Which law governs the agreement?").run()
    _ok(at)
    [picker] = [m for m in at.multiselect if m.label == "Documents on the map"]
    assert len(picker.value) >= 2 and set(picker.value) <= {d.doc_id for d in docs}
    assert not any("Choose at least two documents" in i.value for i in at.info)
    assert at.get("plotly_chart")
