"""The audit trail names every evaluation run and every review label, with who did it (the issue's defect: neither
was recorded). Real workspaces: labels and ground truth on a demo NDA, an evaluation of the demo NDAs."""

from __future__ import annotations

import shutil

import pytest

from sac.config import SacConfig
from sac.evaluation.review import ChunkLabel
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import DEMO_DIR
from sac.methods import parse_methods
from sac.usecases.evaluate import EvaluationRequest, evaluate_and_save
from sac.usecases.review import add_ground_truth, save_labels
from sac.usecases.workbench import Workbench


def test_review_labels_and_marked_ground_truth_are_in_the_audit_trail(tmp_path):
    wb = Workbench(SacConfig(workspace=tmp_path / "workspace"))
    [ds] = load_benchmark(DEMO_DIR, ["contractnli"])
    doc = ds.documents[0]
    labels = [ChunkLabel(corpus="demo-contractnli", query_id=f"q{i}", query="Who may receive it?", method=method,
                         doc_id=doc.doc_id, start=0, end=40, label=label, reviewer="Ada", rank=1)
              for i, (method, label) in enumerate([("baseline", "relevant"), ("sac-generic", "wrong document"),
                                                   ("sac-generic", "relevant")])]
    save_labels(wb, labels)
    add_ground_truth(wb, corpus="demo-contractnli", query_id="mine-1", query="Who may receive it?", document=doc,
                     start=0, end=40, reviewer="Ada")
    events = [e for e in wb.audit.entries() if e["action"] == "review"]
    assert [e["what"] for e in events] == ["corpus 'demo-contractnli'"] * 2
    assert events[0]["details"]["labels"] == 3 and events[0]["details"]["counts"] == {"relevant": 2, "wrong document": 1}
    assert events[0]["details"]["methods"] == ["baseline", "sac-generic"]
    assert events[1]["details"]["span"] == [0, 40] and events[1]["details"]["doc_id"] == doc.doc_id


@pytest.mark.slow
def test_an_evaluation_run_is_in_the_audit_trail(demo_workspace, memo, tmp_path):
    shutil.copytree(demo_workspace, tmp_path / "ws")
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    [ds] = load_benchmark(DEMO_DIR, ["contractnli"])
    request = EvaluationRequest(datasets=(ds,), methods=tuple(parse_methods("baseline")), k_values=(1, 8),
                                benchmark="demo", benchmark_dir=DEMO_DIR)
    _, run = evaluate_and_save(wb, request)
    [event] = [e for e in wb.audit.entries() if e["action"] == "evaluate"]
    assert event["what"] == f"run {run.run_id}"
    assert event["details"] == {"benchmark": "demo", "datasets": ["contractnli"], "methods": ["baseline"],
                                "k_values": [1, 8]}
