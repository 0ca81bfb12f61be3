"""The audit trail: one append-only log per workspace (so one per matter) of who did what, and when.

``<workspace>/audit.jsonl`` holds one JSON object per event::

    {"at": "2026-12-01T14:03:11+00:00", "who": "alice@example.org", "action": "upload",
     "what": "corpus ndas", "details": {"documents": 3, "doc_ids": ["a.txt", "b.txt", "c.txt"]},
     "prev": "<sha256 of the previous line>"}

Actions: ``upload``, ``build``, ``summary-edit``, ``llm`` (documents sent to a language model and the server
they went to), ``export``, ``delete``, ``access-denied``. Entries name documents by id and count them; they
never hold document, summary or query text, so removing a document leaves nothing of it here but its id.

Each line carries the hash of the line before it: editing or dropping an earlier line breaks the chain,
and ``verify`` names the first line that no longer follows.

Who acts is a context variable (``acting_as``), set by the app for each signed-in session and copied into
background builds; the CLI and a local app act as ``local:<os user>``.
"""

from __future__ import annotations

import contextvars
import getpass
import hashlib
import io
import json
import os
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sac.files import file_lock, utc_now

AUDIT_FILE = "audit.jsonl"
ACTIONS = ("upload", "build", "summary-edit", "llm", "export", "delete", "access-denied", "evaluate", "review")
GENESIS = "0" * 64
_MAX_IDS = 50  # ids listed per entry; the count is always complete

if TYPE_CHECKING:
    import pandas as pd


def _local_actor() -> str:
    try:
        return f"local:{getpass.getuser()}"
    except (KeyError, OSError):  # no passwd entry (containers)
        return f"local:uid{os.getuid()}"


_ACTOR: contextvars.ContextVar[str | None] = contextvars.ContextVar("sac_audit_actor", default=None)


def current_actor() -> str:
    """Who acts now: the identity set by ``acting_as``/``set_actor``, else ``local:<os user>``."""
    return _ACTOR.get() or _local_actor()


def set_actor(actor: str | None) -> None:
    """Set who acts for the rest of this context (an app script run; background builds copy the context)."""
    _ACTOR.set(actor)


@contextmanager
def acting_as(actor: str | None) -> Iterator[None]:
    """Act as ``actor`` inside the ``with`` block, then as before."""
    token = _ACTOR.set(actor)
    try:
        yield
    finally:
        _ACTOR.reset(token)


def _line_hash(line: str) -> str:
    return hashlib.sha256(line.encode("utf-8")).hexdigest()


def _last_line(path: Path) -> str | None:
    """The last complete line of ``path`` (None when empty or missing), read from the end."""
    if not path.is_file():
        return None
    with open(path, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        block = b""
        pos = size
        while pos > 0:
            step = min(4096, pos)
            pos -= step
            handle.seek(pos)
            block = handle.read(step) + block
            lines = block.rstrip(b"\n").split(b"\n")
            if len(lines) > 1 or pos == 0:
                last = lines[-1]
                return last.decode("utf-8") if last else None
    return None


def ids_detail(ids: Sequence[str]) -> dict[str, Any]:
    """``{"count": n, "ids": [first 50]}``: the count is exact, the list is capped so one entry stays small."""
    ids = list(ids)
    return {"count": len(ids), "ids": ids[:_MAX_IDS]}


@dataclass(frozen=True, slots=True)
class AuditLog:
    """The append-only log of one workspace."""

    root: Path

    @property
    def path(self) -> Path:
        """``<workspace>/audit.jsonl``."""
        return Path(self.root) / AUDIT_FILE

    def record(self, action: str, what: str, **details: object) -> dict[str, Any]:
        """Append one event by ``current_actor()``; returns it. ``details`` must be JSON (counts, ids, URLs)."""
        if action not in ACTIONS:
            raise ValueError(f"Unknown audit action {action!r}; expected one of {ACTIONS}")
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True)
        with file_lock(path.with_name(AUDIT_FILE + ".lock")):
            last = _last_line(path)
            entry = {"at": utc_now(), "who": current_actor(), "action": action, "what": what,
                     "details": details, "prev": _line_hash(last) if last else GENESIS}
            line = json.dumps(entry, ensure_ascii=False, sort_keys=True)
            with open(path, "ab") as handle:
                handle.write((line + "\n").encode("utf-8"))
                handle.flush()
                os.fsync(handle.fileno())
        return entry

    def entries(self) -> list[dict[str, Any]]:
        """Every event, oldest first."""
        if not self.path.is_file():
            return []
        return [json.loads(line) for line in self.path.read_text(encoding="utf-8").splitlines() if line]

    def verify(self) -> int | None:
        """The 1-based number of the first line whose ``prev`` does not match the line before it, else None."""
        if not self.path.is_file():
            return None
        previous = None
        for number, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                prev = json.loads(line).get("prev")
            except json.JSONDecodeError:
                return number
            if prev != (_line_hash(previous) if previous is not None else GENESIS):
                return number
            previous = line
        return None


def entries_frame(entries: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """A table of events, newest first: when, who, action, what, details (as compact JSON)."""
    import pandas as pd  # heavy: loaded when the audit page first shows a table, so `import sac` stays quick

    rows = [{"when": e.get("at"), "who": e.get("who"), "action": e.get("action"), "what": e.get("what"),
             "details": json.dumps(e.get("details", {}), ensure_ascii=False, sort_keys=True)}
            for e in reversed(entries)]
    return pd.DataFrame(rows, columns=["when", "who", "action", "what", "details"])


def entries_csv(entries: Sequence[Mapping[str, Any]]) -> str:
    """``entries_frame`` as CSV text, for download."""
    buffer = io.StringIO()
    entries_frame(entries).to_csv(buffer, index=False)
    return buffer.getvalue()
