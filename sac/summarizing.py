"""Document summaries for SAC: prompts, an offline extractive summarizer, an OpenAI-compatible one, a store.

One short summary per document and strategy is prepended to every chunk before embedding, so that a
chunk carries the identity of its document (parties, type, subject) and retrieval stops confusing
look-alike documents. Summaries are cached by content (document hash, strategy, prompt, model, length)
and hand edits are kept as versions.
"""

from __future__ import annotations

import contextlib
import dataclasses
import ipaddress
import json
import math
import os
import queue
import random
import re
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from sac.config import SacConfig
from sac.errors import ConfigError, CorpusError, MissingCredentialsError, SummarizerError
from sac.protocols import Summarizer
from sac.types import Document, Summary, text_hash

SLACK_CHARS = 20  # the paper accepted a summary up to 20 characters over the target
MIN_TARGET_CHARS = 20

# --------------------------------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------------------------------

# Prompts put the document first and the instructions after it. The system message and the
# "Document:" block are the same for every strategy and every length, so a server that reuses the
# computed prefix of the previous request (llama.cpp, vLLM, OpenAI's prompt caching) processes a
# document once for a regeneration with a smaller target and once for both strategies.
SYSTEM_PROMPT = (
    "You write very short summaries of legal documents. Reply with the summary only: one line of plain "
    "text, no introduction, no heading, no quotation marks."
)

DOCUMENT_BLOCK = "Document:\n{document}\n\n---\n\n"

GENERIC_PROMPT = DOCUMENT_BLOCK + """\
Summarise the document above. Your summary will be placed in front of every small chunk of the \
document before the chunks are indexed for search, so that each chunk, read alone, still shows which \
document it comes from.

Focus on:
- its most important entities: name the parties;
- its core purpose;
- its key legal topics.
Be concise and specific: prefer the facts that set this document apart from similar documents over \
general statements. Write one sentence of plain text.

Output only the summary: no introduction, no heading, no quotation marks.
Length: at most {max_chars} characters (about {max_words} words)."""

EXPERT_PROMPT = DOCUMENT_BLOCK + """\
You are a legal expert. Write a very short summary of the document above. It will be placed in front \
of every small chunk of the document before the chunks are indexed for search, so that each chunk, \
read alone, shows which document it comes from, even among many documents of the same kind.

Step 1. Decide which type the document is: a non-disclosure agreement, a privacy policy, or another \
kind of contract.
Step 2. Fill in the template for that type with the facts that tell this document apart from other \
documents of the same type. Leave out fields the document does not state.
- Non-disclosure agreement: the parties; what counts as confidential information; the purpose; the \
obligations of the receiving party; exclusions; permitted disclosures; the term; remedies; governing law.
- Privacy policy: the controller; the data collected; the purposes of processing; the legal basis; \
recipients; international transfers; retention; the rights of users; how to complain; automated \
decisions.
- Other contract: the type of contract; the parties; the subject; key dates; governing law.

Write one line of plain text: the document type, a colon, then the facts of its template separated by \
semicolons, the names of the parties first, e.g. "<document type>: <parties>; <fact>; <fact>". Keep the \
facts that distinguish the document most and drop the rest.

Output only the summary: no reasoning, no steps, no heading, no quotation marks.
Length: at most {max_chars} characters (about {max_words} words)."""


# Asked in the same conversation when a reply is too long: the model sees its own reply and the
# document stays in the shared prefix, so a rewrite costs little more than its answer.
SHORTEN_PROMPT = (
    "That summary has {chars} characters; the limit is {max_chars}. Rewrite it in at most {max_chars} "
    "characters (about {max_words} words): keep the document type and the names of the parties, drop the "
    "least distinctive details. Output only the summary."
)


def prompt_hash(prompt: str, system: str | None = None, shorten: str | None = None) -> str:
    """Content hash of a prompt template (with its system message and its shortening request, if any).

    Part of every summary cache key: a change to any of them makes different summaries.
    """
    if not system and not shorten:
        return text_hash(prompt)
    return text_hash(f"{system or ''}\x00{prompt}\x00{shorten or ''}")


