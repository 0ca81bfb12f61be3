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
