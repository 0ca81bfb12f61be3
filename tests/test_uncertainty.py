"""Bootstrap intervals over questions and paired differences, on hand-made rows with hand-checked answers
and on real per-query rows scored by the project's own scorer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from sac.errors import ConfigError
from sac.evaluation.uncertainty import (
    DIFFERENCE_COLUMNS,
    INTERVAL_COLUMNS,
    bootstrap_intervals,
    compare_to_reference,
    documents_per_dataset,
    few_units_note,
    format_interval,
    interval_table,
    paired_difference,
)

ROOT = Path(__file__).resolve().parents[1]
KS = (1, 2, 4, 8, 16, 32, 64)


def rows(method, precision, *, dataset="d", k=8, recall=None, wrong=None, retrieved=None):
    """One per-query row per question, as runs.score_method writes them (drm = wrong / retrieved)."""
    n = len(precision)
    recall = precision if recall is None else recall
    wrong = [0] * n if wrong is None else wrong
    retrieved = [k] * n if retrieved is None else retrieved
    return [
        {"dataset": dataset, "query_id": f"q{i}", "method": method, "k": k, "precision": p, "recall": r,
         "drm": w / n_ret if n_ret else 0.0, "wrong": w}
        for i, (p, r, w, n_ret) in enumerate(zip(precision, recall, wrong, retrieved))
    ]


def pick(frame, **where):
    mask = np.ones(len(frame), dtype=bool)
    for column, value in where.items():
        mask &= (frame[column] == value).to_numpy()
    assert mask.sum() == 1, (where, mask.sum())
    return frame[mask].iloc[0]


def random_run(seed=1, datasets=("cuad", "nli"), methods=("baseline", "sac-generic", "sac-expert"), n=(23, 17)):
    """Per-query rows with every column the run writes: 2 datasets, 3 methods, the 7 k values."""
    rng = np.random.default_rng(seed)
    out = []
    for name, n_q in zip(datasets, n):
        for method in methods:
            for k in KS:
                wrong = rng.integers(0, k + 1, n_q)
                out += rows(method, list(rng.random(n_q)), recall=list(rng.random(n_q)), wrong=list(wrong),
                            dataset=name, k=k)
    return pd.DataFrame(out)


def test_constant_metric_gives_zero_width_interval():
    frame = pd.DataFrame(rows("m", [0.3] * 7, wrong=[2] * 7) + rows("m", [0.3] * 7, wrong=[0] * 7, k=4))
    out = bootstrap_intervals(frame, n_resamples=200)
    assert list(out.columns) == INTERVAL_COLUMNS
    for _, row in out.iterrows():
        assert row["low"] == row["estimate"] == row["high"], row.to_dict()
    assert pick(out, k=8, metric="drm")["estimate"] == 0.25  # 2 wrong of 8, every question
    assert pick(out, k="mean", metric="drm")["estimate"] == 0.125  # (0.25 + 0) / 2
    assert pick(out, k=8, metric="precision")["estimate"] == pytest.approx(0.3)


def test_two_point_case_matches_the_exact_bootstrap_distribution():
    # Two questions scoring 0 and 1: a resample's mean is 0, 0.5 or 1 with chances 1/4, 1/2, 1/4.
    frame = pd.DataFrame(rows("m", [0.0, 1.0]))
    wide = pick(bootstrap_intervals(frame, n_resamples=4000), k=8, metric="precision")
    assert (wide["estimate"], wide["low"], wide["high"]) == (0.5, 0.0, 1.0)
    # The central 40 % (quantiles 0.3 and 0.7) falls inside the 50 % mass at 0.5.
    narrow = pick(bootstrap_intervals(frame, n_resamples=4000, confidence=0.4), k=8, metric="precision")
    assert (narrow["low"], narrow["high"]) == (0.5, 0.5)


def test_interval_width_matches_the_normal_approximation():
    # 400 questions, half score 1: standard error sqrt(0.25 / 400) = 0.025, 95 % half-width 1.96 * 0.025.
    frame = pd.DataFrame(rows("m", [0.0, 1.0] * 200))
    row = pick(bootstrap_intervals(frame, n_resamples=2000), k=8, metric="recall")
    assert row["estimate"] == 0.5
    assert row["high"] - 0.5 == pytest.approx(0.049, abs=0.006)
    assert 0.5 - row["low"] == pytest.approx(0.049, abs=0.006)


def test_drm_is_pooled_over_snippets_not_averaged_over_questions():
    # q0: 1 wrong of 1 retrieved (a corpus with one chunk); q1: 0 wrong of 4. Pooled 1 / 5, mean of questions 1 / 2.
    given = pd.DataFrame(rows("m", [0.5, 0.5], k=4, wrong=[1, 0], retrieved=[1, 4]))
    with_counts = given.assign(retrieved=[1, 4])
    for frame in (given, with_counts):
        assert pick(bootstrap_intervals(frame, n_resamples=100), k=4, metric="drm")["estimate"] == 0.2


def test_retrieved_count_is_inferred_for_a_question_with_fewer_hits_than_k():
    # q0's index returned 3 hits: at k = 4 and 8 it has 1 wrong of 3, at k = 2 none wrong of 2.
    # q1 always gets k hits, half of them wrong.
    frame = pd.DataFrame([
        *rows("m", [0.1, 0.1], k=2, wrong=[0, 1], retrieved=[2, 2]),
        *rows("m", [0.1, 0.1], k=4, wrong=[1, 2], retrieved=[3, 4]),
        *rows("m", [0.1, 0.1], k=8, wrong=[1, 4], retrieved=[3, 8]),
    ])
    out = bootstrap_intervals(frame, n_resamples=50)
    assert pick(out, k=2, metric="drm")["estimate"] == 1 / 4
    assert pick(out, k=4, metric="drm")["estimate"] == 3 / 7
    assert pick(out, k=8, metric="drm")["estimate"] == 5 / 11


def test_point_estimates_equal_the_direct_computation_exactly():
    frame = random_run()
    out = bootstrap_intervals(frame, n_resamples=50)
    retrieved = frame["k"]  # random_run's index always returns k hits
    frame = frame.assign(retrieved=retrieved)
    expected = {}
    for (name, method, k), g in frame.groupby(["dataset", "method", "k"], sort=False):
        # The run's own arithmetic: sum() in question order / n; DRM = sum wrong / sum retrieved.
        expected[name, method, k] = {
            "precision": sum(g["precision"].tolist()) / len(g), "recall": sum(g["recall"].tolist()) / len(g),
            "drm": sum(g["wrong"].tolist()) / sum(g["retrieved"].tolist()),
        }
    for name in ("cuad", "nli"):
        for method in ("baseline", "sac-generic", "sac-expert"):
            expected[name, method, "mean"] = {
                m: sum(expected[name, method, k][m] for k in KS) / len(KS) for m in ("precision", "recall", "drm")
            }
    for method in ("baseline", "sac-generic", "sac-expert"):
        for k in [*KS, "mean"]:
            expected["overall", method, k] = {
                m: sum(expected[d, method, k][m] for d in ("cuad", "nli")) / 2 for m in ("precision", "recall", "drm")
            }
    assert len(out) == len(expected) * 3
    for _, row in out.iterrows():
        assert row["estimate"] == expected[row["dataset"], row["method"], row["k"]][row["metric"]], row.to_dict()
    assert set(out.loc[out["dataset"] == "overall", "queries"]) == {23 + 17}


def test_intervals_contain_the_estimate_and_are_ordered_like_the_run():
    out = bootstrap_intervals(random_run(), n_resamples=300)
    assert (out["low"] <= out["estimate"]).all() and (out["estimate"] <= out["high"]).all()
    assert (out["high"] > out["low"]).all()  # random data: no interval collapses
    assert list(out["dataset"].drop_duplicates()) == ["cuad", "nli", "overall"]
    assert list(out["k"].drop_duplicates()) == [*KS, "mean"]
    assert list(out["metric"][:3]) == ["precision", "recall", "drm"]


def test_same_seed_same_intervals_and_other_methods_do_not_move_them():
    frame = random_run()
    first = bootstrap_intervals(frame, n_resamples=200, seed=7)
    pd.testing.assert_frame_equal(first, bootstrap_intervals(frame, n_resamples=200, seed=7))
    assert not first["low"].equals(bootstrap_intervals(frame, n_resamples=200, seed=8)["low"])
    # Resamples depend on (seed, dataset, questions) only, so dropping methods changes nothing for the rest.
    alone = bootstrap_intervals(frame[frame["method"] == "baseline"], n_resamples=200, seed=7)
    pd.testing.assert_frame_equal(alone, first[first["method"] == "baseline"].reset_index(drop=True))


def test_paired_difference_of_a_method_with_itself_is_exactly_zero():
    frame = random_run()
    out = paired_difference(frame, "baseline", "baseline", metric=["precision", "recall", "drm"], k=None)
    assert list(out.columns) == DIFFERENCE_COLUMNS
    assert len(out) == 3 * 3  # cuad, nli, overall per metric
    assert (out[["estimate", "low", "high"]] == 0.0).all().all()
    assert set(out["verdict"]) == {"within noise"} and not out["excludes_zero"].any()


def test_paired_difference_detects_a_consistent_improvement_that_unpaired_intervals_hide():
    # Questions vary from easy to hard; sac beats baseline by 2 points on every one of them.
    base = list(np.linspace(0.0, 0.9, 40))
    frame = pd.DataFrame(rows("baseline", base) + rows("sac", [p + 0.02 for p in base]))
    ci = bootstrap_intervals(frame, n_resamples=500)
    a, b = pick(ci, method="baseline", k=8, metric="precision"), pick(ci, method="sac", k=8, metric="precision")
    assert b["low"] < a["high"]  # the two intervals overlap widely ...
    diff = pick(paired_difference(frame, "baseline", "sac", metric="precision", k=8), dataset="d")
    assert diff["estimate"] == pytest.approx(0.02)  # ... yet the paired difference is the same on every draw
    assert diff["low"] == pytest.approx(0.02) and diff["high"] == pytest.approx(0.02)
    assert diff["excludes_zero"] and diff["verdict"] == "better"


def test_paired_difference_calls_lower_drm_better_and_a_noisy_change_within_noise():
    wrong_a = [4, 6, 5, 7, 3, 6, 5, 4, 6, 5] * 3
    consistent = pd.DataFrame(rows("a", [0.1] * 30, wrong=wrong_a) + rows("b", [0.1] * 30, wrong=[w - 2 for w in wrong_a]))
    drm = pick(paired_difference(consistent, "a", "b", metric="drm", k=8), dataset="d")
    assert drm["estimate"] == pytest.approx(-2 / 8) and drm["high"] < 0 and drm["verdict"] == "better"
    assert pick(paired_difference(consistent, "b", "a", metric="drm", k=8), dataset="d")["verdict"] == "worse"
    # b gains 3 points on half the questions and loses 3 on the other half: mean change 0.
    noisy = pd.DataFrame(rows("a", [0.5] * 30) + rows("b", [0.5 + 0.03 * (-1) ** i for i in range(30)]))
    diff = pick(paired_difference(noisy, "a", "b", metric="recall", k=8), dataset="d")
    assert diff["low"] < 0 < diff["high"] and diff["verdict"] == "within noise"


def test_compare_to_reference_agrees_with_paired_difference():
    frame = random_run()
    table = compare_to_reference(frame, "baseline", k=4, n_resamples=200)
    assert sorted(set(table["method_b"])) == ["sac-expert", "sac-generic"]
    assert len(table) == 2 * 3 * 3  # methods x datasets (with overall) x metrics
    single = paired_difference(frame, "baseline", "sac-expert", metric="drm", k=4, n_resamples=200)
    mine = table[(table["method_b"] == "sac-expert") & (table["metric"] == "drm")].reset_index(drop=True)
    pd.testing.assert_frame_equal(mine, single)


def with_documents(frame, per_document):
    """Each question's document: question i belongs to document i // per_document."""
    return frame.assign(document=[f"doc{int(q[1:]) // per_document}" for q in frame["query_id"]])


