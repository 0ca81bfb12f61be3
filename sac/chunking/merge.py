r"""Small-chunk control: tiny and whitespace-only chunks join a neighbour.

With whitespace kept, the recursive splitter leaves many chunks of a few characters ("\n\n", "Page 3",
"1."). Under SAC such a chunk embeds as the summary alone, so it sits near every query about its
document and fills top-k slots with nothing to read. A chunk is *small* when it has fewer than N
non-space characters. Every run of consecutive small chunks joins the shorter neighbour that has room
(the joined chunk stays within ``chunk_size + N`` characters); a small run no neighbour has room for joins
the shorter neighbour anyway, because a blank hit is worse than a long one. With a chunk size at least twice N
(the default: 25 against 500) a merged chunk stays within 4 x chunk size + N (tests/test_methods.py, a property
test); with N above half the chunk size nearly every piece is small, and no bound is kept. The default chunking
(``SacConfig.chunking == "merged"``) does this with N = ``MIN_CHUNK_CHARS``; the ``+merge<N>`` index option
does it with another N.

Merging is contiguous: the merged chunk is ``text[start:end]`` of the joined spans and the chunks of a
document still tile it exactly. No chunk is small unless the whole document is one small chunk.
"""

from __future__ import annotations

from collections.abc import Sequence

from sac.chunking.split import chunk_document
from sac.config import MIN_CHUNK_CHARS
from sac.errors import ConfigError
from sac.types import Chunk, Document, Hit, Span

CHUNKINGS = ("merged", "paper")  # SacConfig.chunking: the default, and the paper's splitter exactly


def index_chunks(document: Document, chunk_size: int = 500, chunk_overlap: int = 0,
                 chunking: str = "merged") -> list[Chunk]:
    """The chunks every index holds for ``document`` (before index options such as ``+sections``).

    ``paper``: the paper's recursive splitter, whitespace kept, exactly. ``merged`` (the default): the same,
    then pieces with fewer than ``MIN_CHUNK_CHARS`` non-space characters join a neighbour, so no hit is blank.
    Both tile the document with exact spans.
    """
    chunks = chunk_document(document, chunk_size, chunk_overlap)
    if chunking == "paper":
        return chunks
    if chunking != "merged":
        raise ConfigError(f"Unknown chunking {chunking!r}: use one of {', '.join(CHUNKINGS)}")
    return merge_small_chunks(document, chunks, MIN_CHUNK_CHARS, chunk_size)


def is_small(text: str, min_chars: int) -> bool:
    """Fewer than ``min_chars`` non-space characters (whitespace-only text always is)."""
    return len("".join(text.split())) < min_chars


def merge_small_chunks(document: Document, chunks: Sequence[Chunk], min_chars: int, chunk_size: int) -> list[Chunk]:
    """The chunks of ``document`` (in order, tiling it) with runs of small chunks merged into a neighbour.

    Args:
        min_chars: chunks with fewer non-space characters than this are small.
        chunk_size: the splitter's limit; a merged chunk is at most ``chunk_size + min_chars`` long wherever a
            neighbour has room (see the module docstring for the rest).
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
        if not is_small(document.text[start:end], min_chars):
            out.append([start, end])  # a run with enough text to stand alone is not small
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
    _absorb_small(text, out, min_chars)
    return [Chunk(Span(document.doc_id, s, e), text[s:e]) for s, e in out]


def _absorb_small(text: str, out: list[list[int]], min_chars: int) -> None:
    """Join every chunk still small (no neighbour had room) into a neighbour, in place.

    A small right neighbour first (two small pieces together may have text enough to stand alone, and neither
    grows a full chunk), else the shorter neighbour."""
    i = 0
    while len(out) > 1 and i < len(out):
        start, end = out[i]
        if not is_small(text[start:end], min_chars):
            i += 1
            continue
        left = out[i - 1] if i > 0 else None
        right = out[i + 1] if i + 1 < len(out) else None
        right_small = right is not None and is_small(text[right[0]:right[1]], min_chars)
        if right is None or (not right_small and left is not None and left[1] - left[0] <= right[1] - right[0]):
            assert left is not None
            left[1] = end  # the chunks before i are not small, and joining keeps them so
            del out[i]
        else:
            right[0] = start
            del out[i]  # out[i] is now the joined chunk: checked again


def short_hit_share(hits: Sequence[Sequence[Hit]], k: int = 8, min_chars: int = MIN_CHUNK_CHARS) -> float:
    """Share of the top-k hits (pooled over queries) with fewer than ``min_chars`` non-space characters."""
    top = [h for per_query in hits for h in per_query[:k]]
    return sum(is_small(h.chunk.text, min_chars) for h in top) / len(top) if top else 0.0