def words_for(max_chars: int) -> int:
    """A word count to go with a character limit: small models follow word counts more closely."""
    return max(3, max_chars // 7)


def render_prompt(template: str, max_chars: int, document: str) -> str:
    """Fill ``{max_chars}``, ``{max_words}`` and ``{document}``.

    A template without ``{document}`` gets the document block put in front of it, so the document
    still comes first.
    """
    try:
        if "{document}" in template:
            return template.format(max_chars=max_chars, max_words=words_for(max_chars), document=document)
        instructions = template.format(max_chars=max_chars, max_words=words_for(max_chars))
        return DOCUMENT_BLOCK.format(document=document) + instructions
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(
            "Expected a prompt template with only {max_chars}, {max_words} and {document} placeholders, "
            f"got an error ({type(err).__name__}: {err}). Write literal braces as {{{{ and }}}}."
        ) from None


def default_prompt(strategy: str) -> str:
    """The expert prompt for strategies named ``expert...``, the generic one otherwise."""
    return EXPERT_PROMPT if strategy.lower().startswith("expert") else GENERIC_PROMPT


def cut_at_word(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters, at a word boundary where there is one."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    space = head.rfind(" ")
    # Cutting inside a very long word beats dropping most of the budget.
    cut = head[:space] if space >= limit // 2 else text[:limit]
    return cut.rstrip(" ,;:-(/&").rstrip()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --------------------------------------------------------------------------------------------------
# Built-in extractive summarizer
# --------------------------------------------------------------------------------------------------

BUILTIN_VERSION = 1  # raise on every heuristic change: it is part of the prompt hash, so caches refresh
HEAD_CHARS = 5000  # the builtin reads this much of a document, plus a law and term search over all of it

_TYPE_WORDS = (
    r"AGREEMENT|CONTRACT|AMENDMENT|ADDENDUM|LICEN[CS]E|LEASE|POLICY|NOTICE|MEMORANDUM|DEED|UNDERTAKING|"
    r"INDENTURE|GUARANTY|GUARANTEE|CHARTER|BYLAWS|STATEMENT|PLAN|TERMS|NDA"
)
_TYPE_WORD_RE = re.compile(rf"\b(?:{_TYPE_WORDS})S?\b", re.IGNORECASE)
# A run of upper-case words ending in a document-type word, e.g. "JOINT VENTURE AGREEMENT".
_CAPS_TITLE_RE = re.compile(
    rf"(?<![A-Za-z])((?:[A-Z0-9][A-Z0-9&'’.,/-]*[ \t]+|(?:OF|AND|TO|FOR|THE|ON|IN)[ \t]+){{0,8}}"
    rf"(?:{_TYPE_WORDS})S?(?:[ \t]+NO\.[ \t]*\d+)?)(?![a-z])"
)
# "This Mutual Non-Disclosure Agreement is made ..." in running text.
_THIS_TITLE_RE = re.compile(
    rf"\b(?:This|THIS)\s+((?:[A-Z][\w'’-]*\s+|(?:of|and|to|for|on|the)\s+){{0,7}}(?:{_TYPE_WORDS})S?)\b",
    re.IGNORECASE,
)
_BOILERPLATE_LINE_RE = re.compile(
    r"^(?:\d+\s+)?(?:exhibit|execution (?:copy|version)|confidential treatment|quicklinks|table of contents|"
    r"strictly private|page \d|\[\*+\]|portions|information identified|confidential materials|article|section|"
    r"confidential(?: information)?$|private and confidential$|(?:attachment|appendix|annex|schedule)\s+[\w.-]+$)",
    re.IGNORECASE,
)
_LEADING_NOISE_RE = re.compile(
    r"^(?:(?:EXHIBIT|Exhibit)\s+[\w.-]+\s+|EXECUTION (?:COPY|VERSION)\s+|Execution (?:Copy|Version)\s+|"
    r"THIS\s+|This\s+)+"
)

_SUFFIX = (
    r"(?:Limited Liability Company|LIMITED LIABILITY COMPANY|Limited Partnership|LIMITED PARTNERSHIP|"
    r"Inc|INC|inc|Incorporated|INCORPORATED|LLC|L\.L\.C|Ltd|LTD|Limited|LIMITED|Corp|CORP|Corporation|CORPORATION|"
    r"Company|COMPANY|Co|CO|plc|PLC|AG|GmbH|S\.A|SA|N\.V|NV|B\.V|BV|LP|L\.P|LLP|L\.L\.P|AB|FSB|N\.A|S\.p\.A|"
    r"SpA|S\.r\.l|S\.R\.L|SRL|S\.A\.S|Pte|PTE|Pty|PTY|K\.K|Trust|TRUST|Bank|BANK|Authority|AUTHORITY|"
    r"Partnership|PARTNERSHIP|Association|ASSOCIATION|University|Foundation)"
)
_UP = "A-ZÀ-ÖØ-Þ"  # upper-case letters, accented ones included ("LECLANCHÉ S.A.")
_AL = "A-Za-zÀ-ÖØ-öø-ÿ"
_WORD = rf"[{_UP}][{_AL}0-9&'’.-]*"
_NAME_WORD = (
    rf"(?:(?!(?:AND|And|BETWEEN|Between)\b){_WORD}|\d+|\([{_UP}][{_AL}]{{1,12}}\)|&|of|OF|de|du|la)"
)
# "Florida Chemical Company, LLC", "BICYCLETX LIMITED", "Mandarin Trading (Pty) Ltd.", "iBio Inc.", "drkoop.com, inc."
_ORG_RE = re.compile(
    rf"(?<![\w&])((?:(?!(?:AND|And)\b){_WORD}|[a-z]{{1,2}}[{_UP}][{_AL}0-9.-]*|[a-z][a-z0-9-]*\.com)"
    rf"(?:[ ,]+{_NAME_WORD}){{0,7}}?(?:,?\s+{_SUFFIX}\.?){{1,2}})"
    rf"(?![\w-])(?!\s*(?:Name|name|:))"
)
# "AG Projects, a Dutch corporation", "Dr. George D. Green, an individual"
_DESCRIBED_RE = re.compile(
    rf"(?<![\w&])((?:Dr\.|Mr\.|Ms\.|Mrs\.)?\s*{_WORD}(?:\s+(?:{_WORD}|&|of|OF)){{0,6}}"
    r"(?:,\s+[A-Z][A-Za-z]+)?),?\s+"
    r"(?:an?|the)\s+(?:[A-Z][\w.-]*\s+){0,4}(?i:corporation|company|limited liability company|partnership|"
    r"individual|municipal corporation|state-owned|public body|non-profit|nonprofit|not-for-profit|bank|trust|"
    r"statutory trust|business trust|university|institution|division)\b"
)
# "South Carolina Public Service Authority ("Santee Cooper")", "Dr. George D. Green (the "Business Affiliate")"
_ALIASED_RE = re.compile(
    rf"(?<![\w&])((?:Dr\.|Mr\.|Ms\.|Mrs\.)?\s*{_WORD}(?:\s+(?:{_WORD}|&|of)){{1,6}}),?\s*"
    r"\((?:the\s+|hereinafter\s+(?:referred\s+to\s+as\s+)?(?:the\s+)?|collectively,?\s+)?[\"“'‘]{1,2}[A-Z]"
)
# "The University of Iowa, located at ...", "MD Anderson Cancer Center, with a place of business at ..."
_LOCATED_RE = re.compile(
    rf"(?<![\w&])((?:The\s+)?{_WORD}(?:\s+(?:{_WORD}|of|for|&)){{1,8}}),?\s+"
    r"(?:with\s+(?:a|its)\s+(?:principal\s+)?(?:place\s+of\s+business|offices?)|located\s+at|"
    r"having\s+(?:its|a)\s+(?:principal|registered)\s+(?:office|place))"
)
# "(2) NIGEL CROCKETT of", "between Dr. George D. Green (the"
_PERSON_RE = re.compile(
    r"(?:\(\d\)|\bbetween:?|\bBETWEEN:?|\band:?|\bAND:?)\s+((?:Dr\.|Mr\.|Ms\.|Mrs\.)\s+)?"
    r"([A-Z][a-zA-Z'’-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-zA-Z'’-]+){1,2})(?:\s*[(,]|\s+of\b)"
)
# A one-word name right after "between"/"and" with its defined term: "and Cardlytics, ("Supplier")".
_SINGLE_RE = re.compile(rf"(?:\bbetween|\band|\bamong)\s+({_WORD}),?\s*\((?:the\s+)?[\"“]")
# A party left blank in a form: "_____ (Inventor)", "[RECEIVING PARTY]"
_BLANK_PARTY_RE = re.compile(
    r"_{4,}\s*\((?:referred to (?:hereafter|hereinafter) as |hereinafter |the )*(?:the\s+)?"
    r"[\"“]?([A-Z][\w -]{2,30}?)[\"”]?\)"
    r"|the\s+\[(RECEIVING PARTY|DISCLOSING PARTY|RECIPIENT)\]"
)
# "Mandarin Trading (Pty) Ltd. (trading as ResRequest)", "Holiday RV Superstores, Inc., d/b/a Recreation USA"
_TRADING_AS_RE = re.compile(
    r",?\s*\(?(?:trading as|t/a|d/b/a|dba|doing business as)\s+([A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*){0,3})\)?"
)
# A name after these words is a descriptor, a former name or a parent, not a party.
_NOT_A_PARTY_BEFORE_RE = re.compile(
    r"(?:\b(?:an?|as|known as|d/b/a|f/k/a|dba|trading as|subsidiary of|affiliate of|parent|of the|under the laws of|"
    r"laws of|located in|located at|office at|address at)|[\"“'‘(])\s*$",
    re.IGNORECASE,
)
_PLACES = {
    "united kingdom", "united states", "united states of america", "canada", "england", "england and wales",
    "israel", "japan", "germany", "france", "netherlands", "new york", "delaware", "california", "texas",
    "florida", "virginia", "nevada", "south carolina", "north carolina", "british columbia", "ontario",
    "quebec", "massachusetts", "new jersey", "pennsylvania", "illinois", "georgia", "ohio", "colorado",
}
_PARTIES_START_RE = re.compile(
    r"\b(?:by and between|by and among|between|among|BETWEEN|AMONG|PARTIES|Parties:|in favou?r of|made by)\b"
)
_PARTIES_END_RE = re.compile(
    r"\b(?:WHEREAS|Whereas|RECITALS?|Recitals|BACKGROUND|Background|W\s?I\s?T\s?N\s?E\s?S\s?S\s?E\s?T\s?H|"
    r"NOW,? THEREFORE|IT IS (?:HEREBY )?AGREED|The parties agree|Purpose\.|Definitions)"
)
_ROLE_WORDS = {
    "agreement", "company", "party", "parties", "effective date", "execution date", "recipient",
    "receiving party", "disclosing party", "disclosing parties", "confidential information", "the company",
    "customer", "supplier", "licensee", "licensor", "lessor", "lessee", "seller", "buyer", "purchaser",
    "agent", "merchant", "sponsor", "club", "employer", "employee", "executive", "grantor", "grantee",
    "client", "contractor", "consultant", "distributor", "reseller", "transporter", "shipper", "business",
    "commission", "securities", "exchange", "act", "state", "united states", "schedule", "exhibit",
    "section", "article", "the", "this", "each", "all", "any", "whereas", "name", "address", "inc",
}
_MONTHS = {
    m.lower(): i + 1
    for i, m in enumerate(
        ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
         "November", "December"]
    )
}
_MONTH_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_RE = r"(?:January|February|March|April|May|June|July|August|September|October|November|December|" \
    r"Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
_DATE_RE = re.compile(
    rf"\b(?:(?P<m1>{_MONTH_RE})\s+(?P<d1>\d{{1,2}})(?:st|nd|rd|th)?,?\s*(?P<y1>(?:19|20)\d\d)"
    rf"|(?P<d2>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:day\s+of\s+)?(?P<m2>{_MONTH_RE}),?\s*(?P<y2>(?:19|20)\d\d)"
    rf"|(?P<m3>{_MONTH_RE})\s+(?:_+\s*,?\s*)?(?P<y3>(?:19|20)\d\d))\b",
    re.IGNORECASE,
)
_LAW_RE = re.compile(
    r"(?:governed\s+by|construed\s+(?:and\s+enforced\s+)?in\s+accordance\s+with|subject\s+to|"
    r"interpreted\s+(?:and\s+construed\s+)?in\s+accordance\s+with)[^.;]{0,80}?\blaws?\s+of\s+"
    r"(?:the\s+)?(?:(?:State|Commonwealth|Province|Republic|Kingdom)\s+of\s+)?"
    r"((?-i:[A-Z][A-Za-z'’]+(?:\s+(?:and\s+|of\s+)?[A-Z][A-Za-z]+){0,3}))",
    re.IGNORECASE,
)
_ADJ_LAW_RE = re.compile(
    r"governed\s+by[^.;]{0,40}?\b(Dutch|English|German|French|Swiss|Israeli|Irish|Scottish|Canadian|Indian|"
    r"Japanese|Chinese|Swedish|Danish|Norwegian|Finnish|Belgian|Austrian|Italian|Spanish)\s+law",
    re.IGNORECASE,
)
_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "eighteen": 18, "twenty": 20, "twenty-four": 24,
    "thirty": 30, "thirty-six": 36, "sixty": 60,
}
_TERM_RE = re.compile(
    r"\b(?:(?:initial\s+)?term\s+of|survive(?:\s+for)?|remain\s+in\s+(?:full\s+)?(?:force\s+and\s+)?effect\s+for|"
    r"continue\s+(?:in\s+effect\s+)?for|expire|terminate)\s+(?:a\s+(?:period|term)\s+of\s+|an?\s+(?:initial\s+)?(?:period|term)\s+of\s+)?"
    r"(?:(?:after|following)\s+)?"
    r"(?P<n>\d{1,3}|[a-z]+(?:-[a-z]+)?)(?:\s*\(\s*(?P<n2>\d{1,3})\s*\))?\s+(?:full\s+|consecutive\s+|calendar\s+)?"
    r"(?P<unit>years?|months?)\b",
    re.IGNORECASE,
)
# (pattern, connector): the phrase is written as "<connector> <phrase>" ("for discussing ...", "to supply ...").
_SUBJECT_RES = (
    (re.compile(r"\bfor\s+the\s+(?:limited\s+|sole\s+)?purposes?\s+of\s+([^.;:()\"“]{12,160})", re.I), "for"),
    (re.compile(r"\bpurpose\s+of\s+(?:this\s+agreement|the\s+joint\s+venture)\s+(?:is|will\s+be)[:\s]+"
                r"(?:to\s+)?([^.;:()]{12,160})", re.I), "for"),
    (re.compile(r"\b(?:desires?|wish(?:es)?|intends?)\s+to\s+((?:engage|obtain|acquire|purchase|sell|supply|provide|license|"
                r"distribute|promote|market|appoint|retain|develop|co-brand|grant|lease|explore|evaluate|associate|"
                r"collaborate|cooperate|establish|form|receive|disclose|discuss|sponsor|endorse|transport|manufacture|"
                r"exchange|use|have)\b[^.;:()]{10,160})", re.I), "to"),
)
_SUBJECT_END_RE = re.compile(
    r"\s+(?:and\s+)?(?:WHEREAS|NOW|provided|subject to|in accordance|pursuant|as set forth)\b"
)
_BAD_SUBJECT_START = re.compile(
    r"(?i)^(?:this|these|the\s+foregoing|such|clarity|section|determining|calculating|any|each|all|its)\b"
)
_SMALL_WORDS = {"a", "an", "and", "as", "at", "by", "for", "in", "of", "on", "or", "the", "to", "with", "from"}
_KEEP_CAPS = {
    "LLC", "LP", "LLP", "AG", "AB", "PLC", "FSB", "USA", "US", "UK", "NV", "BV", "SA", "II", "III", "IV",
    "NDA", "CEII", "JV", "IP", "GA", "RSL", "ABG", "HPIL", "PC", "NFL", "KK", "N.A.", "L.P.", "S.A.", "B.V.",
    "N.V.", "L.L.C.", "TV", "DVD", "R&D", "EU",
}


