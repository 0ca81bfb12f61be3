"""Saved runs on disk (sac.evaluation.runs.RunFolder): what a run folder holds, how runs are listed and opened,
and that a half-written or broken folder is never shown as a run."""

from __future__ import annotations

import os

import pytest

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.evaluation.metrics import aggregate, score_query
from sac.evaluation.runs import EvalResult, compare_runs, list_runs, open_run, query_diff, save_run
from sac.types import Chunk, Hit, Span
from sac.workspace import Workspace


def _result(demo_datasets, wrong_document: bool) -> EvalResult:
    """A real scored run: each question's gold spans as hits (the oracle), or the same spans in the next
    document of the corpus (every hit from a wrong document)."""
    ds = demo_datasets["contractnli"]
    texts = {d.doc_id: d.text for d in ds.documents}
    ids = sorted(texts)
    per_query, retrieved, scores = [], [], []
    for q in ds.queries:
        hits = []
        for rank, g in enumerate(q.gold, start=1):
            doc = ids[(ids.index(g.doc_id) + 1) % len(ids)] if wrong_document else g.doc_id
            end = min(g.end, len(texts[doc]))
            start = min(g.start, end - 1)
            hits.append(Hit(Chunk(Span(doc, start, end), texts[doc][start:end]), 1.0, rank))
        score = score_query([h.span for h in hits], q.gold)
        scores.append(score)
        per_query.append({"dataset": ds.name, "query_id": q.query_id, "method": "gold", "k": 8,
                          "precision": score.precision, "recall": score.recall, "drm": score.drm, "wrong": 0})
        retrieved.append({"dataset": ds.name, "query_id": q.query_id, "query": q.text, "method": "gold",
                          "retrieved": [{"file_path": h.span.doc_id, "span": [h.span.start, h.span.end],
                                         "score": h.score} for h in hits]})
    overall = aggregate(scores)
    metrics = [{"dataset": ds.name, "method": "gold", "k": k, "precision": overall.precision, "recall": overall.recall,
                "drm": overall.drm, "retrieved_chars": 0, "queries": len(scores)} for k in (8, "mean")]
    return EvalResult(metrics, per_query, retrieved)


def test_a_saved_run_reads_back_from_its_folder(tmp_path, demo_datasets):
    ws = Workspace(tmp_path / "ws")
    run = save_run(ws, _result(demo_datasets, False), SacConfig(workspace=ws.root), {"datasets": ["contractnli"],
                   "methods": ["gold"], "pool": ["a", "b"]}, label="oracle")
    assert run.saved and run.run_id.endswith("-oracle")
    assert sorted(p.name for p in run.path.iterdir()) == [
        "config.json", "intervals.csv", "metrics.csv", "per_query.csv", "retrieved.jsonl"]
    assert run.metrics().query("k == 'mean'")["recall"].item() == pytest.approx(1.0)
    assert len(run.per_query()) == len(demo_datasets["contractnli"].queries)
    assert {"method", "metric", "low", "high"} <= set(run.intervals().columns)
    # Rows that name no question's document (scored by hand here) cannot be resampled by document: said plainly.
    with pytest.raises(ConfigError, match="needs a 'document' column"):
        run.intervals("document")
    questions = {q.query_id: q.text for q in demo_datasets["contractnli"].queries}
    assert run.query_texts() == {("contractnli", qid): text for qid, text in questions.items()}
    assert run.description == f"{run.run_id} · contractnli · gold · pool of 2 path(s)"
    assert "openai_api_key" not in run.meta["config"]


