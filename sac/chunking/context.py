"""The context an index option embeds between a chunk's summary and its text, written and read back in one place.

``+filename`` adds the document's file line ("File: <name>", extension dropped), ``+sections`` the chunk's section
line (sac.chunking.sections); with both, the file line comes first. ``sac.retrieval.options.index_inputs`` writes
it when an index is built; the lexical indexes (sac.index.lexical) and the in-memory snapshot (sac.index.snapshot)
rebuild it from a record's span and the document's text, and check it against the hash the record carries.

``+filename`` is metadata, not text: where it is on, the file line is also read as part of its document by the
document-level BM25 and by ``+names`` (``read_text``), so a question that names a file ("the NDA of
1010552_0000912057-01-520246") can find it. Every text-only method leaves it out.
"""

from __future__ import annotations

from collections.abc import Sequence

from sac.chunking.sections import find_headings, section_prefix


def file_line(doc_id: str) -> str:
    """``+filename``: the file name as it would be read from a file list, folders and extension dropped."""
    name = doc_id.rsplit("/", 1)[-1]
    return "File: " + (name.rsplit(".", 1)[0] if "." in name else name)


def context_lines(
    doc_id: str, text: str, spans: Sequence[tuple[int, int]], *, sections: bool, filename: bool,
) -> list[str]:
    """Per span of one document (its whole ``text`` given), the context its record embeds: "" for none."""
    headings = find_headings(text) if sections else []
    file = file_line(doc_id) if filename else ""
    out = []
    for start, end in spans:
        section = section_prefix(headings, start, end) if sections else ""
        out.append("\n".join(part for part in (file, section) if part))
    return out


def read_text(doc_id: str, text: str, *, filename: bool) -> str:
    """A document as the document-level BM25 and ``+names`` read it: its text, after its file line under ``+filename``.

    Never used for spans: offsets are always into ``text`` itself."""
    return f"{file_line(doc_id)}\n{text}" if filename else text