_FORM_CASE = {"LTD": "Ltd", "CORP": "Corp", "INC": "Inc", "CO": "Co", "PTY": "Pty", "PTE": "Pte"}


def _title_case(text: str) -> str:
    """Readable case for an all-caps title or name ("JOINT VENTURE AGREEMENT" -> "Joint Venture Agreement")."""
    if any(c.islower() for c in text):
        return text
    words = []
    for i, word in enumerate(text.split(" ")):
        core = word.strip(",.;:()\"“”")
        letters = [c for c in core if c.isalpha()]
        dotted = "." in core and len(letters) <= 4  # "S.A.", "N.V.", "L.L.C."
        if core in _FORM_CASE:
            words.append(word.replace(core, _FORM_CASE[core]))
        elif core in _KEEP_CAPS or dotted or (len(core) <= 3 and not any(v in core for v in "AEIOUY")):
            words.append(word)
        elif i > 0 and core.lower() in _SMALL_WORDS:
            words.append(word.lower())
        else:
            words.append("-".join(p[:1] + p[1:].lower() for p in word.split("-")))
    return " ".join(words)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


# Clause headings that name a document type but are not a title.
_CLAUSE_HEADING_RE = re.compile(r"(?i)^(?:entire agreement|assignment|notices?|amendments|term of agreement)\s*$")


