"""Where corpora, summaries, indexes, runs and reviews live on disk.

```
<workspace>/
  chroma/                 embedded chromadb (unused with SAC_CHROMA_URL)
  corpora/<name>.jsonl    uploaded corpora, one document per line
  summaries/              summary cache and hand-edited versions
  runs/<run id>/          config.json, metrics.csv, per_query.csv, retrieved.jsonl
  reviews/                expert labels
  locks/                  writer locks
```
No user-supplied string becomes a path without passing ``safe_name``.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sac.errors import ConfigError, CorpusError
from sac.types import Document

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$")


def safe_name(name: str, what: str = "name") -> str:
    """Return ``name`` if it is a safe single path component, else raise ConfigError."""
    # fullmatch: with match, "$" also accepts a trailing newline ("runs\n").
    if not isinstance(name, str) or not _NAME.fullmatch(name) or ".." in name:
        raise ConfigError(
            f"Invalid {what} {name!r}: use 1-80 letters, digits, '.', '_' or '-', starting with a letter or digit"
        )
    return name


def atomic_write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a crash never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_text`` of ``data`` as JSON (UTF-8, not ASCII-escaped, one-space indent)."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1))


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def chroma_dir(self) -> Path:
        return self.root / "chroma"

    @property
    def summaries_dir(self) -> Path:
        return self.root / "summaries"

    @property
    def runs_dir(self) -> Path:
        return self.root / "runs"

    @property
    def reviews_dir(self) -> Path:
        return self.root / "reviews"

    @property
    def corpora_dir(self) -> Path:
        return self.root / "corpora"

    # -- corpora ------------------------------------------------------------------------
    def corpus_path(self, name: str) -> Path:
        return self.corpora_dir / f"{safe_name(name, 'corpus name')}.jsonl"

    def list_corpora(self) -> list[str]:
        if not self.corpora_dir.is_dir():
            return []
        return sorted(p.stem for p in self.corpora_dir.glob("*.jsonl"))

    def load_corpus(self, name: str) -> list[Document]:
        path = self.corpus_path(name)
        if not path.is_file():
            raise CorpusError(f"No corpus named {name!r} in {self.corpora_dir}. Known: {self.list_corpora()}")
        docs = []
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                docs.append(Document(row["doc_id"], row["text"], row.get("source")))
        return docs

    def save_corpus(self, name: str, documents: Iterable[Document]) -> Path:
        """Write a corpus (replacing any of that name), sorted by document id."""
        path = self.corpus_path(name)
        lines = [
            json.dumps({"doc_id": d.doc_id, "text": d.text, "source": d.source}, ensure_ascii=False)
            for d in sorted(documents, key=lambda d: d.doc_id)
        ]
        atomic_write_text(path, "".join(line + "\n" for line in lines))
        return path

    def add_documents(self, name: str, documents: Sequence[Document]) -> list[Document]:
        """Add documents to a corpus (creating it); a document id already there is replaced."""
        existing = {d.doc_id: d for d in self.load_corpus(name)} if self.corpus_path(name).is_file() else {}
        existing.update({d.doc_id: d for d in documents})
        self.save_corpus(name, existing.values())
        return sorted(existing.values(), key=lambda d: d.doc_id)

    def remove_documents(self, name: str, doc_ids: Iterable[str]) -> list[Document]:
        drop = set(doc_ids)
        kept = [d for d in self.load_corpus(name) if d.doc_id not in drop]
        self.save_corpus(name, kept)
        return kept

    # -- runs ---------------------------------------------------------------------------
    def new_run_dir(self, label: str = "eval") -> Path:
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        base = f"{stamp}-{safe_name(label, 'run label')}"
        for i in range(1000):
            path = self.runs_dir / (base if i == 0 else f"{base}-{i}")
            try:
                path.mkdir(parents=True)
                return path
            except FileExistsError:
                continue
        raise ConfigError(f"Cannot create a run folder under {self.runs_dir}")

    def list_runs(self) -> list[dict[str, Any]]:
        """Saved runs, newest first, with their config."""
        if not self.runs_dir.is_dir():
            return []
        out = []
        for path in sorted(self.runs_dir.iterdir(), reverse=True):
            cfg = path / "config.json"
            if path.is_dir() and cfg.is_file():
                try:
                    out.append({"run_id": path.name, "path": path, **json.loads(cfg.read_text(encoding="utf-8"))})
                except json.JSONDecodeError:
                    continue
        return out

    def run_dir(self, run_id: str) -> Path:
        path = self.runs_dir / safe_name(run_id, "run id")
        if not (path / "config.json").is_file():
            known = [r["run_id"] for r in self.list_runs()][:10]
            raise ConfigError(f"No saved run {run_id!r} in {self.runs_dir}. Recent: {known}")
        return path
