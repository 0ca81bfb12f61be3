"""What one record of an index holds: the text that is embedded and the hashes of its inputs.

Also the fingerprint of a whole index's records (equal fingerprints mean identical records).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

from sac.types import Chunk, text_hash

_INPUT_HASHES = ("doc_hash", "summary_hash", "prefix_hash")


def wanted_records(
    chunks: Sequence[Chunk], doc_hashes: Mapping[str, str], summaries: Mapping[str, str | None],
    prefixes: Mapping[str, str],
) -> dict[str, tuple[Chunk, dict[str, Any]]]:
    """Chunk id -> (chunk, the metadata its record must carry: span and the hashes of what was embedded)."""
    wanted: dict[str, tuple[Chunk, dict[str, Any]]] = {}
    for chunk in chunks:
        wanted[chunk.chunk_id] = (chunk, {
            "doc_id": chunk.doc_id,
            "start": chunk.span.start,
            "end": chunk.span.end,
            "doc_hash": doc_hashes[chunk.doc_id],
            "summary_hash": summary_hash(summaries.get(chunk.doc_id)),
            "prefix_hash": summary_hash(prefixes.get(chunk.chunk_id)),
        })
    return wanted


def same_inputs(stored: Mapping[str, Any], wanted: Mapping[str, Any]) -> bool:
    """Whether a stored record was embedded from the text ``wanted`` describes."""
    return all(stored.get(f) == wanted[f] for f in _INPUT_HASHES)


def records_fingerprint(
    chunks: Sequence[Chunk], doc_hashes: Mapping[str, str], summaries: Mapping[str, str | None],
    prefixes: Mapping[str, str],
) -> str:
    """Hash of everything a sync writes: equal fingerprints mean identical records."""
    digest = hashlib.sha256()
    for c in chunks:
        digest.update(
            f"{c.chunk_id}\0{doc_hashes[c.doc_id]}\0{summary_hash(summaries.get(c.doc_id))}"
            f"\0{summary_hash(prefixes.get(c.chunk_id))}\n".encode()
        )
    return digest.hexdigest()[:32]


def summary_hash(summary: str | None) -> str:
    """``text_hash`` of a summary or prefix; "" for none (a baseline record)."""
    return "" if summary is None else text_hash(summary)


def embedding_text(chunk: Chunk, summary: str | None, prefix: str | None = None) -> str:
    """What is embedded: summary (and any extra context) + blank line + chunk text."""
    head = "\n".join(p for p in (summary, prefix) if p)
    return f"{head}\n\n{chunk.text}" if head else chunk.text


def row_bounds(doc_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """Document id -> its rows ``[first, last + 1)`` in ``doc_ids`` (rows of one document are contiguous)."""
    got: dict[str, tuple[int, int]] = {}
    for i, d in enumerate(doc_ids):
        first, _ = got.get(d, (i, i))
        got[d] = (first, i + 1)
    return got