def test_resampling_documents_draws_whole_documents():
    # Two documents of 10 questions each: every hit of the first is right, every hit of the second wrong.
    frame = with_documents(pd.DataFrame(rows("m", [0.5] * 20, wrong=[0] * 10 + [8] * 10)), 10)
    questions = pick(bootstrap_intervals(frame, n_resamples=2000), k=8, metric="drm")
    documents = pick(bootstrap_intervals(frame, n_resamples=2000, resample="document"), k=8, metric="drm")
    assert questions["estimate"] == documents["estimate"] == 0.5
    # Drawing 20 questions rarely gives fewer than 6 of either kind; drawing 2 documents gives one kind twice
    # half the time, so a DRM of 0 and of 1 are both among the resamples.
    assert 0.2 < questions["low"] < 0.5 < questions["high"] < 0.8
    assert documents["low"] == 0.0 and documents["high"] == 1.0
    # A constant metric stays exactly zero-width however many questions a draw holds.
    precision = pick(bootstrap_intervals(frame, n_resamples=200, resample="document"), k=8, metric="precision")
    assert precision["low"] == precision["high"] == 0.5


def test_few_documents_or_questions_are_named_for_the_unit_resampled():
    frame = with_documents(pd.DataFrame(rows("m", [0.5] * 20, dataset="nli") + rows("m", [0.5] * 40, dataset="cuad")), 4)
    assert documents_per_dataset(frame) == {"nli": 5, "cuad": 10}
    assert few_units_note(frame, "document") == "only 5 documents in nli to draw from"
    assert few_units_note(frame, "question") is None  # 20 and 40 questions
    assert few_units_note(frame[frame["dataset"] == "cuad"], "document") is None
    few = pd.DataFrame(rows("m", [0.5], dataset="maud") + rows("m", [0.5] * 3, dataset="privacy"))
    assert few_units_note(few, "question") == "only 1 question in maud, 3 questions in privacy to draw from"


