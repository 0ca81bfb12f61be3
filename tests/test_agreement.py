"""Agreement between reviewers: Cohen's kappa on the chunks two experts both labelled, and the chunks they
labelled differently, on chunks of a real demo NDA."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest

from sac.chunking.split import chunk_document
from sac.evaluation.agreement import (
    agreement_table,
    cohen_kappa,
    disagreements,
    format_agreement,
    labels_against_flags,
    latest_labels,
)
from sac.evaluation.review import LABELS, ChunkLabel
from sac.ingest.benchmark import load_benchmark

ROOT = Path(__file__).resolve().parents[1]
QUERY = ("Consider VELCO's Non-Disclosure Agreement; Does the document restrict the use of Confidential Information to "
         "the purposes stated in the Agreement?")
R, P, N, W, B = "relevant", "partly relevant", "not relevant", "wrong document", "boilerplate"
# The worked example. Same label on 7 of 10 chunks: p_o = 0.7. Label counts, A: R3 N3 P2 W1 B1; B: R3 N4 P1 W2 B0,
# so p_e = (3*3 + 3*4 + 2*1 + 1*2 + 1*0) / 100 = 0.25 and kappa = (0.7 - 0.25) / 0.75 = 0.6. On relevance
# (R or P) A says yes 5 times, B 4 times, and they agree on 9: p_e = 0.5*0.4 + 0.5*0.6 = 0.5, kappa = 0.8.
ADA = [R, R, R, N, N, N, P, P, W, B]
GRACE = [R, R, N, N, N, N, P, R, W, W]


@pytest.fixture(scope="module")
def spans():
    [nda] = [d for d in load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents if "VELCO" in d.doc_id]
    return [c.span for c in chunk_document(nda)[:10]]


def _label(span, label, reviewer, method="baseline", created="2026-12-01T10:00:00+00:00", query=QUERY):
    return ChunkLabel(corpus="demo-contractnli", query_id="contractnli-0011", query=query, method=method,
                      doc_id=span.doc_id, start=span.start, end=span.end, label=label, reviewer=reviewer,
                      created=created)


def _two(spans):
    return [_label(s, a, "Ada") for s, a in zip(spans, ADA)] + [_label(s, g, "Grace") for s, g in zip(spans, GRACE)]


def test_kappa_follows_the_worked_example():
    assert cohen_kappa(ADA, GRACE) == pytest.approx(0.6)
    assert cohen_kappa(GRACE, ADA) == pytest.approx(0.6)
    assert cohen_kappa(ADA, ADA) == pytest.approx(1.0)
    assert math.isnan(cohen_kappa([R, R], [R, R]))  # one label throughout: chance agreement is 1, no kappa
    with pytest.raises(ValueError, match="one length"):
        cohen_kappa([R], [R, N])


def test_the_table_gives_each_pair_its_chunks_shares_and_kappas_with_intervals(spans):
    [row] = agreement_table(_two(spans)).to_dict("records")
    assert (row["reviewer A"], row["reviewer B"], row["chunks"]) == ("Ada", "Grace", 10)
    assert row["same label"] == pytest.approx(0.7) and row["kappa"] == pytest.approx(0.6)
    assert row["same relevance"] == pytest.approx(0.9) and row["relevance kappa"] == pytest.approx(0.8)
    assert -1 <= row["kappa low"] < 0.6 < row["kappa high"] <= 1
    assert row["relevance kappa low"] < 0.8 <= row["relevance kappa high"] <= 1
    again = agreement_table(_two(spans)).to_dict("records")[0]
    assert again["kappa low"] == row["kappa low"]  # a fixed seed: the same labels give the same interval
    shown = format_agreement(agreement_table(_two(spans))).to_dict("records")[0]
    assert shown["reviewers"] == "Ada · Grace" and shown["same label"] == "70 %"
    assert shown["kappa (5 labels)"].startswith("0.60 [") and shown["kappa (relevance)"].startswith("0.80 [")


def test_only_chunks_both_labelled_count_and_a_lone_reviewer_gives_no_row(spans):
    labels = _two(spans) + [_label(s, R, "Linus") for s in spans[:3]]
    table = agreement_table(labels).set_index(["reviewer A", "reviewer B"])
    assert table.loc[("Ada", "Linus"), "chunks"] == 3 and table.loc[("Ada", "Linus"), "same label"] == 1.0
    assert table.loc[("Grace", "Linus"), "same label"] == pytest.approx(2 / 3)
    assert agreement_table([_label(s, R, "Ada") for s in spans]).empty
    assert agreement_table([]).empty and disagreements([]).empty


def test_a_chunk_is_one_item_across_methods_and_the_latest_label_counts(spans):
    first, second = spans[0], spans[1]
    labels = [
        _label(first, N, "Ada", method="sac-generic", created="2026-12-01T11:00:00+00:00"),
        _label(first, R, "Ada", method="baseline", created="2026-12-01T10:00:00+00:00"),
        _label(first, N, "Grace"),
        _label(second, R, "Ada"), _label(second, P, "Grace"),
        _label(second, R, "Grace", query="another question"),  # another question: another item
    ]
    latest = latest_labels(labels)
    assert latest[("demo-contractnli", QUERY, first.doc_id, first.start, first.end)] == {"Ada": N, "Grace": N}
    [row] = agreement_table(labels).to_dict("records")
    assert row["chunks"] == 2 and row["same label"] == 0.5 and row["same relevance"] == 1.0


def test_disagreements_list_each_chunk_labelled_differently_with_every_label(spans):
    table = disagreements(_two(spans))
    assert len(table) == 3
    assert sorted(table["labels"]) == sorted([f"Ada: {R} · Grace: {N}", f"Ada: {P} · Grace: {R}",
                                              f"Ada: {B} · Grace: {W}"])
    assert set(table["document"]) == {spans[0].doc_id}
    assert {(s.start, s.end) for s in (spans[2], spans[7], spans[9])} == set(zip(table["start"], table["end"]))


def test_labels_are_counted_against_the_benchmarks_wrong_document_flags():
    [ds] = load_benchmark(ROOT / "data" / "demo", ["contractnli"])
    question = ds.queries[0]
    [right] = {s.doc_id for s in question.gold}
    other = next(d.doc_id for d in ds.documents if d.doc_id != right)
    gold = {("demo-contractnli", q.query_id): {s.doc_id for s in q.gold} for q in ds.queries}

    def lab(doc, label, start, query_id=question.query_id):
        text = question.text if query_id == question.query_id else "What does this NDA say about copies?"
        return ChunkLabel(corpus="demo-contractnli", query_id=query_id, query=text, method="baseline",
                          doc_id=doc, start=start, end=start + 10, label=label, reviewer="Ada")

    labels = [lab(right, "relevant", 0), lab(right, "wrong document", 10), lab(other, "relevant", 0),
              lab(other, "wrong document", 10), lab(other, "wrong document", 20), lab(other, "relevant", 30, "live-1"),
              dataclasses.replace(lab(other, "wrong document", 20), method="sac-generic")]  # the same chunk: once
    table = labels_against_flags(labels, gold).set_index("label")
    assert list(table.index) == list(LABELS)
    assert table.loc["relevant"].tolist() == [1, 1] and table.loc["wrong document"].tolist() == [1, 2]
    assert table.to_numpy().sum() == 5  # the live question's label has no ground truth: left out
