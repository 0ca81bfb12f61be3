"""Bootstrap intervals over questions, and paired differences between methods.

A run's figures come from a few hundred questions; another draw of questions would give other figures.
The bootstrap estimates that spread: draw a dataset's n questions n times with replacement, recompute
each figure exactly as the run does, repeat B times, and read the interval off the percentiles.

For one resample with counts ``c_i`` (how often question i was drawn, ``sum c_i = n``):

    precision* = sum_i c_i * precision_i / n                       (recall alike: per-query means)
    DRM*       = sum_i c_i * wrong_i / sum_i c_i * retrieved_i     (pooled over snippets, as in metrics.csv)
    mean over k = mean of the per-k figures of the SAME resample   (the k values share their questions)
    overall    = mean of the dataset figures; each dataset is resampled on its own (stratified)

Interval = ``[q(alpha/2), q(1 - alpha/2)]`` of the B figures, ``alpha = 1 - confidence`` (percentile
bootstrap). A paired difference ``b - a`` uses the same counts for both methods, so how hard the drawn
questions are cancels out. The intervals cover question sampling only: corpus, model and summaries are fixed.

``resample="document"`` draws a dataset's documents instead, each with all of its questions (a cluster
bootstrap): ``c_i`` is then how often question i's document was drawn, and every ``/ n`` above becomes
``/ sum_i c_i``. Questions about one contract share its routing, its summary and its wording, so they fail or
succeed together; when the claim is about new contracts, the document is the unit that was sampled, and its
intervals are the honest ones (on the full benchmarks about three times as wide:
bench/notes/2026-12-02-resampling-documents.md). With few documents (the demo's 5 NDAs) the draws can take only
a few shapes and such intervals are rough themselves. From a single question (or document) every draw is the same, so a zero-width interval
would claim certainty where there is none: such a figure gets no interval and a difference no verdict. A
question's document is the ``document`` column (its gold documents, "|"-joined when it has several, as
``score_method`` writes it).

Input rows are those of ``per_query.csv``: ``dataset, query_id, method, k, precision, recall, drm, wrong``
and, when present, ``retrieved`` (snippets retrieved at k; inferred otherwise, see ``_retrieved``) and
``document``.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sac.errors import ConfigError

METRICS = ("precision", "recall", "drm")
LOWER_IS_BETTER = frozenset({"drm"})
PER_QUERY_COLUMNS = ("dataset", "query_id", "method", "k", "precision", "recall", "drm", "wrong")
RESAMPLE_UNITS = ("question", "document")  # what a bootstrap draw picks: one question, or one document's questions
FEW_UNITS = 10  # under this many questions (documents) a bootstrap can draw only a few shapes: rough intervals
MIN_UNITS = 2  # from one question (document) every draw is the same: no interval at all, and no verdict
TOO_FEW = "too few to tell"  # the verdict where there is no interval
INTERVAL_COLUMNS = ["dataset", "method", "k", "metric", "estimate", "low", "high", "queries"]
DIFFERENCE_COLUMNS = [
    "dataset", "k", "metric", "method_a", "method_b", "estimate", "low", "high", "excludes_zero", "verdict",
]


@dataclass(frozen=True)
class _Replicates:
    datasets: list[str]  # "overall" last when there are two or more datasets
    methods: list[str]
    ks: list[Any]  # the k values, then "mean"
    queries: list[int]  # questions per dataset (overall: all)
    units: list[int]  # what one draw picks from, per dataset: questions or documents (overall: the fewest)
    estimate: dict[str, np.ndarray]  # metric -> (datasets, methods, ks)
    delta: dict[str, np.ndarray]  # metric -> (B, datasets, methods, ks): resampled figure minus estimate


def bootstrap_intervals(
    per_query: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
    resample: str = "question",
) -> pd.DataFrame:
    """Estimate and percentile interval per (dataset, method, k, metric); columns ``INTERVAL_COLUMNS``.

    k = "mean" for the mean over k, dataset = "overall" for the mean of the datasets (when there are two or more).
    ``resample``: "question" or "document" (module docstring)."""
    rep = _replicates(per_query, n_resamples, seed, resample)
    bounds = {metric: _percentiles(rep.delta[metric], confidence) for metric in METRICS}
    rows = []
    # Run order (dataset, method, k), the three metrics of one figure next to each other.
    for (d, m, j), _ in np.ndenumerate(rep.estimate["drm"]):
        none = rep.units[d] < MIN_UNITS
        for metric in METRICS:
            e, (low, high) = rep.estimate[metric][d, m, j], bounds[metric]
            lo, hi = (math.nan, math.nan) if none else (e + low[d, m, j], e + high[d, m, j])
            rows.append((rep.datasets[d], rep.methods[m], rep.ks[j], metric, e, lo, hi, rep.queries[d]))
    return pd.DataFrame(rows, columns=INTERVAL_COLUMNS)


def paired_difference(
    per_query: pd.DataFrame, method_a: str, method_b: str, *, metric: str | Sequence[str] = "drm",
    k: int | None = None, n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0, resample: str = "question",
) -> pd.DataFrame:
    """``method_b - method_a`` per dataset (and overall) on the same resampled questions (or documents).

    ``k=None`` compares the mean over k. ``verdict`` says "better" / "worse" for method_b when the
    interval excludes 0 (for DRM lower is better) and "within noise" otherwise. Columns ``DIFFERENCE_COLUMNS``."""
    frame = _checked(per_query)
    _check_methods(frame, [method_a, method_b])
    rep = _replicates(frame[frame["method"].isin([method_a, method_b])], n_resamples, seed, resample)
    return _differences(rep, method_a, [method_b], metric, k, confidence)


def compare_to_reference(
    per_query: pd.DataFrame, reference: str, *, metric: str | Sequence[str] = METRICS, k: int | None = None,
    n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0, resample: str = "question",
) -> pd.DataFrame:
    """``paired_difference(reference, method)`` for every other method, in one frame."""
    frame = _checked(per_query)
    _check_methods(frame, [reference])
    rep = _replicates(frame, n_resamples, seed, resample)
    return _differences(rep, reference, [m for m in rep.methods if m != reference], metric, k, confidence)


def documents_per_dataset(per_query: pd.DataFrame) -> dict[str, int]:
    """How many documents each dataset's questions are about (what a document bootstrap draws from)."""
    if "document" not in per_query.columns:
        return {}
    return {str(k): int(v) for k, v in per_query.groupby("dataset", sort=False)["document"].nunique().items()}