def test_one_question_gives_no_interval_and_no_verdict():
    # Every draw of one question is that question: a zero-width interval would read as certainty.
    one = pd.DataFrame(rows("a", [0.1], dataset="maud", wrong=[8]) + rows("b", [0.6], dataset="maud", wrong=[0])
                       + rows("a", [0.1, 0.2], dataset="nli", wrong=[8, 8]) + rows("b", [0.6, 0.7], dataset="nli", wrong=[0, 0]))
    intervals = bootstrap_intervals(one, n_resamples=200)
    maud = pick(intervals, dataset="maud", method="b", k=8, metric="precision")
    assert maud["estimate"] == 0.6 and np.isnan(maud["low"]) and np.isnan(maud["high"])
    nli = pick(intervals, dataset="nli", method="b", k=8, metric="precision")
    assert nli["low"] == 0.6 and nli["high"] == 0.7  # two questions: an interval, if a rough one
    overall = pick(intervals, dataset="overall", method="b", k=8, metric="precision")
    assert np.isnan(overall["low"])  # it rests on maud's one question too
    diff = paired_difference(one, "a", "b", metric="drm", k=8)
    assert pick(diff, dataset="maud")["verdict"] == "too few to tell" and not pick(diff, dataset="maud")["excludes_zero"]
    assert pick(diff, dataset="nli")["verdict"] == "better"
    assert pick(diff, dataset="overall")["verdict"] == "too few to tell"
    by_document = paired_difference(one.assign(document=one["dataset"] + "/x"), "a", "b", metric="drm", k=8,
                                    resample="document")
    assert set(by_document["verdict"]) == {"too few to tell"}  # one document each
    assert format_interval(0.6, float("nan"), float("nan")) == "60.0 % [no interval]"
    assert format_interval(-1.0, float("nan"), float("nan"), difference=True) == "-100.0 pp [no interval]"


