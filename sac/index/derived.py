"""Data derived from a lexical generation, kept on disk beside it, so that a new process reads it instead of making it.

That is the ``+names`` vocabulary, squashed texts and substring signatures, and initials: seconds of work on a few
hundred contracts, growing with the corpus, before the first routed question of every process
(bench/notes/2026-12-04-names-derived-data-kept.md, measured with bench/kept.py). Data made document by document
are taken from the generation before where a document is unchanged, and the vocabulary is grown from that
generation's when it only gained texts (``LexicalIndex.previous``).

A generation never changes once written (sac.index.lexical), so what is derived from it goes stale only when the
code that derives it changes. Each kept file is named by its key and ``Keep.version``, a hash of that code's
source files (``code_version``): a file written by other code is never read, and is removed when this code keeps
its own. Keeping is best effort: when the generation's folder has gone (a later refresh by another process
removed it), the workspace cannot be written, or a file cannot be read back, the data are made in memory as they
would be without it.

    kept(folder, key, make, keep)   the kept data, else ``make()``, written beside the generation for next time
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import IO, Any

from sac.files import atomic_write


@dataclass(frozen=True)
class Keep:
    """How one kind of derived data is kept, and the version of the code that makes it.

    ``write(value, binary file)``; ``read(path) -> value``, raising ``ValueError`` on a file it cannot use."""

    version: str
    write: Callable[[Any, IO[bytes]], object]
    read: Callable[[Path], Any]


def code_version(*modules: ModuleType) -> str:
    """A short hash of the modules' source files: it changes whenever the code that derives the data does.

    Empty when a source file cannot be read (a frozen install): then nothing is kept."""
    digest = hashlib.sha256()
    for module in modules:
        try:
            digest.update(Path(str(getattr(module, "__file__", None))).read_bytes())
        except OSError:
            return ""
    return digest.hexdigest()[:16]


def kept(folder: Path | None, key: str, make: Callable[[], Any], keep: Keep) -> Any:
    """``key``'s data for the generation in ``folder``, read from ``folder/derived`` or made and written there.

    Read when a file of this code version is there (module docstring). Without a folder or a version, ``make()``."""
    if folder is None or not keep.version:
        return make()
    path = folder / "derived" / f"{key}-{keep.version}"
    try:
        return keep.read(path)
    except (OSError, ValueError, EOFError):  # not kept yet, or a file this code cannot use: made again below
        pass
    value = make()
    try:
        path.parent.mkdir(exist_ok=True)  # not its parents: a generation another refresh removed stays removed
        atomic_write(path, lambda handle: keep.write(value, handle))
        for stale in path.parent.glob(f"{key}-*"):  # what older code kept: it will not be read again
            if stale != path:
                stale.unlink(missing_ok=True)
    except OSError:  # the generation was removed, or the workspace is read-only: kept in memory only
        pass
    return value
