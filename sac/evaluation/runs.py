"""Run a benchmark across methods and k, persist runs, compare runs.

Each dataset is searched against its own corpus (plus any distractor pool). The top max(k) is
retrieved once per query and method and sliced for every smaller k.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.errors import ConfigError
from sac.evaluation.metrics import QueryScore, aggregate, score_query
from sac.evaluation.uncertainty import bootstrap_intervals
from sac.ingest.catalog import dataset_corpus
from sac.retrieval.methods import MAX_K, Method
from sac.types import Dataset, Hit, text_hash
from sac.workbench import Progress, Workbench
from sac.workspace import Workspace, atomic_write_text, utc_now

METRIC_COLUMNS = ["dataset", "method", "k", "precision", "recall", "drm", "retrieved_chars", "queries"]


@dataclass
class EvalResult:
    metrics: list[dict[str, Any]]  # METRIC_COLUMNS rows; k is an int or "mean"
    per_query: list[dict[str, Any]]  # dataset, query_id, method, k, precision, recall, drm, wrong
    retrieved: list[dict[str, Any]]  # one row per (dataset, query, method), hits in rank order
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    corpora: dict[str, dict[str, int]] = field(default_factory=dict)  # dataset -> documents, distractors, chunks

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.metrics, columns=METRIC_COLUMNS)


def corpus_name(benchmark: str, dataset: Dataset) -> str:
    """Index name of a dataset's corpus; a distractor pool gets its own indexes, keyed by its content."""
    base = dataset_corpus(benchmark, dataset.name)
    if not dataset.distractors:
        return base
    digest = text_hash("\n".join(sorted(d.doc_id + ":" + d.content_hash for d in dataset.distractors)))
    return f"{base}+pool{len(dataset.distractors)}-{digest[:8]}"


def check_k_values(k_values: Sequence[int]) -> list[int]:
    ks = sorted(set(k_values))
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise ConfigError(f"k values must be whole numbers from 1 to {MAX_K}, got {list(k_values)}")
    return ks