def test_runs_list_newest_first_and_skip_folders_that_are_not_saved_runs(tmp_path, demo_datasets):
    ws = Workspace(tmp_path / "ws")
    cfg = SacConfig(workspace=ws.root)
    first = save_run(ws, _result(demo_datasets, False), cfg, {}, label="a")
    second = save_run(ws, _result(demo_datasets, True), cfg, {}, label="b")
    (ws.runs_dir / "99999999-999999-half-written").mkdir()  # no config.json yet: being written
    broken = ws.runs_dir / "99999999-999999-broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json")
    assert [r.run_id for r in list_runs(ws)] == sorted([first.run_id, second.run_id], reverse=True)
    assert open_run(ws, first.run_id) == first
    with pytest.raises(ConfigError, match="No saved run 'half-written'.*Recent"):
        open_run(ws, "half-written")
    with pytest.raises(ConfigError, match="Invalid run id"):
        open_run(ws, "../runs")


def test_runs_saved_in_the_same_second_list_in_the_order_they_were_made(tmp_path, demo_datasets, monkeypatch):
    # Two evaluations saved within one second ("...-sure", then "...-plain"): the later one is the newest, whatever
    # its label. The clock is held still so both fall in the same second, as they do on a quick machine.
    import datetime as dt

    class _Still(dt.datetime):
        @classmethod
        def now(cls, tz=None):  # noqa: ANN206 - the stand-in for datetime.now
            return dt.datetime(2026, 1, 2, 3, 4, 5, tzinfo=tz)

    monkeypatch.setattr("sac.workspace.datetime", _Still)
    monkeypatch.setattr("sac.evaluation.runs.utc_now", lambda: "2026-01-02T03:04:05+00:00")
    ws = Workspace(tmp_path / "ws")
    cfg = SacConfig(workspace=ws.root)
    sure = save_run(ws, _result(demo_datasets, False), cfg, {}, label="sure")
    plain = save_run(ws, _result(demo_datasets, False), cfg, {}, label="plain")
    saved = (sure.path / "config.json").stat()
    os.utime(sure.path / "config.json", ns=(saved.st_atime_ns, saved.st_mtime_ns - 10**9))  # written a moment before
    assert sure.created == plain.created and sure.run_id > plain.run_id
    assert [r.run_id for r in list_runs(ws)] == [plain.run_id, sure.run_id]


def test_two_runs_compare_per_method_and_per_question(tmp_path, demo_datasets):
    ws = Workspace(tmp_path / "ws")
    cfg = SacConfig(workspace=ws.root)
    oracle = save_run(ws, _result(demo_datasets, False), cfg, {}, label="a")
    elsewhere = save_run(ws, _result(demo_datasets, True), cfg, {}, label="b")
    table = compare_runs(oracle, elsewhere)
    assert table.loc[("contractnli", "gold"), "recall_a"] == pytest.approx(100.0)
    assert table.loc[("contractnli", "gold"), "recall_diff"] == pytest.approx(-100.0)
    assert table.loc[("contractnli", "gold"), "drm_diff"] == pytest.approx(100.0)
    diff = query_diff(oracle, elsewhere, k=8)
    assert len(diff) == len(demo_datasets["contractnli"].queries)
    assert set(diff["change"]) == {"lost right document"}
    assert set(query_diff(elsewhere, oracle, k=8)["change"]) == {"gained right document"}


def test_a_run_keeps_the_ground_truth_it_was_scored_against(tmp_path, demo_datasets):
    """Review reads a saved run's questions with the gold the run used, not the benchmark as it is later; a run saved
    before runs kept it says so (None)."""
    from sac.evaluation.runs import score_method

    ds = demo_datasets["contractnli"]
    result = EvalResult([], [], [])
    score_method(result, ds, "oracle", [[Hit(Chunk(g, ""), 1.0, i + 1) for i, g in enumerate(q.gold)] for q in ds.queries], [8])
    ws = Workspace(tmp_path / "ws")
    run = save_run(ws, result, SacConfig(workspace=ws.root), {"datasets": [ds.name]}, label="oracle")
    assert run.questions(ds.name) == list(ds.queries) and run.questions("cuad") == []
    older = save_run(ws, _result(demo_datasets, False), SacConfig(workspace=ws.root), {}, label="older")
    assert older.questions(ds.name) is None
