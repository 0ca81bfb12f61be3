"""Small-chunk control: tiny and whitespace-only chunks join a neighbour.

With whitespace kept, the recursive splitter leaves many chunks of a few characters ("\\n\\n", "Page 3",
"1."). Under SAC such a chunk embeds as the summary alone, so it sits near every query about its
document and fills top-k slots with nothing to read. The ``+merge<N>`` index option folds every run of
consecutive chunks under N characters (or whitespace only) into the shorter neighbour that has room.

Merging is contiguous: the merged chunk is ``text[start:end]`` of the joined spans, the chunks of a
document still tile it exactly, and no merged chunk is longer than ``chunk_size + N`` characters.
A run that is N characters or longer and has text in it stays a chunk of its own (it is no longer small);
a run never grows past ``chunk_size``.
"""

from __future__ import annotations

from collections.abc import Sequence

from sac.errors import ConfigError
from sac.types import Chunk, Document, Hit, Span


def is_small(text: str, min_chars: int) -> bool:
    return len(text) < min_chars or not text.strip()


def merge_small_chunks(document: Document, chunks: Sequence[Chunk], min_chars: int, chunk_size: int) -> list[Chunk]:
    """The chunks of ``document`` (in order, tiling it) with runs of small chunks merged into a neighbour.

    Args:
        min_chars: chunks shorter than this (and whitespace-only chunks) are small.
        chunk_size: the splitter's limit; a merged chunk is at most ``chunk_size + min_chars`` long.
    """
    if min_chars < 1:
        raise ConfigError(f"Expected min_chars >= 1, got {min_chars}")
    spans = [(c.span.start, c.span.end) for c in chunks]
    if any(b[0] != a[1] for a, b in zip(spans, spans[1:])):
        raise ConfigError(f"merge<N> needs chunks that tile the document (no overlap): {document.doc_id!r}")
    limit = chunk_size + min_chars
    # Consecutive small chunks form one run; big chunks stay as they are. Runs and big chunks alternate.
    groups: list[tuple[int, int, bool]] = []
    for start, end in spans:
        small = is_small(document.text[start:end], min_chars)
        if groups and small and groups[-1][2] and end - groups[-1][0] <= chunk_size:
            groups[-1] = (groups[-1][0], end, True)
        else:
            groups.append((start, end, small))
    out: list[list[int]] = []  # [start, end] of the merged chunks
    pending: tuple[int, int] | None = None  # a small run waiting for the next big chunk
    for i, (start, end, small) in enumerate(groups):
        if not small:
            if pending is not None:
                if end - pending[0] <= limit:
                    start = pending[0]
                else:
                    out.append(list(pending))
                pending = None
            out.append([start, end])
            continue
        if pending is not None:  # two runs in a row (a run stops at chunk_size): join them
            start = pending[0]
            pending = None
        if end - start >= min_chars and document.text[start:end].strip():
            out.append([start, end])  # a run long enough to stand alone is not small
            continue
        nxt = groups[i + 1] if i + 1 < len(groups) else None
        prev_len = out[-1][1] - out[-1][0] if out else None
        prev_fits = prev_len is not None and prev_len + end - start <= limit
        next_fits = nxt is not None and nxt[1] - start <= limit
        if prev_fits and not (next_fits and nxt is not None and nxt[1] - nxt[0] < (prev_len or 0)):
            out[-1][1] = end
        elif next_fits:
            pending = (start, end)
        else:
            out.append([start, end])  # no neighbour has room: kept (rare: both neighbours already full)
    if pending is not None:
        out.append(list(pending))
    text = document.text
    return [Chunk(Span(document.doc_id, s, e), text[s:e]) for s, e in out]


def short_hit_share(hits: Sequence[Sequence[Hit]], k: int = 8, min_chars: int = 25) -> float:
    """Share of the top-k hits (pooled over queries) shorter than ``min_chars`` or whitespace only."""
    top = [h for per_query in hits for h in per_query[:k]]
    return sum(is_small(h.chunk.text, min_chars) for h in top) / len(top) if top else 0.0