def evaluate(
    wb: Workbench,
    datasets: Sequence[Dataset],
    methods: Sequence[Method],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    benchmark: str = "demo",
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
) -> EvalResult:
    ks = check_k_values(k_values)
    max_k = ks[-1]
    result = EvalResult([], [], [])
    timings = {"index": 0.0, "query_embedding": 0.0, "search": 0.0, "scoring": 0.0}
    for ds in datasets:
        corpus = corpus_name(benchmark, ds)
        t0 = time.perf_counter()
        reports = wb.build(corpus, ds.all_documents, methods, progress=progress)
        timings["index"] += time.perf_counter() - t0
        if log:
            for name, rep in reports.items():
                log(f"{ds.name} / {name}: {rep.describe()}")
        result.corpora[ds.name] = {
            "documents": len(ds.documents), "distractors": len(ds.distractors),
            "chunks": sum(len(wb.chunks(d)) for d in ds.all_documents),
        }
        t0 = time.perf_counter()
        vectors = wb.embed_queries([q.text for q in ds.queries])
        timings["query_embedding"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        hits = wb.search(corpus, methods, [q.text for q in ds.queries], max_k, query_vectors=vectors)
        timings["search"] += time.perf_counter() - t0
        t0 = time.perf_counter()
        for method in methods:
            score_method(result, ds, method.name, hits[method.name], ks)
        timings["scoring"] += time.perf_counter() - t0
        if progress:
            progress("evaluating", datasets.index(ds) + 1, len(datasets))
    _add_overall(result, [d.name for d in datasets], [m.name for m in methods], ks)
    result.timings = {k: round(v, 3) for k, v in timings.items()}
    return result


def score_method(result: EvalResult, ds: Dataset, method: str, hits: list[list[Hit]], ks: list[int]) -> None:
    """Add one method's per-query rows, retrieved rows and per-k metrics (plus the mean over k) to ``result``."""
    per_k: dict[int, list[QueryScore]] = {k: [] for k in ks}
    for query, query_hits in zip(ds.queries, hits):
        result.retrieved.append({
            "dataset": ds.name, "query_id": query.query_id, "query": query.text, "method": method,
            "retrieved": [
                {"file_path": h.span.doc_id, "span": [h.span.start, h.span.end], "score": round(h.score, 6)}
                for h in query_hits
            ],
        })
        for k in ks:
            score = score_query([h.span for h in query_hits[:k]], query.gold)
            per_k[k].append(score)
            result.per_query.append({
                "dataset": ds.name, "query_id": query.query_id, "method": method, "k": k,
                "precision": score.precision, "recall": score.recall, "drm": score.drm, "wrong": score.wrong,
                "retrieved": score.retrieved,
            })
    rows = []
    for k in ks:
        agg = aggregate(per_k[k])
        rows.append({
            "dataset": ds.name, "method": method, "k": k, "precision": agg.precision, "recall": agg.recall,
            "drm": agg.drm, "retrieved_chars": agg.retrieved_chars, "queries": agg.queries,
        })
    result.metrics.extend(rows)
    result.metrics.append(_mean_row(rows, ds.name, method))


def _mean_row(rows: list[dict[str, Any]], dataset: str, method: str) -> dict[str, Any]:
    """The paper's tables: each figure averaged over the k values."""
    n = len(rows)
    return {
        "dataset": dataset, "method": method, "k": "mean",
        **{c: sum(r[c] for r in rows) / n for c in ("precision", "recall", "drm", "retrieved_chars")},
        "queries": rows[0]["queries"],
    }


def _add_overall(result: EvalResult, datasets: list[str], methods: list[str], ks: list[int]) -> None:
    """Overall = the mean of the per-dataset figures (each dataset weighs the same)."""
    if len(datasets) < 2:
        return
    by_key = {(r["dataset"], r["method"], r["k"]): r for r in result.metrics}
    for method in methods:
        for k in [*ks, "mean"]:
            rows = [by_key[(d, method, k)] for d in datasets]
            result.metrics.append({
                "dataset": "overall", "method": method, "k": k,
                **{c: sum(r[c] for r in rows) / len(rows) for c in ("precision", "recall", "drm", "retrieved_chars")},
                "queries": sum(r["queries"] for r in rows),
            })


def save_run(
    workspace: Workspace, result: EvalResult, config: SacConfig, settings: dict[str, Any], label: str = "eval",
) -> Path:
    """Write a run folder: config.json (no secrets), metrics.csv, per_query.csv, intervals.csv, retrieved.jsonl.

    intervals.csv holds 95 % bootstrap intervals (questions resampled) of every figure in metrics.csv.
    """
    run_dir = workspace.new_run_dir(label)
    meta = {
        "created": utc_now(), "settings": settings, "config": config.public_dict(),
        "timings_s": result.timings, "corpora": result.corpora,
    }
    atomic_write_text(run_dir / "metrics.csv", result.frame().to_csv(index=False))
    per_query = pd.DataFrame(result.per_query)
    atomic_write_text(run_dir / "per_query.csv", per_query.to_csv(index=False))
    atomic_write_text(run_dir / "intervals.csv", bootstrap_intervals(per_query).to_csv(index=False))
    atomic_write_text(
        run_dir / "retrieved.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.retrieved),
    )
    # config.json last: a run folder counts as saved only once it exists.
    atomic_write_text(run_dir / "config.json", json.dumps(meta, indent=2, ensure_ascii=False))
    return run_dir


def load_metrics(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "metrics.csv", dtype={"k": str})


def load_per_query(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "per_query.csv")


def load_intervals(run_dir: Path) -> pd.DataFrame:
    """A run's bootstrap intervals; computed from per_query.csv for runs saved before intervals were kept."""
    path = run_dir / "intervals.csv"
    if path.is_file():
        return pd.read_csv(path, dtype={"k": str})
    frame = bootstrap_intervals(load_per_query(run_dir))
    frame["k"] = frame["k"].astype(str)
    return frame


def summary_table(frame: pd.DataFrame, ks: Sequence[Any] = ("mean", 1, 8, 64)) -> pd.DataFrame:
    """Rows (dataset, method); columns drm / precision / recall at the chosen k, in percent."""
    f = frame.copy()
    f["k"] = f["k"].astype(str)
    wanted = [str(k) for k in ks if str(k) in set(f["k"])]
    f = f[f["k"].isin(wanted)]
    table = f.pivot_table(index=["dataset", "method"], columns="k", values=["drm", "precision", "recall"], sort=False)
    table = table.reindex(columns=[(m, k) for m in ("drm", "precision", "recall") for k in wanted])
    table.columns = [f"{m}@{k}" for m, k in table.columns]
    return (table * 100).round(1)


def compare_runs(run_a: Path, run_b: Path) -> pd.DataFrame:
    """Mean-over-k figures of two runs side by side, with the difference (b - a), in percent."""
    a = load_metrics(run_a)
    b = load_metrics(run_b)
    cols = ["precision", "recall", "drm"]
    a = a[a["k"] == "mean"].set_index(["dataset", "method"])[cols]
    b = b[b["k"] == "mean"].set_index(["dataset", "method"])[cols]
    joined = a.join(b, how="outer", lsuffix="_a", rsuffix="_b")
    for c in cols:
        joined[f"{c}_diff"] = joined[f"{c}_b"] - joined[f"{c}_a"]
    return (joined * 100).round(2)


def query_diff(run_a: Path, run_b: Path, k: int = 8) -> pd.DataFrame:
    """Per query and method at k: DRM and recall in both runs, and whether the right document was
    gained (some hit from a gold file in b, none in a) or lost."""
    a = load_per_query(run_a)
    b = load_per_query(run_b)
    a = a[a["k"] == k].set_index(["dataset", "query_id", "method"])
    b = b[b["k"] == k].set_index(["dataset", "query_id", "method"])
    joined = a[["drm", "recall", "wrong"]].join(b[["drm", "recall", "wrong"]], lsuffix="_a", rsuffix="_b", how="inner")
    found_a = joined["drm_a"] < 1.0
    found_b = joined["drm_b"] < 1.0
    joined["change"] = "same"
    joined.loc[found_b & ~found_a, "change"] = "gained right document"
    joined.loc[found_a & ~found_b, "change"] = "lost right document"
    return joined.reset_index()

