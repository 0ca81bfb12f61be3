"""Which benchmark questions the text can resolve: the builders' ``identifiable`` tag.

A question is *identifiable* when a name of its title occurs in its document's text and in at most
``IDENTIFIABLE_MAX_DOCS`` documents of the split (its own included); the rest name a filer or parent the text
never writes, an EDGAR number, or a role ("between FRANCHISOR and FRANCHISEE"), which no text-only method can
tell apart from the look-alikes. Tables report the two apart.

    identifiable_names(names) -> tokens      what of a title's names could identify its document
    as_text(text) -> DocText                 a document prepared for ``occurs``
    occurs(token, text) -> bool              a token as a word or a run of whole words
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
    numbers and ordinals dropped ("2006", "1st"). A legal form glued to the end of a squashed name goes too
    ("AcmeInc", "BIOFRONTERAAG")."""
    words = _words(name, digits)
    words = [_GLUED_FORM.sub("", w) for w in words]
    return [w for w in words if w not in LEGAL_WORDS and w not in DOCTYPE_WORDS]


def _words(name: str, digits: bool) -> list[str]:
    """Every word of a name, case-folded (letters only, or letters and digits), numbers and ordinals dropped."""
    return [w for w in re.split(r"[\W_]+" if digits else r"[^\w]|[\d_]", name.casefold())
            if w and not re.fullmatch(r"\d+(st|nd|rd|th)?", w)]


MIN_PREFIX = 6  # the shortest start of a squashed name read as its first word(s)
# A legal form glued to the end of a squashed name; at least three letters must come before it.
_GLUED_FORM = re.compile(r"(?<=[a-z\d]{3})(inc|llc|ltd|corp|plc|ag|gmbh)$")
# What EDGAR appends to a filer's name, kept by the CUAD file names: a state ("PHLVARIABLEINSURANCECOCT": /CT/) or
# NEW ("URSCORPNEW": /NEW/).
_FILER_SUFFIX = re.compile(
    r"(?<=[a-z]{3})(new|al|ak|az|ar|ca|co|ct|de|dc|fl|ga|hi|id|il|in|ia|ks|ky|la|me|md|ma|mi|mn|ms|mo|mt|ne|nv|nh|nj|"
    r"nm|ny|nc|nd|oh|ok|or|pa|ri|sc|sd|tn|tx|ut|vt|va|wa|wv|wi|wy|pr)$")
_TRAILING_FORM = re.compile(r"(?<=[a-z\d]{3})(inc|incorporated|llc|ltd|limited|corp|corporation|co|company|plc|ag|gmbh)$")


def _squashed_forms(token: str) -> set[str]:
    """A squashed filer name in the forms its text may write it.

    Without EDGAR's state or NEW suffix, then without a trailing legal form ("phlvariableinsurancecoct" ->
    "phlvariableinsuranceco" -> "phlvariableinsurance")."""
    forms = {token}
    stripped = _FILER_SUFFIX.sub("", token)
    forms.add(stripped)
    for form in (token, stripped):
        while (shorter := _TRAILING_FORM.sub("", form)) != form:
            forms.add(shorter)
            form = shorter
    return forms


def identifiable_names(names: Sequence[str]) -> list[str]:
    """The tokens of a title's names that could identify its document, 3+ characters.

    Each name case-folded, letters only and (where it writes digits inside its words) with them: whole as written
    ("thejointcorp", "reinsurancegroupofamericaincorporated"), whole without legal forms and document-type words
    ("papajohnsinternational"), a squashed filer without EDGAR's suffixes ("urscorpnew" -> "urs") and its starts of
    MIN_PREFIX letters or more ("flotek" of "flotekindustriesinccn", where the words' ends are unknown), and word by
    word without those words ("papa", "john", "international")."""
    tokens: set[str] = set()
    for name in names:
        for digits in (False, True):
            everything = _words(name, digits)
            core = name_words(name, digits)
            tokens.update(["".join(everything), "".join(core), *core])
            if len(name.split()) == 1 and len(everything) == 1 and len(everything[0]) >= 8:  # a squashed filer name
                tokens.update(_squashed_forms(everything[0]))
                # its first words, unknown where they end: "FLOTEKINDUSTRIESINCCN" is "Flotek" in its text
                tokens.update(everything[0][:n] for n in range(MIN_PREFIX, len(everything[0])))
            tokens.add("".join(_words_until_form(everything)))
    return sorted(t for t in tokens if len(t) >= 3)


def _words_until_form(words: list[str]) -> list[str]:
    """The words of a name up to its first legal form ("reinsurance group of america incorporated" -> the first four)."""
    for i, word in enumerate(words):
        if word in LEGAL_WORDS:
            return words[:i]
    return words


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
    """Whether ``token`` occurs in ``text`` as a word or as a run of whole words.

    A whole word; or a run of whole words written apart, digits kept ("gocall" in "Go Call, Inc.", "azulsa" in
    "Azul S.A.", "n2k" in "N2K Inc.", "bellringbrands" in "BellRing Brands, Inc.", not "aprilst" in "April 1st").
    A run must start and end where words do: "ipayment" is not in "(ii) payment", nor "intel" in "intellectual"."""
    if f" {token} " in text.spaced:
        return True
    at = text.joined.find(token)
    while at >= 0:
        if at in text.bounds and at + len(token) in text.bounds:
            return True
        at = text.joined.find(token, at + 1)
    return False


def identifiable(names: Sequence[str], own: DocText, pool: Sequence[DocText], cache: dict[str, int],
                 max_docs: int = IDENTIFIABLE_MAX_DOCS) -> bool:
    """True when a token of ``names`` occurs in the document (``own``) and in few documents of the pool.

    At most ``max_docs`` documents of the pool (the split's documents, its own included; 1: a name only this
    document of the pool writes). ``cache`` keeps each token's count in this pool."""
    for token in identifiable_names(names):
        if occurs(token, own):
            if token not in cache:
                cache[token] = sum(occurs(token, text) for text in pool)
            if cache[token] <= max_docs:
                return True
    return False
