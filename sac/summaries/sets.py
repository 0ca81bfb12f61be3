"""Summary sets: summaries of one strategy shipped as a file (e.g. with the demo data)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sac.errors import ConfigError, CorpusError
from sac.files import atomic_write_json, utc_now
from sac.summaries.store import SummaryStore, check_hash
from sac.types import Summary


@dataclass(frozen=True)
class SummarySet:
    """Summaries of one strategy made by one model and prompt, shipped as a file (e.g. with the demo data)."""

    strategy: str
    model: str
    prompt_hash: str
    target_chars: int
    created: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    summaries: Mapping[str, Summary] = field(default_factory=dict)  # by document hash


SUMMARY_SET_FORMAT = "sac-summary-set/1"


def save_summary_set(
    path: Path,
    summaries: Sequence[Summary],
    *,
    meta: Mapping[str, Any] | None = None,
    details: Mapping[str, Mapping[str, Any]] | None = None,
) -> SummarySet:
    """Write ``summaries`` (one strategy, model, prompt and length) as a summary-set JSON file.

    ``details`` adds fields to the entry of a summary, by document hash (e.g. attempts, seconds).
    """
    if not summaries:
        raise ConfigError("Expected at least one summary to save as a summary set")
    first = summaries[0]
    key = (first.strategy, first.model, first.prompt_hash, first.target_chars)
    for summary in summaries:
        if (summary.strategy, summary.model, summary.prompt_hash, summary.target_chars) != key:
            raise ConfigError(
                "Expected one strategy, model, prompt and length in a summary set, got "
                f"{key} and {(summary.strategy, summary.model, summary.prompt_hash, summary.target_chars)} "
                f"({summary.doc_id!r})"
            )
    created = utc_now()
    data = {
        "format": SUMMARY_SET_FORMAT,
        "strategy": first.strategy,
        "model": first.model,
        "prompt_hash": first.prompt_hash,
        "target_chars": first.target_chars,
        "created": created,
        "meta": dict(meta or {}),
        "summaries": [
            {
                **dict((details or {}).get(s.doc_hash, {})),
                "doc_id": s.doc_id, "doc_hash": s.doc_hash, "text": s.text, "chars": len(s.text), "cut": s.cut,
            }
            for s in summaries
        ],
    }
    atomic_write_json(Path(path), data)
    return load_summary_set(Path(path))


def load_summary_set(path: Path) -> SummarySet:
    """Read a summary-set file written by ``save_summary_set``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        strategy, model = str(data["strategy"]), str(data["model"])
        hash_, target, created = str(data["prompt_hash"]), int(data["target_chars"]), str(data.get("created", ""))
        summaries: dict[str, Summary] = {}
        for item in data["summaries"]:
            doc_hash = check_hash(str(item["doc_hash"]))
            summaries.setdefault(
                doc_hash,
                Summary(
                    doc_id=str(item["doc_id"]),
                    strategy=strategy,
                    text=str(item["text"]),
                    doc_hash=doc_hash,
                    model=model,
                    prompt_hash=hash_,
                    target_chars=target,
                    cut=bool(item.get("cut", False)),
                    created=created,
                ),
            )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CorpusError(f"Cannot read summary set {path}: {type(err).__name__}: {err}") from None
    meta = data.get("meta") or {}
    return SummarySet(strategy, model, hash_, target, created, dict(meta), summaries)


def import_summary_sets(store: SummaryStore, benchmark_dir: Path) -> list[str]:
    """Load the summary sets shipped with a benchmark (``<dir>/summaries/*.json``) into ``store``.

    Returns the strategies imported, in file order.
    """
    strategies = []
    folder = benchmark_dir / "summaries"
    if folder.is_dir():
        for path in sorted(folder.glob("*.json")):
            summary_set = load_summary_set(path)
            store.import_summaries(summary_set.summaries.values())
            strategies.append(summary_set.strategy)
    return strategies
