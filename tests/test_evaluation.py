"""Evaluation end to end on the demo benchmark with the real model and a real chromadb."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sac.config import DEFAULT_K_VALUES
from sac.evaluation.runs import EvalResult, save_run, score_method, summary_table
from sac.methods import RECOMMENDED, parse_methods
from sac.types import Chunk, Hit
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]


def test_oracle_retriever_scores_perfectly_on_the_demo_benchmark(demo_datasets):
    result = EvalResult([], [], [])
    for ds in demo_datasets.values():
        oracle = [[Hit(Chunk(s, ""), 1.0, i + 1) for i, s in enumerate(q.gold)] for q in ds.queries]
        assert max(len(q.gold) for q in ds.queries) <= 64
        score_method(result, ds, "oracle", oracle, [64])
    for row in result.metrics:
        assert (row["precision"], row["recall"], row["drm"]) == (1.0, 1.0, 0.0), row


@pytest.mark.slow
def test_sac_lowers_drm_on_demo_contractnli(store_config, memo, demo_datasets):
    wb = Workbench(store_config, embedder=memo)
    methods = parse_methods("baseline,sac-generic,sac-expert")
    result = evaluate(wb, [demo_datasets["contractnli"]], methods, DEFAULT_K_VALUES)
    frame = result.frame()
    mean = frame[frame["k"] == "mean"].set_index("method")
    assert mean.loc["sac-generic", "drm"] < mean.loc["baseline", "drm"]
    assert mean.loc["sac-expert", "drm"] < mean.loc["baseline", "drm"]
    # 7 k values + the mean, per method; retrieved rows in rank order with exact spans.
    assert len(frame) == 3 * 8
    assert len(result.retrieved) == 3 * 52
    texts = {d.doc_id: d.text for d in demo_datasets["contractnli"].documents}
    for row in result.retrieved[:10]:
        scores = [h["score"] for h in row["retrieved"]]
        assert scores == sorted(scores, reverse=True) and len(scores) == 64
        for h in row["retrieved"]:
            start, end = h["span"]
            assert 0 <= start < end <= len(texts[h["file_path"]])
    # The saved run can be re-scored by an outside scorer from retrieved.jsonl alone.
    run = save_run(wb.workspace, result, wb.config, {"datasets": ["contractnli"]})
    assert _rescore(run.path, demo_datasets["contractnli"], k=8, method="sac-expert") == mean_at(frame, "sac-expert", 8)
    config = json.loads((run.path / "config.json").read_text())
    assert config["config"]["chunk_size"] == 500 and "openai_api_key" not in config["config"]
    table = summary_table(frame)
    assert list(table.columns[:2]) == ["drm@mean", "drm@1"]


def mean_at(frame: pd.DataFrame, method: str, k: int) -> float:
    row = frame[(frame["method"] == method) & (frame["k"] == k)].iloc[0]
    return round(float(row["recall"]), 9)


def _rescore(run: Path, dataset, k: int, method: str) -> float:
    """Recall at k recomputed from retrieved.jsonl and the benchmark JSON only, as an outside scorer would."""
    gold = {q.text: q.gold for q in dataset.queries}
    recalls = []
    for line in (run / "retrieved.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["method"] != method:
            continue
        spans = gold[row["query"]]
        total = sum(s.end - s.start for s in spans)
        overlap = sum(
            max(0, min(h["span"][1], s.end) - max(h["span"][0], s.start))
            for h in row["retrieved"][:k] for s in spans if s.doc_id == h["file_path"]
        )
        recalls.append(overlap / total)
    return round(sum(recalls) / len(recalls), 9)


@pytest.mark.slow
def test_cli_eval_prints_table_and_saves_run(tmp_path, cli):
    out = tmp_path / "metrics.csv"
    code, stdout, stderr = cli("eval", "--workspace", str(tmp_path / "ws"), "--datasets", "contractnli",
                               "--methods", "baseline,sac-expert", "--k", "1,8", "--out", str(out), "-q",
                               "--resample", "document")
    assert code == 0, stderr
    assert "drm@mean" in stdout and "sac-expert" in stdout
    frame = pd.read_csv(out)
    assert set(frame["k"].astype(str)) == {"1", "8", "mean"}
    runs = list((tmp_path / "ws" / "runs").iterdir())
    assert len(runs) == 1
    assert {p.name for p in runs[0].iterdir()} == {
        "config.json", "metrics.csv", "per_query.csv", "intervals.csv", "intervals_document.csv", "retrieved.jsonl"}
    # Every figure of metrics.csv has its 95 % interval, questions or documents resampled, which holds the
    # figure; the paired difference is printed, here with documents resampled as asked.
    for name in ("intervals.csv", "intervals_document.csv"):
        intervals = pd.read_csv(runs[0] / name, dtype={"k": str}).set_index(["method", "k", "metric"])
        for row in frame.itertuples():
            for metric in ("precision", "recall", "drm"):
                est, low, high = intervals.loc[(row.method, str(row.k), metric), ["estimate", "low", "high"]]
                assert est == pytest.approx(getattr(row, metric)) and low <= est <= high
    per_query = pd.read_csv(runs[0] / "per_query.csv")
    assert set(per_query["document"]) <= {f"contractnli/{f.name}" for f in (ROOT / "data/demo/corpus/contractnli").iterdir()}
    assert "95 % bootstrap interval, resampling documents" in stdout and "paired difference to baseline" in stdout
    assert "rough: only 5 documents in contractnli to draw from" in stdout  # the demo's 5 NDAs
    assert any(v in stdout for v in ("better", "worse", "within noise"))
    code, listed, stderr = cli("runs", "list", "--workspace", str(tmp_path / "ws"))
    assert code == 0, stderr
    assert runs[0].name in listed
    # A saved run's uncertainty reads back either way, without retrieving again.
    code, shown, stderr = cli("runs", "show", runs[0].name, "--workspace", str(tmp_path / "ws"), "--resample", "document",
                              "--reference", "SAC-Expert")
    assert code == 0, stderr
    assert "resampling documents" in shown and "paired difference to sac-expert" in shown
    drm = intervals.loc[("sac-expert", "mean", "drm"), ["estimate", "low", "high"]]  # intervals_document.csv, above
    assert f"{100 * drm['estimate']:.1f} % [{100 * drm['low']:.1f}, {100 * drm['high']:.1f}]" in shown
    # A reference is read as a method name is: "recommended" is the method it stands for, which this run lacks.
    code, _, stderr = cli("runs", "show", runs[0].name, "--workspace", str(tmp_path / "ws"), "--reference", "recommended")
    assert code == 1 and f"Unknown method '{RECOMMENDED}'. Choices are: ['baseline', 'sac-expert']" in stderr


@pytest.mark.slow
def test_cli_eval_on_one_question_claims_no_interval_and_no_verdict(tmp_path, cli):
    # A LegalBench-RAG folder holding one real demo question and its NDA: every bootstrap draw is that question.
    bench = json.loads((ROOT / "data/demo/benchmarks/contractnli.json").read_text("utf-8"))
    test = bench["tests"][0]
    doc = test["snippets"][0]["file_path"]
    (tmp_path / "one/corpus/contractnli").mkdir(parents=True)
    (tmp_path / "one/benchmarks").mkdir()
    (tmp_path / "one/corpus" / doc).write_bytes((ROOT / "data/demo/corpus" / doc).read_bytes())
    (tmp_path / "one/benchmarks/contractnli.json").write_text(json.dumps({"tests": [test]}), "utf-8")
    code, stdout, stderr = cli("eval", "--workspace", str(tmp_path / "ws"), "--benchmark", str(tmp_path / "one"),
                               "--methods", "baseline,sac-generic", "--k", "1,8", "-q")
    assert code == 0, stderr
    assert "rough: only 1 question in contractnli to draw from" in stdout
    assert "[no interval]" in stdout and "too few to tell" in stdout
    assert not any(v in stdout for v in (" better", " worse", "within noise"))


def test_cli_reports_bad_input_in_one_line(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "sac", "eval", "--workspace", str(tmp_path / "ws"), "--methods", "sac-?", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error: Unknown method 'sac-?'")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.slow
def test_an_evaluation_that_reopens_the_store_keeps_what_it_built_and_finds_the_same(tmp_path, memo, demo_datasets):
    """``reopen_store`` (``sac eval``): a build that settled its graphs closes the store, its reports survive the
    closing, and the searches of the reopened store give what a fresh workbench on the same store gives; with nothing
    to settle, the store stays open."""
    from sac.config import SacConfig

    config = SacConfig(workspace=tmp_path / "workspace")
    methods = parse_methods("baseline,sac-generic+docs1")
    ds = demo_datasets["contractnli"]
    first = Workbench(config, embedder=memo)
    opened = first.client
    logged: list[str] = []
    result = evaluate(first, [ds], methods, [1, 8], log=logged.append, reopen_store=True)
    chunks = result.corpora["contractnli"]["chunks"]
    assert [line.split(": ", 1)[1] for line in logged] == [f"{chunks} chunks embedded, 0 already indexed, 0 removed"] * 2
    assert first.client is not opened  # under 1,000 records a graph flushes only when settled: it was, and reopened
    again = evaluate(Workbench(config, embedder=memo), [ds], methods, [1, 8])
    assert again.per_query == result.per_query and len(result.per_query) == 2 * 2 * len(ds.queries)
    reopened = first.client
    assert evaluate(first, [ds], methods, [1, 8], reopen_store=True).per_query == result.per_query
    assert first.client is reopened  # nothing left to settle: the store stayed open