def _is_caps(segment: str) -> bool:
    letters = [c for c in segment if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _find_title(head: str) -> str | None:
    """The document's title: a short heading naming a document type, or "This X Agreement"."""
    segments = [s.strip() for ln in head[:2500].splitlines() for s in re.split(r"\s{3,}", ln) if s.strip()]
    segments = [_LEADING_NOISE_RE.sub("", s).strip() for s in segments[:40]]
    segments = [s for s in segments if not _BOILERPLATE_LINE_RE.match(s)]
    for i, seg in enumerate(segments):
        if not seg:
            continue
        if _is_caps(seg):
            # A heading split over lines ("AMENDMENT AND TERMINATION" / "OF" / "JOINT VENTURE AGREEMENT"):
            # join the upper-case lines that follow before looking for the type word.
            block = [seg]
            for nxt in segments[i + 1 : i + 4]:
                # A line ending in a period is a notice, not part of a heading.
                if (
                    block[-1].endswith(".")
                    or re.search(r"(?:AGREEMENT|CONTRACT)S?$", block[-1])
                    or not _is_caps(nxt)
                    or len(" ".join(block + [nxt])) > 100
                ):
                    break
                block.append(nxt)
            match = _CAPS_TITLE_RE.search(" ".join(block))
            if match and len(match.group(1)) >= 6 and not _CLAUSE_HEADING_RE.match(match.group(1)):
                title = re.split(r"\bTHIS\b|\bBETWEEN\b|\bDATED\b", match.group(1))[0]
                title = re.split(r"[.:;]\s+", title)[-1].strip(" ,.-")
                if _TYPE_WORD_RE.search(title):
                    return _title_case(_squash(title))
        match = _CAPS_TITLE_RE.search(seg)
        if match and len(match.group(1)) >= 6 and not _CLAUSE_HEADING_RE.match(match.group(1)):
            title = re.split(r"\bTHIS\b", match.group(1))[0]
            title = re.split(r"[.:;]\s+", title)[-1].strip(" ,.-")
            if _TYPE_WORD_RE.search(title):
                return _title_case(_squash(title))
        if (
            5 <= len(seg) <= 80
            and _TYPE_WORD_RE.search(seg)
            and not re.match(r"(?i)(?:this|the|whereas|if|in)\b", seg)
            and not _CLAUSE_HEADING_RE.match(seg)
        ):
            words = [w for w in re.findall(r"[A-Za-z][\w'-]*", seg) if w.lower() not in _SMALL_WORDS]
            if words and sum(w[0].isupper() for w in words) >= 0.75 * len(words) and len(words) <= 10:
                return _title_case(_squash(seg.rstrip(" .:")))
    match = _THIS_TITLE_RE.search(head[:3000])
    if match:
        return _title_case(_squash(match.group(1)))
    return None


def _clean_name(name: str) -> str:
    name = _squash(name).strip(" ,;:")
    name = re.sub(r"^(?:and|the|between|among|of)\s+(?=[A-Z])", "", name, flags=re.IGNORECASE)
    name = re.sub(r"\s+(?:of|OF|&)$", "", name)
    name = re.sub(r"\s*\((?:OTC|NYSE|NASDAQ|Nasdaq)[^)]*\)", "", name)
    first, _, rest = name.partition(", ")
    if rest and first.lower() in _ROLE_WORDS:  # "Reseller, Schoolpop, Inc."
        name = rest
    return _title_case(name)


_SUFFIX_WORDS_RE = re.compile(rf"\b(?:{_SUFFIX.lower().replace(chr(92) + '.', '')})\b")


def _name_key(name: str) -> str:
    """A name without punctuation and legal-form words: "Depomed, Inc." and "DEPOMED" share one key."""
    return _squash(_SUFFIX_WORDS_RE.sub(" ", re.sub(r"[^a-z0-9 ]", " ", name.lower())))


def _is_role(name: str) -> bool:
    """True for what is not a party name: a role, a place, a heading ("A. Territories"), two sentences."""
    if re.match(r"^[A-Z]\.\s+[A-Z][a-z]{3,}", name) or re.search(r"\b(?!Corp|Bros|Intl)[A-Za-z]{4,}\.\s+[A-Z]", name):
        return True
    low = name.lower().strip(" .")
    if low in _ROLE_WORDS or low in _PLACES or len(low) < 3:
        return True
    words = low.split()
    if any(w in {"agreement", "date", "term", "section", "article", "exhibit", "schedule"} for w in words):
        return True
    return all(w in _ROLE_WORDS or w in _SMALL_WORDS for w in words)


def _find_parties(head: str, title: str | None) -> list[str]:
    """Names of the parties, in order of appearance, from the clause that introduces them."""
    flat = _squash(head)
    start_match = _PARTIES_START_RE.search(flat[:3500])
    start = start_match.start() if start_match else 0
    if start_match is None and title:
        pos = flat.lower().find(title.lower())
        start = pos + len(title) if pos >= 0 else 0
    end_match = _PARTIES_END_RE.search(flat, start + 30)
    end = min(end_match.start() if end_match else len(flat), start + 1600)
    window = flat[start:end]
    names = _names_in(window)
    if not names and start > 0:
        names = _names_in(flat[:2500])
    for match in _BLANK_PARTY_RE.finditer(window):
        role = (match.group(1) or match.group(2) or "").strip()
        if role:
            names.append("a " + role.lower() if not role.istitle() or " " in role else "the " + role)
            break
    return names


def _names_in(window: str) -> list[str]:
    aliases = {a.lower() for a in re.findall(r"[\"“]([^\"”]{2,40})[\"”]", window)}
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    # Legal names first; the looser patterns only add names that do not overlap one already found.
    patterns = ((_ORG_RE, 1), (_DESCRIBED_RE, 1), (_ALIASED_RE, 1), (_LOCATED_RE, 1), (_PERSON_RE, 2), (_SINGLE_RE, 1))
    for regex, group in patterns:
        for match in regex.finditer(window):
            lo, hi = match.span(group)
            if any(lo < t_hi and t_lo < hi for t_lo, t_hi in taken):
                continue
            if _NOT_A_PARTY_BEFORE_RE.search(window[max(0, lo - 25) : lo]):
                continue
            name = _clean_name(match.group(group))
            trade = _TRADING_AS_RE.match(window, hi)
            if trade:
                name = f"{name} ({_squash(trade.group(1)).strip(' ,')})"
                hi = trade.end()
            if regex is _PERSON_RE and match.group(1):
                name = _squash(match.group(1)) + " " + name
            if _is_role(name) or len(name) > 70 or name.lower() in aliases:
                continue
            taken.append((lo, hi))
            found.append((lo, name))
    found.sort()
    names: list[str] = []
    keys: list[str] = []
    for _, name in found:
        key = _name_key(name)
        if not key:
            continue
        # The same party is often matched twice ("Depomed" and "Depomed, Inc."): keep the fuller name.
        clash = next((i for i, k in enumerate(keys) if k == key), None)
        if clash is None:
            names.append(name)
            keys.append(key)
        elif len(name) > len(names[clash]):
            names[clash] = name
            keys[clash] = key
    return names


def _find_date(head: str) -> str | None:
    match = _DATE_RE.search(_squash(head[:3000]))
    if not match:
        return None
    month = (match.group("m1") or match.group("m2") or match.group("m3")).rstrip(".").lower()
    number = next((n for name, n in _MONTHS.items() if name.startswith(month[:3])), None)
    if number is None:
        return None
    year = match.group("y1") or match.group("y2") or match.group("y3")
    day = match.group("d1") or match.group("d2")
    label = _MONTH_ABBREVIATIONS[number - 1]
    return f"{int(day)} {label} {year}" if day else f"{label} {year}"


def _anchors(lowered: str, words: Sequence[str]) -> list[int]:
    """Positions of the literal ``words`` in ``lowered``, in text order (str.find is fast; regex scans are not)."""
    found = []
    for word in words:
        i = lowered.find(word)
        while i != -1:
            found.append(i)
            i = lowered.find(word, i + 1)
    return sorted(found)


def _search_near(
    regex: re.Pattern[str], text: str, words: Sequence[str], before: int, after: int
) -> re.Match[str] | None:
    """``regex.search`` in windows around the literal anchor ``words``, in text order.

    Trying the full patterns at every position of a long contract (up to ~500,000 characters) is slow;
    their anchor words are rare, so this finds the same matches in a fraction of the time.
    """
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters change length when lowered; positions must hold
        lowered = text
    for pos in _anchors(lowered, words):
        match = regex.search(text, max(0, pos - before), pos + after)
        if match:
            return regex.match(text, match.start()) or match  # the window may have cut the match short
    return None


def _find_law(text: str) -> str | None:
    match = _search_near(_LAW_RE, text, ("law",), 200, 250)
    if match:
        law = re.split(r"\s+(?:and|without|excluding|except|applicable|as|in|to|which|that|for)\b", match.group(1))[0]
        law = law.strip()
        if match.group(1).lower().startswith("england and wales"):
            law = "England and Wales"
        if law.lower() not in {"the", "such", "any", "said", "this", "that", "each", "all"} and len(law) > 2:
            return _title_case(law)
    adjective = _search_near(_ADJ_LAW_RE, text, (" law",), 120, 40)
    return f"{adjective.group(1).title()} law" if adjective else None


def _find_term(text: str) -> str | None:
    match = _search_near(_TERM_RE, text, ("year", "month"), 160, 40)
    if not match:
        return None
    raw = match.group("n2") or match.group("n")
    count = int(raw) if raw.isdigit() else _NUMBER_WORDS.get(raw.lower())
    if count is None or count == 0:
        return None
    unit = match.group("unit").lower().rstrip("s")
    return f"{count} {unit}{'' if count == 1 else 's'}"


_TRAILING_WORDS = _SMALL_WORDS | {"its", "their", "his", "her", "which", "that", "certain", "all", "any", "each"}
_BREAK_BEFORE = {"of", "for", "to", "in", "on", "with", "and", "or", "by", "from", "at", "as", "which", "that",
                 "under", "including", "pursuant", "within", "through", "during", "between", "whereby"}


def _fit_phrase(phrase: str, budget: int) -> str | None:
    """The longest start of ``phrase`` that ends where the phrase can break and fits ``budget``.

    Cutting between "a joint" and "venture" reads worse than leaving the phrase out.
    """
    words = phrase.split()
    ends = [i for i in range(2, len(words)) if words[i].lower() in _BREAK_BEFORE or words[i - 1].endswith(",")]
    ends.append(len(words))
    best = None
    for end in ends:
        part = words[:end]
        while part and part[-1].lower().strip(",") in _TRAILING_WORDS:
            part = part[:-1]
        text = " ".join(part).rstrip(" ,")
        if len(text) <= budget and len(part) >= 3:
            best = text
    return best


# "Critical Energy Infrastructure Information (CEII)": a defined topic, used when no purpose is stated.
_TOPIC_RE = re.compile(
    r"\b([A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|of|and)){1,5})\s+\((?:collectively\s+)?[\"“]?([A-Z]{2,6})[\"”]?\)"
)


def _find_topic(head: str, exclude: str, budget: int) -> str | None:
    for match in _TOPIC_RE.finditer(_squash(head[:3500])):
        topic = match.group(1)
        if (
            topic.lower() in exclude.lower()
            or _name_key(topic) in _name_key(exclude)
            or re.search(r"Republic|Kingdom|States|Province|Commonwealth", topic)
        ):
            continue
        phrase = f"on {topic}"
        return phrase if len(phrase) <= budget else None
    return None


def _find_subject(head: str, budget: int) -> str | None:
    """The main subject as a short phrase with its connector ("for ...", "to ..."), at most ``budget`` chars."""
    flat = _squash(head[:3500])
    for regex, connector in _SUBJECT_RES:
        for match in regex.finditer(flat):
            phrase = match.group(1).strip(" ,")
            if _BAD_SUBJECT_START.match(phrase):
                continue
            phrase = _SUBJECT_END_RE.split(phrase)[0]
            phrase = re.sub(r"\b(?:certain|such|the said)\s+", "", phrase)
            fitted = _fit_phrase(f"{connector} {phrase}", budget)
            content = [w for w in (fitted or "").split()[1:] if w.lower() not in _TRAILING_WORDS]
            if fitted and len(fitted) >= 15 and len(content) >= 2:
                return fitted
    return None


def _doc_class(title: str | None, head: str) -> str:
    # The title decides when there is one: a contract's head may well mention confidentiality.
    probe = (title or head[:600]).lower()
    if re.search(r"non[- ]?disclosure|confidentiality agreement|\bnda\b|secrecy agreement", probe):
        return "nda"
    if re.search(r"privacy (?:policy|notice|statement)|data protection (?:policy|notice)|cookie policy", probe):
        return "privacy"
    return "other"


def _join_parties(parties: Sequence[str], budget: int) -> str:
    """"A and B" / "A, B and C" / "A, B et al.", dropping names that do not fit ``budget``."""
    chosen = list(parties[:3])
    while chosen:
        text = chosen[0] if len(chosen) == 1 else ", ".join(chosen[:-1]) + " and " + chosen[-1]
        if len(parties) > len(chosen):
            text = ", ".join(chosen) + " et al."
        if len(text) <= budget or len(chosen) == 1:
            return text
        chosen.pop()
    return ""


@dataclass(frozen=True)
class DocumentFacts:
    """What the builtin summarizer found in a document's head."""

    title: str | None
    doc_class: str  # "nda", "privacy" or "other"
    parties: tuple[str, ...]
    date: str | None
    law: str | None
    term: str | None
    head: str = field(repr=False)


def extract_facts(document: Document) -> DocumentFacts:
    """Title, type, parties, date, governing law and term, by regular expressions over the document."""
    head = document.text[:HEAD_CHARS]
    title = _find_title(head)
    doc_class = _doc_class(title, head)
    parties = tuple(_find_parties(head, title))
    return DocumentFacts(
        title=title,
        doc_class=doc_class,
        parties=parties,
        date=_find_date(head),
        law=_find_law(document.text),
        term=_find_term(document.text),
        head=head,
    )


_CLASS_LABELS = {"nda": "Non-disclosure agreement", "privacy": "Privacy policy", "other": "Contract"}


@dataclass(repr=False)
class BuiltinSummarizer:
    """Offline extractive summaries: type, parties, date, subject, governing law; no model, deterministic.

    ``generic`` reads as a sentence ("Supply Agreement between A and B (28 Feb 2019), to ..., Delaware
    law"); ``expert`` is a fielded line ("<TYPE>: <parties>; <date>; <subject>; law: <law>; term: <term>").
    Fields that do not fit the target are left out; only names that alone exceed target + 20 are cut.
    """

    strategy: str = "generic"
    target_chars: int = 150
    model: str = field(default="builtin", init=False)
    name: str = field(default="", init=False)
    prompt_hash: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if self.strategy not in ("generic", "expert"):
            raise ConfigError(f"Expected builtin strategy 'generic' or 'expert', got {self.strategy!r}")
        if self.target_chars < MIN_TARGET_CHARS:
            raise ConfigError(f"Expected target_chars >= {MIN_TARGET_CHARS}, got {self.target_chars}")
        self.name = f"builtin-{self.strategy}"
        # The version is in the hash: a heuristic change makes every cached builtin summary stale.
        self.prompt_hash = text_hash(f"builtin {self.strategy} extractive summary v{BUILTIN_VERSION}")

    def __repr__(self) -> str:
        return f"BuiltinSummarizer(strategy={self.strategy!r}, target_chars={self.target_chars})"

    def summarize(self, document: Document) -> Summary:
        text = self.summary_text(document)
        limit = self.target_chars + SLACK_CHARS
        cut = len(text) > limit
        if cut:
            text = cut_at_word(text, limit)
        return Summary(
            doc_id=document.doc_id,
            strategy=self.strategy,
            text=text,
            doc_hash=document.content_hash,
            model=self.model,
            prompt_hash=self.prompt_hash,
            target_chars=self.target_chars,
            cut=cut,
            created=_now(),
        )

    def summary_text(self, document: Document) -> str:
        """The summary before any cut (may exceed the limit only when the names alone do)."""
        facts = extract_facts(document)
        if self.strategy == "expert":
            return self._expert(facts, document)
        return self._generic(facts, document)

    def _kind(self, facts: DocumentFacts, document: Document) -> str:
        if facts.title:
            return facts.title
        if facts.doc_class != "other":
            return _CLASS_LABELS[facts.doc_class]
        return f"Document {document.title}"

    def _generic(self, facts: DocumentFacts, document: Document) -> str:
        target = self.target_chars
        text = self._kind(facts, document)
        if facts.parties:
            # "between" needs two parties; a policy is issued by its one controller.
            joiner = " of " if facts.doc_class == "privacy" else " between " if len(facts.parties) > 1 else " with "
            text += joiner + _join_parties(facts.parties, max(40, target + SLACK_CHARS - len(text) - 9))
        if facts.date and len(text) + len(facts.date) + 3 <= target:
            text += f" ({facts.date})"
        law = f", {facts.law} law" if facts.law and not facts.law.endswith(" law") else f", {facts.law}"
        if not facts.law or len(text) + len(law) > target:
            law = ""
        # The subject may use half the slack: with it a summary still tells more than without.
        budget = target + SLACK_CHARS // 2 - len(text) - len(law) - 2
        subject = self._subject(facts, budget, text)
        if subject:
            text += f", {subject}"
        return text + law

    def _expert(self, facts: DocumentFacts, document: Document) -> str:
        target = self.target_chars
        kind = self._kind(facts, document)
        if facts.doc_class == "nda" and not re.search(r"(?i)non[- ]?disclosure|\bnda\b", kind):
            kind = f"NDA ({kind})"
        parties = _join_parties(facts.parties, max(40, target + SLACK_CHARS - len(kind) - 2)) or "parties not named"
        fields: dict[str, str] = {}
        # Fill by how well a field tells documents apart; write in the fixed order below.
        for key, value in (("law", facts.law), ("date", facts.date), ("term", facts.term)):
            if value:
                trial = {**fields, key: value}
                if len(self._expert_line(kind, parties, trial)) <= target:
                    fields = trial
        budget = target + SLACK_CHARS // 2 - len(self._expert_line(kind, parties, fields)) - 2
        subject = self._subject(facts, budget, kind + parties)
        if subject:
            fields["subject"] = subject
        return self._expert_line(kind, parties, fields)

    @staticmethod
    def _subject(facts: DocumentFacts, budget: int, written: str) -> str | None:
        if budget < 20:
            return None
        return _find_subject(facts.head, budget) or _find_topic(facts.head, written, budget)

    @staticmethod
    def _expert_line(kind: str, parties: str, fields: Mapping[str, str]) -> str:
        parts = [f"{kind}: {parties}"]
        if "date" in fields:
            parts.append(fields["date"])
        if "subject" in fields:
            parts.append(fields["subject"])
        if "law" in fields:
            parts.append(f"law: {fields['law']}")
        if "term" in fields:
            parts.append(f"term: {fields['term']}")
        return "; ".join(parts)


# --------------------------------------------------------------------------------------------------
# OpenAI-compatible summarizer
# --------------------------------------------------------------------------------------------------

API_KEY_ENV = "OPENAI_API_KEY"
LOCAL_API_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM, llama.cpp) accept any key
LLM_STRATEGIES = {"generic": "generic-llm", "expert": "expert-llm"}

