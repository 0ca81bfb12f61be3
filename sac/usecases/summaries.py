"""Read, edit and regenerate the summaries SAC prepends, re-embed what changed, and find look-alike summaries that
cannot tell their documents apart (the app's Summaries page; the Corpus page's LLM summarizers and their estimate)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pandas as pd

from sac.evaluation.compare import nearest_neighbours
from sac.index.store import SyncReport
from sac.methods import MethodSpec
from sac.progress import Progress
from sac.protocols import Summarizer
from sac.summaries.builtin import BuiltinSummarizer
from sac.summaries.edits import FILTERS, filter_summaries, lookalike_pairs, regenerate, summaries_frame
from sac.summaries.llm import LLM_STRATEGIES
from sac.summaries.prompts import default_prompt
from sac.summaries.registry import llm_summarizer
from sac.summaries.runs import RunEstimate, estimate_run
from sac.types import Document, Summary
from sac.usecases.workbench import BUILTIN_STRATEGIES, Workbench

# The summaries stage's names a page shows (LLM strategies, filters, the default prompt) and its pure table helpers.
__all__ = [
    "BUILTIN_STRATEGIES", "FILTERS", "LLM_STRATEGIES", "RunEstimate", "SyncReport", "builtin_summarizer",
    "default_prompt", "endpoint_summarizer", "endpoint_summarizers", "estimate_summaries", "filter_summaries",
    "lookalike_pairs", "lookalikes", "reembed", "regenerate_summaries", "save_edit", "summaries_frame",
]


def builtin_summarizer(strategy: str, target_chars: int) -> Summarizer:
    """The offline extractive summarizer of a built-in strategy (generic, expert)."""
    return BuiltinSummarizer(strategy, target_chars=target_chars)


def endpoint_summarizer(wb: Workbench, strategy: str, *, model: str | None = None, base_url: str | None = None,
                        api_key: str | None = None, prompt: str | None = None,
                        target_chars: int | None = None) -> Summarizer:
    """A summarizer on the OpenAI-compatible endpoint a user typed in (empty values keep the configuration's)."""
    return llm_summarizer(wb.config, strategy, model=model, base_url=base_url, api_key=api_key, prompt=prompt,
                          target_chars=target_chars)


def endpoint_summarizers(wb: Workbench, methods: Sequence[str], *, model: str | None, base_url: str | None,
                         api_key: str | None) -> list[Summarizer]:
    """One endpoint summarizer per LLM method among ``methods`` (``sac-generic-llm``, ``sac-expert-llm``)."""
    return [endpoint_summarizer(wb, s, model=model, base_url=base_url, api_key=api_key)
            for s in LLM_STRATEGIES.values() if f"sac-{s}" in methods]


def estimate_summaries(wb: Workbench, documents: Sequence[Document], summarizers: Sequence[Summarizer]) -> RunEstimate:
    """The summaries ``summarizers`` would make of ``documents`` (those not in the store yet), with their LLM tokens."""
    return estimate_run(documents, summarizers, wb.summary_store)


def lookalikes(wb: Workbench, ids: Sequence[str], texts: Sequence[str]) -> pd.DataFrame:
    """Each summary's most similar other summary and their cosine similarity, embedded with the workbench's model."""
    return nearest_neighbours(ids, wb.embedder.embed_documents(list(texts)))


def save_edit(wb: Workbench, document: Document, strategy: str, text: str) -> Summary:
    """Keep a hand-edited summary as the document's newest version for ``strategy`` (older versions stay)."""
    return wb.summary_store.save_edit(document, strategy, text)


def regenerate_summaries(wb: Workbench, documents: Sequence[Document], summarizer: Summarizer,
                         progress: Progress | None = None) -> dict[str, Summary]:
    """Make ``summarizer``'s summary the current one of each document, replacing any hand edit (summaries it made
    before are reused); progress as the "summarizing" stage."""
    return regenerate(wb.summary_store, documents, summarizer, concurrency=wb.config.llm_concurrency,
                      progress=(lambda done, total, _doc: progress("summarizing", done, total)) if progress else None)


def reembed(wb: Workbench, corpus: str, documents: Sequence[Document], method: MethodSpec,
            progress: Progress | None = None) -> tuple[SyncReport, float]:
    """Bring ``method``'s index of ``corpus`` up to date after summaries changed: only the chunks of documents whose
    summary changed are embedded again. Returns what the sync did and the seconds it took."""
    started = time.perf_counter()
    report = wb.build(corpus, documents, [method], progress=progress)[method.index_name]
    return report, time.perf_counter() - started