def test_one_question_per_document_resamples_as_questions_do():
    frame = random_run()
    one_each = frame.assign(document=frame["dataset"] + "/" + frame["query_id"])
    by_question = bootstrap_intervals(one_each, n_resamples=4000)
    by_document = bootstrap_intervals(one_each, n_resamples=4000, resample="document")
    assert (by_question["estimate"] == by_document["estimate"]).all()
    # The same distribution, other draws: bounds agree to the bootstrap's own noise (at single k the figures
    # move in steps of 1/34 with 17 questions, so the means over k are compared).
    mean = by_question["k"] == "mean"
    assert np.allclose(by_question.loc[mean, "low"], by_document.loc[mean, "low"], atol=0.015)
    assert np.allclose(by_question.loc[mean, "high"], by_document.loc[mean, "high"], atol=0.015)
    ratio = (by_question["high"] - by_question["low"]) / (by_document["high"] - by_document["low"])
    assert 0.98 < ratio.mean() < 1.02


def test_a_gain_on_one_document_is_a_win_by_questions_and_noise_by_documents():
    # 20 documents of 10 questions; b fixes every question of document 0 and changes nothing else.
    wrong_a = [8] * 10 + [4] * 190
    frame = with_documents(pd.DataFrame(rows("a", [0.1] * 200, wrong=wrong_a)
                                        + rows("b", [0.1] * 200, wrong=[0] * 10 + wrong_a[10:])), 10)
    by_question = pick(paired_difference(frame, "a", "b", metric="drm", k=8), dataset="d")
    by_document = pick(paired_difference(frame, "a", "b", metric="drm", k=8, resample="document"), dataset="d")
    assert by_question["estimate"] == by_document["estimate"] == pytest.approx(-10 / 200)
    assert by_question["verdict"] == "better"
    # Document 0 is missing from about a third of the draws of 20 documents: then the difference is 0.
    assert by_document["high"] == 0.0 and by_document["verdict"] == "within noise"