# Approximate list prices in USD per 1M tokens (input, output); check the provider's page before relying on them.
PRICES_USD_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}

_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "`": "`"}
_PREAMBLE_LINE_RE = re.compile(
    r"(?i)^(?:sure|certainly|of course|okay|ok|absolutely|here(?:'s|’s| is| are)|below is|the following is)\b"
)
_HERE_IS_RE = re.compile(
    r"(?i)^(?:(?:sure|certainly|of course|okay|ok|absolutely)[!.,]?\s*)?"
    r"(?:here(?:'s|’s| is| are)|below is)\b[^:\n]{0,100}:\s*"
)
_POLITE_RE = re.compile(r"(?i)^(?:sure|certainly|of course|okay|absolutely)[!.,]\s+")
_LABEL_RE = re.compile(
    r"(?i)^(?:[*_#>\s]*)(?:(?:document|final|short|concise|generic|expert|the)\s+)*summary"
    r"(?:\s*\([^)]*\))?\s*[*_]*\s*[:\-–—]\s*[*_]*\s*"
)


def clean_reply(text: str) -> str:
    """The summary in an LLM reply: no preamble, label, markdown, surrounding quotes or line breaks."""
    text = re.sub(r"(?s)<think>.*?</think>", "", text or "").strip()  # reasoning models served locally
    text = re.sub(r"^```[\w-]*\s*|\s*```$", "", text).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # "Sure! Here is a summary:" on a line of its own.
    while (
        len(lines) > 1
        and _PREAMBLE_LINE_RE.match(lines[0])
        and (lines[0].endswith((":", "!", ".")) or len(lines[0]) < 80)
    ):
        lines.pop(0)
    text = " ".join(lines)
    for _ in range(3):
        before = text
        text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
        text = _HERE_IS_RE.sub("", text)
        text = _POLITE_RE.sub("", text)
        text = _LABEL_RE.sub("", text)
        text = re.sub(r"^[#>*\-\s]+(?=\w)", "", text).strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] == _QUOTES[text[0]]:
            text = text[1:-1].strip()
        if text == before:
            break
    return re.sub(r"\s+", " ", text).strip()


def fit_document(text: str, context_chars: int) -> str:
    """``text`` if it fits ``context_chars``; else its head and tail with a visible marker between them.

    The head holds the title and parties, the tail often the governing law and signatures.
    """
    if len(text) <= context_chars:
        return text
    head = context_chars * 3 // 4
    tail = context_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail:]}"


def estimate_cost_usd(tokens: Mapping[str, int], model: str) -> float | None:
    """Approximate cost of ``tokens`` (from ``estimate_tokens``) at list prices; None for an unknown model."""
    name = model.lower().rsplit("/", 1)[-1]
    # "gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini": the longest known prefix wins.
    known = [m for m in PRICES_USD_PER_1M if name == m or name.startswith(m + "-")]
    if not known:
        return None
    price_in, price_out = PRICES_USD_PER_1M[max(known, key=len)]
    return (tokens.get("input_tokens", 0) * price_in + tokens.get("output_tokens", 0) * price_out) / 1_000_000


class _FatalSummarizerError(SummarizerError):
    """A failure every other document would hit too (key rejected, server unreachable, unknown model)."""


def _is_reasoning_model(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]
    return name.startswith(("o1", "o3", "o4", "gpt-5"))  # these accept only the default temperature


LOCAL_TIMEOUT_S = 900.0  # a local server answers one request at a time: a request may queue behind others
CHARS_PER_TOKEN_FLOOR = 2.5  # few replies pack fewer characters into a token (names, numbers, punctuation)


