"""Summarize a corpus for one or more strategies, and write the summaries as summary sets to ship."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sac.errors import ConfigError
from sac.protocols import Summarizer
from sac.summaries.llm import OpenAISummarizer, is_local_url, max_output_tokens
from sac.summaries.log import SummaryLog, summary_log_path
from sac.summaries.prompts import SLACK_CHARS
from sac.summaries.registry import make_summarizer
from sac.summaries.runs import RunEstimate, estimate_run, summarize_strategies
from sac.summaries.sets import save_summary_set
from sac.types import Document, Summary
from sac.usecases.workbench import Workbench


@dataclass(frozen=True)
class SummarizePlan:
    """The summarizers of one run, what they will make, and the remote server (if any) that would get the texts."""

    summarizers: tuple[Summarizer, ...]
    estimate: RunEstimate
    remote: str | None  # the base URL of a server that is not on this machine, when requests would go there


def plan_summaries(
    wb: Workbench, documents: Sequence[Document], kind: str, strategies: Sequence[str], *, prompt: str | None = None,
    options: dict[str, Any] | None = None,
) -> SummarizePlan:
    """The summarizers for ``strategies`` (``kind``: builtin or openai) and what running them would do."""
    if not strategies:
        raise ConfigError("Expected --strategy NAME[,NAME...], e.g. generic-llm,expert-llm")
    if prompt is not None and len(strategies) > 1:
        raise ConfigError("--prompt-file sets the prompt of one strategy: name one --strategy with it")
    summarizers = tuple(make_summarizer(kind, n, wb.config, prompt=prompt, **(options or {})) for n in strategies)
    made = [s.strategy for s in summarizers]
    if len(set(made)) != len(made):
        raise ConfigError(f"Each strategy once, please: got {made}")
    estimate = estimate_run(documents, summarizers, wb.summary_store)
    llms = [s for s in summarizers if isinstance(s, OpenAISummarizer)]
    remote = llms[0].base_url if estimate.to_make and llms and not is_local_url(llms[0].base_url) else None
    return SummarizePlan(summarizers, estimate, remote)


def run_summaries(
    wb: Workbench, documents: Sequence[Document], plan: SummarizePlan,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, dict[str, Summary]], SummaryLog]:
    """Make every missing summary of the plan (each stored as it comes, so a rerun continues); returns the summaries
    per strategy and document id, and the log of those made."""
    log = SummaryLog(summary_log_path(wb.workspace.root), plan.summarizers, plan.estimate.to_make)
    results = summarize_strategies(
        documents, plan.summarizers, wb.summary_store, concurrency=wb.config.llm_concurrency,
        progress=(lambda done, total, _doc: progress(done, total)) if progress else None, on_summary=log.add,
    )
    return results, log


def write_summary_set(
    path: Path, summarizer: Summarizer, summaries: list[Summary], details: dict[str, dict[str, Any]], source: str,
    extra_meta: dict[str, str],
) -> dict[str, Any]:
    """Write one strategy's summaries as a summary set, with how they were made in its meta; returns the meta."""
    meta: dict[str, Any] = {"summarizer": summarizer.name, "source": source, "documents": len(summaries)}
    if isinstance(summarizer, OpenAISummarizer):
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
    meta.update(extra_meta)
    save_summary_set(path, summaries, meta=meta, details=details)
    return meta


def set_paths(out: str | None, strategies: Sequence[str]) -> dict[str, Path]:
    """Where each strategy's summary set goes: ``{strategy}`` in ``out`` is filled in; a folder gets
    ``<strategy>.json``."""
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