def test_format_interval_and_interval_table():
    assert format_interval(0.436, 0.381, 0.49) == "43.6 % [38.1, 49.0]"
    assert format_interval(0.032, 0.010, 0.054, difference=True) == "+3.2 pp [+1.0, +5.4]"
    assert format_interval(-0.0001, -0.0004, 0.0002, difference=True) == "-0.0 pp [-0.0, +0.0]"
    assert format_interval(float("nan"), 0.0, 1.0) == "n/a"
    table = interval_table(bootstrap_intervals(random_run(), n_resamples=100))
    assert list(table.columns) == ["precision", "recall", "drm"]
    assert table.index[0] == ("cuad", "baseline") and table.index[-1] == ("overall", "sac-expert")
    assert all(re.fullmatch(r"\d+\.\d % \[\d+\.\d, \d+\.\d\]", cell) for cell in table.to_numpy().ravel())


def test_bad_input_fails_with_a_clear_message():
    frame = random_run()
    with pytest.raises(ConfigError, match="missing \\['wrong'\\]"):
        bootstrap_intervals(frame.drop(columns="wrong"))
    with pytest.raises(ConfigError, match="Unknown method 'bm25'"):
        paired_difference(frame, "baseline", "bm25")
    with pytest.raises(ConfigError, match="k=3 is not in the run"):
        paired_difference(frame, "baseline", "sac-expert", k=3)
    with pytest.raises(ConfigError, match="incomplete: \\['sac-expert@64'\\]"):
        bootstrap_intervals(frame.drop(index=frame.index[-1]))
    with pytest.raises(ConfigError, match="needs a 'document' column"):
        bootstrap_intervals(frame, resample="document")
    with pytest.raises(ConfigError, match="resample must be one of \\['question', 'document'\\]"):
        bootstrap_intervals(frame, resample="contract")
    split = frame.assign(document=np.where(frame["method"] == "baseline", "a", "b"))
    with pytest.raises(ConfigError, match="a question has two different documents"):
        compare_to_reference(split, "baseline", resample="document")
    with pytest.raises(ConfigError, match="appears twice"):
        bootstrap_intervals(pd.concat([frame, frame.tail(1)]))
    with pytest.raises(ConfigError, match="confidence"):
        bootstrap_intervals(frame, confidence=95)



def _name_word(title: str) -> str:
    """The first word of a file name that names its party ("ceii-and-nda" -> "ceii", "NDA_ResConnect" -> "resconnect")."""
    generic = {"nda", "mutual", "non", "disclosure", "agreement"}
    return next(w for w in re.findall(r"[a-z]+", title.lower().replace("%20", " ")) if w not in generic)