def few_units_note(per_query: pd.DataFrame, resample: str) -> str | None:
    """"only 5 documents in contractnli to draw from" when some dataset has few units to resample; else None.

    Few: fewer than ``FEW_UNITS`` of what is resampled (questions or documents). Its intervals are then rough, and
    under ``MIN_UNITS`` there are none."""
    if resample == "document":
        counts = documents_per_dataset(per_query)
    else:
        counts = {str(k): int(v) for k, v in per_query.groupby("dataset", sort=False)["query_id"].nunique().items()}
    few = {d: n for d, n in counts.items() if n < FEW_UNITS}
    if not few:
        return None
    noun = {"question": ("question", "questions"), "document": ("document", "documents")}[resample]
    return "only " + ", ".join(f"{n} {noun[n != 1]} in {d}" for d, n in few.items()) + " to draw from"


def format_interval(estimate: float, low: float, high: float, *, digits: int = 1, difference: bool = False) -> str:
    """``"43.6 % [38.1, 49.0]"`` from fractions; ``difference=True`` gives ``"+3.2 pp [+1.0, +5.4]"``."""
    if not math.isfinite(estimate):
        return "n/a"
    spec = f"+.{digits}f" if difference else f".{digits}f"
    if not (math.isfinite(low) and math.isfinite(high)):  # too few questions (documents) for an interval
        return f"{format(estimate * 100 + 0.0, spec)} {'pp' if difference else '%'} [no interval]"
    e, lo, hi = (format(v * 100 + 0.0, spec) for v in (estimate, low, high))  # + 0.0 turns -0.0 into 0.0
    return f"{e} {'pp' if difference else '%'} [{lo}, {hi}]"


