"""Recursive character splitting with exact spans (the paper's chunking).

The splitter follows LangChain's ``RecursiveCharacterTextSplitter`` with ``keep_separator="end"`` and
``strip_whitespace=False``: split on the first separator that occurs in the text, merge consecutive pieces
greedily up to ``chunk_size``, and split pieces that are still too long with the next separators. Nothing
is stripped and every separator stays at the end of the piece it terminates, so with no overlap the
chunks of a document are consecutive and join back to exactly its text.

The work is done on ``(start, end)`` offsets, never on copied substrings, so a 31 MB corpus splits in
seconds.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from itertools import accumulate

from sac.errors import ConfigError
from sac.types import Chunk, Document, Span

DEFAULT_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", "!", "?", ".", ":", ";", ",", " ", "")


def split_spans(
    text: str,
    chunk_size: int = 500,
    chunk_overlap: int = 0,
    separators: Sequence[str] = DEFAULT_SEPARATORS,
) -> list[tuple[int, int]]:
    """Split ``text`` into half-open ``(start, end)`` spans of at most ``chunk_size`` characters.

    With ``chunk_overlap == 0`` the spans tile the text: consecutive, no gaps, none empty. With an overlap,
    a chunk may start up to ``chunk_overlap`` characters before the end of the previous one (at a piece
    boundary, as LangChain does); the spans still cover the text and each is ``text[start:end]``.
    When the separators run out, a piece is cut every ``chunk_size`` characters, so no span is ever
    longer than ``chunk_size`` even for custom separators without ``""``.
    """
    _check_sizes(chunk_size, chunk_overlap)
    seps = tuple(separators)
    if not all(isinstance(s, str) for s in seps):
        raise ConfigError(f"Expected separators to be strings, got {seps!r}")
    spans: list[tuple[int, int]] = []
    if text:
        _split(text, 0, len(text), seps, chunk_size, chunk_overlap, spans)
    return spans


def chunk_document(document: Document, chunk_size: int = 500, chunk_overlap: int = 0) -> list[Chunk]:
    """Chunks of ``document``; each carries its span and exactly ``document.text[start:end]``."""
    text = document.text
    return [
        Chunk(span=Span(document.doc_id, start, end), text=text[start:end])
        for start, end in split_spans(text, chunk_size, chunk_overlap)
    ]


def _check_sizes(chunk_size: int, chunk_overlap: int) -> None:
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise ConfigError(f"Expected chunk_size to be an integer >= 1, got {chunk_size!r}")
    if isinstance(chunk_overlap, bool) or not isinstance(chunk_overlap, int) or not 0 <= chunk_overlap < chunk_size:
        raise ConfigError(
            f"Expected chunk_overlap to be an integer with 0 <= chunk_overlap < chunk_size ({chunk_size}), "
            f"got {chunk_overlap!r}"
        )


def _split(
    text: str,
    start: int,
    end: int,
    separators: tuple[str, ...],
    size: int,
    overlap: int,
    out: list[tuple[int, int]],
) -> None:
    """Append the spans of ``text[start:end]`` to ``out`` (LangChain's ``_split_text`` on offsets)."""
    rest: tuple[str, ...] = ()
    separator = ""
    for i, sep in enumerate(separators):
        if sep == "":
            break
        if text.find(sep, start, end) != -1:
            separator, rest = sep, separators[i + 1 :]
            break
    if separator == "":
        _split_chars(start, end, size, overlap, out)
        return

    # Pieces end right after each separator ("keep at end"); the last piece is whatever follows the
    # last separator. str.split does the scanning in C; the offsets come from the part lengths.
    parts = text[start:end].split(separator)
    step = len(separator)
    bounds = list(accumulate((len(p) + step for p in parts), initial=start))
    bounds[-1] = end  # the last part has no separator after it
    good: list[tuple[int, int]] = []
    for i in range(len(parts)):
        s, e = bounds[i], bounds[i + 1]
        if s == e:
            continue  # only the text after a trailing separator can be empty
        if e - s <= size:
            good.append((s, e))
            continue
        if good:
            _merge(good, size, overlap, out)
            good = []
        _split(text, s, e, rest, size, overlap, out)
    if good:
        _merge(good, size, overlap, out)


def _merge(pieces: list[tuple[int, int]], size: int, overlap: int, out: list[tuple[int, int]]) -> None:
    """Merge consecutive pieces greedily into spans of at most ``size`` (LangChain's ``_merge_splits``).

    Pieces are contiguous and the separator is kept inside them, so a merged span runs from the start of
    its first piece to the end of its last one.
    """
    current: deque[tuple[int, int]] = deque()
    total = 0
    for s, e in pieces:
        length = e - s
        if current and total + length > size:
            out.append((current[0][0], current[-1][1]))
            # Drop pieces from the front until what is left fits in the overlap and leaves room for
            # this piece; with no overlap that empties the window.
            while total > overlap or (total > 0 and total + length > size):
                first = current.popleft()
                total -= first[1] - first[0]
        current.append((s, e))
        total += length
    if current:
        out.append((current[0][0], current[-1][1]))


def _split_chars(start: int, end: int, size: int, overlap: int, out: list[tuple[int, int]]) -> None:
    """Character-level split: what merging one-character pieces gives, computed directly."""
    step = size - overlap
    s = start
    while s + size < end:
        out.append((s, s + size))
        s += step
    out.append((s, end))
