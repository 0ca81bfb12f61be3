"""How counts read in messages: "1 document", "2 documents", "1,204 chunks"."""

from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` with thousands separators and the noun in the number it takes (``plural`` where adding "s" is wrong)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"
