"""Party names for the built-in summarizer: who a contract is between, read from its own text.

Regular expressions over the clause that introduces the parties (and, when that clause names fewer than two,
the cover lines before it). Every rule is general: none names a particular contract or party.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sac.summaries.casing import SMALL_WORDS, squash, title_case

# --------------------------------------------------------------------------------------------------
# Name patterns

SUFFIX = (
    r"(?:Limited Liability Company|LIMITED LIABILITY COMPANY|Limited Partnership|LIMITED PARTNERSHIP|"
    r"Inc|INC|inc|Incorporated|INCORPORATED|LLC|L\.L\.C|Ltd|LTD|Limited|LIMITED|Corp|CORP|Corporation|CORPORATION|"
    r"Company|COMPANY|Co|CO|plc|PLC|AG|GmbH|S\.A|SA|S/A|N\.V|NV|B\.V|BV|LP|L\.P|LLP|L\.L\.P|LLLP|PLLC|P\.C|AB|FSB|"
    r"N\.\s?A|S\.p\.A|SpA|Ltda|LTDA|S\.r\.l|S\.R\.L|SRL|S\.A\.S|S\.[àa]\.? r\.l|S\.A\.R\.L|SARL|Pte|PTE|Pty|PTY|K\.K|A/S|ApS|Oy|Oyj|"
    r"SE|G\.I\.E|GIE|a\.s|Sdn\.? Bhd|Bhd|Berhad|Tbk|Trust|TRUST|Bank|BANK|Authority|AUTHORITY|Partnership|PARTNERSHIP|"
    r"Association|ASSOCIATION|University|UNIVERSITY|Foundation|FOUNDATION)"
)
_UP = "A-ZÀ-ÖØ-Þ"  # upper-case letters, accented ones included
_AL = "A-Za-zÀ-ÖØ-öø-ÿ"
# A capitalised word; "/" and "_" occur inside names ("Alpha/Beta Corp.", "ALPHA_B AG").
_WORD = rf"[{_UP}][{_AL}0-9&'’./_-]*"
# A name may start with a number ("1234567 Ontario Limited") or a lower-case brand ("eBay", "acme.com").
NAME_FIRST = (rf"(?:(?!(?:AND|And)\b){_WORD}|(?!(?:19|20)\d\d\b)\d{{4,}}(?=\s+[{_UP}])|[a-z]{{1,2}}[{_UP}][{_AL}0-9.-]*|"
              r"[a-z][a-z0-9-]*\.com)")
NAME_WORD = rf"(?:(?!(?:AND|And|BETWEEN|Between)\b){_WORD}|\d+|\([{_UP}][{_AL}]{{1,12}}\)|&|of|OF|de|du|la|e|y)"
# "and" joins two parties ("Alpha Inc. and Beta Ltd."); inside a name it comes right before the last word
# ("Example Research and Engineering Company"), and never after a comma or a number (an address).
_AND_WORD = rf"(?<![\d,;])\s+(?:and|AND)\s+{_WORD}"
# "Acme Widgets Company, LLC", "ALPHA LIMITED", "Example Trading (Pty) Ltd.", "eExample Inc.", "acme.com, inc."
_ORG_RE = re.compile(
    rf"(?<![\w&/])({NAME_FIRST}(?:[ ,]+{NAME_WORD}){{0,8}}?(?:{_AND_WORD})?(?:,?\s+{SUFFIX}\.?){{1,2}}"
    r"(?:\s+(?:19|20)\d\d-[A-Z0-9]{1,3})?)"  # a series: "Example Owner Trust 2020-A"
    rf"(?![\w-])(?!\s*(?:Name|name|:))"
)
_DESCRIBED_RE = re.compile(  # "Acme Projects, a Dutch corporation", "Dr. Jane Q. Doe, an individual"
    rf"(?<![\w&])((?:Dr\.|Mr\.|Ms\.|Mrs\.)?\s*{_WORD}(?:\s+(?:{_WORD}|&|of|OF)){{0,6}}"
    r"(?:,\s+[A-Z][A-Za-z]+)?),?\s+"
    r"(?:an?|the)\s+(?:[A-Z][\w.-]*\s+){0,4}(?i:corporation|company|limited liability company|partnership|"
    r"individual|municipal corporation|state-owned|public body|non-profit|nonprofit|not-for-profit|bank|trust|"
    r"statutory trust|business trust|university|institution|division|city|county|municipality|agency)\b"
)
# A name followed by its defined term: "Example Public Service Authority ("Example")".
_DEFINED = r"(?:\(|,?\s*(?:hereinafter|herein)\b)"
_ALIASED_RE = re.compile(
    rf"(?<![\w&])((?:Dr\.|Mr\.|Ms\.|Mrs\.)?\s*{_WORD}(?:\s+(?:{_WORD}|&|of)){{1,6}}),?\s*"
    rf"{_DEFINED}\s*(?:the\s+|(?:referred\s+to\s+|called\s+)(?:as\s+)?(?:the\s+)?|hereinafter\s+(?:referred\s+to\s+as\s+"
    r"|called\s+)?(?:the\s+)?|collectively,?\s+)?[\"“'‘]{1,2}[A-Z]"
)
_LOCATED_RE = re.compile(  # "The University of Example, located at ...", "Example Center, with a place of business",
    # "EXAMPLE TOWN COUNCIL whose registered office is at", "EXAMPLE MUNICIPALITY, as represented by", "EXA, located at"
    rf"(?<![\w&])((?:The\s+)?{_WORD}(?:\s+(?:{_WORD}|of|for|&)){{1,8}}|[{_UP}]{{2,6}}),?\s+"
    r"(?:with\s+(?:a|its)\s+(?:principal\s+)?(?:place\s+of\s+business|offices?)|located\s+at|"
    r"having\s+(?:its|a)\s+(?:principal|registered)\s+(?:office|place)|"
    r"whose\s+(?:registered\s+|principal\s+)?(?:office|place\s+of\s+business|address)|as\s+represented\s+by)"
)
_PERSON_RE = re.compile(  # "(2) JANE DOE of", "between Dr. Jane Q. Doe (the"
    r"(?:\(\d\)|\bbetween:?|\bBETWEEN:?|\band:?|\bAND:?)\s+((?:Dr\.|Mr\.|Ms\.|Mrs\.)\s+)?"
    r"([A-Z][a-zA-Z'’-]+(?:\s+[A-Z]\.)?(?:\s+[A-Z][a-zA-Z'’-]+){1,2})(?:\s*[(,]|\s+of\b)"
)
# A web address that names a party: "between Example.com and ...", "and example.net."
_DOMAIN_RE = re.compile(r"(?:\bbetween|\band|\bAND|\bBETWEEN)\s+([A-Za-z][\w-]*\.(?:com|net|org|io))(?![\w.]\w)")
_SINGLE_RE = re.compile(rf"(?:\bbetween|\band|\bamong)\s+({_WORD}),?\s*\((?:the\s+)?[\"“]")  # "and Example, ("Supplier")"
# A label before a party: "Party A: ...", "Licensor: ...".
_ROLE_LABELS = ("Licensor", "Licensee", "Seller", "Buyer", "Supplier", "Customer", "Client")
_LABELS = (r"(?:Party\s+[A-Z]|PARTY\s+[A-Z]|"
           + "|".join(f"{w}|{w.upper()}" for w in (*_ROLE_LABELS, "Company")) + ")")
# The name ends where the next label starts: "Licensor: EXAMPLE MEDIA Licensee BETA CORPORATION".
_LABELLED_RE = re.compile(rf"\b{_LABELS}\s*[:：]\s*({_WORD}(?:\s+(?!{_LABELS}\b){NAME_WORD}){{0,7}})")
_TRADING_AS_RE = re.compile(  # "Example (Pty) Ltd. (trading as Example)", "Example, Inc., d/b/a Example USA"
    r",?\s*\(?(?:trading as|t/a|d/b/a|dba|doing business as)\s+([A-Z][\w&'’.-]*(?:\s+[A-Z][\w&'’.-]*){0,3})\)?"
)
# A name after these words is a descriptor, a former name or a parent, not a party; after a building number
# ("Building No.6, Example University Science Park") it is part of an address; after a clause number ("1.2 Grant of
# Authority.") it is a heading.
_NOT_A_PARTY_BEFORE_RE = re.compile(
    r"(?:\b(?:an?|as|known as|d/b/a|f/k/a|dba|trading as|subsidiary of|affiliate of|parent|of the|under the laws of|"
    r"laws of|located in|located at|office at|address at|attention:?|attn:?|c/o|copy to|institution of|member of|"
    r"division of|part of|on behalf of|listed on(?: the)?(?: \w+)?|traded on(?: the)?)|[\"“'‘(]|"
    r"\bno\.?\s?\d+[\w/-]*,|(?<![\w.])\d{1,2}\.\d{1,2}\.?)\s*$",
    re.IGNORECASE,
)
PARTIES_START_RE = re.compile(
    r"\b(?:by and between|by and among|between|among|Between|Among|BETWEEN|AMONG|PARTIES|Parties:|in favou?r of|made by|"
    r"The undersigned)\b"
)
# In a long front matter (a table of contents) the opening clause can lie far beyond the head.
_LATE_START_RE = re.compile(
    r"\b(?:by and between|by and among|(?:made|entered into)[^.]{0,80}?\b(?:between|among))\b|"
    r"\b(?:BETWEEN|Between):?\s+(?=[A-Z]{2})"  # a "BETWEEN" heading over the parties' names in capitals
)
_PARTIES_END_RE = re.compile(
    r"\b(?:WHEREAS|Whereas|RECITALS?|Recitals|BACKGROUND|Background|W\s?I\s?T\s?N\s?E\s?S\s?S\s?E\s?T\s?H|"
    r"NOW,? THEREFORE|IT IS (?:HEREBY )?AGREED|The parties agree|Purpose\.|Definitions)"
)
# A term defined right after a name: ("Short"), (the "Short"), hereinafter called "Short".
_DEFINITION_RE = re.compile(
    r"[^()\"“”]{0,200}?(?:\(\s*(?:(?:hereinafter|herein)\b)?|\b(?:hereinafter|herein)\b)\s*"
    r"(?:(?:referred\s+to|called|individually|collectively)\b"
    r"[^\"“”()]{0,30})?(?:as\s+)?(?:the\s+)?((?:[\"“][^\"“”]{1,40}[\"”][,\s]*(?:or|and)?\s*(?:the\s+)?){1,3})"
)
QUOTED_RE = re.compile(r"[\"“]([^\"“”]{1,40})[\"”]")
_SOURCE_RE = re.compile(r"Source:\s*([^\n]{2,80}?),\s*[^,\n]{1,25},\s*\d{1,2}/\d{1,2}/\d{4}")

# --------------------------------------------------------------------------------------------------
# What is not a name

PLACES = frozenset({
    "united kingdom", "united states", "united states of america", "canada", "england", "england and wales",
    "israel", "japan", "germany", "france", "netherlands", "new york", "delaware", "california", "texas",
    "florida", "virginia", "nevada", "south carolina", "north carolina", "british columbia", "ontario",
    "quebec", "massachusetts", "new jersey", "pennsylvania", "illinois", "georgia", "ohio", "colorado", "china",
    "hong kong", "singapore", "washington", "minnesota", "michigan", "switzerland",
})
# Roles and pronouns that stand for a party ("the Licensor", "we"); a term defined as one marks a party.
PARTY_ROLES = frozenset("""
company companies corporation party parties recipient receiving disclosing customer customers supplier suppliers
licensee licensees licensor licensors lessor lessee seller sellers buyer buyers purchaser purchasers agent agents
merchant sponsor sponsors club employer employee executive grantor grantee client clients contractor subcontractor
consultant consultants distributor distributors reseller resellers transporter shipper manufacturer developer
franchisor franchisee owner owners operator landlord tenant lender lenders borrower borrowers investor investors
endorser talent adviser advisor trust trustee trustees fund bank servicer issuer carrier provider producer publisher
promoter marketer affiliate affiliates member members partner partners representative representatives vendor principal
holder guarantor institution university venture manager administrator undersigned individual we us our you your they
it its lead master sub service services marketing co host entity entities holding joint sublicensee subadviser
discloser association partnership licensing servicing prime exclusive authorized independent strategic original
general limited managing them i me prospective potential acquirer acquiror acquiree
""".split())
# Roles, pronouns and defined terms: a name made only of these (and small words) names no one.
ROLE_WORDS = PARTY_ROLES | frozenset("""
agreement effective date execution confidential information business commission securities exchange act state
schedule exhibit section article this each all any whereas name address inc together
""".split())
_TYPE_NOUNS = frozenset("agreement contract amendment addendum memorandum indenture deed".split())
_ADDRESS_RE = re.compile(
    r"(?i:\b(?:Street|St\.|Avenue|Ave\.?|Road|Rd\.|Drive|Boulevard|Blvd\.?|Lane|Suite|Ste\.?|Floor|Parkway|Pkwy|"
    r"Highway|Hwy|P\.?\s?O\.?\s+Box|Box\s+\d+|Mailcode|Building\s+No)(?![\w])|\bWay(?=,))|"
    r"\b\d{5}(?:-\d{4})?\b|,\s+[A-Z][a-z]+,\s+[A-Z]{2}\.?$|"
    r",\s+(?!AG|SA|AB|BV|LP|SE|KK|NA|PC|Oy)[A-Z]{2}$|"  # "Example City, ST": a US state code after a comma
    r"^[^,&]+,\s*Co\.?$"  # "Example City, Co": a county or a state, not a company ("Example & Co.")
)
_PLACEHOLDER_RE = re.compile(r"_{2,}|[\[\]●•<>]|\b(?:Name|Title|By|Its|Date)\s*:|([^\W\d_])\1{4,}", re.IGNORECASE)
_SIGNATURE_RE = re.compile(  # signature blocks and headings run into a name
    r"\b(?:Authorized Signatory|Signatory|Attorney-in-fact|Officer|Witness|Initials|Exhibit|Schedule|Section|Article|"
    r"Annex|Annexure|Appendix|Attachment)\b",
    re.IGNORECASE,
)
_MONTH = r"(?:January|February|March|April|May|June|July|August|September|October|November|December)"
_DATE_IN_NAME_RE = re.compile(rf"\b{_MONTH}\s+\d", re.IGNORECASE)  # a date left in a signature line
_LEADING_YEAR_RE = re.compile(r"^(?:19|20)\d\d\b[\s,]+(?=[A-Z])")
_LEADING_DATE_RE = re.compile(rf"^(?:{_MONTH}\s+\d{{1,2}},?\s+\d{{4}}|\d{{1,2}}\s+{_MONTH},?\s+\d{{4}})\s+", re.IGNORECASE)


def is_role(name: str) -> bool:
    """True when ``name`` is made only of role words, pronouns and small words ("the Company", "Party A")."""
    words = [w for w in re.sub(r"[^a-z0-9 ]", " ", name.lower()).split() if w not in SMALL_WORDS and len(w) > 1]
    if len(words) == 2 and words[0] == "party" and len(words[1]) == 1:
        return True
    return all(w in ROLE_WORDS for w in words)


def not_a_name(name: str) -> str | None:
    """Why ``name`` is not a party name ("role", "address", "placeholder", "signature", "heading"), or None."""
    if _PLACEHOLDER_RE.search(name):
        return "placeholder"
    if _ADDRESS_RE.search(name):
        return "address"
    if _SIGNATURE_RE.search(name) or _DATE_IN_NAME_RE.search(name):
        return "signature"
    low = name.lower().strip(" .")
    if is_role(low) or low in PLACES or len(low) < 3:
        return "role"
    if not re.search(r"[a-z]", name_key(name)):  # "2440 SE": a street number before a direction
        return "number"
    if re.search(r"\b(?:you|your|that|which|who|whom)\b", low) and not _LEGAL_WORDS_RE.search(low):
        return "phrase"  # "the Business Entity That You Represent"; "You On Demand Holdings, Inc." is a company
    if re.match(r"(?:(?:people's|federal)\s+)?(?:republic|states?|commonwealth|province|kingdom)\s+of\b", low):
        return "place"
    # "A. Territories" (a numbered heading), "Acme Corp. Products" (two sentences run together)
    if re.match(r"^[A-Z]\.\s+[A-Z][a-z]{3,}", name) or re.search(r"\b(?!Corp|Bros|Intl)[A-Za-z]{4,}\.\s+[A-Z]", name):
        return "heading"
    if any(w in _TYPE_NOUNS or w in {"date", "term"} for w in low.split()) or re.match(r"no\.?\s|no\.\d", low):
        return "heading"  # "No Partnership", "No. 6 Example Road", "No.6, Example University" (a building number)
    if re.match(r"(?:plan|statement|letter|terms|articles|certificate|bill|notice)\s+of\s", low):
        return "heading"  # a document type in a title ("Agreement and Plan of Merger"), not "and Plan of Merger"
    return None


_LEGAL_WORDS_RE = re.compile(rf"\b(?:{SUFFIX.lower().replace(chr(92) + '.', '')})\b")


def name_key(name: str) -> str:
    """A name without punctuation and legal-form words: "Example, Inc." and "EXAMPLE" share one key."""
    low = re.sub(r"[.'’]", "", name.lower())
    return squash(_LEGAL_WORDS_RE.sub(" ", re.sub(r"[^a-z0-9 ]", " ", low)))


# --------------------------------------------------------------------------------------------------
# Finding the parties


@dataclass(frozen=True)
class Party:
    """A party: its name as the text writes it, and short names the text defines for it ("Short")."""

    name: str
    short_names: tuple[str, ...] = ()


def find_parties(head: str, text: str = "", keep: Collection[str] = ()) -> list[Party]:
    """The parties, in order of appearance, from the clause that introduces them.

    ``head`` is the document's start; ``text`` the whole document, searched for a late opening clause when
    the head is front matter; ``keep`` the document's acronyms (kept upper case). Of the candidate clauses
    the first that names two parties wins (one, for a clause after a table of contents: the entries of the
    table before it are headings), else the one that names most.
    """
    best: list[Party] = []
    for flat, start, after_contents in _opening_clauses(head, text):
        parties = _parties_at(flat, start, keep)
        if len(parties) >= 2 or (parties and after_contents):
            return parties
        if len(parties) > len(best):
            best = parties
    return best if len(best) >= 2 else _with_cover_pair(best, head, keep)


# A cover page's two parties, each on its own line in capitals, with "AND" on the line between them.
_COVER_PAIR_RE = re.compile(
    rf"^[ \t]*([{_UP}][{_UP}0-9&.,'’() -]{{3,80}}?)[ \t]*\n\s*(?:AND|and|And)[ \t]*\n"
    rf"\s*([{_UP}][{_UP}0-9&.,'’() -]{{3,80}}?)[ \t]*$",
    re.MULTILINE,
)


def _with_cover_pair(parties: list[Party], head: str, keep: Collection[str]) -> list[Party]:
    """``parties`` and the cover page's pair of names.

    "EXAMPLE LIMITED / AND / EXAMPLE NEWS AGENCY" names both parties even where one has no legal form for the name
    patterns to find."""
    match = _COVER_PAIR_RE.search(head)
    if match is None:
        return parties
    found = list(parties)
    for raw in match.groups():
        name = clean_name(raw, keep)
        key = name_key(name)
        if not_a_name(name) or not key or any(key == name_key(p.name) for p in found):
            continue
        found.append(Party(name))
    return _merge(sorted(found, key=lambda p: head.upper().find(p.name.upper())))


def _parties_at(flat: str, start: int, keep: Collection[str]) -> list[Party]:
    end_match = _PARTIES_END_RE.search(flat, start + 30)
    end = min(end_match.start() if end_match else len(flat), start + 1600)
    parties = _parties_in(flat[start:end], keep, flat)
    if len(parties) < 2 and start <= 3500:  # past that, what precedes the clause is front matter, not a cover
        # Cover lines may name the parties ("Example Inc. / and / Other Ltd. / Supply Agreement").
        cover = _SOURCE_RE.sub(" ", flat[: start if start > 0 else 2500])
        known = {name_key(p.name) for p in parties}
        parties += [p for p in _parties_in(cover, keep, flat) if name_key(p.name) not in known]
    return parties


def _opening_clauses(head: str, text: str) -> list[tuple[str, int, bool]]:
    """Candidates (squashed text, start of the clause that introduces the parties, after a contents table), best first.

    The start is 0 when unknown; the flag says whether the clause follows a table of contents.

    A table of contents or a long cover can push that clause past the head, and its entries ("... between
    the Parties ... 12") look like one: there a clause that is "made/entered into ... between" comes first.
    """
    # An EDGAR page footer ("Source: FILER, 10-K, 3/1/2020") names the filer, not a party; it may fall inside the clause.
    flat = squash(_SOURCE_RE.sub(" ", head))
    start_match = PARTIES_START_RE.search(flat[:3500])
    early = (flat, start_match.start() if start_match else 0, False)
    toc = re.search(r"(?i)\btable\s+of\s+contents\b", flat[:3500])
    if start_match is None or (toc and toc.start() < start_match.start()):
        longer = squash(_SOURCE_RE.sub(" ", text[:40000])) or flat
        late = _LATE_START_RE.search(longer, toc.end() if toc else 0)
        if late is not None:
            return [(longer, late.start(), toc is not None), early]
    return [early]


# Patterns in the order they are tried: legal names first; looser patterns only add names that overlap none
# found. A loose pattern must follow a connector ("between", "and", a comma): it matches any capitalised phrase.
_PATTERNS = (
    (_ORG_RE, 1, False), (_DESCRIBED_RE, 1, False), (_ALIASED_RE, 1, True), (_LOCATED_RE, 1, False),
    (_LABELLED_RE, 1, False), (_PERSON_RE, 2, False), (_SINGLE_RE, 1, False), (_DOMAIN_RE, 1, False),
)
_CONNECTOR_BEFORE_RE = re.compile(r"(?:\b(?:between|among|and|AND|BETWEEN|AMONG)|[,;:]|\(\w\)|^)\s*$")


def _parties_in(window: str, keep: Collection[str], context: str) -> list[Party]:
    """The parties named in ``window``; ``context`` (the document's head) tells common words from names."""
    aliases = {a.lower() for a in QUOTED_RE.findall(window)}
    found: list[tuple[int, int, str]] = []  # (start, end, name)
    for regex, group, loose in _PATTERNS:
        for lo, hi, name in _matches(regex, group, window, keep, context):
            if any(lo < t_hi and t_lo < hi for t_lo, t_hi, _ in found):
                continue
            if loose and not _CONNECTOR_BEFORE_RE.search(window[max(0, lo - 12) : lo]) and not _defined_as_role(window, hi):
                continue
            if name.lower() not in aliases and not _named_as_parent(window, lo, hi):
                found.append((lo, hi, name))
    found.sort()
    return _merge([Party(name, _short_names(window, hi, name, keep, context)) for _, hi, name in found])


_PARENT_BEFORE_RE = re.compile(r"\b(?:subsidiary|affiliate|division|part)\s+of\s+(?:the\s+)?$", re.IGNORECASE)


def _named_as_parent(window: str, lo: int, hi: int) -> bool:
    """The name at ``window[lo:hi]`` came first as a party's parent ("a subsidiary of Example Corp.").

    Named again later (the filer describing itself), it is still not a party."""
    pattern = r"\s+".join(re.escape(w) for w in window[lo:hi].split())
    first = re.search(rf"(?<![\w&]){pattern}", window[:lo])
    return first is not None and _PARENT_BEFORE_RE.search(window[max(0, first.start() - 30) : first.start()]) is not None


def _defined_as_role(window: str, end: int) -> bool:
    """The name ending at ``end`` is defined as a party role: 'Example Ltd, hereinafter "the Company"'."""
    match = _DEFINITION_RE.match(window, end)
    terms = QUOTED_RE.findall(match.group(1)) if match else []
    return bool(terms) and all(w in PARTY_ROLES for w in name_key(terms[0]).split())


def _common_word(name: str, context: str) -> str | None:
    """A "name" that the text also writes in lower case is common words.

    Such as "Become", "Plan", "Support Services" where the text says "the software support services"); a web or mail address does not count
    ("ExampleSoft" beside "www.examplesoft.com"), nor does a name with a legal form."""
    words = name.strip(" .,")
    if not re.fullmatch(r"[A-Za-z]+(?: [A-Za-z]+)*", words) or not all(w[1:].islower() for w in words.split()):
        return None
    if " " in words and _LEGAL_WORDS_RE.search(words.lower()):
        return None  # a legal form ("Example Systems Inc")
    found = re.search(rf"(?<![\w.@/-]){re.escape(words.lower())}(?![\w@/-]|\.\w)", context)
    return "common word" if found else None


def _matches(
    regex: re.Pattern[str], group: int, window: str, keep: Collection[str], context: str
) -> list[tuple[int, int, str]]:
    """(start, end, name) of each acceptable match.

    After a rejected one the search resumes at its next word
    (after its last "and" for an address), so junk swallowed into the front of a match does not hide the name
    behind it; after a descriptor ("a Delaware corporation") it resumes past the whole match."""
    results = []
    pos = 0
    while (match := regex.search(window, pos)) is not None:
        lo, hi = match.span(group)
        name = _drop_role_words(clean_name(match.group(group), keep), context)
        trade = _TRADING_AS_RE.match(window, hi)
        if trade:
            name = f"{name} ({title_case(squash(trade.group(1)).strip(' ,'), keep)})"
            hi = trade.end()
        if regex is _PERSON_RE and match.group(1):
            name = squash(match.group(1)) + " " + name
        if _NOT_A_PARTY_BEFORE_RE.search(window[max(0, lo - 25) : lo]):  # a descriptor: skip it whole
            # "..., as Issuer, EXAMPLE ABS LLC, as Depositor and BETA LP": the descriptor is the role before the
            # comma or "and" only.
            role = re.match(r"(.+?)(?:,\s+|\s+(?:and|AND)\s+)", window[lo:hi])
            pos = lo + role.end() if role and _is_capacity(role.group(1), window[max(0, lo - 25) : lo]) else match.end()
            continue
        why = (not_a_name(name) or ("long" if len(name) > 70 else None) or _common_word(name, context)
               or ("label" if _LABEL_INSIDE_RE.search(window[lo:hi]) else None))
        if why is None and _POSTCODE_AFTER_RE.match(window, hi):  # "Las Vegas NV 89169": a city and state code
            why = "address"
        if why:
            # Junk in front of a name ("AGREEMENT May 1, 2020 Example Inc.") hides the name: try from the next
            # word; an address run into the next party ("City, ST 00000 and Beta Inc."): from after its "and".
            joined = [m.end() for m in re.finditer(r"\s(?:and|AND)\s", window[lo:hi])]
            next_word = re.search(r"\s\S", window[lo:hi])
            if why == "address" and joined:
                pos = lo + joined[-1]
            else:
                pos = lo + next_word.end() - 1 if next_word else match.end()
            continue
        results.append((lo, hi, name))
        pos = match.end()
    return results


def _is_capacity(words: str, before: str) -> bool:
    """``words`` name the role a party signs in.

    Role words, or after ", as" a few capitalised words without a legal form ("EXAMPLE ABS LLC, as Depositor and
    ...": whatever follows "as" there is the capacity)."""
    if is_role(words):
        return True
    capacity = re.search(r",\s*as\s*$", before) and re.fullmatch(r"[A-Z][a-z]+(?: [A-Z][a-z]+){0,2}", words)
    return bool(capacity) and not _LEGAL_WORDS_RE.search(words.lower())


# A role label in title case between names in capitals joins two names: "EXAMPLE MEDIA Licensee BETA CORPORATION"
# ("Company" is not one: inside a name in capitals it is part of the name).
_LABEL_INSIDE_RE = re.compile(rf"[{_UP}]{{2,}}\s+(?:{'|'.join(_ROLE_LABELS)})\s+[{_UP}]{{2,}}")
# A "name" ending in a two-letter code right before a US ZIP code is a city and state ("Las Vegas NV 89169"), not a
# company with a legal form; a street number after a company ("Example NV 12345 Main Street") is followed by a name.
_POSTCODE_AFTER_RE = re.compile(r"(?<=\b[A-Z]{2}),?\s*\d{5}(?:-\d{4})?\b(?!\s+[A-Z][a-z])")
# Page furniture before a name: "Execution Version", "Page 1 of 15", "Exhibit 10.1".
_LEADING_NOISE_RE = re.compile(
    r"^(?:(?:Execution|EXECUTION) (?:Version|VERSION|Copy|COPY)|Page \d+ of \d+|(?:Exhibit|EXHIBIT) [\w.()-]+)\s+"
)
_HEADINGS = frozenset({"PREAMBLE", "PARTIES", "BETWEEN", "AMONG", "RECITALS", "Preamble", "Parties"})


def clean_name(name: str, keep: Collection[str]) -> str:
    """A party name without what surrounds it in the text (dates, labels, a stock ticker, "the"), title-cased.

    ``keep``: the document's acronyms, which ``title_case`` leaves as written."""
    name = squash(name).strip(" ,;:")
    name = _LEADING_DATE_RE.sub("", _LEADING_YEAR_RE.sub("", name))
    name = _LEADING_NOISE_RE.sub("", name)
    name = re.sub(r"^(?:and|the|between|among|of)\s+(?=[A-Z0-9])", "", name, flags=re.IGNORECASE)
    name = re.sub(r"\s+(?:of|OF|&|and|AND)$", "", name)
    name = re.sub(r"\s*\((?:OTC|NYSE|NASDAQ|Nasdaq)[^)]*\)", "", name)
    first, _, rest = name.partition(", ")
    if rest and is_role(first):  # "Reseller, Example Corp."
        name = rest
    name = _LEADING_YEAR_RE.sub("", _strip_label(name).strip(" ,;:"))  # a label hid it: "AGREEMENT, 2009 Example"
    name = re.sub(r"^(?:the|THE)\s+(?=[A-Z0-9])", "", name)  # "Licensee THE EXAMPLE CORPORATION"
    name = re.sub(r"(?<=[A-Za-z])['’]$", "", name)  # a possessive's apostrophe: "Example Entertainment' business"
    return title_case(name, keep)


def _strip_label(name: str) -> str:
    """Drop a role or heading label before a name: "Licensor: Example", "Licensee EXAMPLE CORP", "PREAMBLE EXAMPLE".

    A role word that starts a name in the same case stays ("Carrier Global Corp.")."""
    label = re.match(r"^([A-Za-z]+)(:?)\s+(?=[A-Z0-9])", name)
    if not label:
        return name
    word, colon, rest = label.group(1), label.group(2), name[label.end() :]
    if not (is_role(word) or word in _HEADINGS) or is_role(rest):
        return name
    case_changes = not word.isupper() and rest.split()[0].isupper()
    return rest if colon or word in _HEADINGS or case_changes else name


def _drop_role_words(name: str, context: str) -> str:
    """Drop role words run into the front of a name when ``context`` also writes the rest without one before it.

    "Franchisee Franchisor Example Agency, LLC", "Shipper Example S.A."; "Carrier Global Corp." stays (the text
    never writes "Global Corp." alone)."""
    words = name.split(" ")
    lead = 0
    while lead < len(words) - 1 and words[lead][:1].isupper() and is_role(words[lead]):
        lead += 1
    for cut in range(lead, 0, -1):
        rest = " ".join(words[cut:])
        if is_role(rest) or not rest[:1].isupper():
            continue
        for found in re.finditer(rf"(?<![\w-]){re.escape(rest)}(?!\w)", context, re.IGNORECASE):
            before = context[max(0, found.start() - 30) : found.start()].split()
            if not before or not is_role(before[-1]):
                return rest
    return name


def _short_names(window: str, end: int, name: str, keep: Collection[str], context: str) -> tuple[str, ...]:
    """The names defined for the party ending at ``end``: ("Short"), hereinafter called "Short".

    Only the first definition after the name counts, and only terms that are names: a role ("Company")
    or a term already inside the name ("Example" for "Example Inc.") adds nothing, nor does a term the text
    also writes in lower case ("Servicing Agent": "the servicing agent").
    """
    match = _DEFINITION_RE.match(window, end)
    if not match or re.search(r"\b[a-z]{3,}[.;]\s+[A-Z]", window[end : match.start(1)]):  # a sentence ended
        return ()
    shorts = []
    for term in QUOTED_RE.findall(match.group(1)):
        term = squash(term).strip(" ,")
        term = term if len(term) <= 5 else title_case(term, keep)  # a short defined term is an acronym: "WXI"
        if _adds_a_name(term, name, context):
            shorts.append(term)
    return tuple(shorts)


def _adds_a_name(term: str, name: str, context: str) -> bool:
    words = set(name_key(term).split())
    if not words or is_role(term) or not_a_name(term) or words <= set(name_key(name).split()):
        return False
    if name_key(term).replace(" ", "") in name_key(name).replace(" ", ""):  # "Glam is" for "Glamis"
        return False
    in_lower_case = term.lower() != term and re.search(rf"(?<![\w-]){re.escape(term.lower())}(?![\w-])", context)
    return not in_lower_case


def _merge(parties: Sequence[Party]) -> list[Party]:
    """One party per key: the same party is often matched twice ("Example" and "Example, Inc.")."""
    merged: list[Party] = []
    for party in parties:
        key = name_key(party.name)
        if not key:
            continue
        clash = next((i for i, p in enumerate(merged) if name_key(p.name) == key), None)
        if clash is None:
            merged.append(party)
        else:
            old = merged[clash]
            name = party.name if len(party.name) > len(old.name) else old.name
            shorts = tuple(dict.fromkeys(old.short_names + party.short_names))
            merged[clash] = Party(name, shorts)
    # A place in a party's address run into the clause ("offices at Berlin and Munich ("Example")") takes the
    # party's definition: a "party" without a legal form whose defined name is another party's names none.
    merged = [p for p in merged if not _defines_another(p, merged)]
    # A term defined for several parties together ("Alpha and Beta ... (together "Group")") names none alone.
    counts = Counter(s for p in merged for s in p.short_names)
    return [Party(p.name, tuple(s for s in p.short_names if counts[s] == 1)) for p in merged]


def _defines_another(party: Party, parties: Sequence[Party]) -> bool:
    """``party`` has no legal form and each name defined for it is among another party's name's words, not its own."""
    if not party.short_names or _LEGAL_WORDS_RE.search(party.name.lower()):
        return False
    own = set(name_key(party.name).split())
    others = [set(name_key(p.name).split()) for p in parties if p is not party]
    return all(
        (words := set(name_key(short).split())) and not words <= own and any(words <= other for other in others)
        for short in party.short_names
    )


def find_filer(text: str, parties: Sequence[Party], keep: Collection[str] = ()) -> str | None:
    """The filer named in an EDGAR "Source: NAME, FORM, DATE" line, when it is not already a party."""
    at = text.find("Source:")
    match = _SOURCE_RE.search(text, at) if at >= 0 else None
    if match is None:
        return None
    filer = title_case(squash(match.group(1)), keep)
    key = name_key(filer)
    taken = {name_key(p.name) for p in parties} | {name_key(s) for p in parties for s in p.short_names}
    return filer if key and key not in taken and not not_a_name(filer) else None


# --------------------------------------------------------------------------------------------------
# Writing the parties


def _listed(names: Sequence[str], more: bool) -> str:
    if more:
        return ", ".join(names) + " et al."
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _written(party: Party, short: bool) -> str:
    return f"{party.name} ({', '.join(party.short_names)})" if short and party.short_names else party.name


def join_parties(parties: Sequence[Party], budget: int, room: int | None = None) -> str:
    """"A and B", "A (Short), B and C" or "A, B et al.".

    Every party by name comes first and may use all of ``budget``; short names are added only within
    ``room`` (what leaves the other facts their place; default ``budget``). When not every party fits, as
    many as fit in ``room`` are listed before "et al.". Only a first name that alone exceeds the budget is
    written over it.
    """
    room = budget if room is None else min(room, budget)
    if not parties:
        return ""
    with_short = _listed([_written(p, True) for p in parties], False)
    if len(with_short) <= room:
        return with_short
    plain = _listed([p.name for p in parties], False)
    if len(plain) <= budget:
        return plain
    for limit in (room, budget):  # two names before "et al." where they fit at all: a list needs both sides
        for count in range(len(parties) - 1, 1, -1):
            text = _listed([p.name for p in parties[:count]], True)
            if len(text) <= limit:
                return text
    first = _listed([parties[0].name], True)
    return first if len(first) <= budget else parties[0].name
