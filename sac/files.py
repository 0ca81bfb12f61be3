"""File primitives every layer uses: safe path names, atomic writes, JSON lines, file locks, timestamps."""

from __future__ import annotations

import fcntl
import json
import os
import re
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from sac.errors import ConfigError

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
    """Write ``path`` whole or not at all: ``write(binary file)`` into a temporary file beside it, then a rename.

    A crash never leaves half a file and a reader never sees one. The folder must exist (a caller that wants it
    made makes it).
    """
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


def atomic_write_json(path: Path, data: object) -> None:
    """``atomic_write_text`` of ``data`` as JSON (UTF-8, not ASCII-escaped, one-space indent)."""
    atomic_write_text(path, json.dumps(data, ensure_ascii=False, indent=1))


def utc_now() -> str:
    """The current UTC time, ISO 8601 to the second ("2026-12-01T14:03:11+00:00")."""
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
