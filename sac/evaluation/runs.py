"""Run a benchmark across methods and k, persist runs, compare runs.

Each dataset is searched against its own corpus (plus any distractor pool). The top max(k) is
retrieved once per query and method and sliced for every smaller k.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.evaluation.metrics import QueryScore, aggregate, score_query
from sac.evaluation.selective import SELECTIVE_COLUMNS, selective_figures
from sac.evaluation.uncertainty import bootstrap_intervals
from sac.files import atomic_write_text, read_jsonl, safe_name, utc_now
from sac.ingest.catalog import dataset_corpus
from sac.types import MAX_K, Dataset, Hit, Query, Span
from sac.workspace import Workspace

METRIC_COLUMNS = ["dataset", "method", "k", "precision", "recall", "drm", "retrieved_chars", "queries"]
SELECTIVE_FILE = "selective.csv"  # sac.evaluation.selective, for runs of methods that say how sure they are
INTERVAL_FILES = {"question": "intervals.csv", "document": "intervals_document.csv"}  # resample unit -> file


@dataclass
class EvalResult:
    """What an evaluation computed, in the rows a run folder saves (``RunFolder``)."""

    metrics: list[dict[str, Any]]  # METRIC_COLUMNS rows; k is an int or "mean"
    per_query: list[dict[str, Any]]  # dataset, query_id, method, k, precision, recall, drm, wrong, retrieved, document
    retrieved: list[dict[str, Any]]  # one row per (dataset, query, method), hits in rank order
    timings: dict[str, float] = field(default_factory=dict)  # seconds per stage
    corpora: dict[str, dict[str, int]] = field(default_factory=dict)  # dataset -> documents, distractors, chunks

    def frame(self) -> pd.DataFrame:
        """The metrics as a table (``METRIC_COLUMNS``)."""
        return pd.DataFrame(self.metrics, columns=METRIC_COLUMNS)


@dataclass(frozen=True, slots=True)
class Target:
    """What a method's target resolution decided for one question: its top candidate and how sure."""

    doc_id: str  # the most probable candidate ("" where there was none)
    confidence: float  # its probability (0 where there was none)
    sure: bool  # whether it reached the sure threshold, so the question counts as routed with confidence


def check_k_values(k_values: Sequence[int]) -> list[int]:
    """The distinct k values, sorted; a ConfigError unless there is one and all are from 1 to MAX_K."""
    ks = sorted(set(k_values))
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise ConfigError(f"k values must be whole numbers from 1 to {MAX_K}, got {list(k_values)}")
    return ks


def score_method(result: EvalResult, ds: Dataset, method: str, hits: list[list[Hit]], ks: list[int],
                 targets: Sequence[Target | None] | None = None) -> None:
    """Add one method's per-query rows, retrieved rows and per-k metrics (plus the mean over k) to ``result``.

    ``targets``: per question, what the method's target resolution decided (``+names`` with ``+docs<N>``), kept in
    the per-query rows for the selective figures (sac.evaluation.selective)."""
    per_k: dict[int, list[QueryScore]] = {k: [] for k in ks}
    for i, (query, query_hits) in enumerate(zip(ds.queries, hits)):
        target = targets[i] if targets else None
        document = "|".join(sorted(query.gold_doc_ids))  # what a document-level bootstrap draws
        result.retrieved.append({
            "dataset": ds.name, "query_id": query.query_id, "query": query.text, "method": method,
            "gold": [[g.doc_id, g.start, g.end] for g in query.gold],  # what the run scored against
            "retrieved": [
                {"file_path": h.span.doc_id, "span": [h.span.start, h.span.end], "score": round(h.score, 6)}
                for h in query_hits
            ],
        })
        for k in ks:
            score = score_query([h.span for h in query_hits[:k]], query.gold)
            per_k[k].append(score)
            row: dict[str, Any] = {
                "dataset": ds.name, "query_id": query.query_id, "method": method, "k": k,
                "precision": score.precision, "recall": score.recall, "drm": score.drm, "wrong": score.wrong,
                "retrieved": score.retrieved, "document": document,
            }
            if target is not None:
                row.update(confidence=target.confidence, sure=int(target.sure), target=target.doc_id)
            result.per_query.append(row)
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


def add_overall(result: EvalResult, datasets: list[str], methods: list[str], ks: list[int]) -> None:
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


