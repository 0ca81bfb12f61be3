"""Expert labels and new ground truth: saved in the workspace, survive a restart, export cleanly."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path

import pytest

from sac.errors import ConfigError
from sac.evaluation.review import (
    LABELS,
    ChunkLabel,
    ReviewStore,
    benchmark_json,
    find_quote,
    label_summary,
    labels_csv,
    make_gold_span,
)
from sac.ingest.benchmark import load_benchmark
from sac.workspace import Workspace


def _label(method="baseline", label="relevant", reviewer="Ada", start=0, note=""):
    return ChunkLabel(corpus="demo-contractnli", query_id="q1", query="Who may receive it?", method=method,
                      doc_id="contractnli/a.txt", start=start, end=start + 10, label=label, reviewer=reviewer,
                      rank=1, note=note)


def _store() -> ReviewStore:
    return ReviewStore(Workspace(Path(os.environ["SAC_WORKSPACE"])).reviews_dir)


def test_labels_survive_a_new_store_and_the_latest_wins():
    _store().save_labels([_label(), _label(method="sac-expert", label="wrong document")])
    _store().save_labels([_label(label="partly relevant", note="only the first half")])
    labels = _store().labels()
    assert {(lab.method, lab.label) for lab in labels} == {("baseline", "partly relevant"),
                                                            ("sac-expert", "wrong document")}
    assert next(lab for lab in labels if lab.method == "baseline").note == "only the first half"
    assert all(lab.created for lab in labels)
    assert _store().labels(query="another question") == []


def test_two_reviewers_keep_their_own_labels():
    _store().save_labels([_label(reviewer="Ada"), _label(reviewer="Grace", label="boilerplate")])
    assert sorted(lab.reviewer for lab in _store().labels()) == ["Ada", "Grace"]


def test_bad_labels_are_refused_with_the_fix():
    with pytest.raises(ConfigError, match="reviewer name"):
        _store().save_labels([_label(reviewer="  ")])
    with pytest.raises(ConfigError, match="Choices are"):
        _store().save_labels([_label(label="great")])
    assert _store().labels() == []


def test_a_line_cut_short_by_a_crash_is_skipped():
    store = _store()
    store.save_labels([_label()])
    with open(store.labels_path, "a", encoding="utf-8") as handle:
        handle.write('{"corpus": "demo-con')
    assert len(store.labels()) == 1


def test_summary_counts_labels_per_method():
    labels = [
        _label(start=0), _label(start=10, label="partly relevant"), _label(start=20, label="boilerplate"),
        _label(method="sac-expert", start=0), _label(method="sac-expert", start=30, label="wrong document"),
    ]
    summary = label_summary(labels).set_index("method")
    assert list(summary.columns) == [*LABELS, "labelled", "relevant share"]
    assert summary.loc["baseline", "labelled"] == 3 and summary.loc["baseline", "relevant share"] == pytest.approx(2 / 3, abs=1e-3)
    assert summary.loc["sac-expert", "wrong document"] == 1 and summary.loc["sac-expert", "relevant share"] == 0.5
    assert label_summary([]).empty


def test_csv_export_has_one_row_per_label():
    rows = list(csv.DictReader(io.StringIO(labels_csv([_label(note='a, "quoted" note'), _label(start=5)]))))
    assert len(rows) == 2 and rows[0]["note"] == 'a, "quoted" note' and rows[1]["start"] == "5"


def test_new_ground_truth_exports_as_a_benchmark_that_loads_back(tmp_path):
    text = "The Recipient shall hold the Confidential Information in strict confidence. Term: 5 years."
    start, end = find_quote(text, "  hold the Confidential Information in strict confidence ")
    assert text[start:end] == "hold the Confidential Information in strict confidence"
    store = _store()
    span = make_gold_span(corpus="mine", query_id="live-1", query="What must the Recipient do?",
                          doc_id="mine/nda.txt", doc_text=text, start=start, end=end, reviewer="Ada")
    store.add_gold(span)
    other = make_gold_span(corpus="mine", query_id="live-2", query="How long is the term?", doc_id="mine/nda.txt",
                           doc_text=text, start=text.index("5 years"), end=len(text) - 1, reviewer="Ada")
    store.add_gold(other)
    store.remove_gold(other)
    store.add_gold(other)
    assert len(_store().gold(corpus="mine")) == 2 and _store().gold(corpus="other") == []

    (tmp_path / "bench" / "corpus" / "mine").mkdir(parents=True)
    (tmp_path / "bench" / "corpus" / "mine" / "nda.txt").write_text(text, encoding="utf-8")
    (tmp_path / "bench" / "benchmarks").mkdir()
    payload = benchmark_json(_store().gold(corpus="mine"))
    (tmp_path / "bench" / "benchmarks" / "mine.json").write_text(json.dumps(payload), encoding="utf-8")
    [dataset] = load_benchmark(tmp_path / "bench")
    assert {q.text for q in dataset.queries} == {"What must the Recipient do?", "How long is the term?"}
    assert {(g.start, g.end) for q in dataset.queries for g in q.gold} == {(start, end), (text.index("5 years"), len(text) - 1)}


def test_gold_spans_are_checked_against_the_document():
    with pytest.raises(ConfigError, match="inside the document"):
        make_gold_span(corpus="c", query_id="q", query="q?", doc_id="d", doc_text="short", start=3, end=10,
                       reviewer="Ada")
    with pytest.raises(ConfigError, match="reviewer"):
        make_gold_span(corpus="c", query_id="q", query="q?", doc_id="d", doc_text="short", start=0, end=2,
                       reviewer="")
    assert find_quote("abc", "zzz") is None and find_quote("abc", "   ") is None


def _reviewed_as_benchmark(ds, queries, reviewer="Ada"):
    """The gold spans of benchmark questions, marked again as reviewed ground truth of the dataset's corpus."""
    texts = {d.doc_id: d.text for d in ds.documents}
    return [make_gold_span(corpus="demo-contractnli", query_id=f"live-{i}", query=q.text, doc_id=g.doc_id,
                           doc_text=texts[g.doc_id], start=g.start, end=g.end, reviewer=reviewer)
            for i, q in enumerate(queries) for g in q.gold]