def is_local_url(base_url: str | None) -> bool:
    """True for a server on this machine or a private network (Ollama, vLLM, llama.cpp next to the app)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def max_output_tokens(limit_chars: int) -> int:
    """Tokens enough for any reply of ``limit_chars`` characters: a longer reply is refused anyway."""
    return math.ceil(limit_chars / CHARS_PER_TOKEN_FLOOR) + 8


class OpenAISummarizer:
    """Summaries from any OpenAI-compatible chat-completions server (OpenAI, Azure, Ollama, vLLM, llama.cpp).

    Length control follows the paper: a reply up to ``target_chars + 20`` is accepted; a longer one is
    asked for again with a target 20 characters smaller; after ``max_attempts`` the shortest reply is
    cut at a word boundary and marked ``cut``. Asking again is a follow-up in the same conversation
    (``shorten_prompt``: "that summary has N characters; rewrite it in at most M"): small models tend
    to repeat a fresh answer word for word whatever the number in the prompt, but shorten their own
    text when shown it. A rewrite that repeats an earlier reply ends the attempts. A reply is capped
    at ``max_output_tokens`` of the current limit: one the cap cut short counts as too long. Rate limits, 5xx answers, timeouts and
    dropped connections are retried ``max_retries`` times with exponential backoff from ``backoff_s``
    (a ``Retry-After`` header wins).

    The request is a system message plus one user message that holds the document first and the
    instructions after it, so regenerations and the other strategy share the document's prefix.
    ``timeout_s`` defaults to 120 s, or ``LOCAL_TIMEOUT_S`` for a server on this machine or a private
    network, which serves one request at a time. ``stats`` records per document hash the attempts,
    seconds and token usage of the summaries this instance made.
    """

    def __init__(
        self,
        strategy: str,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str | None = None,
        system_prompt: str | None = SYSTEM_PROMPT,
        shorten_prompt: str = SHORTEN_PROMPT,
        target_chars: int = 150,
        max_attempts: int = 3,
        context_chars: int = 24000,
        timeout_s: float | None = None,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        temperature: float | None = 0.0,
    ) -> None:
        if not strategy.strip():
            raise ConfigError("Expected a strategy name such as 'generic-llm', got an empty string")
        if not model.strip():
            raise ConfigError("Expected a model name such as 'gpt-4o-mini', got an empty string")
        if target_chars < MIN_TARGET_CHARS:
            raise ConfigError(f"Expected target_chars >= {MIN_TARGET_CHARS}, got {target_chars}")
        if max_attempts < 1 or max_retries < 0:
            raise ConfigError(f"Expected max_attempts >= 1 and max_retries >= 0, got {max_attempts} and {max_retries}")
        if context_chars < 1000:
            raise ConfigError(f"Expected context_chars >= 1000, got {context_chars}")
        if timeout_s is None:
            timeout_s = LOCAL_TIMEOUT_S if is_local_url(base_url) else 120.0
        if timeout_s <= 0 or backoff_s < 0:
            raise ConfigError(f"Expected timeout_s > 0 and backoff_s >= 0, got {timeout_s} and {backoff_s}")
        self.strategy = strategy
        self.name = f"openai-{strategy}"
        self.model = model
        self.target_chars = target_chars
        self.prompt = prompt if prompt is not None else default_prompt(strategy)
        self.system_prompt = system_prompt or None
        self.shorten_prompt = shorten_prompt
        render_prompt(self.prompt, target_chars, "")  # a broken template fails here, not per document
        try:
            shorten_prompt.format(chars=1, max_chars=1, max_words=1)
        except (KeyError, IndexError, ValueError) as err:
            raise ConfigError(
                "Expected a shortening request with only {chars}, {max_chars} and {max_words} placeholders, "
                f"got an error ({type(err).__name__}: {err})"
            ) from None
        self.prompt_hash = prompt_hash(self.prompt, self.system_prompt, self.shorten_prompt)
        self.max_attempts = max_attempts
        self.context_chars = context_chars
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.temperature = temperature
        self.stats: dict[str, dict[str, Any]] = {}
        self._stats_lock = threading.Lock()

        key = api_key or os.environ.get(API_KEY_ENV) or None
        if key is None:
            if base_url is None:
                raise MissingCredentialsError(
                    f"Model {model!r} on api.openai.com needs an API key: set the {API_KEY_ENV} environment "
                    "variable (or enter a key in the settings), or give the base URL of an OpenAI-compatible "
                    "server such as Ollama, vLLM or llama.cpp."
                )
            key = LOCAL_API_KEY
        self._secret = key
        try:
            import openai
        except ImportError:
            raise ConfigError("The OpenAI summarizer needs the openai package: pip install openai") from None
        self._openai = openai
        # Retries are ours (see _complete): the client's own would hide the backoff from tests and settings.
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        self.base_url = str(self._client.base_url).rstrip("/")

    def __repr__(self) -> str:
        return (
            f"OpenAISummarizer(strategy={self.strategy!r}, model={self.model!r}, base_url={self.base_url!r}, "
            f"target_chars={self.target_chars})"
        )

    def summarize(self, document: Document) -> Summary:
        started = time.perf_counter()
        limit = self.target_chars + SLACK_CHARS
        body = fit_document(document.text, self.context_chars)
        target = self.target_chars
        shortest: str | None = None
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        replies: list[int] = []
        seen: set[str] = set()
        summary: Summary | None = None
        messages = self.messages(body, target)
        for _ in range(self.max_attempts):
            reply, finished, used = self._complete(messages, document, target)
            for name in usage:
                usage[name] += used.get(name, 0)
            text = clean_reply(reply)
            replies.append(len(text))
            # A reply the token cap cut short is unfinished: never accept it as it stands.
            if text and len(text) <= limit and finished != "length":
                summary = self._summary(document, text, cut=False)
                break
            if text and (shortest is None or len(text) < len(shortest)):
                shortest = text
            if text in seen:
                break  # the model repeats itself: asking once more would bring the same reply
            seen.add(text)
            target = max(MIN_TARGET_CHARS, target - SLACK_CHARS)
            if text:
                messages = [*messages, {"role": "assistant", "content": reply}, self._shorten(text, target)]
            else:
                messages = self.messages(body, target)
        if summary is None:
            if shortest is None:
                raise SummarizerError(
                    f"{self.base_url} returned an empty summary for {document.doc_id!r} "
                    f"({self.max_attempts} attempts with model {self.model!r})"
                )
            summary = self._summary(document, cut_at_word(shortest, limit), cut=True)
        with self._stats_lock:
            self.stats[document.content_hash] = {
                "attempts": len(replies), "seconds": round(time.perf_counter() - started, 2),
                "reply_chars": replies, **usage,
            }
        return summary

    def messages(self, body: str, target: int) -> list[dict[str, str]]:
        """The chat messages asking for a summary of ``body`` in at most ``target`` characters."""
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*messages, {"role": "user", "content": render_prompt(self.prompt, target, body)}]

    def _shorten(self, text: str, target: int) -> dict[str, str]:
        content = self.shorten_prompt.format(chars=len(text), max_chars=target, max_words=words_for(target))
        return {"role": "user", "content": content}

    def estimate_tokens(self, documents: Iterable[Document]) -> dict[str, int]:
        """Rough token counts (4 characters a token) for summarizing ``documents`` once each.

        ``output_tokens`` assumes one reply of ``target_chars + 20`` characters per document;
        ``max_output_tokens`` is the bound if every document took all attempts at the token cap.
        Regenerations repeat the prompt (a server with prompt caching bills most of it cached) and
        the hidden reasoning tokens of reasoning models come on top.
        """
        count = 0
        prompt_chars = 0
        for document in documents:
            count += 1
            body = fit_document(document.text, self.context_chars)
            prompt_chars += sum(len(m["content"]) for m in self.messages(body, self.target_chars))
        limit = self.target_chars + SLACK_CHARS
        return {
            "documents": count,
            "requests": count,
            "input_tokens": math.ceil(prompt_chars / 4),
            "output_tokens": math.ceil(count * limit / 4),
            "max_output_tokens": count * self.max_attempts * max_output_tokens(limit),
        }

    def _summary(self, document: Document, text: str, *, cut: bool) -> Summary:
        return Summary(
            doc_id=document.doc_id,
            strategy=self.strategy,
            text=text,
            doc_hash=document.content_hash,
            model=self.model,
            prompt_hash=self.prompt_hash,
            target_chars=self.target_chars,
            cut=cut,
            created=_now(),
        )

    def _complete(
        self, messages: list[dict[str, str]], document: Document, target: int
    ) -> tuple[str, str | None, dict[str, int]]:
        """The reply's text, finish reason and token usage."""
        openai = self._openai
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if not _is_reasoning_model(self.model):
            # Reasoning models spend hidden tokens from the same budget: a cap would starve them.
            kwargs["max_tokens"] = max_output_tokens(target + SLACK_CHARS)
            if self.temperature is not None:
                kwargs["temperature"] = self.temperature
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.chat.completions.create(**kwargs)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
                raise _FatalSummarizerError(
                    f"The API key was rejected by {self.base_url} (HTTP {err.status_code}). Check {API_KEY_ENV} "
                    "or the key entered in the settings."
                ) from None
            except openai.APIStatusError as err:
                retryable = err.status_code in (408, 409, 429) or err.status_code >= 500
                if err.status_code == 429 and getattr(err, "code", None) == "insufficient_quota":
                    retryable = False
                if not retryable or attempt == self.max_retries:
                    raise self._status_error(err, document, attempt + 1) from None
                time.sleep(self._delay(attempt, err.response.headers))
            except openai.APITimeoutError:
                if attempt == self.max_retries:
                    raise SummarizerError(
                        f"{self.base_url} did not answer within {self.timeout_s:g} s for {document.doc_id!r} "
                        f"({attempt + 1} attempts). A busy local server may need a longer timeout."
                    ) from None
                time.sleep(self._delay(attempt, None))
            except openai.APIConnectionError as err:
                if attempt == self.max_retries:
                    cause = self._scrub(str(err.__cause__ or err))
                    raise _FatalSummarizerError(
                        f"Cannot reach {self.base_url} ({cause}) while summarizing {document.doc_id!r}. "
                        "Check the base URL and that the server is running."
                    ) from None
                time.sleep(self._delay(attempt, None))
            except openai.OpenAIError as err:
                raise SummarizerError(
                    f"Summarizing {document.doc_id!r} with {self.model!r} at {self.base_url} failed: "
                    f"{self._scrub(str(err))}"
                ) from None
            else:
                choices = getattr(response, "choices", None) or []
                content = choices[0].message.content if choices else None
                finished = getattr(choices[0], "finish_reason", None) if choices else None
                used = getattr(response, "usage", None)
                usage = {
                    name: int(getattr(used, name, 0) or 0) for name in ("prompt_tokens", "completion_tokens")
                }
                return content or "", finished, usage
        raise AssertionError("unreachable: the loop returns or raises")

    def _status_error(self, err: Any, document: Document, attempts: int) -> SummarizerError:
        message = self._scrub(str(getattr(err, "message", "") or err))
        text = f"{self.base_url} answered HTTP {err.status_code} for {document.doc_id!r}: {message}"
        if err.status_code == 404:
            return _FatalSummarizerError(f"{text}. Check the model name {self.model!r} and the base URL.")
        if err.status_code == 429:
            return SummarizerError(f"{text} (rate limited, {attempts} attempts)")
        return SummarizerError(text if attempts == 1 else f"{text} ({attempts} attempts)")

    def _delay(self, attempt: int, headers: Mapping[str, str] | None) -> float:
        if headers is not None:
            for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
                value = headers.get(name)
                try:
                    if value is not None:
                        return min(60.0, max(0.0, float(value) * scale))
                except ValueError:
                    continue
        # Jitter keeps concurrent workers from retrying in lockstep.
        return float(self.backoff_s * (2**attempt) * random.uniform(0.75, 1.0))

    def _scrub(self, text: str) -> str:
        secret = self._secret
        return text.replace(secret, "***") if secret and len(secret) >= 4 else text


# --------------------------------------------------------------------------------------------------
# Storage: generated cache, hand-edited versions, shipped summary sets
# --------------------------------------------------------------------------------------------------

_HASH_RE = re.compile(r"^[0-9a-f]{8,64}$")
_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _root_lock(root: Path) -> threading.Lock:
    """One lock per store folder, shared by every SummaryStore on it in this process (Streamlit sessions)."""
    key = str(root.resolve())
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


