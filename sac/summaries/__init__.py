"""Summaries: prompts, the built-in extractive summarizer, the OpenAI-compatible one, the store, runs.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.summaries.builtin import BuiltinSummarizer
    from sac.summaries.edits import FILTERS, filter_summaries, lookalike_pairs, regenerate, summaries_frame
    from sac.summaries.facts import extract_facts
    from sac.summaries.llm import (
        LOCAL_TIMEOUT_S,
        OpenAISummarizer,
        clean_reply,
        estimate_cost_usd,
        fit_document,
        is_local_url,
        max_output_tokens,
    )
    from sac.summaries.prompts import (
        EXPERT_PROMPT,
        GENERIC_PROMPT,
        SHORTEN_PROMPT,
        SLACK_CHARS,
        SYSTEM_PROMPT,
        cut_at_word,
        default_prompt,
        prompt_hash,
        render_prompt,
    )
    from sac.summaries.registry import SUMMARIZERS, llm_summarizer, make_summarizer
    from sac.summaries.runs import estimate_run, summarize_corpus, summarize_strategies
    from sac.summaries.sets import import_summary_sets, load_summary_set, save_summary_set
    from sac.summaries.store import SummaryStore

_EXPORTS = {
    "BuiltinSummarizer": "builtin",
    "EXPERT_PROMPT": "prompts",
    "FILTERS": "edits",
    "GENERIC_PROMPT": "prompts",
    "LOCAL_TIMEOUT_S": "llm",
    "OpenAISummarizer": "llm",
    "SHORTEN_PROMPT": "prompts",
    "SLACK_CHARS": "prompts",
    "SUMMARIZERS": "registry",
    "SYSTEM_PROMPT": "prompts",
    "SummaryStore": "store",
    "clean_reply": "llm",
    "cut_at_word": "prompts",
    "default_prompt": "prompts",
    "estimate_cost_usd": "llm",
    "estimate_run": "runs",
    "extract_facts": "facts",
    "filter_summaries": "edits",
    "fit_document": "llm",
    "import_summary_sets": "sets",
    "is_local_url": "llm",
    "llm_summarizer": "registry",
    "load_summary_set": "sets",
    "lookalike_pairs": "edits",
    "make_summarizer": "registry",
    "max_output_tokens": "llm",
    "prompt_hash": "prompts",
    "regenerate": "edits",
    "render_prompt": "prompts",
    "save_summary_set": "sets",
    "summaries_frame": "edits",
    "summarize_corpus": "runs",
    "summarize_strategies": "runs",
}

__all__ = [
    "BuiltinSummarizer",
    "EXPERT_PROMPT",
    "FILTERS",
    "GENERIC_PROMPT",
    "LOCAL_TIMEOUT_S",
    "OpenAISummarizer",
    "SHORTEN_PROMPT",
    "SLACK_CHARS",
    "SUMMARIZERS",
    "SYSTEM_PROMPT",
    "SummaryStore",
    "clean_reply",
    "cut_at_word",
    "default_prompt",
    "estimate_cost_usd",
    "estimate_run",
    "extract_facts",
    "filter_summaries",
    "fit_document",
    "import_summary_sets",
    "is_local_url",
    "llm_summarizer",
    "load_summary_set",
    "lookalike_pairs",
    "make_summarizer",
    "max_output_tokens",
    "prompt_hash",
    "regenerate",
    "render_prompt",
    "save_summary_set",
    "summaries_frame",
    "summarize_corpus",
    "summarize_strategies",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