def interval_table(intervals: pd.DataFrame, k: int | str = "mean", *, digits: int = 1) -> pd.DataFrame:
    """Rows (dataset, method), one column per metric, cells ``format_interval`` strings at one k."""
    f = intervals[intervals["k"].astype(str) == str(k)]
    cells = [format_interval(e, lo, hi, digits=digits) for e, lo, hi in zip(f["estimate"], f["low"], f["high"])]
    table = f.assign(cell=cells).pivot(index=["dataset", "method"], columns="metric", values="cell")
    order = pd.MultiIndex.from_frame(f[["dataset", "method"]].drop_duplicates())
    return table.reindex(index=order, columns=[m for m in METRICS if m in table.columns])


def _replicates(per_query: pd.DataFrame, n_resamples: int, seed: int, resample: str = "question") -> _Replicates:
    if resample not in RESAMPLE_UNITS:
        raise ConfigError(f"resample must be one of {list(RESAMPLE_UNITS)}, got {resample!r}")
    if not isinstance(n_resamples, int | np.integer) or n_resamples < 1:
        raise ConfigError(f"n_resamples must be a whole number >= 1, got {n_resamples!r}")
    if not isinstance(seed, int | np.integer) or seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}")
    frame = _checked(per_query)
    if resample == "document" and "document" not in frame.columns:
        raise ConfigError("resampling documents needs a 'document' column (each question's gold documents), "
                          "which runs saved before it was recorded lack: resample questions, or rerun")
    datasets = list(pd.unique(frame["dataset"]))  # run order: overall sums in the order the run did
    methods = list(pd.unique(frame["method"]))
    ks = sorted(int(k) for k in pd.unique(frame["k"]))
    est: dict[str, list[np.ndarray]] = {m: [] for m in METRICS}
    delta: dict[str, list[np.ndarray]] = {m: [] for m in METRICS}
    queries: list[int] = []
    units: list[int] = []
    for name in datasets:
        sub = frame[frame["dataset"] == name]
        cube = _cube(sub, name, methods, ks)
        n = cube["precision"].shape[0]
        queries.append(n)
        counts, drawn_from = _draws(sub, name, n, n_resamples, seed, resample)
        units.append(drawn_from)
        drawn = counts.sum(axis=1).reshape(-1, 1, 1)  # n for every question draw; varies with documents
        shape = (n_resamples, len(methods), len(ks))
        for metric in ("precision", "recall"):
            x = cube[metric]
            # cumsum adds in question order, exactly as metrics.aggregate's sum(), so the estimate is bit-identical.
            e = np.cumsum(x, axis=0)[-1] / n
            # Resampling the deviations keeps a constant metric's interval exactly zero-width.
            d = (counts @ (x - e).reshape(n, -1)).reshape(shape) / drawn
            est[metric].append(e)
            delta[metric].append(d)
        wrong, retrieved = cube["wrong"], cube["retrieved"]
        e = _ratio(wrong.sum(axis=0), retrieved.sum(axis=0))
        num = (counts @ wrong.reshape(n, -1)).reshape(shape)
        den = (counts @ retrieved.reshape(n, -1)).reshape(shape)
        est["drm"].append(e)
        delta["drm"].append(_ratio(num, den) - e)
    many = len(datasets) > 1  # the run reports "overall" only for two or more datasets
    estimate: dict[str, np.ndarray] = {}
    deltas: dict[str, np.ndarray] = {}
    for metric in METRICS:
        e = np.stack(est[metric])  # (D, M, K)
        d = np.stack(delta[metric], axis=1)  # (B, D, M, K)
        # Mean over k, then overall, summed in the run's order (cumsum) so they match metrics.csv to the bit.
        e = np.concatenate([e, np.cumsum(e, axis=2)[..., -1:] / len(ks)], axis=2)
        d = np.concatenate([d, d.mean(axis=3, keepdims=True)], axis=3)
        if many:
            e = np.concatenate([e, np.cumsum(e, axis=0)[-1:] / len(datasets)], axis=0)
            d = np.concatenate([d, d.mean(axis=1, keepdims=True)], axis=1)
        estimate[metric], deltas[metric] = e, d
    names = datasets + ["overall"] * many
    return _Replicates(names, methods, [*ks, "mean"], queries + [sum(queries)] * many, units + [min(units)] * many,
                       estimate, deltas)