@dataclass(frozen=True)
class RunFolder:
    """A saved evaluation run: the one place that knows the run-folder format.

    ```
    <workspace>/runs/<run id>/
      config.json      created, settings, config (no secrets), timings_s, corpora; written last
      metrics.csv      METRIC_COLUMNS: one row per (dataset, method, k), k also "mean"
      per_query.csv    dataset, query_id, method, k, precision, recall, drm, wrong, retrieved, document, and for
                       a method with target resolution confidence, sure, target
      intervals.csv    95 % bootstrap intervals (questions resampled) of every figure in metrics.csv
      intervals_document.csv   the same with documents resampled (each with all its questions)
      selective.csv    coverage, DRM@1 of the confidently routed questions and AUROC of the confidence, with
                       document intervals, for methods with target resolution (absent without one)
      retrieved.jsonl  one row per (dataset, query, method): query text, the gold spans it was scored against,
                       and hits (file_path, span, score)
    ```
    A folder counts as saved only once ``config.json`` exists; a saved run never changes.
    """

    path: Path

    @property
    def run_id(self) -> str:
        """The folder's name: ``<UTC time>-<label>``."""
        return self.path.name

    @property
    def saved(self) -> bool:
        """Whether the run is complete (``config.json`` is written last)."""
        return (self.path / "config.json").is_file()

    @property
    def stamp(self) -> float:
        """When the run was saved (``config.json``'s modification time), a cache key."""
        return (self.path / "config.json").stat().st_mtime

    @functools.cached_property
    def meta(self) -> dict[str, Any]:
        """``config.json``: created, settings, config, timings_s, corpora."""
        return dict(json.loads((self.path / "config.json").read_text(encoding="utf-8")))

    @property
    def created(self) -> str:
        """When the run was made (ISO 8601 UTC), as ``config.json`` records it."""
        return str(self.meta.get("created", ""))

    @property
    def settings(self) -> dict[str, Any]:
        """The run's settings: benchmark, datasets, methods, k values, corpora, pool."""
        return dict(self.meta.get("settings") or {})

    def corpus_of(self, dataset: str) -> str:
        """The corpus whose indexes the run searched for ``dataset`` (without a distractor pool's suffix)."""
        s = self.settings
        return str((s.get("corpora") or {}).get(dataset) or dataset_corpus(Path(str(s.get("benchmark", ""))).name, dataset))

    @property
    def description(self) -> str:
        """One line for pickers: run id, datasets, methods and any distractor pool."""
        s = self.settings
        pool = f" · pool of {len(s['pool'])} path(s)" if s.get("pool") else ""
        return f"{self.run_id} · {', '.join(s.get('datasets', []))} · {', '.join(s.get('methods', []))}{pool}"

    def metrics(self) -> pd.DataFrame:
        """``metrics.csv``: one row per (dataset, method, k), k as text ("mean" among the numbers)."""
        return pd.read_csv(self.path / "metrics.csv", dtype={"k": str})

    def per_query(self) -> pd.DataFrame:
        """``per_query.csv``: one row per (dataset, query, method, k)."""
        return pd.read_csv(self.path / "per_query.csv")

    def intervals(self, resample: str = "question") -> pd.DataFrame:
        """Bootstrap intervals, questions or documents resampled (sac.evaluation.uncertainty).

        Read from the run's intervals file, or computed from per_query.csv when the folder has none (ConfigError
        for documents where the run recorded none)."""
        name = INTERVAL_FILES.get(resample)  # an unknown unit falls through to bootstrap_intervals' error
        if name and (self.path / name).is_file():
            return pd.read_csv(self.path / name, dtype={"k": str})
        frame = bootstrap_intervals(self.per_query(), resample=resample)
        frame["k"] = frame["k"].astype(str)
        return frame

    def selective(self) -> pd.DataFrame:
        """The selective figures of the run's methods with target resolution (sac.evaluation.selective).

        Coverage, DRM@1 on the questions routed with confidence, and AUROC, with document intervals, per dataset and
        method; empty for a run without such a method."""
        path = self.path / SELECTIVE_FILE
        if path.is_file():
            return pd.read_csv(path)
        # Pages ask on every rerun: a run saved without resolutions is told by per_query.csv's header alone.
        if "sure" not in pd.read_csv(self.path / "per_query.csv", nrows=0).columns:
            return pd.DataFrame(columns=SELECTIVE_COLUMNS)
        return selective_figures(self.per_query())

    def retrieved(self) -> list[dict[str, Any]]:
        """The ``retrieved.jsonl`` rows: dataset, query_id, query, method, retrieved spans in rank order."""
        return read_jsonl(self.path / "retrieved.jsonl")

    def query_texts(self) -> dict[tuple[str, str], str]:
        """(dataset, query id) -> question text."""
        out: dict[tuple[str, str], str] = {}
        for row in self.retrieved():
            out.setdefault((str(row.get("dataset")), str(row.get("query_id"))), str(row.get("query", "")))
        return out

    def questions(self, dataset: str) -> list[Query] | None:
        """The dataset's questions with the ground truth the run scored them against, in the run's order.

        None when the run's rows do not carry that ground truth (its benchmark's questions as they are now stand
        in)."""
        out: dict[str, Query] = {}
        for row in self.retrieved():
            if row.get("dataset") != dataset or str(row.get("query_id")) in out:
                continue
            if "gold" not in row:
                return None
            gold = tuple(Span(str(d), int(a), int(b)) for d, a, b in row["gold"])
            out[str(row["query_id"])] = Query(str(row["query_id"]), str(row.get("query", "")), gold, dataset)
        return list(out.values())


