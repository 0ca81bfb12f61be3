"""The Evaluate page's charts against k carry error bars: each point's 95 % bootstrap interval, from the unit the page
resamples (questions or documents), asymmetric around the estimate; a point without an interval gets no bar.

The run is real and small: the demo's ContractNLI questions in three datasets (one of a single question, which gives
no interval), two methods whose hits are written by hand, scored and saved by the code an evaluation uses."""

from __future__ import annotations

import base64
import json
import math

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from sac.config import SacConfig
from sac.evaluation.runs import EvalResult, RunFolder, add_overall, save_run, score_method
from sac.ingest.benchmark import load_benchmark
from sac.render import plots
from sac.types import Chunk, Dataset, Document, Hit, Query, Span
from sac.usecases.evaluate import run_uncertainty
from sac.workspace import Workspace
from tests.conftest import APP, DEMO

METHODS = ["baseline", "sac-generic"]
KS = [1, 4, 8]
DATASETS = ["nli-a", "nli-b", "nli-one"]


def _demo_questions() -> tuple[tuple[Document, ...], list[Query]]:
    """The demo's ContractNLI questions with their gold spans, and the NDAs they are about."""
    [dataset] = load_benchmark(DEMO, ["contractnli"])
    return tuple(dataset.documents), list(dataset.queries)


def _hits(query: Query, documents: tuple[Document, ...], rank: int) -> list[Hit]:
    """Eight hits: the question's gold span at ``rank``, the others the first 200 characters of other NDAs."""
    others = [d for d in documents if d.doc_id not in query.gold_doc_ids]
    spans = [Span(others[j % len(others)].doc_id, 200 * j, 200 * j + 200) for j in range(7)]
    spans.insert(rank - 1, query.gold[0])
    texts = {d.doc_id: d.text for d in documents}
    return [Hit(Chunk(s, texts[s.doc_id][s.start:s.end]), 1.0 - r / 10, r) for r, s in enumerate(spans, start=1)]


@pytest.fixture
def small_run(tmp_path, monkeypatch) -> RunFolder:
    workspace = tmp_path / "ws"
    monkeypatch.setenv("SAC_WORKSPACE", str(workspace))
    documents, queries = _demo_questions()
    parts = [Dataset("nli-a", documents, tuple(queries[:25])), Dataset("nli-b", documents, tuple(queries[25:51])),
             Dataset("nli-one", documents, tuple(queries[51:]))]
    assert [len(p.queries) for p in parts] == [25, 26, 1]
    result = EvalResult([], [], [])
    for ds in parts:
        # The baseline finds the gold span anywhere in its eight, SAC at rank 1 for two questions in three.
        score_method(result, ds, "baseline", [_hits(q, documents, 1 + 3 * (i % 3)) for i, q in enumerate(ds.queries)], KS)
        score_method(result, ds, "sac-generic", [_hits(q, documents, 1 if i % 3 else 6) for i, q in enumerate(ds.queries)],
                     KS)
    add_overall(result, DATASETS, METHODS, KS)
    settings = {"benchmark": "demo", "datasets": DATASETS, "corpora": dict.fromkeys(DATASETS, "x"), "methods": METHODS,
                "k": KS, "pool": []}
    return save_run(Workspace(workspace), result, SacConfig(workspace=workspace), settings, label="bars")


def _expected(intervals: pd.DataFrame, dataset: str, method: str, metric: str) -> tuple[list, list, list]:
    """Per k: estimate, high − estimate and estimate − low in percent (NaN where there is no interval)."""
    rows = intervals[(intervals["dataset"] == dataset) & (intervals["method"] == method)
                     & (intervals["metric"] == metric)].set_index("k")
    est, up, down = [], [], []
    for k in KS:
        r = rows.loc[str(k)]
        est.append(100 * r["estimate"])
        up.append(100 * (r["high"] - r["estimate"]))
        down.append(100 * (r["estimate"] - r["low"]))
    return est, up, down


def _values(data) -> np.ndarray:
    """A plotly array as the figure holds it, or as its JSON carries it (a list, or numpy's base64 bytes)."""
    if isinstance(data, dict):
        return np.frombuffer(base64.b64decode(data["bdata"]), dtype=np.dtype(data["dtype"]))
    return np.asarray(data, dtype=float)


