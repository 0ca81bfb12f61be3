"""``python -m sac summarize``: make summaries for one or more strategies, write them as summary sets.

The command's shared parts (settings, workbench, datasets, progress bars) are ``sac.cli``'s, imported when the
command runs: ``sac.cli`` imports this module to register the command.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sac.errors import ConfigError
from sac.types import Document


def _summary_documents(wb: Any, args: argparse.Namespace) -> tuple[str, list[Document]]:
    """The documents of ``--corpus NAME``, or of every benchmark dataset named (all by default)."""
    from sac.cli import _datasets

    if getattr(args, "corpus", None):
        return args.corpus, wb.workspace.load_corpus(args.corpus)
    datasets = _datasets(wb, args)
    documents: dict[str, Document] = {}
    for ds in datasets:
        for doc in ds.all_documents:
            documents.setdefault(doc.doc_id, doc)
    return ",".join(d.name for d in datasets), list(documents.values())


def _meta_pairs(pairs: Sequence[str] | None) -> dict[str, str]:
    out = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"Expected --meta KEY=VALUE, got {pair!r}")
        out[key.strip()] = value.strip()
    return out


def _set_paths(out: str | None, strategies: Sequence[str]) -> dict[str, Path]:
    """Where each strategy's summary set goes: ``{strategy}`` in ``--out`` is filled in; a folder gets ``<strategy>.json``."""
    if not out:
        return {}
    if "{strategy}" in out:
        return {s: Path(out.replace("{strategy}", s)) for s in strategies}
    path = Path(out)
    if path.is_dir() or out.endswith(("/", "\\")):
        return {s: path / f"{s}.json" for s in strategies}
    if len(strategies) > 1:
        raise ConfigError(
            f"--out {out!r} names one file but {len(strategies)} strategies are summarized: write "
            "--out 'DIR/{strategy}.json' or give a folder"
        )
    return {strategies[0]: path}


def _confirm(question: str) -> bool:
    """Ask on a terminal; without one (a pipe, nohup, CI) never block and go ahead."""
    if not sys.stdin.isatty():
        return True
    try:
        return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
    except EOFError:
        return True


def cmd_summarize(args: argparse.Namespace) -> int:
    import statistics

    from sac.cli import _Progress, _workbench
    from sac.summaries.llm import OpenAISummarizer, is_local_url
    from sac.summaries.log import SummaryLog, summary_log_path
    from sac.summaries.registry import make_summarizer
    from sac.summaries.runs import estimate_run, summarize_strategies

    wb = _workbench(args)
    source, documents = _summary_documents(wb, args)
    names = [s.strip() for s in args.strategy.split(",") if s.strip()]
    if not names:
        raise ConfigError("Expected --strategy NAME[,NAME...], e.g. generic-llm,expert-llm")
    prompt = Path(args.prompt_file).read_text(encoding="utf-8") if args.prompt_file else None
    if prompt is not None and len(names) > 1:
        raise ConfigError("--prompt-file sets the prompt of one strategy: name one --strategy with it")
    options = {"context_chars": args.context_chars, "timeout_s": args.timeout, "max_attempts": args.max_attempts}
    summarizers = [make_summarizer(args.summarizer, n, wb.config, prompt=prompt, **options) for n in names]
    strategies = [s.strategy for s in summarizers]
    if len(set(strategies)) != len(strategies):
        raise ConfigError(f"Each strategy once, please: got {strategies}")
    paths = _set_paths(args.out, strategies)
    store = wb.summary_store
    estimate = estimate_run(documents, summarizers, store)
    count = estimate.to_make
    print(f"{source}: {estimate.describe()}", file=sys.stderr)
    llms = [s for s in summarizers if isinstance(s, OpenAISummarizer)]
    if count and llms and not is_local_url(llms[0].base_url) and not args.yes:
        if not _confirm(f"Send {estimate.tokens['requests']} or more requests to {llms[0].base_url}?"):
            print("cancelled", file=sys.stderr)
            return 1

    log = SummaryLog(summary_log_path(wb.workspace.root), summarizers, count)
    bar = _Progress(not args.quiet)
    started = time.perf_counter()
    results = summarize_strategies(
        documents, summarizers, store, concurrency=wb.config.llm_concurrency,
        progress=lambda done, total, _doc: bar("summarizing", done, total), on_summary=log.add,
    )
    elapsed = time.perf_counter() - started
    for strategy, summaries in results.items():
        for doc in documents:
            s = summaries[doc.doc_id]
            print(f"{strategy}\t{doc.doc_id}\t{len(s.text)}{' (cut)' if s.cut else ''}\t{s.text}")
    seconds = [e["seconds"] for e in log.made if "seconds" in e]
    timing = f"; {statistics.mean(seconds):.1f} s per summary (median {statistics.median(seconds):.1f})" if seconds else ""
    print(f"{len(log.made)} summaries made in {elapsed:.1f} s{timing}", file=sys.stderr)
    for summarizer in summarizers:
        if summarizer.strategy in paths:
            made_summaries = [results[summarizer.strategy][d.doc_id] for d in documents]
            _write_set(paths[summarizer.strategy], summarizer, made_summaries, log.details(summarizer, made_summaries),
                       source, args)
    return 0


def _write_set(
    path: Path, summarizer: Any, summaries: list[Any], details: dict[str, dict[str, Any]], source: str,
    args: argparse.Namespace,
) -> None:
    """Write one strategy's summaries as a summary set, with how they were made in its meta."""
    import statistics
    from collections import Counter

    from sac.summaries.llm import max_output_tokens
    from sac.summaries.prompts import SLACK_CHARS
    from sac.summaries.sets import save_summary_set

    meta: dict[str, Any] = {"summarizer": summarizer.name, "source": source, "documents": len(summaries)}
    if hasattr(summarizer, "base_url"):
        meta.update(
            base_url=summarizer.base_url, context_chars=summarizer.context_chars,
            max_attempts=summarizer.max_attempts,
            max_tokens=max_output_tokens(summarizer.target_chars + SLACK_CHARS), temperature=summarizer.temperature,
            system_prompt=summarizer.system_prompt, prompt=summarizer.prompt,
        )
    meta["cut"] = sum(s.cut for s in summaries)
    if details:
        attempts = Counter(d["attempts"] for d in details.values() if "attempts" in d)
        meta["attempts"] = {str(k): attempts[k] for k in sorted(attempts)}
        seconds = [d["seconds"] for d in details.values() if "seconds" in d]
        if seconds:
            meta["seconds_per_summary"] = {
                "mean": round(statistics.mean(seconds), 1), "median": round(statistics.median(seconds), 1),
                "max": round(max(seconds), 1), "measured": len(seconds),
            }
    meta.update(_meta_pairs(args.meta))
    save_summary_set(path, summaries, meta=meta, details=details)
    print(f"summary set written: {path} ({len(summaries)} summaries, {meta['cut']} cut)", file=sys.stderr)
