"""Which of many texts hold a string, exactly, without reading them all.

``+names`` names the documents whose squashed text quotes a title or a company name ("bellringbrandsinc");
reading every document's text for that costs about 0.26 ms per MB and key, growing with the corpus
(bench/notes/2026-12-04-names-substring-signatures.md). Here each
text gets a fixed-size signature: one bit per 4-byte piece (UTF-8) it holds, hashed into ``BITS`` bits. A
string's candidates are the texts whose signature has the bit of every piece of the string; two pieces can share
a bit, so that is a superset of the answer, and only the candidates are read. The answer is exact.

    SubstringIndex(texts)                 signatures of the texts (``BITS`` / 8 bytes each)
    SubstringIndex(texts, signatures)     the same from ``signatures_of(texts)`` made before (kept on disk:
                                          sac.index.derived)
    .holding(key) -> [i, ...]             the indexes of the texts that hold ``key``, ascending
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

GRAM = 4  # bytes per piece
LOG_BITS = 17
BITS = 1 << LOG_BITS  # bits per signature: 16 KiB a text; a 60,000-character contract sets about a tenth of them


def _pieces(text: str) -> np.ndarray:
    """The bit of each distinct 4-byte piece of ``text``: the piece's bytes as one integer, hashed (Fibonacci)."""
    data = np.frombuffer(text.encode("utf-8"), dtype=np.uint8).astype(np.uint32)
    if data.size < GRAM:
        return np.zeros(0, dtype=np.uint32)
    codes = (data[:-3] << 24) | (data[1:-2] << 16) | (data[2:-1] << 8) | data[3:]
    return np.unique((codes * np.uint32(2654435761)) >> np.uint32(32 - LOG_BITS))


def signatures_of(texts: Sequence[str]) -> np.ndarray:
    """One row of ``BITS`` / 8 bytes per text: the bits of its pieces (``np.packbits`` order)."""
    signatures = np.zeros((len(texts), BITS // 8), dtype=np.uint8)
    flags = np.zeros(BITS, dtype=bool)
    for row, text in enumerate(texts):
        flags[:] = False
        flags[_pieces(text)] = True
        signatures[row] = np.packbits(flags)
    return signatures


class SubstringIndex:
    """Texts with their substring signatures: which texts can hold a key, found without scanning every text."""

    def __init__(self, texts: Sequence[str], signatures: np.ndarray | None = None) -> None:
        self.texts = texts
        self.signatures = signatures_of(texts) if signatures is None else signatures
        if self.signatures.shape != (len(texts), BITS // 8):
            raise ValueError(f"signatures of shape {self.signatures.shape} for {len(texts)} texts: want "
                             f"{(len(texts), BITS // 8)}")

    def holding(self, key: str) -> list[int]:
        """The indexes of the texts that hold ``key`` (every text is a candidate for a key under 4 bytes)."""
        bits = _pieces(key)
        if bits.size:
            masks = (np.uint8(128) >> (bits & 7).astype(np.uint8)).astype(np.uint8)  # np.packbits: high bit first
            rows = np.flatnonzero(np.all(self.signatures[:, bits >> 3] & masks, axis=1))
        else:
            rows = np.arange(len(self.texts))
        return [r for r in map(int, rows) if key in self.texts[r]]
