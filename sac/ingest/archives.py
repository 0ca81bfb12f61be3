"""Uploaded zip archives, read in memory member by member.

Limits on size, member count and compression ratio apply; nothing is ever extracted to disk.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import PurePosixPath

from sac.errors import CorpusError
from sac.ingest.readers import (
    _DRIVE,
    _RATIO_FLOOR,
    _READ_BLOCK,
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_MEMBERS,
    DEFAULT_MAX_RATIO,
    DEFAULT_MAX_TOTAL_BYTES,
    SUPPORTED_SUFFIXES,
    _add_unique,
    _document_from_bytes,
    _is_hidden,
    _risky_compression,
)
from sac.types import Document

# --------------------------------------------------------------------------------------------------
# Zip archives


@dataclass(frozen=True)
class _ZipLimits:
    max_bytes: int
    max_total_bytes: int
    max_members: int
    max_ratio: float


def read_zip(
    data: bytes,
    name: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_ratio: float = DEFAULT_MAX_RATIO,
) -> tuple[list[Document], list[CorpusError]]:
    """Read the documents of a zip archive in memory; a member that fails is reported, the rest go on.

    Doc ids are member paths. Unsafe member names (absolute, ``..``, drive letters, backslashes),
    members over ``max_bytes`` or with a compression ratio over ``max_ratio`` are reported; directories,
    ``__MACOSX`` and dot files are skipped. In a LegalBench-RAG layout the ``benchmarks/*.json`` files,
    ``summaries/*.json`` summary sets and ``vectors/*.npz`` shipped vectors are not documents (an uploaded
    benchmark's vectors are not kept: only the bundled demo's, tested with the code, are copied into indexes), and
    corpus doc ids are relative to ``corpus/``
    (``<dataset>/<file>``), as in the benchmark files.

    Raises:
        CorpusError: the data is not a zip, has more than ``max_members`` entries or expands past
            ``max_total_bytes``.
    """
    limits = _ZipLimits(max_bytes, max_total_bytes, max_members, max_ratio)
    seen: dict[str, Document] = {}
    errors: list[CorpusError] = []
    member_errors: list[tuple[str, CorpusError]] = []
    with _open_zip(data, name, limits) as archive:
        root = _benchmark_root(archive.namelist())
        for member, payload in _zip_members(archive, name, limits, member_errors):
            doc_id = member
            if root is not None:
                if member.startswith((f"{root}benchmarks/", f"{root}summaries/")) and member.lower().endswith(".json"):
                    continue  # benchmark files and shipped summary sets are not documents
                if member.startswith(f"{root}corpus/"):
                    doc_id = member[len(f"{root}corpus/"):]
            try:
                document = _document_from_bytes(payload, filename=member, label=f"{name}:{member}", doc_id=doc_id,
                                                source=f"{name}:{member}", max_bytes=max_bytes)
            except CorpusError as exc:
                errors.append(exc)
                continue
            _add_unique(document, seen, errors)
    # Shipped vectors are not documents: not an unsupported one either.
    errors[:0] = [exc for member, exc in member_errors
                  if root is None or not (member.startswith(f"{root}vectors/") and member.lower().endswith(".npz"))]
    return sorted(seen.values(), key=lambda d: d.doc_id), errors


def _open_zip(data: bytes, name: str, limits: _ZipLimits) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorpusError(f"{name}: is not a readable zip archive ({exc})") from None
    infos = archive.infolist()
    if len(infos) > limits.max_members:
        archive.close()
        raise CorpusError(f"{name}: has {len(infos):,} entries, over the limit of {limits.max_members:,}")
    declared = sum(info.file_size for info in infos)
    if declared > limits.max_total_bytes:
        archive.close()
        raise CorpusError(
            f"{name}: would expand to {declared:,} bytes, over the limit of {limits.max_total_bytes:,} bytes"
        )
    return archive


def _zip_members(
    archive: zipfile.ZipFile, name: str, limits: _ZipLimits, errors: list[tuple[str, CorpusError]]
) -> Iterator[tuple[str, bytes]]:
    """Yield ``(member name, bytes)`` of the safe, supported file members; report the others in ``errors``."""
    total = 0
    for info in archive.infolist():
        member = info.filename
        label = f"{name}:{member}"
        problem = _unsafe_member_name(member)
        if problem:
            errors.append((member, CorpusError(f"{label}: skipped, unsafe member name ({problem})")))
            continue
        if info.is_dir() or any(_is_hidden(part) for part in member.split("/")):
            continue
        if PurePosixPath(member).suffix.lower() not in SUPPORTED_SUFFIXES + (".json",):
            errors.append((member, CorpusError(
                f"{label}: unsupported file type {PurePosixPath(member).suffix!r}; "
                f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
            )))
            continue
        if info.file_size > limits.max_bytes:
            errors.append((member, CorpusError(
                f"{label}: {info.file_size:,} bytes uncompressed is over the limit of {limits.max_bytes:,} bytes"
            )))
            continue
        problem = _risky_compression(info, limits.max_ratio)
        if problem:
            errors.append((member, CorpusError(f"{label}: {problem}")))
            continue
        ratio_cap = max(_RATIO_FLOOR, int(limits.max_ratio * max(info.compress_size, 1)))
        # zipfile itself stops at the declared size; the hard cap keeps the limits whatever the header
        # says and whatever the zipfile version does.
        cap = min(limits.max_bytes, limits.max_total_bytes - total, ratio_cap)
        try:
            payload = _read_capped(archive, info, cap)
        except Exception as exc:  # zipfile and zlib each raise their own types on damaged data
            reason = f"{type(exc).__name__}: {exc}"
            errors.append((member, CorpusError(f"{label}: cannot be read from the archive ({reason})")))
            continue
        if payload is None:
            if cap == limits.max_total_bytes - total:
                raise CorpusError(f"{name}: expands past the limit of {limits.max_total_bytes:,} bytes (zip bomb?)")
            errors.append((member, CorpusError(
                f"{label}: inflates past {cap:,} bytes, more than it declares (zip bomb?); skipped"
            )))
            continue
        total += len(payload)
        yield member, payload




def _read_capped(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes | None:
    """The member's bytes, or None as soon as more than ``cap`` bytes come out."""
    buffer = bytearray()
    with archive.open(info) as handle:
        while True:
            block = handle.read(min(_READ_BLOCK, cap + 1 - len(buffer)))
            if not block:
                return bytes(buffer)
            buffer += block
            if len(buffer) > cap:
                return None


def _unsafe_member_name(member: str) -> str | None:
    if "\\" in member:
        return "backslash in the path"
    if member.startswith("/"):
        return "absolute path"
    if _DRIVE.match(member):
        return "drive letter"
    if ".." in member.split("/"):
        return "'..' in the path"
    if any(ord(ch) < 32 for ch in member):
        return "control character in the name"
    return None


def _benchmark_root(names: Iterable[str]) -> str | None:
    """The folder prefix ('' or 'top/') of a LegalBench-RAG layout inside a zip, or None."""
    roots: set[str] = set()
    names = list(names)
    for member in names:
        match = re.match(r"^((?:[^/]+/)*?)benchmarks/[^/]+\.json$", member)
        if match:
            roots.add(match.group(1))
    for root in sorted(roots, key=len):
        if any(member.startswith(f"{root}corpus/") for member in names):
            return root
    return None
