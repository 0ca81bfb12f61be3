"""What a user sees a document called: its parties, type and year, read from its text, the file name beside it.

A lawyer knows a contract by who signed it, not by "ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT.txt":
``display_name`` gives "Accuray / Siemens · Distributor Agreement · 2010" from the facts the built-in summarizer
reads (``sac.summaries.facts.extract_facts``: regular expressions over the head of the text, no model), and the
file title as a second line. A text that names no party keeps its file title. ``unique_names`` appends the file title
to a name two documents share, so a list never shows two entries alike.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from sac.summaries.facts import extract_facts
from sac.summaries.parties import Party
from sac.types import Document, document_title

MAX_PARTY_CHARS = 32  # a longer party name gives way to the short name the contract defines for it
SHOWN_PARTIES = 2  # more are counted ("+2")

# Legal forms at the end of a name, dropped for display: "Duckwall-Alco Stores, Inc." -> "Duckwall-Alco Stores".
_LEGAL_FORM_RE = re.compile(
    r"(?:,?\s+(?:Inc|Incorporated|Corp|Corporation|Co|Company|Ltd|Limited|LLC|L\.L\.C|LLP|LP|L\.P|PLC|plc|AG|GmbH|"
    r"S\.A|SA|N\.V|NV|B\.V|BV|SE|S\.p\.A|Pty|Pte|FSB|Trust|Holdings?)\.?)+$",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DisplayName:
    """A document's name in lists and tables, and its file title as the second line."""

    name: str  # "Accuray / Siemens · Distributor Agreement · 2010", or the file title when no party is found
    file_title: str  # ``sac.types.document_title`` of its id

    @property
    def label(self) -> str:
        """Both on one line (a select box's option: typing either part finds it)."""
        return self.name if self.name == self.file_title else f"{self.name} — {self.file_title}"


def party_label(party: Party) -> str:
    """A party as a list shows it: its name without legal form or aside, or its defined short name if that is long."""
    name = re.sub(r"\s*\([^)]*\)", "", party.name).strip()  # "Holiday RV Superstores, Inc. (Recreation USA)"
    before_comma = name.split(",")[0].strip()
    stripped = _LEGAL_FORM_RE.sub("", name).strip(" ,")
    # "Simply Herbals, Nervanah Herbal Medicine Company", "Town of Vinton, Virginia": the first part names it.
    if "," in stripped and len(before_comma.split()) >= 2:
        stripped = before_comma
    stripped = stripped or name
    if len(stripped) > MAX_PARTY_CHARS:
        short = next((s for s in party.short_names if 2 <= len(s) <= MAX_PARTY_CHARS and s.lower() in name.lower()), None)
        if short is None:
            short = next((s for s in party.short_names if 2 <= len(s) <= 8 and s.isupper()), None)  # "PJMF"
        stripped = short or " ".join(stripped.split()[:3])
    return stripped


def display_name(document: Document) -> DisplayName:
    """The document's parties, type and year (``module docstring``); its file title where its text names no party."""
    file_title = document_title(document.doc_id)
    facts = extract_facts(document)
    parties = list(dict.fromkeys(p for p in (party_label(p) for p in facts.parties) if p))
    if not parties:
        return DisplayName(file_title, file_title)
    who = " / ".join(parties[:SHOWN_PARTIES])
    if len(parties) > SHOWN_PARTIES:
        who += f" +{len(parties) - SHOWN_PARTIES}"
    year = re.search(r"(?:19|20)\d\d", facts.date or "")
    parts = [who, facts.kind, year.group(0) if year else ""]
    return DisplayName(" · ".join(p for p in parts if p), file_title)


def unique_names(names: Mapping[str, DisplayName]) -> dict[str, DisplayName]:
    """``names`` (document id -> name) with the file title appended to every name two documents share.

    Should the file titles be the same too (one file name in two folders), the document id is appended instead."""
    counts = Counter(n.name for n in names.values())
    out = {doc_id: (DisplayName(f"{n.name} ({n.file_title})", n.file_title)
                    if counts[n.name] > 1 and n.name != n.file_title else n) for doc_id, n in names.items()}
    counts = Counter(n.name for n in out.values())
    return {doc_id: (DisplayName(f"{n.name} [{doc_id}]", n.file_title) if counts[n.name] > 1 else n)
            for doc_id, n in out.items()}
