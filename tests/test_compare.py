"""The pure helpers behind the app: side-by-side comparison, plots, the corpus catalog."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sac.errors import ConfigError
from sac.evaluation.compare import compare_methods, document_diffs, metrics_frame, nearest_neighbours
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import find_corpus, list_corpora, load_dataset, save_benchmark
from sac.render.plots import drm_per_dataset, metric_vs_k, precision_recall_vs_k, precision_vs_recall, results_table
from sac.types import Chunk, Hit, Span
from sac.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"


def _hit(doc, start, end, rank):
    return Hit(Chunk(Span(doc, start, end), "x" * (end - start)), 1.0 - rank / 10, rank)


def test_worked_example_per_method_and_document_diffs():
    hits = {
        "baseline": [_hit("A", 0, 10, 1), _hit("B", 0, 10, 2)],
        "sac-expert": [_hit("A", 0, 10, 1), _hit("C", 0, 10, 2)],
    }
    cmp = compare_methods("q", hits, gold=[Span("A", 5, 15)])
    base = cmp.result("baseline")
    assert (base.precision, base.recall, base.drm) == (5 / 20, 5 / 10, 1 / 2)
    assert base.wrong == (False, True)
    [diff] = document_diffs(cmp)
    # Both found the right document A: no gain; C and B are wrong documents one side retrieved.
    assert diff.method == "sac-expert" and diff.gained == () and diff.lost == ()
    assert diff.only_method == ("C",) and diff.only_reference == ("B",)
    frame = metrics_frame(cmp).set_index("method")
    assert frame.loc["sac-expert", "wrong"] == 1


def test_pinned_document_gives_flags_and_drm_but_no_precision():
    cmp = compare_methods("q", {"baseline": [_hit("A", 0, 5, 1), _hit("B", 0, 5, 2), _hit("B", 5, 9, 3)]},
                          pinned=["B"])
    res = cmp.result("baseline")
    assert res.wrong == (True, False, False) and res.drm == pytest.approx(1 / 3)
    assert res.precision is None and res.recall is None
    free = compare_methods("q", {"baseline": [_hit("A", 0, 5, 1)]}).result("baseline")
    assert free.wrong == (None,) and free.drm is None
    assert document_diffs(compare_methods("q", {"sac-x": [_hit("A", 0, 5, 1)]})) == []


def test_a_gain_is_a_right_document_the_baseline_missed():
    hits = {"baseline": [_hit("B", 0, 10, 1), _hit("C", 0, 10, 2)],
            "sac-generic": [_hit("A", 0, 10, 1), _hit("D", 0, 10, 2)],
            "sac-expert": [_hit("B", 0, 10, 1), _hit("E", 0, 10, 2)]}
    diffs = {d.method: d for d in document_diffs(compare_methods("q", hits, gold=[Span("A", 0, 5)]))}
    assert diffs["sac-generic"].gained == ("A",) and diffs["sac-generic"].only_method == ("D",)
    assert diffs["sac-expert"].gained == () and diffs["sac-expert"].only_method == ("E",)  # E is no gain
    pinned = document_diffs(compare_methods("q", {"baseline": [_hit("A", 0, 5, 1)], "sac-x": [_hit("B", 0, 5, 1)]},
                                             pinned=["A"]))[0]
    assert pinned.lost == ("A",) and pinned.only_method == ("B",) and not pinned.gained
    free = document_diffs(compare_methods("q", {"baseline": [_hit("A", 0, 5, 1)], "sac-x": [_hit("B", 0, 5, 1)]}))[0]
    assert free.gained == free.lost == () and free.only_method == ("B",) and free.only_reference == ("A",)


def test_nearest_neighbours_names_the_look_alike():
    vectors = np.array([[1, 0, 0], [0.9, 0.1, 0], [0, 0, 1]], dtype=np.float32)
    frame = nearest_neighbours(["a", "b", "c"], vectors)
    assert list(frame["doc_id"][:2]) == ["a", "b"] or list(frame["doc_id"][:2]) == ["b", "a"]
    assert frame.set_index("doc_id").loc["a", "most_similar"] == "b"
    assert frame["similarity"].iloc[0] == pytest.approx(0.9 / np.linalg.norm([0.9, 0.1]), abs=1e-5)
    assert len(nearest_neighbours(["a"], vectors[:1])) == 1


def _metrics() -> pd.DataFrame:
    rows = []
    for ds in ("cuad", "contractnli", "overall"):
        for m, base in (("baseline", 0.6), ("sac-expert", 0.3)):
            for k in (1, 8):
                rows.append({"dataset": ds, "method": m, "k": str(k), "precision": 0.1, "recall": 0.2 * k / 8,
                             "drm": base + k / 100, "retrieved_chars": 500.0 * k, "queries": 3})
            rows.append({"dataset": ds, "method": m, "k": "mean", "precision": 0.1, "recall": 0.2,
                         "drm": base, "retrieved_chars": 2250.0, "queries": 3})
    return pd.DataFrame(rows)


def test_figures_carry_the_numbers_in_percent():
    frame = _metrics()
    fig = metric_vs_k(frame, "drm")
    assert [t.name for t in fig.data] == ["baseline", "sac-expert"]
    assert list(fig.data[0].x) == [1, 8] and list(fig.data[0].y) == pytest.approx([61, 68])
    bars = drm_per_dataset(frame)
    assert list(bars.data[0].x) == ["cuad", "contractnli"] and list(bars.data[1].y) == pytest.approx([30, 30])
    pr = precision_recall_vs_k(frame, "cuad")
    assert len(pr.data) == 4 and list(pr.data[1].y) == pytest.approx([2.5, 20])
    scatter = precision_vs_recall(frame)
    assert list(scatter.data[0].text) == ["k=1", "k=8"]
    assert results_table(frame)["drm %"].max() == pytest.approx(68.0)
    # Legends sit under the plot, titled by what their entries are: methods here, review labels below.
    for figure in (fig, bars, pr, scatter):
        assert figure.layout.legend.orientation == "h" and figure.layout.legend.title.text == "method"


def test_review_label_chart_stacks_labels_per_method():
    from sac.evaluation.review import ChunkLabel, label_summary
    from sac.render.plots import label_counts_figure

    labels = [ChunkLabel("demo", "q1", "question", m, "a.txt", start, start + 10, label, "reviewer")
              for m, start, label in (("baseline", 0, "wrong document"), ("baseline", 20, "relevant"),
                                      ("sac-expert", 0, "relevant"))]
    fig = label_counts_figure(label_summary(labels))
    bars = {t.name: list(t.y) for t in fig.data}
    assert bars["relevant"] == [1, 1] and bars["wrong document"] == [1, 0]
    assert list(fig.data[0].x) == ["baseline", "sac-expert"] and fig.layout.legend.title.text == "label"


def test_catalog_lists_the_demo_with_cli_names_and_saves_uploaded_benchmarks():
    ws = Workspace(Path(os.environ["SAC_WORKSPACE"]))
    names = [e.name for e in list_corpora(ws)]
    assert names[:2] == ["demo-contractnli", "demo-cuad"]
    entry = find_corpus(list_corpora(ws), "demo-contractnli")
    original = load_benchmark(DEMO, ["contractnli"])
    assert load_dataset(entry) == original[0]

    save_benchmark(ws, "mine", original)
    mine = find_corpus(list_corpora(ws), "mine-contractnli")
    again = load_dataset(mine)
    assert [q.text for q in again.queries] == [q.text for q in original[0].queries]
    assert [q.gold for q in again.queries] == [q.gold for q in original[0].queries]
    assert [d.text for d in again.documents] == [d.text for d in original[0].documents]
    with pytest.raises(ConfigError):
        save_benchmark(ws, "../evil", original)
    with pytest.raises(ConfigError):
        save_benchmark(ws, "demo", original)


def test_tables_read_as_percent_with_plain_headers():
    from sac.render.plots import RUN_DIFF_NUMBERS, risk_table, run_diff_table

    diff = pd.DataFrame({"dataset": ["cuad"], "method": ["sac-generic"], "precision_a": [1.0], "precision_b": [2.0],
                         "precision_diff": [1.0], "recall_a": [10.0], "recall_b": [30.0], "recall_diff": [20.0],
                         "drm_a": [50.0], "drm_b": [20.0], "drm_diff": [-30.0]}).set_index(["dataset", "method"])
    table = run_diff_table(diff)
    assert list(table.columns) == ["dataset", "method", *RUN_DIFF_NUMBERS]
    assert table.loc[0, "Δ DRM"] == -30.0 and table.loc[0, "recall % (B)"] == 30.0
    risk = pd.DataFrame({"doc_id": ["cuad/VELCO%20NDA.txt"], "chunks": [12], "mix_baseline": [0.4567],
                         "mix_method": [0.125], "risk_baseline": [0.91234], "risk_method": [0.8], "boilerplate": [0.5]})
    shown = risk_table(risk, "sac-generic").iloc[0]
    assert shown["document"] == "VELCO NDA" and shown["wrong-document neighbours % (baseline)"] == 45.7
    assert shown["wrong-document neighbours % (sac-generic)"] == 12.5 and shown["boilerplate chunks %"] == 50.0


def test_percent_table_shows_a_dash_where_a_figure_cannot_be_measured():
    from sac.render.plots import percent_table

    pinned = compare_methods("q", {"baseline": [_hit("A", 0, 5, 1), _hit("B", 0, 5, 2)]}, pinned=["B"])
    table = percent_table(metrics_frame(pinned), {"precision": "precision %", "drm": "DRM %"})
    row = table.iloc[0]
    assert (row["precision %"], row["DRM %"]) == ("—", "50.0")
    assert list(table.columns[:3]) == ["method", "precision %", "recall"]