def _lexical_hits(dataset, query, *, prefer_named_document: bool):
    """A cheap real retriever: 500-character windows ranked by words shared with the question; the second
    variant ranks windows of the document the question names first (what a good summary would do)."""
    from sac.types import Chunk, Hit, Span

    words = set(re.findall(r"[a-z]+", query.text.lower()))
    scored = []
    for doc in dataset.documents:
        named = _name_word(doc.title) in words
        for start in range(0, len(doc.text), 500):
            text = doc.text[start:start + 500]
            score = len(words & set(re.findall(r"[a-z]+", text.lower()))) + (1000 if prefer_named_document and named else 0)
            scored.append((-score, doc.doc_id, start, Chunk(Span(doc.doc_id, start, start + len(text)), text)))
    scored.sort(key=lambda t: t[:3])
    return [Hit(chunk, float(-neg), rank) for rank, (neg, _, _, chunk) in enumerate(scored[:64], start=1)]


def test_real_demo_questions_scored_by_the_run_reproduce_its_metrics(tmp_path):
    from sac.evaluation.runs import EvalResult, score_method
    from sac.types import Dataset, Document, Query, Span

    raw = json.loads((ROOT / "data/demo/benchmarks/contractnli.json").read_text(encoding="utf-8"))
    docs = {}
    queries = []
    for i, test in enumerate(raw["tests"]):
        gold = tuple(Span(s["file_path"], *s["span"]) for s in test["snippets"])
        for s in gold:
            docs.setdefault(s.doc_id, Document(s.doc_id, (ROOT / "data/demo/corpus" / s.doc_id).read_text(encoding="utf-8")))
        queries.append(Query(f"q{i}", test["query"], gold))
    documents = tuple(docs.values())
    # Two halves of the 52 questions as two datasets, so "overall" is exercised too.
    halves = [Dataset("nli-a", documents, tuple(queries[:26])), Dataset("nli-b", documents, tuple(queries[26:]))]
    result = EvalResult([], [], [])
    for ds in halves:
        for method, prefer in (("lexical", False), ("lexical-named", True)):
            hits = [_lexical_hits(ds, q, prefer_named_document=prefer) for q in ds.queries]
            score_method(result, ds, method, hits, list(KS))
    path = tmp_path / "per_query.csv"
    pd.DataFrame(result.per_query).to_csv(path, index=False)  # as runs.save_run writes it
    per_query = pd.read_csv(path)
    out = bootstrap_intervals(per_query, n_resamples=300)
    for row in result.metrics:
        for metric in ("precision", "recall", "drm"):
            got = pick(out, dataset=row["dataset"], method=row["method"], k=row["k"], metric=metric)
            assert got["estimate"] == row[metric], (row, metric)
            assert got["low"] <= got["estimate"] <= got["high"]
    for method in ("lexical", "lexical-named"):
        mean = [r for r in result.metrics if r["method"] == method and r["k"] == "mean"]
        got = pick(out, dataset="overall", method=method, k="mean", metric="drm")["estimate"]
        assert got == sum(r["drm"] for r in mean) / 2
    # Ranking the named document's windows first cuts DRM on these questions by far more than the noise.
    diff = paired_difference(per_query, "lexical", "lexical-named", metric="drm", n_resamples=300)
    assert (diff["verdict"] == "better").all(), diff
    # Each question's document is its gold file; a half's 3 NDAs, drawn whole, spread DRM wider than its 26
    # questions drawn one by one.
    gold_file = {q.query_id: q.gold[0].doc_id for q in queries}
    assert (per_query["document"] == per_query["query_id"].map(gold_file)).all()
    assert per_query.groupby("dataset")["document"].nunique().tolist() == [3, 3]
    by_document = bootstrap_intervals(per_query, n_resamples=300, resample="document")
    width = {unit: f[(f["k"] == "mean") & (f["metric"] == "drm")].eval("high - low").to_numpy()
             for unit, f in (("question", out), ("document", by_document))}
    assert (width["document"] > width["question"]).all(), width
