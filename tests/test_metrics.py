from hypothesis import given
from hypothesis import strategies as st

from sac.evaluation.metrics import aggregate, char_overlap, document_retrieval_mismatch, precision_recall, score_query, wrong_document_flags
from sac.types import Span, merge_spans


def test_design_worked_example():
    gold = [Span("A", 5, 15)]
    retrieved = [Span("A", 0, 10), Span("B", 0, 10)]
    assert char_overlap(retrieved, gold) == 5
    assert precision_recall(retrieved, gold) == (5 / 20, 5 / 10)
    assert document_retrieval_mismatch(retrieved, ["A"]) == 0.5
    score = score_query(retrieved, gold)
    assert (score.precision, score.recall, score.drm, score.wrong, score.retrieved_chars) == (0.25, 0.5, 0.5, 1, 20)


def test_half_overlap_gives_half_precision_and_recall():
    assert precision_recall([Span("A", 0, 10)], [Span("A", 5, 15)]) == (0.5, 0.5)


def test_retrieved_snippets_are_not_merged_before_scoring():
    # Two identical retrieved snippets both count their overlap (LegalBench-RAG's definition).
    gold = [Span("A", 0, 10)]
    assert char_overlap([Span("A", 0, 10), Span("A", 0, 10)], gold) == 20
    assert precision_recall([Span("A", 0, 10), Span("A", 0, 10)], gold) == (1.0, 2.0)


def test_same_offsets_in_another_file_do_not_overlap():
    assert char_overlap([Span("B", 0, 10)], [Span("A", 0, 10)]) == 0


def test_empty_denominators_score_zero():
    assert precision_recall([], [Span("A", 0, 10)]) == (0.0, 0.0)
    assert precision_recall([Span("A", 0, 10)], []) == (0.0, 0.0)
    assert document_retrieval_mismatch([], ["A"]) == 0.0


def test_drm_branches():
    assert wrong_document_flags([Span("A", 0, 1), Span("B", 0, 1), Span("C", 0, 1)], ["A", "C"]) == [False, True, False]
    assert document_retrieval_mismatch([Span("B", 0, 1)], ["A"]) == 1.0
    assert document_retrieval_mismatch([Span("A", 0, 1)], ["A"]) == 0.0
    # A query whose ground truth spans two files: hits in either are right.
    assert document_retrieval_mismatch([Span("A", 0, 1), Span("B", 0, 1)], ["A", "B"]) == 0.0


def test_dataset_drm_is_pooled_and_precision_recall_are_query_means():
    q1 = score_query([Span("A", 0, 10)], [Span("A", 0, 10)])  # P=R=1, 0 of 1 wrong
    q2 = score_query([Span("B", 0, 10), Span("B", 10, 20), Span("B", 20, 30)], [Span("A", 0, 10)])  # 3 of 3 wrong
    agg = aggregate([q1, q2])
    assert agg.precision == 0.5 and agg.recall == 0.5
    assert agg.drm == 3 / 4  # pooled over snippets, not the mean of 0 and 1
    assert agg.retrieved_chars == 20


spans = st.builds(
    lambda d, a, b: Span(d, min(a, b), max(a, b)),
    st.sampled_from(["A", "B", "C"]), st.integers(0, 300), st.integers(0, 300),
)


@given(st.lists(spans, max_size=12), st.lists(spans, min_size=1, max_size=4).map(merge_spans))
def test_precision_recall_drm_stay_in_range_for_disjoint_gold(retrieved, gold):
    # Ground truth is merged (LegalBench-RAG gold spans do not overlap); retrieved spans from a
    # chunker do not overlap either, so merge them too for the <= 1 bound.
    retrieved = merge_spans(retrieved)
    p, r = precision_recall(retrieved, gold)
    assert 0.0 <= p <= 1.0 and 0.0 <= r <= 1.0
    assert 0.0 <= document_retrieval_mismatch(retrieved, {g.doc_id for g in gold}) <= 1.0


@given(st.lists(spans, min_size=1, max_size=6).map(merge_spans))
def test_oracle_scores_one_one_zero(gold):
    gold = [g for g in gold if len(g)] or [Span("A", 0, 1)]
    score = score_query(gold, gold)
    assert (score.precision, score.recall, score.drm) == (1.0, 1.0, 0.0)


@given(st.lists(spans, max_size=10))
def test_merging_twice_changes_nothing(items):
    once = merge_spans(items)
    assert merge_spans(once) == once
    covered = {(s.doc_id, i) for s in items for i in range(s.start, s.end)}
    assert covered == {(s.doc_id, i) for s in once for i in range(s.start, s.end)}
