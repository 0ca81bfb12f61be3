"""Selective figures of a method that says how sure it is which document a question means.

A method with target resolution (``+names`` with ``+docs<N>``: sac.retrieval.targets) routes some questions with
confidence (its top candidate reaches the sure threshold) and is unsure of the rest. Per dataset and method:

- ``coverage``: the share of questions routed with confidence;
- ``drm@1 covered``: DRM at k = 1 over those questions alone (wrong first hits / first hits);
- ``auroc``: the area under the ROC curve of the top candidate's probability for "the top candidate is one of the
  question's documents" (0.5: the probability says nothing; 1: every right top candidate is more probable than
  every wrong one).

Intervals draw documents with replacement, each with all its questions (the honest unit for new contracts:
sac.evaluation.uncertainty), B times, and read the 2.5th and 97.5th percentiles. Worked example: questions q1 (sure,
first hit right, top right, p 0.95), q2 (sure, first hit wrong, top wrong, p 0.92), q3 (unsure, p 0.4, top right)
give coverage 2/3, DRM@1 covered 1/2, AUROC 0.5 (of the two right-wrong pairs, q1 > q2 ranks right, q3 < q2
wrong).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

SELECTIVE_COLUMNS = ["dataset", "method", "metric", "estimate", "low", "high", "questions", "documents"]
SELECTIVE_METRICS = ("coverage", "drm@1 covered", "auroc")


def selective_figures(per_query: pd.DataFrame, *, n_resamples: int = 1000, seed: int = 0,
                      confidence: float = 0.95) -> pd.DataFrame:
    """The selective figures of every (dataset, method) whose rows carry a resolution, with document intervals.

    ``per_query``: a run's per-query rows (``sac.evaluation.runs``); rows at k = 1 are read, with their ``sure``,
    ``confidence``, ``target``, ``wrong``, ``retrieved`` and ``document`` columns. Empty for a run without them."""
    if "sure" not in per_query.columns:
        return pd.DataFrame(columns=SELECTIVE_COLUMNS)
    first = per_query[(per_query["k"].astype(str) == "1") & per_query["sure"].notna()]
    rows = []
    rng_base = np.random.default_rng(seed)
    for (dataset, method), frame in first.groupby(["dataset", "method"], sort=False):
        if dataset == "overall":
            continue
        frame = frame.reset_index(drop=True)
        gold = [set(str(d).split("|")) for d in frame["document"]]
        right = np.array([str(t) in g for t, g in zip(frame["target"].fillna(""), gold)])
        sure = frame["sure"].astype(bool).to_numpy()
        p = frame["confidence"].astype(float).to_numpy()
        wrong = frame["wrong"].astype(float).to_numpy()
        retrieved = frame["retrieved"].astype(float).to_numpy() if "retrieved" in frame else np.ones(len(frame))
        documents = frame["document"].astype(str).to_numpy()
        estimate = _figures(np.ones(len(frame)), sure, p, right, wrong, retrieved)
        units = sorted(set(documents))
        index = {u: i for i, u in enumerate(units)}
        unit_of = np.array([index[d] for d in documents])
        rng = np.random.default_rng(rng_base.integers(2**32))
        draws = []
        for _ in range(n_resamples if len(units) > 1 else 0):
            counts = np.bincount(rng.integers(0, len(units), len(units)), minlength=len(units))
            draws.append(_figures(counts[unit_of].astype(float), sure, p, right, wrong, retrieved))
        for i, metric in enumerate(SELECTIVE_METRICS):
            values = np.array([d[i] for d in draws], dtype=float)
            values = values[~np.isnan(values)]
            low, high = ((float(np.quantile(values, (1 - confidence) / 2)), float(np.quantile(values, 1 - (1 - confidence) / 2)))
                         if len(values) else (np.nan, np.nan))
            rows.append({"dataset": dataset, "method": method, "metric": metric, "estimate": estimate[i], "low": low,
                         "high": high, "questions": len(frame), "documents": len(units)})
    return pd.DataFrame(rows, columns=SELECTIVE_COLUMNS)


def _figures(weights: np.ndarray, sure: np.ndarray, p: np.ndarray, right: np.ndarray, wrong: np.ndarray,
             retrieved: np.ndarray) -> tuple[float, float, float]:
    """Coverage, DRM@1 on the covered questions and AUROC, each question counted ``weights`` times."""
    total = weights.sum()
    coverage = float((weights * sure).sum() / total) if total else np.nan
    hits = (weights * sure * retrieved).sum()
    drm = float((weights * sure * wrong).sum() / hits) if hits else np.nan
    return coverage, drm, auroc(p, right, weights)


def auroc(scores: np.ndarray, positive: np.ndarray, weights: np.ndarray | None = None) -> float:
    """The weighted probability that a positive outscores a negative (ties count half); NaN without both kinds."""
    weights = np.ones(len(scores)) if weights is None else weights
    pos, neg = positive.astype(bool), ~positive.astype(bool)
    w_pos, w_neg = weights[pos].sum(), weights[neg].sum()
    if not w_pos or not w_neg:
        return float("nan")
    order = np.argsort(scores, kind="stable")
    s, w, is_pos = scores[order], weights[order], pos[order]
    # For each positive: the weight of negatives strictly below it, plus half of those tied with it.
    total = 0.0
    below = 0.0
    i = 0
    while i < len(s):
        j = i
        while j < len(s) and s[j] == s[i]:
            j += 1
        tie_neg = float((w[i:j] * ~is_pos[i:j]).sum())
        tie_pos = float((w[i:j] * is_pos[i:j]).sum())
        total += tie_pos * (below + tie_neg / 2)
        below += tie_neg
        i = j
    return float(total / (w_pos * w_neg))
