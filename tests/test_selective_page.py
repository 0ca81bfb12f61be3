"""The Evaluate page shows how sure a method is of the contract (a run's ``selective.csv``: coverage, DRM@1 among
the covered questions, AUROC of the confidence), and finds where a run's wrong hits go for every dataset of a run
over several, whose charts open on "overall"."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sac.config import SacConfig
from sac.evaluation.runs import EvalResult, Target, add_overall, list_runs, save_run, score_method
from sac.ingest.benchmark import load_benchmark
from sac.methods import method_label
from sac.types import Chunk, Dataset, Document, Hit, Query, Span
from sac.workspace import Workspace
from tests.conftest import APP, DEMO
from webapp.widgets import SELECTIVE_CAPTION, SELECTIVE_HEADERS, selective_cell, selective_table

COVERAGE, DRM, AUROC = (SELECTIVE_HEADERS[m] for m in ("coverage", "drm@1 covered", "auroc"))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _frame(at: AppTest, *columns: str) -> pd.DataFrame | None:
    """The first dataframe shown with all these columns, or None."""
    for df in at.dataframe:
        if set(columns) <= set(df.value.columns) | set(df.value.index.names or []):
            return df.value
    return None


def _cell(metric: str, estimate: float, low: float, high: float) -> str:
    """What the table must show, written out apart from the page's own formatting."""
    if metric == "auroc":
        return f"{estimate:.3f} [{low:.3f}, {high:.3f}]"
    return f"{100 * estimate:.1f} % [{100 * low:.1f}, {100 * high:.1f}]"


def _assert_shows(at: AppTest, selective: pd.DataFrame) -> None:
    """The page's table has one row per (dataset, method) of ``selective`` and its figures, and the caption."""
    table = _frame(at, AUROC)
    assert table is not None, "no selective table shown"
    assert list(table.columns) == [COVERAGE, DRM, AUROC]
    rows = list(dict.fromkeys((d, method_label(m)) for d, m in zip(selective["dataset"], selective["method"])))
    assert list(table.index) == rows
    header = {"coverage": COVERAGE, "drm@1 covered": DRM, "auroc": AUROC}
    for r in selective.itertuples():
        assert all(math.isfinite(v) for v in (r.estimate, r.low, r.high)), r
        assert table.loc[(r.dataset, method_label(r.method)), header[r.metric]] == _cell(r.metric, r.estimate, r.low, r.high)
    assert any(m.value.startswith("**How sure the method is of the contract**") for m in at.markdown)
    assert any(c.value == SELECTIVE_CAPTION for c in at.caption)


# --- the formatting, by hand -----------------------------------------------------------------------------------


def test_a_selective_figure_reads_estimate_and_interval():
    assert selective_cell("coverage", 0.625, 0.4, 0.8125) == "62.5 % [40.0, 81.2]"
    assert selective_cell("drm@1 covered", 0.0, 0.0, 0.25) == "0.0 % [0.0, 25.0]"
    assert selective_cell("auroc", 0.73449, 0.6123, 0.8456) == "0.734 [0.612, 0.846]"
    assert selective_cell("auroc", 1.0, 1.0, 1.0) == "1.000 [1.000, 1.000]"
    # One document to draw from: no interval; no covered question (or no wrong top document): no estimate.
    assert selective_cell("coverage", 0.5, math.nan, math.nan) == "50.0 % [no interval]"
    assert selective_cell("auroc", 0.5, math.nan, math.nan) == "0.500 [no interval]"
    assert selective_cell("drm@1 covered", math.nan, math.nan, math.nan) == "n/a"
    assert selective_cell("auroc", math.nan, 0.2, 0.9) == "n/a"


def test_the_selective_table_has_a_row_per_dataset_and_method_in_the_runs_order():
    rows = [("nli", "m-b", "coverage", 2 / 3, 0.5, 1.0), ("nli", "m-b", "drm@1 covered", 0.5, 0.0, 1.0),
            ("nli", "m-b", "auroc", 0.5, 0.25, 0.75), ("cuad", "m-a", "auroc", math.nan, math.nan, math.nan),
            ("cuad", "m-a", "coverage", 0.1, 0.05, 0.2), ("cuad", "m-a", "drm@1 covered", 0.0, math.nan, math.nan)]
    frame = pd.DataFrame(rows, columns=["dataset", "method", "metric", "estimate", "low", "high"])
    table = selective_table(frame)
    assert list(table.index) == [("nli", "m-b"), ("cuad", "m-a")]
    assert list(table.columns) == [COVERAGE, DRM, AUROC]
    assert table.loc[("nli", "m-b")].tolist() == ["66.7 % [50.0, 100.0]", "50.0 % [0.0, 100.0]", "0.500 [0.250, 0.750]"]
    assert table.loc[("cuad", "m-a")].tolist() == ["10.0 % [5.0, 20.0]", "0.0 % [no interval]", "n/a"]


# --- a saved run of two datasets, its hits written by hand -------------------------------------------------------


def _demo_questions() -> tuple[tuple[Document, ...], list[Query]]:
    """The demo's ContractNLI questions with their gold spans, and the NDAs they are about."""
    [dataset] = load_benchmark(DEMO, ["contractnli"])
    return tuple(dataset.documents), list(dataset.queries)


def _hits(query: Query, documents: tuple[Document, ...], i: int) -> list[Hit]:
    """Eight hits: the question's gold span at rank 1 + i % 3, the other seven the first 200 characters of the
    other NDAs in turn (wrong hits)."""
    others = [d for d in documents if d.doc_id not in query.gold_doc_ids]
    gold = query.gold[0]
    spans = [Span(others[j % len(others)].doc_id, 0, 200) for j in range(7)]
    spans.insert(i % 3, gold)
    texts = {d.doc_id: d.text for d in documents}
    return [Hit(Chunk(s, texts[s.doc_id][s.start:s.end]), 1.0 - rank / 10, rank) for rank, s in enumerate(spans, start=1)]


