"""``sac eval`` and ``sac runs``: evaluate methods, and read saved runs."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from sac.cli.common import ProgressBars, config_of, dataset_names, pool_paths, whole_numbers, workbench_of
from sac.errors import ConfigError
from sac.methods import parse_methods
from sac.usecases import corpus
from sac.usecases.evaluate import (
    EvaluationRequest,
    RunFolder,
    compare_runs,
    compare_to_reference,
    evaluate_and_save,
    every_mismatch_table,
    few_units_note,
    format_interval,
    interval_table,
    list_runs,
    open_run,
    reference_method,
    summary_table,
)
from sac.workspace import Workspace


def cmd_eval(args: argparse.Namespace) -> int:
    """``sac eval``: evaluate methods on a benchmark's datasets or a corpus's reviewed ground truth, and save the run.

    Prints the metrics, the bootstrap intervals (with paired differences to ``--reference``) and the timings.
    """
    wb = workbench_of(args)
    methods = parse_methods(args.methods)
    names = [m.name for m in methods]
    reference = reference_method(args.reference, names)
    if reference is not None and reference not in names:
        raise ConfigError(f"--reference {reference!r} is not among the evaluated methods {names}")
    ks = whole_numbers(args.k)
    if args.corpus:
        if getattr(args, "datasets", None):
            raise ConfigError("--corpus evaluates that corpus's reviewed ground truth: give it without --datasets")
        request = EvaluationRequest(tuple(corpus.reviewed_datasets(wb, args.corpus, pool_paths(args))),
                                    tuple(methods), tuple(ks), benchmark=args.corpus, pool=tuple(pool_paths(args)),
                                    reviewed=args.corpus, label=args.label)
    else:
        folder = Path(args.benchmark)
        datasets = corpus.benchmark_datasets(wb, folder, dataset_names(args), pool_paths(args))
        request = EvaluationRequest(tuple(datasets), tuple(methods), tuple(ks), benchmark=folder.name,
                                    benchmark_dir=folder, pool=tuple(pool_paths(args)), label=args.label)
    result, run = evaluate_and_save(wb, request, progress=ProgressBars(not args.quiet),
                                    log=None if args.quiet else (lambda line: print(line, file=sys.stderr)),
                                    reopen_store=True)
    frame = result.frame()
    if args.out:
        frame.to_csv(args.out, index=False)
    show_ks = ["mean", *[k for k in (1, 8, 64) if k in ks]]
    print(summary_table(frame, show_ks).to_string())
    print_uncertainty(run, reference, names, args.resample)
    print_selective(run)
    print(f"\ntimings (s): {json.dumps(result.timings)}")
    print(f"run saved: {run.path}")
    return 0


def print_uncertainty(run: RunFolder, reference: str | None, methods: Sequence[str], resample: str = "question") -> None:
    """Print the mean over k with 95 % bootstrap intervals (questions or documents resampled).

    With a reference, also the paired differences to it."""
    unit = "questions" if resample == "question" else "documents (each with all its questions)"
    print(f"\nmean over k, 95 % bootstrap interval, resampling {unit}:")
    per_query = run.per_query()
    if note := few_units_note(per_query, resample):
        print(f"rough: {note}")
    print(interval_table(run.intervals(resample), "mean").to_string())
    if reference and len(methods) > 1:
        diff = compare_to_reference(per_query, reference, resample=resample)
        diff["difference"] = [format_interval(r.estimate, r.low, r.high, difference=True) for r in diff.itertuples()]
        print(f"\npaired difference to {reference} (same questions; mean over k; resampling {resample}s):")
        print(diff[["dataset", "method_b", "metric", "difference", "verdict"]]
              .rename(columns={"method_b": "method"}).to_string(index=False))


def print_selective(run: RunFolder) -> None:
    """Print the selective figures of the methods that say how sure they are which document a question means.

    Coverage, DRM@1 on the questions routed with confidence, AUROC of the confidence (documents resampled)."""
    selective = run.selective()
    if not len(selective):
        return
    print("\nrouted with confidence (target resolution), 95 % interval, resampling documents:")
    shown = selective.assign(figure=[format_interval(r.estimate, r.low, r.high) if r.metric != "auroc" else
                                     f"{r.estimate:.3f} [{r.low:.3f}, {r.high:.3f}]" for r in selective.itertuples()])
    print(shown.pivot_table(index=["dataset", "method"], columns="metric", values="figure", aggfunc="first",
                            sort=False).to_string())


def print_mismatch(run: RunFolder, k: int, top: int) -> None:
    """Print, per dataset and method of a run, where its wrong-document hits at k go.

    The documents that took the most wrong hits, the pairs (document asked about, document that took its hits)
    with the most, and the documents asked about with the worst DRM."""
    for (dataset, method), (takers, asked, pairs) in every_mismatch_table(run, k).items():
        print(f"\n{dataset} / {method}, k={k}: {int(takers['wrong hits'].sum())} wrong hits"
              f" (DRM {100 * asked['wrong hits'].sum() / max(1, asked['hits'].sum()):.1f} %)")
        if len(takers):
            shown = takers.head(top)
            shown = shown.assign(**{"share of wrong hits": (100 * shown["share of wrong hits"]).round(1)})
            print("documents that took wrong hits:\n" + shown.to_string(index=False))
            print("look-alike pairs, the document asked about and the one that took its hits:\n"
                  + pairs.head(top).to_string(index=False))
        worst = asked.head(top)
        print("documents asked about, worst DRM first:\n"
              + worst.assign(drm=(100 * worst["drm"]).round(1)).to_string(index=False))


def cmd_runs(args: argparse.Namespace) -> int:
    """``sac runs``: list saved runs, show one, compare two, or show where one's wrong-document hits go."""
    ws = Workspace(config_of(args).workspace)
    if args.action == "list":
        for run in list_runs(ws):
            s = run.settings
            print(f"{run.run_id}\t{run.created}\t{','.join(s.get('datasets', []))}\t"
                  f"{','.join(s.get('methods', []))}\tpool={len(s.get('pool', []))}")
        return 0
    if args.action in ("show", "mismatch") and len(args.run_ids) != 1:
        raise ConfigError(f"`runs {args.action}` takes one run id")
    if args.action == "show":
        run = open_run(ws, args.run_ids[0])
        metrics = run.metrics()
        print(summary_table(metrics).to_string())
        methods = list(dict.fromkeys(metrics["method"]))
        print_uncertainty(run, reference_method(args.reference, methods), methods, args.resample)
        print_selective(run)
        return 0
    if args.action == "mismatch":
        if args.top < 1:
            raise ConfigError(f"--top must be 1 or more (rows per table), got {args.top}")
        print_mismatch(open_run(ws, args.run_ids[0]), 8 if args.k is None else args.k, args.top)
        return 0
    if len(args.run_ids) != 2:
        raise ConfigError("`runs compare` takes two run ids")
    a, b = (open_run(ws, r) for r in args.run_ids)
    print(compare_runs(a, b).to_string())
    return 0
