"""Text helpers for names read from contracts: white space squashed, acronyms found, names title-cased."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection


def squash(text: str) -> str:
    """Runs of white space as one space; soft hyphens (invisible in print) dropped."""
    return re.sub(r"\s+", " ", text.replace("\u00ad", "")).strip()


# Legal forms and other abbreviations that stay upper case whatever the document does.
_STANDARD_CAPS = frozenset(
    "LLC LP LLP LLLP PLC AG AB SA NV BV SE USA US UK EU II III IV VI NDA IP JV R&D TV DVD PC".split()
)
_FORM_CASE = {"LTD": "Ltd", "CORP": "Corp", "INC": "Inc", "CO": "Co", "PTY": "Pty", "PTE": "Pte"}
SMALL_WORDS = frozenset("a an and as at by for in of on or the to with from".split())


def acronyms(text: str) -> frozenset[str]:
    """Words of 2-5 letters the document writes in upper case inside running text more than in any other case.

    An all-caps heading ("JOINT VENTURE AGREEMENT") cannot tell an acronym from a word; the document's
    own sentences can: "HPS shall ..." keeps "HPS", while "joint" in lower case makes "JOINT" a word.
    """
    caps: Counter[str] = Counter()
    other: Counter[str] = Counter()
    for line in text[:60000].splitlines():
        if not any(c.islower() for c in line):  # an all-caps line is a heading: it says nothing
            continue
        words = re.findall(r"[A-Za-z][A-Za-z&]*", line)
        for i, word in enumerate(words):
            if not word.isupper():
                other[word.upper()] += 1
            elif len(word) >= 2 and not any(_is_caps_word(n) for n in words[max(0, i - 1) : i] + words[i + 1 : i + 2]):
                caps[word] += 1  # alone among lower-case words: "ACME shall"; "ACME WIDGETS CORP" is a name in capitals
    return frozenset(w for w, n in caps.items() if n >= 2 and n > 2 * other[w] and len(w) <= 5)


def _is_caps_word(word: str) -> bool:
    return len(word) >= 2 and word.isupper()


def title_case(text: str, keep: Collection[str] = ()) -> str:
    """Readable case for all-caps text ("JOINT VENTURE AGREEMENT" -> "Joint Venture Agreement").

    In mixed text only runs of two or more all-caps words change ("ALPHA BETA, Gamma Ltd."); a lone
    all-caps word there is an acronym. Kept as written: ``keep`` (the document's acronyms), standard legal
    abbreviations, dotted forms ("S.A."), words with digits, and short words without a vowel ("XYZ").
    """
    words = text.split(" ")
    if any(c.islower() for c in text):
        caps = [_is_caps_word(w.strip(",.;:()\"“”'’")) for w in words]
        runs = [c and ((i > 0 and caps[i - 1]) or (i + 1 < len(caps) and caps[i + 1])) for i, c in enumerate(caps)]
        return " ".join(_word_case(w, i, keep) if run else w for i, (w, run) in enumerate(zip(words, runs)))
    return " ".join(_word_case(w, i, keep) for i, w in enumerate(words))


def _word_case(word: str, i: int, keep: Collection[str]) -> str:
    core = word.strip(",.;:()\"“”'’")
    letters = [c for c in core if c.isalpha()]
    dotted = ("." in core or "/" in core) and len(letters) <= 4  # "S.A.", "N.V.", "L.L.C.", "S/A"
    if core in _FORM_CASE:
        return word.replace(core, _FORM_CASE[core])
    if (
        core in keep
        or core in _STANDARD_CAPS
        or dotted
        or any(c.isdigit() for c in core)
        or (len(core) <= 4 and not any(v in core for v in "AEIOUY"))
    ):
        return word
    if i > 0 and core.lower() in SMALL_WORDS:
        return word.lower()
    return re.sub(r"[^\W\d_]+", lambda m: m.group(0)[:1] + m.group(0)[1:].lower(), word)