def _write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temporary file in the same folder, then rename: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, ensure_ascii=False, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _summary_to_dict(summary: Summary) -> dict[str, Any]:
    return dataclasses.asdict(summary)


def _summary_from_dict(data: Mapping[str, Any]) -> Summary:
    names = {f.name for f in dataclasses.fields(Summary)}
    return Summary(**{k: v for k, v in data.items() if k in names})


def _check_hash(doc_hash: str) -> str:
    if not isinstance(doc_hash, str) or not _HASH_RE.match(doc_hash):
        raise CorpusError(f"Expected a document hash of 8-64 hex digits, got {doc_hash!r}")
    return doc_hash


def _strategy_slug(strategy: str) -> str:
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", strategy).strip("._")[:40] or "strategy"
    return f"{readable}-{text_hash(strategy)[:8]}"  # the hash keeps "a b" and "a_b" apart


class SummaryStore:
    """Summaries on disk, one JSON file per (document content, strategy) holding all its versions.

    Generated summaries double as the cache (keyed by document hash, strategy, prompt hash, model and
    target length); hand edits are further versions; the highest version is the current one.
    Layout: ``<root>/<doc_hash>/<strategy>-<hash>.json``.
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._lock = _root_lock(self.root)

    def __repr__(self) -> str:
        return f"SummaryStore({str(self.root)!r})"

    def get_cached(self, document: Document, summarizer: Summarizer) -> Summary | None:
        """The stored summary ``summarizer`` would make for ``document`` now, if any (newest first)."""
        for summary in reversed(self._versions(document.content_hash, summarizer.strategy)):
            if (
                summary.model != "human"
                and summary.model == summarizer.model
                and summary.prompt_hash == summarizer.prompt_hash
                and summary.target_chars == summarizer.target_chars
            ):
                return dataclasses.replace(summary, doc_id=document.doc_id)
        return None

    def put(self, summary: Summary, prompt_hash: str | None = None) -> Summary:
        """Store a generated summary as the newest version; storing the same text again adds nothing.

        ``prompt_hash``, when given, replaces ``summary.prompt_hash`` (the cache key).
        """
        if prompt_hash is not None and prompt_hash != summary.prompt_hash:
            summary = dataclasses.replace(summary, prompt_hash=prompt_hash)
        with self._lock:
            versions = self._versions(summary.doc_hash, summary.strategy)
            for old in versions:
                if (old.model, old.prompt_hash, old.target_chars, old.text) == (
                    summary.model, summary.prompt_hash, summary.target_chars, summary.text
                ):
                    return old
            stored = dataclasses.replace(summary, version=max((v.version for v in versions), default=0) + 1)
            self._write(summary.doc_hash, summary.strategy, [*versions, stored])
            return stored

    def save_edit(self, document: Document, strategy: str, text: str) -> Summary:
        """Store a hand-edited summary as a new version (model ``"human"``); older versions stay."""
        text = re.sub(r"\s+", " ", text).strip()
        if not text:
            raise ConfigError(f"Expected a non-empty summary for {document.doc_id!r}")
        with self._lock:
            versions = self._versions(document.content_hash, strategy)
            base = versions[-1] if versions else None
            edit = Summary(
                doc_id=document.doc_id,
                strategy=strategy,
                text=text,
                doc_hash=document.content_hash,
                model="human",
                prompt_hash="human",
                target_chars=base.target_chars if base else len(text),
                cut=False,
                created=_now(),
                version=max((v.version for v in versions), default=0) + 1,
            )
            self._write(document.content_hash, strategy, [*versions, edit])
            return edit

    def history(self, doc_hash: str, strategy: str) -> list[Summary]:
        """Every stored version for this document content and strategy, oldest first."""
        return self._versions(doc_hash, strategy)

    def current(self, document: Document, strategy: str) -> Summary | None:
        """The highest version for ``document``'s content and ``strategy`` (a later edit beats a generated one)."""
        versions = self._versions(document.content_hash, strategy)
        return dataclasses.replace(versions[-1], doc_id=document.doc_id) if versions else None

    def import_set(self, summary_set: SummarySet) -> int:
        """Put a shipped summary set into the store; returns how many summaries were new."""
        added = 0
        for summary in summary_set.summaries.values():
            before = len(self._versions(summary.doc_hash, summary.strategy))
            self.put(summary)
            added += len(self._versions(summary.doc_hash, summary.strategy)) > before
        return added

    def _path(self, doc_hash: str, strategy: str) -> Path:
        return self.root / _check_hash(doc_hash) / f"{_strategy_slug(strategy)}.json"

    def _versions(self, doc_hash: str, strategy: str) -> list[Summary]:
        path = self._path(doc_hash, strategy)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as err:
            raise SummarizerError(
                f"Cannot read stored summaries {path}: {err}. Move the file aside to start over."
            ) from None
        versions = [_summary_from_dict(item) for item in data.get("versions", [])]
        return sorted(versions, key=lambda s: s.version)

    def _write(self, doc_hash: str, strategy: str, versions: list[Summary]) -> None:
        data = {"doc_hash": doc_hash, "strategy": strategy, "versions": [_summary_to_dict(v) for v in versions]}
        _write_json_atomic(self._path(doc_hash, strategy), data)


@dataclass(frozen=True)
class SummarySet:
    """Summaries of one strategy made by one model and prompt, shipped as a file (e.g. with the demo data)."""

    strategy: str
    model: str
    prompt_hash: str
    target_chars: int
    created: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    summaries: Mapping[str, Summary] = field(default_factory=dict)  # by document hash


SUMMARY_SET_FORMAT = "sac-summary-set/1"


def save_summary_set(
    path: Path,
    summaries: Sequence[Summary],
    *,
    meta: Mapping[str, Any] | None = None,
    details: Mapping[str, Mapping[str, Any]] | None = None,
) -> SummarySet:
    """Write ``summaries`` (one strategy, model, prompt and length) as a summary-set JSON file.

    ``details`` adds fields to the entry of a summary, by document hash (e.g. attempts, seconds).
    """
    if not summaries:
        raise ConfigError("Expected at least one summary to save as a summary set")
    first = summaries[0]
    key = (first.strategy, first.model, first.prompt_hash, first.target_chars)
    for summary in summaries:
        if (summary.strategy, summary.model, summary.prompt_hash, summary.target_chars) != key:
            raise ConfigError(
                "Expected one strategy, model, prompt and length in a summary set, got "
                f"{key} and {(summary.strategy, summary.model, summary.prompt_hash, summary.target_chars)} "
                f"({summary.doc_id!r})"
            )
    created = _now()
    data = {
        "format": SUMMARY_SET_FORMAT,
        "strategy": first.strategy,
        "model": first.model,
        "prompt_hash": first.prompt_hash,
        "target_chars": first.target_chars,
        "created": created,
        "meta": dict(meta or {}),
        "summaries": [
            {
                **dict((details or {}).get(s.doc_hash, {})),
                "doc_id": s.doc_id, "doc_hash": s.doc_hash, "text": s.text, "chars": len(s.text), "cut": s.cut,
            }
            for s in summaries
        ],
    }
    _write_json_atomic(Path(path), data)
    return load_summary_set(Path(path))


