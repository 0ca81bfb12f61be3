"""Which benchmark questions the text can resolve: the builders' ``identifiable`` tag.

A question is *identifiable* when a name of its title occurs in its document's text and in at most
``IDENTIFIABLE_MAX_DOCS`` documents of the split (its own included); the rest name a filer or parent the text
never writes, an EDGAR number, or a role ("between FRANCHISOR and FRANCHISEE"), which no text-only method can
tell apart from the look-alikes. Tables report the two apart.

    identifiable_names(names) -> tokens      what of a title's names could identify its document
    as_text(text) -> DocText                 a document prepared for ``occurs``
    occurs(token, text) -> bool              a token as a word, a run of words, or squashed
    identifiable(names, own, pool, cache)    the tag
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

IDENTIFIABLE_MAX_DOCS = 3  # a title name found in more documents of the pool than this names nothing

# Words that name no one: legal forms and document types. Used for titles and identifiability.
LEGAL_WORDS = {"inc", "llc", "lc", "ltd", "limited", "corp", "corporation", "co", "company", "plc", "lp", "llp", "ag",
               "gmbh", "sa", "nv", "bv", "pte", "pty", "incorporated", "lllp", "sarl", "spa", "se", "liability",
               "partnership"}
DOCTYPE_WORDS = {"agreement", "agreements", "agmt", "nda", "mnda", "cda", "non", "disclosure", "nondisclosure",
                 "confidentiality", "confidential", "mutual", "contract", "amendment", "amend", "form", "template",
                 "sample", "draft", "final", "signed", "standard", "basic", "general", "appendix", "annex",
                 "annexure", "attachment", "exhibit", "document", "version", "rev", "ver", "secrecy", "and", "of",
                 "the", "to", "for", "a", "an", "in", "on", "by", "with", "between", "en", "gb", "us", "pdf", "htm"}


def name_words(name: str, digits: bool = False) -> list[str]:
    """A name's words, case-folded, without legal forms and document-type words.

    Letters only ("N2KINC" -> "n", "kinc"), or with ``digits`` as written, digits kept inside words ("n2k"),
    numbers and ordinals dropped ("2006", "1st")."""
    words = [w for w in re.split(r"[\W_]+" if digits else r"[^\w]|[\d_]", name.casefold())
             if w and not re.fullmatch(r"\d+(st|nd|rd|th)?", w)]
    words = [re.sub(r"(?<=[a-z\d]{3})(inc|llc|ltd|corp|plc)$", "", w) for w in words]  # "AcmeInc"
    return [w for w in words if w not in LEGAL_WORDS and w not in DOCTYPE_WORDS]


def identifiable_names(names: Sequence[str]) -> list[str]:
    """The tokens of a title's names that could identify its document, 3+ characters.

    Each name without legal forms and document-type words, case-folded, letters only, whole
    ("papajohnsinternational") and word by word ("papa", "john", "international"); where a name writes digits
    inside its words, also with them ("n2k", "on2technologies")."""
    tokens: set[str] = set()
    for name in names:
        for words in (name_words(name), name_words(name, digits=True)):
            tokens.update(["".join(words), *words])
    return sorted(t for t in tokens if len(t) >= 3)


class DocText(NamedTuple):
    """A document's text in the forms ``occurs`` searches."""

    spaced: str  # " word word ... " (case-folded, non-letters as spaces)
    squashed: str  # letters only
    joined: str  # its words (letters and digits) run together: "go call 1st" -> "gocall1st"
    bounds: frozenset[int]  # where a word of ``joined`` starts or ends


def as_text(text: str) -> DocText:
    """``text`` in the forms ``occurs`` searches (``DocText``)."""
    spaced = "".join(ch if ch.isalpha() else " " for ch in text.casefold())
    words = re.findall(r"[^\W_]+", text.casefold())
    bounds, at = {0}, 0
    for word in words:
        at += len(word)
        bounds.add(at)
    return DocText(f" {' '.join(spaced.split())} ", "".join(spaced.split()), "".join(words), frozenset(bounds))


def occurs(token: str, text: DocText) -> bool:
    """Whether ``token`` occurs in ``text`` as a word, a run of words, or (8+ letters) a squashed run.

    A whole word; a run of whole words written apart, digits kept ("gocall" in "Go Call, Inc.", "azulsa" in
    "Azul S.A.", "n2k" in "N2K Inc.", not "aprilst" in "April 1st"); or, from 8 letters up, a squashed run
    anywhere ("bellringbrands" in "BellRing Brands, Inc."). Shorter runs inside words hit too often ("intel" in
    "intellectual")."""
    if f" {token} " in text.spaced or (len(token) >= 8 and token in text.squashed):
        return True
    at = text.joined.find(token)
    while at >= 0:
        if at in text.bounds and at + len(token) in text.bounds:
            return True
        at = text.joined.find(token, at + 1)
    return False


def identifiable(names: Sequence[str], own: DocText, pool: Sequence[DocText], cache: dict[str, int]) -> bool:
    """True when a token of ``names`` occurs in the document (``own``) and in few documents of the pool.

    At most IDENTIFIABLE_MAX_DOCS documents of the pool (the split's documents, its own included). ``cache`` keeps
    each token's count."""
    for token in identifiable_names(names):
        if occurs(token, own):
            if token not in cache:
                cache[token] = sum(occurs(token, text) for text in pool)
            if cache[token] <= IDENTIFIABLE_MAX_DOCS:
                return True
    return False
