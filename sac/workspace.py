"""Where corpora, summaries, indexes, runs and reviews live on disk.

```
<workspace>/
  chroma/                 embedded chromadb (unused with SAC_CHROMA_URL)
  lexical/<collection>/   BM25 of each index, beside it (sac.index.lexical; also with SAC_CHROMA_URL)
  corpora/<name>.jsonl    uploaded corpora, one document per line
  summaries/              summary cache and hand-edited versions
  runs/<run id>/          saved evaluation runs (format: sac.evaluation.runs.RunFolder)
  reviews/                expert labels
  audit.jsonl             who did what, when (sac.audit)
  locks/                  writer locks, and the lock that opens the embedded store
```
No user-supplied string becomes a path without passing ``safe_name``.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

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


def atomic_write(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """``write(binary file)`` into a temporary file beside ``path``, then rename it there, so a crash never leaves
    half a file and a reader never sees one. The folder must exist (a caller that wants it made makes it)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """``atomic_write`` of ``text`` (UTF-8), making the folder first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_write_json(path: Path, data: Any) -> None:
    """``atomic_write_text`` of ``data`` as JSON (UTF-8, not ASCII-escaped, one-space indent)."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1))


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


_THREAD_LOCKS: dict[str, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold ``path`` (a lock file, created if missing) exclusively across threads and processes.

    The one lock idiom of the project: a thread lock per path (app sessions share a process, and
    ``flock`` does not exclude two open files of one process from each other) around ``fcntl.flock``
    (CLI runs, servers). Index writers, the summary store, review files, the ONNX export and the opening of the
    embedded store use it.
    """
    key = str(Path(path).resolve())
    with _THREAD_LOCKS_GUARD:
        thread_lock = _THREAD_LOCKS.setdefault(key, threading.Lock())
    path.parent.mkdir(parents=True, exist_ok=True)
    with thread_lock, open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def append_jsonl(path: Path, rows: Sequence[Any]) -> None:
    """Append one JSON line per row under ``file_lock``: a crash loses at most the line being written."""
    if not rows:
        return
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
    with file_lock(path), open(path, "a+b") as handle:
        size = handle.seek(0, os.SEEK_END)
        if size:
            handle.seek(size - 1)
            if handle.read(1) != b"\n":  # a line cut short by a crash stays one bad line, not two
                text = "\n" + text
        handle.write(text.encode("utf-8"))
        handle.flush()
        os.fsync(handle.fileno())


def read_jsonl(path: Path) -> list[Any]:
    """The rows of a JSON-lines file (none if it is missing); a line cut short by a crash is skipped."""
    if not path.is_file():
        return []
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                continue
    return rows


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
        from sac.audit import AuditLog, ids_detail  # sac.audit builds on this module

        AuditLog(self.root).record("upload", f"corpus {name!r}", documents=ids_detail([d.doc_id for d in documents]),
                                   chars=sum(len(d.text) for d in documents))
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