def load_summary_set(path: Path) -> SummarySet:
    """Read a summary-set file written by ``save_summary_set``."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        strategy, model = str(data["strategy"]), str(data["model"])
        hash_, target, created = str(data["prompt_hash"]), int(data["target_chars"]), str(data.get("created", ""))
        summaries: dict[str, Summary] = {}
        for item in data["summaries"]:
            doc_hash = _check_hash(str(item["doc_hash"]))
            summaries.setdefault(
                doc_hash,
                Summary(
                    doc_id=str(item["doc_id"]),
                    strategy=strategy,
                    text=str(item["text"]),
                    doc_hash=doc_hash,
                    model=model,
                    prompt_hash=hash_,
                    target_chars=target,
                    cut=bool(item.get("cut", False)),
                    created=created,
                ),
            )
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CorpusError(f"Cannot read summary set {path}: {type(err).__name__}: {err}") from None
    meta = data.get("meta") or {}
    return SummarySet(strategy, model, hash_, target, created, dict(meta), summaries)


# --------------------------------------------------------------------------------------------------
# Summarizing a corpus
# --------------------------------------------------------------------------------------------------


def summarize_corpus(
    documents: Iterable[Document],
    summarizer: Summarizer,
    store: SummaryStore,
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, str], None] | None = None,
    stop: threading.Event | None = None,
    on_summary: Callable[[Summary], None] | None = None,
) -> dict[str, Summary]:
    """Current summaries by ``doc_id``, making the missing ones; each is stored as soon as it is made.

    Cached summaries are not recomputed, so a rerun continues where an interrupted or failed run
    ended. ``progress(done, total, doc_id)`` and ``on_summary(new_summary)`` are called from the
    calling thread. When ``stop`` is set, no new document is started, the ones under way are
    finished and the summaries made so far are returned (the others are absent). On Ctrl-C
    (``KeyboardInterrupt``) no new document is started either and the exception propagates at
    once; every summary finished before or after it is in the store. If documents fail, the others
    are finished first, then a ``SummarizerError`` names the failed ones; a rejected key or an
    unreachable server stops the run at once.
    """
    return summarize_strategies(
        documents, [summarizer], store, concurrency=concurrency, progress=progress, stop=stop,
        on_summary=on_summary,
    )[summarizer.strategy]


def summarize_strategies(
    documents: Iterable[Document],
    summarizers: Sequence[Summarizer],
    store: SummaryStore,
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, str], None] | None = None,
    stop: threading.Event | None = None,
    on_summary: Callable[[Summary], None] | None = None,
) -> dict[str, dict[str, Summary]]:
    """``summarize_corpus`` for several summarizers at once: current summaries by strategy, then ``doc_id``.

    Requests go out document by document (every summarizer for one document, then the next
    document): a server that reuses the previous request's prompt prefix then reads each document
    once. With ``concurrency`` 1 they go out one at a time in that order, which suits a local server
    that answers one request at a time.
    """
    if concurrency < 1:
        raise ConfigError(f"Expected concurrency >= 1, got {concurrency}")
    strategies = [s.strategy for s in summarizers]
    if not summarizers or len(set(strategies)) != len(strategies):
        raise ConfigError(f"Expected one summarizer per strategy, got strategies {strategies}")
    unique: dict[str, Document] = {}
    for document in documents:
        unique.setdefault(document.doc_id, document)
    docs = list(unique.values())
    total = len(docs) * len(summarizers)
    jobs: deque[tuple[Document, Summarizer]] = deque(
        (d, s) for d in docs for s in summarizers if store.get_cached(d, s) is None
    )
    missing = len(jobs)
    done = total - missing
    failures: dict[tuple[str, str], BaseException] = {}
    fatal: list[BaseException] = []
    if progress:
        progress(done, total, "")

    def record(document: Document, summarizer: Summarizer, summary: Summary | None, err: BaseException | None) -> None:
        nonlocal done
        if err is not None:
            failures[(summarizer.strategy, document.doc_id)] = err
            if isinstance(err, _FatalSummarizerError):
                fatal.append(err)
            return
        done += 1
        if on_summary and summary is not None:
            on_summary(summary)
        if progress:
            progress(done, total, document.doc_id)

    def stopped() -> bool:
        return bool(fatal) or (stop is not None and stop.is_set())

    builtin_only = all(s.model == "builtin" for s in summarizers)
    if jobs and (concurrency == 1 or builtin_only):
        # The builtin is fast and CPU-bound: threads would not help. One request at a time keeps the order.
        while jobs and not stopped():
            document, summarizer = jobs.popleft()
            try:
                summary = store.put(summarizer.summarize(document))
            except Exception as err:  # a failed document must not lose the others
                record(document, summarizer, None, err)
                continue
            record(document, summarizer, summary, None)
    elif jobs:
        _run_threads(jobs, store, min(concurrency, len(jobs)), record, stopped)

    if failures:
        labels = [f"{d.doc_id!r}" if len(summarizers) == 1 else f"{d.doc_id!r} ({s.strategy})"
                  for d in docs for s in summarizers if (s.strategy, d.doc_id) in failures]
        first = fatal[0] if fatal else next(iter(failures.values()))
        listed = ", ".join(labels[:10]) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
        if len(summarizers) == 1:
            message = (
                f"{len(labels)} of {total} documents could not be summarized with {summarizers[0].name}: {listed}. "
                f"First error: {first}"
            )
            unit = "documents"
        else:
            names = ", ".join(s.name for s in summarizers)
            message = f"{len(labels)} of {total} summaries ({names}) could not be made: {listed}. First error: {first}"
            unit = "summaries"
        if jobs:
            message += f" ({len(jobs)} {unit} were not started)"
        raise SummarizerError(message + ". Finished summaries are saved; run again to continue.") from first
    out: dict[str, dict[str, Summary]] = {}
    for summarizer in summarizers:
        current = {d.doc_id: c for d in docs if (c := store.current(d, summarizer.strategy)) is not None}
        out[summarizer.strategy] = current
    return out


@dataclass(frozen=True)
class RunEstimate:
    """What summarizing ``documents`` with some summarizers will do, before any request goes out."""

    documents: int
    strategies: tuple[str, ...]
    to_make: int  # summaries not in the store yet
    stored: int
    tokens: dict[str, int]  # ``OpenAISummarizer.estimate_tokens`` summed over the summaries to make
    model: str | None  # the LLM model, when an LLM makes any of them
    cost_usd: float | None  # at list prices; None for an unknown (local) model or no LLM

    def describe(self) -> str:
        """Two lines for a terminal or a page: the work, then the token and cost estimate (LLM runs only)."""
        line = (f"{self.documents} documents, strategies {', '.join(self.strategies)}: {self.to_make} summaries to "
                f"make, {self.stored} already stored")
        if not self.to_make or self.model is None:
            return line
        t = self.tokens
        priced = (f"about ${self.cost_usd:.4f} at {self.model} list prices" if self.cost_usd is not None
                  else f"no price known for {self.model!r} (a local or unlisted model)")
        return (f"{line}\nestimate: {t['requests']} requests, ~{t['input_tokens']:,} input tokens, "
                f"~{t['output_tokens']:,} output tokens (at most {t['max_output_tokens']:,} if every summary takes "
                f"every attempt); {priced}")


def estimate_run(documents: Sequence[Document], summarizers: Sequence[Summarizer], store: SummaryStore) -> RunEstimate:
    """Count the summaries ``summarize_strategies`` would make and estimate their LLM tokens and cost."""
    docs = list({d.doc_id: d for d in documents}.values())
    tokens = {"documents": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0, "max_output_tokens": 0}
    to_make = 0
    model = None
    for summarizer in summarizers:
        todo = [d for d in docs if store.get_cached(d, summarizer) is None]
        to_make += len(todo)
        if isinstance(summarizer, OpenAISummarizer) and todo:
            model = summarizer.model
            for key, value in summarizer.estimate_tokens(todo).items():
                tokens[key] = tokens.get(key, 0) + value
    cost = estimate_cost_usd(tokens, model) if model else None
    return RunEstimate(
        documents=len(docs), strategies=tuple(s.strategy for s in summarizers), to_make=to_make,
        stored=len(docs) * len(summarizers) - to_make, tokens=tokens, model=model, cost_usd=cost,
    )


def _run_threads(
    jobs: deque[tuple[Document, Summarizer]],
    store: SummaryStore,
    workers: int,
    record: Callable[[Document, Summarizer, Summary | None, BaseException | None], None],
    stopped: Callable[[], bool],
) -> None:
    """Run ``jobs`` on ``workers`` daemon threads; ``record`` each result in the calling thread.

    A worker stores its summary itself, so a summary is kept even when the calling thread is gone
    (Ctrl-C). The threads are daemons: an interrupted process exits without waiting for requests
    still under way (a server keeps no state between them).
    """
    lock = threading.Lock()
    halt = threading.Event()
    results: queue.SimpleQueue[tuple[Document, Summarizer, Summary | None, BaseException | None]] = (
        queue.SimpleQueue()
    )
    taken = 0

    def take() -> tuple[Document, Summarizer] | None:
        nonlocal taken
        with lock:
            if halt.is_set() or not jobs:
                return None
            taken += 1
            return jobs.popleft()

    def work() -> None:
        while (job := take()) is not None:
            document, summarizer = job
            try:
                summary = store.put(summarizer.summarize(document))
            except Exception as err:
                if isinstance(err, _FatalSummarizerError):
                    halt.set()  # every other request would fail the same way
                results.put((document, summarizer, None, err))
                continue
            results.put((document, summarizer, summary, None))

    threads = [threading.Thread(target=work, name=f"sac-summarize-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    received = 0
    try:
        while True:
            if stopped():
                halt.set()
            with lock:
                if received >= taken and (halt.is_set() or not jobs):
                    break
            try:
                item = results.get(timeout=0.1)  # a short wait keeps Ctrl-C responsive
            except queue.Empty:
                continue
            received += 1
            record(*item)
    except BaseException:
        halt.set()
        raise


# --------------------------------------------------------------------------------------------------
# Registry
# --------------------------------------------------------------------------------------------------


def _make_builtin(strategy: str, config: SacConfig, prompt: str | None, **options: Any) -> Summarizer:
    # The builtin reads no prompt and no LLM option; they are accepted so that every factory has one signature.
    return BuiltinSummarizer(strategy.removeprefix("builtin-"), target_chars=config.summary_chars)


def _make_openai(strategy: str, config: SacConfig, prompt: str | None, **options: Any) -> Summarizer:
    # "generic"/"expert" become "generic-llm"/"expert-llm": LLM summaries are a method of their own.
    timeout_s = options.pop("timeout_s", None)
    if timeout_s is None:
        timeout_s = config.llm_timeout_s
        if is_local_url(config.llm_base_url):
            timeout_s = max(timeout_s, LOCAL_TIMEOUT_S)  # requests queue at a one-at-a-time local server
    return OpenAISummarizer(
        LLM_STRATEGIES.get(strategy, strategy),
        model=config.llm_model,
        base_url=config.llm_base_url,
        api_key=config.openai_api_key,
        prompt=prompt,
        target_chars=config.summary_chars,
        timeout_s=timeout_s,
        **options,
    )


SUMMARIZERS: dict[str, Callable[..., Summarizer]] = {
    "builtin": _make_builtin,
    "openai": _make_openai,
}


def make_summarizer(
    kind: str, strategy: str, config: SacConfig, prompt: str | None = None, **options: Any
) -> Summarizer:
    """A summarizer by registry name (``"builtin"`` or ``"openai"``) for ``strategy``.

    ``options`` go to the LLM summarizer (``context_chars``, ``timeout_s``, ``max_attempts``, ...); the
    builtin ignores them.
    """
    try:
        factory = SUMMARIZERS[kind]
    except KeyError:
        raise ConfigError(f"Unknown summarizer {kind!r}. Choices are: {sorted(SUMMARIZERS)}") from None
    return factory(strategy, config, prompt, **{k: v for k, v in options.items() if v is not None})
