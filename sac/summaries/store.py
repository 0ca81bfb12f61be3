"""The summary store: generated cache and hand-edited versions, keyed by content.

Summaries are cached by (document hash, strategy, prompt, model, length); hand edits are kept as versions.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from sac.audit import AuditLog
from sac.errors import ConfigError, CorpusError, SummarizerError
from sac.files import atomic_write_json, file_lock, utc_now
from sac.protocols import Summarizer
from sac.types import Document, Summary, text_hash

# --------------------------------------------------------------------------------------------------
# Storage: generated cache, hand-edited versions, shipped summary sets
# --------------------------------------------------------------------------------------------------

_HASH_RE = re.compile(r"^[0-9a-f]{8,64}$")
def _summary_to_dict(summary: Summary) -> dict[str, Any]:
    return dataclasses.asdict(summary)


def _summary_from_dict(data: Mapping[str, Any]) -> Summary:
    names = {f.name for f in dataclasses.fields(Summary)}
    return Summary(**{k: v for k, v in data.items() if k in names})


def check_hash(doc_hash: str) -> str:
    """``doc_hash`` if it is 8-64 hex digits (a summary's file path is made from it), else a CorpusError."""
    if not isinstance(doc_hash, str) or not _HASH_RE.match(doc_hash):
        raise CorpusError(f"Expected a document hash of 8-64 hex digits, got {doc_hash!r}")
    return doc_hash


def _strategy_slug(strategy: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", strategy).strip("._")[:40] or "strategy"
    return f"{readable}-{text_hash(strategy)[:8]}"  # the hash keeps "a b" and "a_b" apart


class SummaryStore:
    """Summaries on disk, one JSON file per (document content, strategy) holding all its versions.

    Generated summaries double as the cache (keyed by document hash, strategy, prompt hash, model and
    target length); hand edits are further versions; the highest version is the current one.
    Layout: ``<root>/<doc_hash>/<strategy>-<hash>.json``.
    """

    def __init__(self, root: Path, audit: AuditLog | None = None) -> None:
        self.root = Path(root)
        self.audit = audit  # hand edits and language-model requests are recorded here (sac.audit)

    def __repr__(self) -> str:
        return f"SummaryStore({str(self.root)!r})"

    def get_cached(self, document: Document, summarizer: Summarizer) -> Summary | None:
        """The stored summary ``summarizer`` would make for ``document`` now, if any (newest first)."""
        for summary in reversed(self._versions(document.content_hash, summarizer.strategy)):
            if (
                summary.model != "human"
                and summary.model == summarizer.model
                and summary.prompt_hash == summarizer.prompt_hash
                and summary.target_chars == summarizer.target_chars
            ):
                return dataclasses.replace(summary, doc_id=document.doc_id)
        return None

    def put(self, summary: Summary, prompt_hash: str | None = None) -> Summary:
        """Store a generated summary as the newest version; storing the same text again adds nothing.

        ``prompt_hash``, when given, replaces ``summary.prompt_hash`` (the cache key).
        """
        if prompt_hash is not None and prompt_hash != summary.prompt_hash:
            summary = dataclasses.replace(summary, prompt_hash=prompt_hash)
        with file_lock(self.root / ".lock"):
            versions = self._versions(summary.doc_hash, summary.strategy)
            for old in versions:
                if (old.model, old.prompt_hash, old.target_chars, old.text) == (
                    summary.model, summary.prompt_hash, summary.target_chars, summary.text
                ):
                    return old
            stored = dataclasses.replace(summary, version=max((v.version for v in versions), default=0) + 1)
            self._write(summary.doc_hash, summary.strategy, [*versions, stored])
            return stored

    def save_edit(self, document: Document, strategy: str, text: str) -> Summary:
        """Store a hand-edited summary as a new version (model ``"human"``); older versions stay."""
        text = re.sub(r"\s+", " ", text).strip()
        if not text:
            raise ConfigError(f"Expected a non-empty summary for {document.doc_id!r}")
        with file_lock(self.root / ".lock"):
            versions = self._versions(document.content_hash, strategy)
            base = versions[-1] if versions else None
            edit = Summary(
                doc_id=document.doc_id,
                strategy=strategy,
                text=text,
                doc_hash=document.content_hash,
                model="human",
                prompt_hash="human",
                target_chars=base.target_chars if base else len(text),
                cut=False,
                created=utc_now(),
                version=max((v.version for v in versions), default=0) + 1,
            )
            self._write(document.content_hash, strategy, [*versions, edit])
        if self.audit is not None:
            self.audit.record("summary-edit", f"document {document.doc_id!r}", strategy=strategy,
                              version=edit.version, chars=len(text))
        return edit

    def history(self, doc_hash: str, strategy: str) -> list[Summary]:
        """Every stored version for this document content and strategy, oldest first."""
        return self._versions(doc_hash, strategy)

    def current(self, document: Document, strategy: str) -> Summary | None:
        """The highest version for ``document``'s content and ``strategy`` (a later edit beats a generated one)."""
        versions = self._versions(document.content_hash, strategy)
        return dataclasses.replace(versions[-1], doc_id=document.doc_id) if versions else None

    def import_summaries(self, summaries: Iterable[Summary]) -> int:
        """Put shipped summaries (a summary set's, sac.summaries.sets) into the store; returns how many were new."""
        added = 0
        for summary in summaries:
            before = len(self._versions(summary.doc_hash, summary.strategy))
            self.put(summary)
            added += len(self._versions(summary.doc_hash, summary.strategy)) > before
        return added

    def _path(self, doc_hash: str, strategy: str) -> Path:
        return self.root / check_hash(doc_hash) / f"{_strategy_slug(strategy)}.json"

    def _versions(self, doc_hash: str, strategy: str) -> list[Summary]:
        path = self._path(doc_hash, strategy)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as err:
            raise SummarizerError(
                f"Cannot read stored summaries {path}: {err}. Move the file aside to start over."
            ) from None
        versions = [_summary_from_dict(item) for item in data.get("versions", [])]
        return sorted(versions, key=lambda s: s.version)

    def _write(self, doc_hash: str, strategy: str, versions: list[Summary]) -> None:
        data = {"doc_hash": doc_hash, "strategy": strategy, "versions": [_summary_to_dict(v) for v in versions]}
        atomic_write_json(self._path(doc_hash, strategy), data)
