"""Evaluate methods on benchmark datasets: build what is missing, search every question once at the largest k, score
every k; and the settings a saved run records, the same for the CLI and the Evaluate page."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sac.config import DEFAULT_K_VALUES
from sac.errors import ConfigError
from sac.evaluation.diagnostics import query_changes
from sac.evaluation.mismatch import Mismatch, every_mismatch_table, mismatch_tables
from sac.evaluation.review import reviewed_settings
from sac.evaluation.runs import (
    EvalResult,
    RunFolder,
    Target,
    add_overall,
    check_k_values,
    compare_runs,
    list_runs,
    open_run,
    query_diff,
    save_run,
    score_method,
    summary_table,
)
from sac.evaluation.uncertainty import compare_to_reference, few_units_note, format_interval, interval_table
from sac.files import safe_name
from sac.ingest.catalog import corpus_name, dataset_corpus
from sac.methods import MethodSpec, parse_method
from sac.progress import Progress
from sac.retrieval.trace import SearchTrace, TargetsResolved
from sac.types import Dataset
from sac.usecases.workbench import Workbench

# What the CLI and the Evaluate page read of saved runs, from the evaluation stage.
__all__ = [
    "EvalResult", "EvaluationRequest", "Mismatch", "RunFolder", "changed_questions", "compare_runs",
    "compare_to_reference", "evaluate", "evaluate_and_save", "every_mismatch_table", "few_units_note", "format_interval",
    "interval_table", "list_runs", "mismatch_tables", "open_run", "query_diff", "reference_method", "run_settings",
    "run_uncertainty", "summary_table",
]


@dataclass(frozen=True)
class EvaluationRequest:
    """One evaluation as a user asks for it, from the command line or the Evaluate page."""

    datasets: tuple[Dataset, ...]  # loaded, any distractor pool attached
    methods: tuple[MethodSpec, ...]
    k_values: tuple[int, ...]
    benchmark: str  # the benchmark folder's name ("demo"), or the corpus whose reviewed ground truth is scored
    benchmark_dir: Path | None = None  # the benchmark folder; None for reviewed ground truth
    pool: tuple[Path, ...] = ()  # distractor sources, as given
    reviewed: str | None = None  # the corpus whose reviewed ground truth the one dataset is
    label: str = "eval"

    @property
    def corpora(self) -> dict[str, str]:
        """Dataset -> the corpus whose indexes it is searched in, without a distractor pool's suffix (``evaluate``
        adds it: ``corpus_name``), as ``RunFolder.corpus_of`` reads it back."""
        return {d.name: self.reviewed or dataset_corpus(self.benchmark, d.name) for d in self.datasets}


def resolved_target(trace: SearchTrace) -> Target | None:
    """What a search's target stage decided, for the run's per-question rows; None where no such stage ran."""
    resolved = trace.find(TargetsResolved)
    if resolved is None:
        return None
    top = resolved.candidates[0] if resolved.candidates else None
    return Target(top.doc_id if top else "", top.probability if top else 0.0, resolved.confident)


def run_settings(request: EvaluationRequest) -> dict[str, Any]:
    """What a saved run records of the choices that made it: the same for the same choices, whichever face made it."""
    settings: dict[str, Any] = {
        "benchmark": str(request.benchmark_dir.resolve()) if request.benchmark_dir else request.benchmark,
        "datasets": [d.name for d in request.datasets], "corpora": request.corpora,
        "methods": [m.name for m in request.methods], "k": sorted(set(request.k_values)),
        "pool": [str(p) for p in request.pool],
    }
    if request.reviewed:
        settings.update(reviewed_settings(request.reviewed, request.datasets[0]))
    return settings


def evaluate_and_save(
    wb: Workbench, request: EvaluationRequest, *, progress: Progress | None = None,
    log: Callable[[str], None] | None = None, reopen_store: bool = False,
) -> tuple[EvalResult, RunFolder]:
    """Evaluate and save the run (sac.evaluation.runs.RunFolder); a bad label fails before any work."""
    safe_name(request.label, "run label")
    if not request.datasets:
        raise ConfigError("Choose at least one dataset.")
    started = time.perf_counter()
    corpora = request.corpora
    result = evaluate(wb, request.datasets, request.methods, request.k_values, benchmark=request.benchmark,
                      progress=progress, log=log, reopen_store=reopen_store, corpora=corpora)
    result.timings["total"] = round(time.perf_counter() - started, 3)
    run = save_run(wb.workspace, result, wb.config, run_settings(request), label=request.label)
    wb.audit.record("evaluate", f"run {run.run_id}", benchmark=request.benchmark,
                    datasets=[d.name for d in request.datasets], methods=[m.name for m in request.methods],
                    k_values=list(request.k_values))
    return result, run


def run_uncertainty(run: RunFolder, reference: str | None, resample: str = "question",
                    ) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """A saved run's 95 % bootstrap intervals and, with a ``reference`` method, every method's paired difference to
    it (same questions); ``resample``: "question" or "document" (sac.evaluation.uncertainty)."""
    if reference is None:
        return run.intervals(resample), None
    return run.intervals(resample), compare_to_reference(run.per_query(), reference, resample=resample)


def changed_questions(run_a: RunFolder, run_b: RunFolder, k: int = 8) -> pd.DataFrame:
    """The questions whose top ``k`` gained or lost every right-document hit from run A to run B, each with its text
    and the corpus it was asked of (run B's)."""
    datasets = set(query_diff(run_a, run_b, k=k)["dataset"])
    return query_changes(run_a, run_b, k=k, corpus_of={n: run_b.corpus_of(n) for n in datasets})


def reference_method(written: str | None, methods: Sequence[str]) -> str | None:
    """The method to compare the others with, named as a run names it (``recommended`` -> what it stands for);
    without one, the baseline where it ran."""
    if written is None:
        return "baseline" if "baseline" in methods else None
    return parse_method(written).name


def evaluate(
    wb: Workbench,
    datasets: Sequence[Dataset],
    methods: Sequence[MethodSpec],
    k_values: Sequence[int] = DEFAULT_K_VALUES,
    *,
    benchmark: str = "demo",
    progress: Progress | None = None,
    log: Callable[[str], None] | None = None,
    reopen_store: bool = False,
    corpora: Mapping[str, str] | None = None,
) -> EvalResult:
    """Build what is missing, search every query once at the largest k, score every k. A dataset is searched in
    ``corpora[dataset]``'s indexes where given (reviewed ground truth in its corpus's), else its own (``corpus_name``).

    ``reopen_store``: build every dataset's indexes first and, where the build settled a graph (rewrote records to
    flush it whole: ``SyncReport.settled``), close the embedded store, so the searches read the graphs as they lie
    on disk, as every later process does. The settling process otherwise searches the graph it holds in memory,
    which can differ by a few low-ranked hits (bench/README.md, "Settled indexes"). Only for a caller that is its
    process's one user of the store (the CLI, the benchmark scripts): closing stops the store's other clients in
    this process."""
    ks = check_k_values(k_values)
    result = EvalResult([], [], [])
    timings = {"index": 0.0, "query_embedding": 0.0, "search": 0.0, "scoring": 0.0}
    built = {}
    names = {ds.name: corpus_name(benchmark, ds, (corpora or {}).get(ds.name)) for ds in datasets}
    if reopen_store and not wb.config.chroma_url:
        t0 = time.perf_counter()
        built = {ds.name: wb.build(names[ds.name], ds.all_documents, methods, progress=progress) for ds in datasets}
        if any(report.settled for reports in built.values() for report in reports.values()):
            wb.close_store()
        timings["index"] += time.perf_counter() - t0
    for ds in datasets:
        t0 = time.perf_counter()
        reports = built[ds.name] if ds.name in built else wb.build(names[ds.name], ds.all_documents, methods, progress=progress)
        timings["index"] += time.perf_counter() - t0
        if log:
            for name, rep in reports.items():
                log(f"{ds.name} / {name}: {rep.describe()}")
        _search_and_score(wb, ds, names[ds.name], methods, ks, result, timings)
        if progress:
            progress("evaluating", datasets.index(ds) + 1, len(datasets))
    add_overall(result, [d.name for d in datasets], [m.name for m in methods], ks)
    result.timings = {k: round(v, 3) for k, v in timings.items()}
    return result


def _search_and_score(wb: Workbench, ds: Dataset, corpus: str, methods: Sequence[MethodSpec], ks: list[int],
                      result: EvalResult, timings: dict[str, float]) -> None:
    """Search every query of ``ds`` once at the largest k in ``corpus`` and score every method at every k into
    ``result``, adding the time each part took to ``timings``."""
    result.corpora[ds.name] = {
        "documents": len(ds.documents), "distractors": len(ds.distractors),
        "chunks": sum(len(wb.chunks(d)) for d in ds.all_documents),
    }
    t0 = time.perf_counter()
    vectors = wb.embed_queries([q.text for q in ds.queries])
    timings["query_embedding"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    found = wb.search_traced(corpus, methods, [q.text for q in ds.queries], ks[-1], query_vectors=vectors)
    timings["search"] += time.perf_counter() - t0
    t0 = time.perf_counter()
    for method in methods:
        results = found[method.name]
        score_method(result, ds, method.name, [list(r.hits) for r in results], ks,
                     [resolved_target(r.trace) for r in results])
    timings["scoring"] += time.perf_counter() - t0