@pytest.mark.slow
def test_reviewed_ground_truth_is_scored_on_its_corpus_indexes_as_a_benchmark_is(demo_workspace, memo, demo_datasets,
                                                                                 tmp_path):
    """Marking a benchmark's answers again as reviewed ground truth and evaluating that gives every question the
    figures the benchmark's own evaluation gives it, searched in the same indexes, with no index built."""
    import shutil

    from sac.config import SacConfig
    from sac.evaluation.review import reviewed_dataset
    from sac.index.store import list_indexes
    from sac.methods import parse_methods
    from sac.usecases.evaluate import evaluate
    from sac.usecases.workbench import Workbench

    shutil.copytree(demo_workspace, tmp_path / "ws")
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    ds = demo_datasets["contractnli"]
    asked = [ds.queries[i] for i in (0, 7, 19)]
    reviewed = reviewed_dataset("demo-contractnli", ds.documents, _reviewed_as_benchmark(ds, asked))
    assert [q.text for q in reviewed.queries] == sorted(q.text for q in asked)
    assert {q.text: set(q.gold) for q in reviewed.queries} == {q.text: set(q.gold) for q in asked}
    methods = parse_methods("baseline,sac-generic")
    before = {(i.corpus, i.method) for i in list_indexes(wb.client)}
    mine = evaluate(wb, [reviewed], methods, [1, 8], benchmark="reviewed", corpora={"demo-contractnli": "demo-contractnli"})
    assert {(i.corpus, i.method) for i in list_indexes(wb.client)} == before  # searched in place, nothing built
    theirs = evaluate(wb, [ds], methods, [1, 8])
    text_of = {q.query_id: q.text for q in [*ds.queries, *reviewed.queries]}
    figures = ("precision", "recall", "drm", "wrong")
    bench = {(text_of[r["query_id"]], r["method"], r["k"]): [r[f] for f in figures] for r in theirs.per_query}
    got = {(text_of[r["query_id"]], r["method"], r["k"]): [r[f] for f in figures] for r in mine.per_query}
    assert len(got) == 3 * 2 * 2 and all(got[key] == bench[key] for key in got)
    assert any(v[1] > 0 for v in got.values())  # some answers were found: the comparison says something


def test_reviewed_ground_truth_that_no_longer_holds_its_words_is_refused(demo_datasets):
    from dataclasses import replace

    from sac.errors import CorpusError
    from sac.evaluation.review import reviewed_dataset

    ds = demo_datasets["contractnli"]
    [span, *_] = _reviewed_as_benchmark(ds, ds.queries[:1])
    with pytest.raises(ConfigError, match="no reviewed ground truth yet"):
        reviewed_dataset("demo-contractnli", ds.documents, [])
    with pytest.raises(CorpusError, match="no longer holds the words marked"):
        reviewed_dataset("demo-contractnli", ds.documents, [replace(span, answer=span.answer + "!")])
    with pytest.raises(CorpusError, match="no longer holds"):
        reviewed_dataset("demo-contractnli", [d for d in ds.documents if d.doc_id != span.doc_id], [span])


@pytest.mark.slow
def test_cli_evaluates_a_corpus_on_its_reviewed_ground_truth_and_removal_takes_the_run(cli, tmp_path, demo_datasets):
    """``sac eval --corpus NAME``: the spans reviewers marked on an uploaded corpus, scored on its own index; removing
    the corpus removes the run that holds its text."""
    from sac.evaluation.runs import list_runs

    ds = demo_datasets["contractnli"]
    folder = tmp_path / "ndas"
    folder.mkdir()
    for doc in ds.documents[:2]:
        (folder / Path(doc.doc_id).name).write_text(doc.text, encoding="utf-8")
    ws = str(tmp_path / "ws")
    code, _, err = cli("ingest", "--workspace", ws, "--docs", str(folder), "--corpus", "mine", "--methods", "baseline", "-q")
    assert code == 0, err
    workspace = Workspace(Path(ws))
    [doc, *_] = workspace.load_corpus("mine")
    start = doc.text.lower().index("confidential")
    ReviewStore(workspace.reviews_dir).add_gold(make_gold_span(
        corpus="mine", query_id="live-1", query="What is confidential?", doc_id=doc.doc_id, doc_text=doc.text,
        start=start, end=start + 120, reviewer="Ada"))
    code, out, err = cli("eval", "--workspace", ws, "--corpus", "mine", "--methods", "baseline", "--k", "1,8", "-q")
    assert code == 0, err
    [run] = list_runs(workspace)
    assert run.settings["reviewed"] == {"corpus": "mine", "questions": 1, "spans": 1}
    assert run.corpus_of("mine") == "mine" and set(run.per_query()["query_id"]) == {"live-1"}
    assert "mine" in out  # the summary table names the dataset
    code, _, err = cli("eval", "--workspace", ws, "--corpus", "mine", "--datasets", "cuad", "-q")
    assert code == 1 and "without --datasets" in err
    code, _, err = cli("eval", "--workspace", ws, "--corpus", "theirs", "-q")
    assert code == 1 and "No corpus named 'theirs'" in err
    code, out, err = cli("remove", "--workspace", ws, "--corpus", "mine", "--all")
    assert code == 0, err
    assert list_runs(workspace) == [] and ReviewStore(workspace.reviews_dir).gold() == []