def _checked(per_query: pd.DataFrame) -> pd.DataFrame:
    missing = [c for c in PER_QUERY_COLUMNS if c not in per_query.columns]
    if missing:
        raise ConfigError(f"per-query rows need columns {list(PER_QUERY_COLUMNS)}; missing {missing}")
    if per_query.empty:
        raise ConfigError("per-query rows are empty: nothing to resample")
    frame = per_query.copy()
    frame["k"] = pd.to_numeric(frame["k"]).astype(int)
    frame["retrieved"] = _retrieved(frame)
    return frame


def _retrieved(frame: pd.DataFrame) -> pd.Series:
    """Snippets retrieved per row: the ``retrieved`` column when present, else inferred.

    Where DRM > 0, ``retrieved = wrong / drm`` exactly. Where DRM = 0 the count is ``min(k, hits)``;
    ``hits`` (what the index returned) is known when some row of the same question got fewer than its k
    (a corpus under 64 chunks), else taken as k (the index held at least k chunks)."""
    if "retrieved" in frame.columns:
        return frame["retrieved"].astype(float)
    drm = frame["drm"].astype(float)
    known = (frame["wrong"] / drm.where(drm > 0)).round()
    short = known.where(known < frame["k"])
    cap = short.groupby([frame["dataset"], frame["method"], frame["query_id"]]).transform("min")
    return known.fillna(np.fmin(frame["k"].astype(float), cap.fillna(np.inf)))


def _cube(sub: pd.DataFrame, name: str, methods: list[str], ks: list[int]) -> dict[str, np.ndarray]:
    """Per column an array (questions, methods, ks), questions in the order the run scored them."""
    values = ["precision", "recall", "wrong", "retrieved"]
    if sub.duplicated(["query_id", "method", "k"]).any():
        raise ConfigError(f"dataset {name!r}: a (query_id, method, k) appears twice; pass one run's rows")
    wide = sub.pivot(index="query_id", columns=["method", "k"], values=values)
    wide = wide.reindex(index=pd.unique(sub["query_id"]))
    cols = pd.MultiIndex.from_product([methods, ks], names=["method", "k"])
    out = {v: wide[v].reindex(columns=cols).to_numpy(dtype=float) for v in values}
    holes = np.isnan(out["precision"]).any(axis=0)
    if holes.any():
        gaps = [f"{m}@{k}" for (m, k), h in zip(cols, holes) if h]
        raise ConfigError(f"dataset {name!r}: every method and k needs every question (paired resampling); "
                          f"incomplete: {gaps[:5]}")
    return {v: a.reshape(len(a), len(methods), len(ks)) for v, a in out.items()}


def _draws(sub: pd.DataFrame, dataset: str, n: int, n_resamples: int, seed: int, resample: str) -> tuple[np.ndarray, int]:
    """(B, n) draw counts of a dataset's n questions, and how many units (questions or documents) they draw from."""
    if resample == "document":
        return _document_counts(sub, dataset, n_resamples, seed), int(sub["document"].nunique())
    return _counts(dataset, n, n_resamples, seed), n