def _assert_bars(trace, intervals: pd.DataFrame, dataset: str, method: str, metric: str, unit: str) -> bool:
    """The trace's error bars are the intervals' (high − estimate up, estimate − low down); True where it has any."""
    est, up, down = _expected(intervals, dataset, method, metric)
    error_y = trace["error_y"]
    assert error_y["type"] == "data" and error_y["symmetric"] is False
    assert list(trace["y"]) == pytest.approx(est)  # the bars hang from the point the chart draws
    np.testing.assert_allclose(_values(error_y["array"]), up, equal_nan=True)
    np.testing.assert_allclose(_values(error_y["arrayminus"]), down, equal_nan=True)
    for note, u in zip(trace["customdata"], up):
        assert note.endswith(f"{unit}s resampled") if math.isfinite(u) else note.startswith("no interval")
    assert "%{customdata}" in trace["hovertemplate"]
    return bool(np.isfinite(up).any())


@pytest.mark.parametrize("unit", ["question", "document"])
def test_the_k_charts_carry_the_runs_intervals_as_error_bars(small_run, unit):
    frame = small_run.metrics()
    intervals, _ = run_uncertainty(small_run, None, unit)
    assert set(intervals["dataset"]) == {*DATASETS, "overall"}
    with_bars = set()
    for dataset in [*DATASETS, "overall"]:
        drm = plots.metric_vs_k(frame, "drm", dataset, intervals, unit)
        assert [t.name for t in drm.data] == METHODS
        for trace in drm.data:
            if _assert_bars(trace, intervals, dataset, trace.name, "drm", unit):
                with_bars.add(dataset)
        pr = plots.precision_recall_vs_k(frame, dataset, intervals, unit)
        assert [(t.name, t.xaxis) for t in pr.data] == [(m, x) for m in METHODS for x in ("x", "x2")]
        for trace in pr.data:
            metric = "precision" if trace.xaxis == "x" else "recall"
            _assert_bars(trace, intervals, dataset, trace.name, metric, unit)
    # One question (or one document) to draw from gives no interval, and "overall" is as rough as its roughest part.
    assert with_bars == {"nli-a", "nli-b"}


def test_some_bars_are_asymmetric_and_a_chart_without_intervals_has_none(small_run):
    frame = small_run.metrics()
    intervals, _ = run_uncertainty(small_run, None, "question")
    trace = plots.metric_vs_k(frame, "drm", "nli-a", intervals).data[0]
    assert not np.allclose(_values(trace.error_y.array), _values(trace.error_y.arrayminus))
    plain = plots.metric_vs_k(frame, "drm", "nli-a")
    assert all(t.error_y.array is None and t.customdata is None for t in plain.data)
    assert "customdata" not in plain.data[0].hovertemplate


def _chart(at: AppTest, title: str) -> dict:
    return next(spec for spec in (json.loads(c.proto.spec) for c in at.get("plotly_chart"))
                if spec["layout"]["title"]["text"].startswith(title))


def test_the_evaluate_page_draws_the_bars_of_the_unit_it_resamples(small_run):
    at = AppTest.from_file(APP, default_timeout=60).switch_page("pages/4_Evaluate.py").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    # The charts open on "overall": no interval there (one of its datasets has a single question), so no bar.
    assert at.selectbox(key="eval_chart_dataset").value == "overall"
    overall = small_run.intervals("question")
    assert not any(_assert_bars(t, overall, "overall", t["name"], "drm", "question")
                   for t in _chart(at, "DRM against k")["data"])
    at.selectbox(key="eval_chart_dataset").set_value("nli-b").run()
    arrays = {}
    for unit in ("question", "document"):
        if unit == "document":
            at.radio(key="eval_resample").set_value("document").run()
        assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
        intervals = small_run.intervals(unit)
        drm = _chart(at, "DRM against k")
        assert [t["name"] for t in drm["data"]] == METHODS
        assert all(_assert_bars(t, intervals, "nli-b", t["name"], "drm", unit) for t in drm["data"])
        arrays[unit] = _values(drm["data"][0]["error_y"]["array"])
        pr = _chart(at, "Precision and recall against k")
        assert len(pr["data"]) == 2 * len(METHODS)
        for t in pr["data"]:
            _assert_bars(t, intervals, "nli-b", t["name"], "precision" if t.get("xaxis", "x") == "x" else "recall", unit)
        assert any(c.value.startswith(f"Error bars: 95 % interval, {unit}s resampled") for c in at.caption)
    assert not np.allclose(arrays["question"], arrays["document"])  # the unit the page resamples is the bars' unit
