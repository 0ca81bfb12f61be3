"""Chunking: the recursive splitter with exact spans, heading paths, small-chunk merging, the context lines an
index option embeds.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.chunking.context import context_lines, file_line, read_text
    from sac.chunking.merge import CHUNKINGS, index_chunks, is_small, merge_small_chunks, short_hit_share
    from sac.chunking.sections import find_headings, heading_path, section_prefix
    from sac.chunking.split import DEFAULT_SEPARATORS, chunk_document, split_spans

_EXPORTS = {
    "CHUNKINGS": "merge",
    "DEFAULT_SEPARATORS": "split",
    "chunk_document": "split",
    "context_lines": "context",
    "file_line": "context",
    "find_headings": "sections",
    "heading_path": "sections",
    "index_chunks": "merge",
    "is_small": "merge",
    "merge_small_chunks": "merge",
    "read_text": "context",
    "section_prefix": "sections",
    "short_hit_share": "merge",
    "split_spans": "split",
}

__all__ = [
    "CHUNKINGS",
    "DEFAULT_SEPARATORS",
    "chunk_document",
    "context_lines",
    "file_line",
    "find_headings",
    "heading_path",
    "index_chunks",
    "is_small",
    "merge_small_chunks",
    "read_text",
    "section_prefix",
    "short_hit_share",
    "split_spans",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
