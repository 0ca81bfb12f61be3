"""``sac summarize``: make summaries for one or more strategies, and write them as summary sets."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from sac.cli.common import ProgressBars, dataset_names, pool_paths, workbench_of
from sac.errors import ConfigError
from sac.types import Document
from sac.usecases import corpus
from sac.usecases.summarize import plan_summaries, run_summaries, set_paths, write_summary_set
from sac.usecases.workbench import Workbench


def summary_documents(wb: Workbench, args: argparse.Namespace) -> tuple[str, list[Document]]:
    """The documents of ``--corpus NAME``, or of every benchmark dataset named (all by default)."""
    if getattr(args, "corpus", None):
        return args.corpus, corpus.corpus_documents(wb, args.corpus)
    datasets = corpus.benchmark_datasets(wb, Path(args.benchmark), dataset_names(args), pool_paths(args))
    documents: dict[str, Document] = {}
    for ds in datasets:
        for doc in ds.all_documents:
            documents.setdefault(doc.doc_id, doc)
    return ",".join(d.name for d in datasets), list(documents.values())


def meta_pairs(pairs: Sequence[str] | None) -> dict[str, str]:
    """``--meta KEY=VALUE`` flags as a dict, or a ConfigError."""
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"Expected --meta KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def confirm(question: str) -> bool:
    """Ask on a terminal; without one (a pipe, nohup, CI) never block and go ahead."""
    if not sys.stdin.isatty():
        return True
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return True


def cmd_summarize(args: argparse.Namespace) -> int:
    """``sac summarize``: make the documents' summaries for each strategy, print them, and write summary sets.

    Asks before sending requests to a remote API (unless ``--yes``, or without a terminal); 1 when cancelled.
    """
    wb = workbench_of(args)
    source, documents = summary_documents(wb, args)
    names = [s.strip() for s in args.strategy.split(",") if s.strip()]
    prompt = Path(args.prompt_file).read_text(encoding="utf-8") if args.prompt_file else None
    options = {"context_chars": args.context_chars, "timeout_s": args.timeout, "max_attempts": args.max_attempts}
    plan = plan_summaries(wb, documents, args.summarizer, names, prompt=prompt, options=options)
    paths = set_paths(args.out, [s.strategy for s in plan.summarizers])
    extra_meta = meta_pairs(args.meta)
    print(f"{source}: {plan.estimate.describe()}", file=sys.stderr)
    if plan.remote and not args.yes and not confirm(
            f"Send {plan.estimate.tokens['requests']} or more requests to {plan.remote}?"):
        print("cancelled", file=sys.stderr)
        return 1
    bar = ProgressBars(not args.quiet)
    started = time.perf_counter()
    results, log = run_summaries(wb, documents, plan, progress=lambda done, total: bar("summarizing", done, total))
    elapsed = time.perf_counter() - started
    for strategy, summaries in results.items():
        for doc in documents:
            s = summaries[doc.doc_id]
            print(f"{strategy}\t{doc.doc_id}\t{len(s.text)}{' (cut)' if s.cut else ''}\t{s.text}")
    seconds = [e["seconds"] for e in log.made if "seconds" in e]
    timing = f"; {statistics.mean(seconds):.1f} s per summary (median {statistics.median(seconds):.1f})" if seconds else ""
    print(f"{len(log.made)} summaries made in {elapsed:.1f} s{timing}", file=sys.stderr)
    for summarizer in plan.summarizers:
        if summarizer.strategy in paths:
            made = [results[summarizer.strategy][d.doc_id] for d in documents]
            meta = write_summary_set(paths[summarizer.strategy], summarizer, made, log.details(summarizer, made), source,
                                     extra_meta)
            print(f"summary set written: {paths[summarizer.strategy]} ({len(made)} summaries, {meta['cut']} cut)",
                  file=sys.stderr)
    return 0