def save_run(
    workspace: Workspace, result: EvalResult, config: SacConfig, settings: dict[str, Any], label: str = "eval",
) -> RunFolder:
    """Write a new run folder (format: ``RunFolder``)."""
    run_dir = workspace.new_run_dir(label)
    meta = {
        "created": utc_now(), "settings": settings, "config": config.public_dict(),
        "timings_s": result.timings, "corpora": result.corpora,
    }
    atomic_write_text(run_dir / "metrics.csv", result.frame().to_csv(index=False))
    per_query = pd.DataFrame(result.per_query)
    atomic_write_text(run_dir / "per_query.csv", per_query.to_csv(index=False))
    for resample, name in INTERVAL_FILES.items():
        if resample == "question" or "document" in per_query.columns:  # rows scored by score_method have it
            atomic_write_text(run_dir / name, bootstrap_intervals(per_query, resample=resample).to_csv(index=False))
    selective = selective_figures(per_query)
    if len(selective):
        atomic_write_text(run_dir / SELECTIVE_FILE, selective.to_csv(index=False))
    atomic_write_text(
        run_dir / "retrieved.jsonl", "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.retrieved),
    )
    # config.json last: a run folder counts as saved only once it exists.
    atomic_write_text(run_dir / "config.json", json.dumps(meta, indent=2, ensure_ascii=False))
    return RunFolder(run_dir)


def list_runs(workspace: Workspace) -> list[RunFolder]:
    """Saved runs, newest first (a folder whose config.json is missing or unreadable is skipped).

    Newest by the time the run was saved, then by when its ``config.json`` was written: two runs saved in the same
    second ("...-120000-sure", "...-120000-plain") come in the order they were made, not by their labels."""
    if not workspace.runs_dir.is_dir():
        return []
    out = []
    for path in workspace.runs_dir.iterdir():
        run = RunFolder(path)
        if path.is_dir() and run.saved:
            try:
                run.meta  # noqa: B018 - read once here so a broken config.json is skipped, not shown
            except (json.JSONDecodeError, UnicodeDecodeError):
                continue
            out.append(run)
    return sorted(out, key=lambda r: (r.created, r.stamp, r.run_id), reverse=True)


def open_run(workspace: Workspace, run_id: str) -> RunFolder:
    """The saved run ``run_id``; ConfigError naming recent runs if there is none."""
    run = RunFolder(workspace.runs_dir / safe_name(run_id, "run id"))
    if not run.saved:
        known = [r.run_id for r in list_runs(workspace)][:10]
        raise ConfigError(f"No saved run {run_id!r} in {workspace.runs_dir}. Recent: {known}")
    return run


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


def compare_runs(run_a: RunFolder, run_b: RunFolder) -> pd.DataFrame:
    """Mean-over-k figures of two runs side by side, with the difference (b - a), in percent."""
    a = run_a.metrics()
    b = run_b.metrics()
    cols = ["precision", "recall", "drm"]
    a = a[a["k"] == "mean"].set_index(["dataset", "method"])[cols]
    b = b[b["k"] == "mean"].set_index(["dataset", "method"])[cols]
    joined = a.join(b, how="outer", lsuffix="_a", rsuffix="_b")
    for c in cols:
        joined[f"{c}_diff"] = joined[f"{c}_b"] - joined[f"{c}_a"]
    return (joined * 100).round(2)


def query_diff(run_a: RunFolder, run_b: RunFolder, k: int = 8) -> pd.DataFrame:
    """Per query and method at k: DRM and recall in both runs, and whether the right document was gained or lost.

    Gained: some hit from a gold file in b, none in a; lost: the other way round."""
    a = run_a.per_query()
    b = run_b.per_query()
    a = a[a["k"] == k].set_index(["dataset", "query_id", "method"])
    b = b[b["k"] == k].set_index(["dataset", "query_id", "method"])
    joined = a[["drm", "recall", "wrong"]].join(b[["drm", "recall", "wrong"]], lsuffix="_a", rsuffix="_b", how="inner")
    found_a = joined["drm_a"] < 1.0
    found_b = joined["drm_b"] < 1.0
    joined["change"] = "same"
    joined.loc[found_b & ~found_a, "change"] = "gained right document"
    joined.loc[found_a & ~found_b, "change"] = "lost right document"
    return joined.reset_index()

