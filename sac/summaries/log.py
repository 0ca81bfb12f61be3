"""The summarize log, ``<workspace>/logs/summarize.jsonl``: one line per summary ``python -m sac summarize`` made.

Lines name the document (id and text hash), never its text; ``sac.usecases.remove`` drops a removed text's lines.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sac.files import append_jsonl, read_jsonl, utc_now
from sac.protocols import Summarizer
from sac.summaries.llm import OpenAISummarizer
from sac.types import Summary


def summary_log_path(workspace: Path) -> Path:
    """Where the summarize log of a workspace (its root folder) is."""
    return Path(workspace) / "logs" / "summarize.jsonl"


class SummaryLog:
    """``<workspace>/logs/summarize.jsonl``: one line per summary made, printed as it comes.

    A line holds the model, prompt hash, attempts, seconds and the server the summary came from; a summary set's
    per-summary details are read back from it."""

    def __init__(self, path: Path, summarizers: Sequence[Summarizer], expected: int) -> None:
        self.path = path
        self.expected = expected
        self.made: list[dict[str, Any]] = []
        self._by_strategy = {s.strategy: s for s in summarizers}
        self._lock = threading.Lock()

    def add(self, summary: Summary) -> None:
        """Log one summary its summarizer just made, and print a progress line to stderr."""
        summarizer = self._by_strategy[summary.strategy]
        stats = dict(getattr(summarizer, "stats", {}).get(summary.doc_hash, {}))
        entry = {
            "time": utc_now(), "strategy": summary.strategy,
            "doc_id": summary.doc_id, "doc_hash": summary.doc_hash, "model": summary.model,
            "prompt_hash": summary.prompt_hash, "target_chars": summary.target_chars,
            "chars": len(summary.text), "cut": summary.cut, **stats,
        }
        if isinstance(summarizer, OpenAISummarizer):
            entry.update(context_chars=summarizer.context_chars, base_url=summarizer.base_url)
        with self._lock:
            self.made.append(entry)
            append_jsonl(self.path, [entry])
            n = len(self.made)
        seconds = f" {stats['seconds']:.1f} s" if "seconds" in stats else ""
        attempts = f" {stats['attempts']} attempt(s)" if "attempts" in stats else ""
        print(f"[{n}/{self.expected}] {summary.strategy} {summary.doc_id}: {len(summary.text)} chars"
              f"{' (cut)' if summary.cut else ''}{attempts}{seconds}", file=sys.stderr, flush=True)

    def details(self, summarizer: Summarizer, summaries: Sequence[Summary]) -> dict[str, dict[str, Any]]:
        """Attempts and seconds per document hash for these summaries (the latest log line of each wins)."""
        key = (summarizer.strategy, summarizer.model, summarizer.prompt_hash, summarizer.target_chars)
        wanted = {s.doc_hash for s in summaries}
        details: dict[str, dict[str, Any]] = {}
        for entry in read_jsonl(self.path):
            if (entry.get("strategy"), entry.get("model"), entry.get("prompt_hash"), entry.get("target_chars")) == key:
                if entry.get("doc_hash") in wanted:
                    details[entry["doc_hash"]] = {k: entry[k] for k in ("attempts", "seconds") if k in entry}
        return details