def _counts(dataset: str, n: int, n_resamples: int, seed: int) -> np.ndarray:
    """(B, n) multinomial draw counts.

    Seeded by the dataset's name as well, so a dataset's resamples stay the same when methods or other datasets
    come and go (intervals and paired differences then agree)."""
    rng = np.random.default_rng([seed, zlib.crc32(dataset.encode("utf-8"))])
    return rng.multinomial(n, np.full(n, 1.0 / n), size=n_resamples).astype(float)


def _document_counts(sub: pd.DataFrame, dataset: str, n_resamples: int, seed: int) -> np.ndarray:
    """(B, n) draw counts of the questions when the documents are drawn.

    Each question counts as often as its document was drawn. Questions in ``_cube``'s order; seeded apart from the
    question draws."""
    first = sub.drop_duplicates("query_id").set_index("query_id")["document"]
    if (sub.groupby("query_id")["document"].nunique(dropna=False) > 1).any():
        raise ConfigError(f"dataset {dataset!r}: a question has two different documents; pass one run's rows")
    documents = first.reindex(pd.unique(sub["query_id"])).astype(str).to_numpy()
    labels, of_question = np.unique(documents, return_inverse=True)
    m = len(labels)
    rng = np.random.default_rng([seed, zlib.crc32(dataset.encode("utf-8")), 1])
    drawn = rng.multinomial(m, np.full(m, 1.0 / m), size=n_resamples).astype(float)
    return drawn[:, of_question]


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den``, 0 where nothing was retrieved (as metrics.aggregate)."""
    out: np.ndarray = np.divide(num, den, out=np.zeros_like(num, dtype=float), where=den > 0)
    return out


def _percentiles(delta: np.ndarray, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    if not 0 < confidence < 1:
        raise ConfigError(f"confidence must lie between 0 and 1 (e.g. 0.95), got {confidence!r}")
    alpha = 1 - confidence
    low, high = np.quantile(delta, [alpha / 2, 1 - alpha / 2], axis=0)
    return low, high


def _check_methods(frame: pd.DataFrame, wanted: list[str]) -> None:
    known = list(pd.unique(frame["method"]))
    for m in wanted:
        if m not in known:
            raise ConfigError(f"Unknown method {m!r}. Choices are: {sorted(map(str, known))}")


def _differences(
    rep: _Replicates, method_a: str, others: list[str], metric: str | Sequence[str], k: int | None, confidence: float,
) -> pd.DataFrame:
    metrics = [metric] if isinstance(metric, str) else list(metric)
    for m in metrics:
        if m not in METRICS:
            raise ConfigError(f"Unknown metric {m!r}. Choices are: {list(METRICS)}")
    key = "mean" if k is None else k
    if key not in rep.ks:
        raise ConfigError(f"k={k!r} is not in the run; its k values are {rep.ks[:-1]} (None: the mean over k)")
    j, a = rep.ks.index(key), rep.methods.index(method_a)
    rows = []
    for metric_name in metrics:
        est, delta = rep.estimate[metric_name], rep.delta[metric_name]
        for method_b in others:
            b = rep.methods.index(method_b)
            diff_est = est[:, b, j] - est[:, a, j]
            # Same counts for both methods: the question draw cancels, only the methods' gap varies.
            low, high = _percentiles(delta[:, :, b, j] - delta[:, :, a, j], confidence)
            for d, name in enumerate(rep.datasets):
                e, lo, hi = diff_est[d], diff_est[d] + low[d], diff_est[d] + high[d]
                if rep.units[d] < MIN_UNITS:
                    rows.append((name, key, metric_name, method_a, method_b, e, math.nan, math.nan, False, TOO_FEW))
                    continue
                excludes = bool(lo > 0 or hi < 0)
                up_is_good = metric_name not in LOWER_IS_BETTER
                verdict = "within noise" if not excludes else ("better" if (lo > 0) == up_is_good else "worse")
                rows.append((name, key, metric_name, method_a, method_b, e, lo, hi, excludes, verdict))
    return pd.DataFrame(rows, columns=DIFFERENCE_COLUMNS)