@pytest.fixture
def two_dataset_run(tmp_path, monkeypatch):
    """A saved run of two halves of the demo's ContractNLI questions as two datasets ("overall" in its metrics), of a
    method that says how sure it is: its top candidate is the gold NDA for two questions in three, sure for those
    whose confidence reaches 0.5."""
    workspace = tmp_path / "ws"
    monkeypatch.setenv("SAC_WORKSPACE", str(workspace))
    documents, queries = _demo_questions()
    halves = [Dataset("nli-a", documents, tuple(queries[:26])), Dataset("nli-b", documents, tuple(queries[26:]))]
    result = EvalResult([], [], [])
    method = "sac-generic+docs1+names"
    for ds in halves:
        hits, targets = [], []
        for i, q in enumerate(ds.queries):
            hits.append(_hits(q, documents, i))
            other = next(d.doc_id for d in documents if d.doc_id not in q.gold_doc_ids)
            confidence = 0.3 + 0.07 * (i % 10)
            targets.append(Target(q.gold[0].doc_id if i % 3 else other, confidence, confidence >= 0.5))
        score_method(result, ds, method, hits, [1, 8], targets)
    add_overall(result, [d.name for d in halves], [method], [1, 8])
    settings = {"benchmark": "demo", "datasets": ["nli-a", "nli-b"], "corpora": {"nli-a": "x", "nli-b": "x"},
                "methods": [method], "k": [1, 8], "pool": []}
    return save_run(Workspace(workspace), result, SacConfig(workspace=workspace), settings, label="halves")


def test_where_the_wrong_hits_go_is_shown_per_dataset_when_the_charts_show_overall(two_dataset_run):
    """The defect: the charts open on "overall", and the wrong hits were looked up for a dataset "overall" ("Run ...
    has no rows for dataset 'overall'"). The expander picks one of the run's datasets, the first one here."""
    run = two_dataset_run
    at = _ok(AppTest.from_file(APP, default_timeout=60).switch_page("pages/4_Evaluate.py").run())
    assert at.selectbox(key="eval_chart_dataset").value == "overall"
    _assert_shows(at, run.selective())
    at.session_state["eval_mismatch"] = True
    at.run()
    _ok(at)
    assert not [w.value for w in at.warning if "has no rows" in w.value]
    picker = at.selectbox(key="eval_mismatch_dataset")
    assert picker.options == ["nli-a", "nli-b"] and picker.value == "nli-a"
    per_query = run.per_query()
    for dataset in ("nli-a", "nli-b"):  # the first dataset, then the other one picked
        if dataset == "nli-b":
            at.selectbox(key="eval_mismatch_dataset").set_value(dataset).run()
            _ok(at)
        assert not at.warning, [w.value for w in at.warning]
        takers = _frame(at, "wrong hits", "share of wrong hits")
        assert takers is not None
        wrong8 = per_query[(per_query["k"] == 8) & (per_query["dataset"] == dataset)]["wrong"].sum()
        assert takers["wrong hits"].sum() == wrong8 == 7 * 26


# --- a real evaluation on the demo with the real model ------------------------------------------------------------


@pytest.fixture
def demo_copy(demo_workspace, monkeypatch, tmp_path, app_memo) -> Path:
    """A private copy of the demo workspace (ContractNLI indexed), the app embedding through the session's model."""
    path = tmp_path / "copy"
    shutil.copytree(demo_workspace, path)
    monkeypatch.setenv("SAC_WORKSPACE", str(path))
    return path


def _evaluate(at: AppTest, extra: str, label: str) -> None:
    """Run baseline (and ``extra``) at k = 1 and 8 on the demo's ContractNLI from the Evaluate page."""
    at.selectbox(key="eval_benchmark").set_value("demo").run()
    at.multiselect(key="eval_datasets_demo").set_value(["contractnli"])
    at.multiselect(key="eval_methods").set_value(["baseline"])
    at.text_input(key="eval_extra_methods").set_value(extra)
    at.multiselect(key="eval_ks").set_value([1, 8])
    at.text_input(key="eval_label").set_value(label)
    [submit] = [b for b in at.button if b.label == "Run the evaluation"]
    submit.click().run()
    _ok(at)
    assert any("Run saved as" in s.value for s in at.success)


@pytest.mark.slow
def test_a_run_of_a_method_that_says_how_sure_it_is_shows_its_selective_figures(demo_copy):
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/4_Evaluate.py").run())
    _evaluate(at, "sac-generic+docs1+names", "sure")
    [run] = list_runs(Workspace(demo_copy))
    assert (run.path / "selective.csv").is_file()
    selective = run.selective()
    assert set(selective["method"]) == {"sac-generic+docs1+names"} and set(selective["dataset"]) == {"contractnli"}
    _assert_shows(at, selective)  # the fresh run, as the page opens on it

    # A second run without such a method shows no table; picking the first again in a new session shows it.
    _evaluate(at, "", "plain")
    assert _frame(at, AUROC) is None
    assert not any(m.value.startswith("**How sure the method is of the contract**") for m in at.markdown)
    saved = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/4_Evaluate.py").run())
    assert saved.selectbox(key="eval_run").value != run.run_id
    saved.selectbox(key="eval_run").set_value(run.run_id).run()
    _assert_shows(_ok(saved), selective)
