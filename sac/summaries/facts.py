"""Facts the built-in summarizer reads from a document: title, type, parties, date, law, term, filer.

Regular expressions over the document's text only (its head, and all of it for law, term and filer); no
model, and never the file name. Parties come from ``sac.summaries.parties``. Every rule is general: none
names a particular contract, party or title, and they are tuned on the dev half of CUAD only
(bench/summary_facts.py scores them there).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

from sac.summaries.casing import SMALL_WORDS, acronyms, squash, title_case
from sac.summaries.controller import find_controller
from sac.summaries.parties import PLACES, Party, find_filer, find_parties, name_key
from sac.types import Document

# --------------------------------------------------------------------------------------------------
# Built-in extractive summarizer
# --------------------------------------------------------------------------------------------------

BUILTIN_VERSION = 14  # raise on every heuristic change: it is part of the prompt hash, so caches refresh
HEAD_CHARS = 5000  # the builtin reads this much of a document, plus searches of all of it (law, term, filer)

_TYPE_WORDS = (
    r"AGREEMENT|CONTRACT|AMENDMENT|ADDENDUM|LICEN[CS]E|LEASE|POLICY|NOTICE|MEMORANDUM|DEED|UNDERTAKING|"
    r"INDENTURE|GUARANTY|GUARANTEE|CHARTER|BYLAWS|STATEMENT|PLAN|TERMS|NDA"
)
_TYPE_WORD_RE = re.compile(rf"\b(?:{_TYPE_WORDS})S?\b", re.IGNORECASE)
# Document types named by a type word and what it is of: "Agreement and Plan of Merger", "Memorandum of
# Understanding", "Statement of Work". The title runs on to the object, which is legal vocabulary, never a name.
_OF_OBJECTS = (
    "MERGER", "REORGANIZATION", "ARRANGEMENT", "AMALGAMATION", "LIQUIDATION", "DISSOLUTION", "CONVERSION",
    "SHARE EXCHANGE", "UNDERSTANDING", "INTENT", "WORK", "SALE", "TRUST", "ATTORNEY", "SERVICE", "USE",
    "INCORPORATION", "ASSOCIATION", "COVENANTS?", "ASSIGNMENT",
)
_OF_TAIL_CAPS = rf"(?:[ \t]+OF[ \t]+(?:{'|'.join(_OF_OBJECTS)})\b)?"
_OF_TAIL = rf"(?:\s+of\s+(?i:{'|'.join(_OF_OBJECTS)})\b)"
# A run of upper-case words ending in a document-type word, e.g. "JOINT VENTURE AGREEMENT".
_CAPS_TITLE_RE = re.compile(
    rf"(?<![A-Za-z])((?:[A-Z0-9#][A-Z0-9&'’.,/#-]*[ \t]+|(?:OF|AND|TO|FOR|THE|ON|IN)[ \t]+){{0,8}}"
    rf"(?:{_TYPE_WORDS})S?(?:[ \t]+NO\.[ \t]*\d+)?{_OF_TAIL_CAPS})(?![a-z])"
)
# "This Mutual Non-Disclosure Agreement is made ..." in running text.
_THIS_TITLE_RE = re.compile(
    rf"\b(?:This|THIS)\s+((?:[A-Z][\w'’-]*\s+|(?:of|and|to|for|on|the)\s+){{0,7}}(?:{_TYPE_WORDS})S?{_OF_TAIL}?)\b",
    re.IGNORECASE,
)
_BOILERPLATE_LINE_RE = re.compile(
    r"^(?:\d+\s+)?(?:exhibit|execution (?:copy|version)|confidential treatment|quicklinks|table of contents|"
    r"strictly private|page \d|\[\*+\]|portions|information identified|confidential materials|article|section|"
    r"confidential(?: information)?$|private and confidential$|(?:attachment|appendix|annex|schedule)\s+[\w.-]+$)",
    re.IGNORECASE,
)
# Labels before a heading: a filing's exhibit number, a lettered attachment ("ATTACHMENT A", "Schedule 2"), ...
_LEADING_NOISE_RE = re.compile(
    r"^(?:(?:EXHIBIT|Exhibit)\s+[\w.()-]+\s+|EXECUTION (?:COPY|VERSION)\s+|Execution (?:Copy|Version)\s+|"
    r"(?:ATTACHMENT|Attachment|SCHEDULE|Schedule|ANNEX|Annex|APPENDIX|Appendix)\s+(?:[A-Z](?:-?\d+)?|\d+)\s*[-–—.:]?\s+|"
    r"(?:PAGE|Page) \d+ (?:OF|of) \d+\s+|(?:Dated|DATED):? [\d/.-]+\s+|THIS\s+|This\s+)+"
)

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
# A lettered attachment, "EXHIBIT D", "Schedule A-1" (a filing's own exhibit number, "Exhibit 10.4", is not one).
_ATTACHMENT_RE = re.compile(r"(?i:exhibit|schedule|annex|appendix|attachment)\s+[A-Z](?:-\d+)?(?![\w.])")
# Clause headings that name a document type but are not a title.
_CLAUSE_HEADINGS = (
    r"(?:entire agreement|assignment|notices?|amendments|term of agreement|governing law|waivers?|severability|"
    r"termination|miscellaneous|jurisdiction|counterparts|force majeure|headings)"
)
_CLAUSE_HEADING_RE = re.compile(  # one or a list: "ENTIRE AGREEMENT, GOVERNING LAW"
    rf"(?i)^{_CLAUSE_HEADINGS}(?:\s*(?:[,;&]|\band\b)\s*{_CLAUSE_HEADINGS})*\s*$"
)


# A sentence's end: a period after a word of four letters or more, or after a closing bracket or quotation mark
# ("... AS AMENDED. EXHIBIT", "... BY "[***]". SUCH"); not "INC." or "NO. 1".
_SENTENCE_END_RE = re.compile(r"(?:(?<=[A-Za-z]{4})|(?<=[\])\"”]))\.[\"”]?\s+(?=[A-Z\[\"“])")
# What a filing's notice of omitted confidential text says.
_NOTICE_RE = re.compile(
    r"(?i)\bomitted\b|\bredact|confidential treatment|excluded from|filed separately|exchange commission|"
    r"regulation s-k|rule 24b-2|competitive harm|\bnot material\b|\[\*+\]"
)


def _drop_notice(segment: str) -> str:
    """A segment without its leading noise and the sentences of a notice it opens with.

    A filing whose head has no line breaks opens with its notice, and the title follows in the same line: "[*] = CERTAIN CONFIDENTIAL
    INFORMATION ... AS AMENDED. EXHIBIT 10.2 FIRST AMENDMENT TO SUPPLY AND MANUFACTURING AGREEMENT This ..."."""
    text = _LEADING_NOISE_RE.sub("", segment).strip()
    sentences = _SENTENCE_END_RE.split(text)
    opening = 0
    while opening < len(sentences) - 1 and _NOTICE_RE.search(sentences[opening]):
        opening += 1
    if opening == 0:
        return text
    rest = text[text.index(sentences[opening], sum(map(len, sentences[:opening]))):]
    return _LEADING_NOISE_RE.sub("", rest).strip()


def _is_caps(segment: str) -> bool:
    letters = [c for c in segment if c.isalpha()]
    return len(letters) >= 2 and all(c.isupper() for c in letters)


def _find_title(head: str, keep: Collection[str] = ()) -> str | None:
    """The document's title: a short heading naming a document type, or "This X Agreement".

    A heading under a lettered exhibit after the document's start ("EXHIBIT D  FORM OF AGREEMENT FOR TRIAL") titles an attachment:
    it is used only when nothing else is found."""
    raw = [s.strip() for ln in head[:2500].splitlines() for s in re.split(r"\s{3,}", ln) if s.strip()][:40]
    # A segment opening with a lettered exhibit, or right after one, is under it; not at the document's start (a
    # file that opens with "Appendix C" was filed as that appendix: its heading is the document's).
    under = [i > 0 and (_ATTACHMENT_RE.match(s) is not None or (i > 1 and _ATTACHMENT_RE.fullmatch(raw[i - 1]) is not None))
             for i, s in enumerate(raw)]
    kept = [(text, attached) for text, attached in ((_drop_notice(s), a) for s, a in zip(raw, under))
            if text and not _BOILERPLATE_LINE_RE.match(text)]
    segments = [text for text, _ in kept]
    first_attached = None
    for i, (seg, attached) in enumerate(kept):
        titles = (_caps_block_title(segments, i), _caps_title(seg), _lead_title(seg), _line_title(seg))
        title = next((t for t in titles if t and _TYPE_WORD_RE.search(t) and not _CLAUSE_HEADING_RE.match(t)), None)
        if title is None:
            continue
        if not attached:
            return title_case(squash(title), keep)
        first_attached = first_attached or title
    if first_attached:
        return title_case(squash(first_attached), keep)
    match = _THIS_TITLE_RE.search(head[:3000])
    return title_case(squash(match.group(1)), keep) if match else None


def _caps_block_title(segments: Sequence[str], i: int) -> str | None:
    """An upper-case heading split over lines ("AMENDMENT AND TERMINATION" / "OF" / "JOINT VENTURE AGREEMENT").

    The upper-case lines that follow are joined before looking for the type word."""
    if not _is_caps(segments[i]):
        return None
    block = [segments[i]]
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
    return _caps_title(" ".join(block), r"\bTHIS\b|\bBETWEEN\b|\bDATED\b")


def _caps_title(segment: str, stop: str = r"\bTHIS\b") -> str | None:
    """A run of upper-case words ending in a type word, up to "THIS" (or ``stop``), within one sentence.

    A notice in capitals often runs straight into the title: "... IF PUBLICLY DISCLOSED. SPONSORED RESEARCH AND
    LICENSE AGREEMENT This ..."."""
    for sentence in re.split(r"(?<!\bNO)(?<!\bNo)[.:;]\s+", segment):  # a sentence end, not "NO. 1"
        match = _CAPS_TITLE_RE.search(sentence)
        if match and len(match.group(1)) >= 6 and not _CLAUSE_HEADING_RE.match(match.group(1)):
            title = re.split(stop, match.group(1))[0].strip(" ,.-")
            # A heading run into an opening sentence that repeats it: "STRATEGIC ALLIANCE AGREEMENT STRATEGIC
            # ALLIANCE AGREEMENT, dated as of ...".
            doubled = re.fullmatch(r"(.+?)\s+\1", title)
            return doubled.group(1) if doubled else title
    return None


# A title in capitalised words that runs straight into the opening sentence:
# "Corporate Sponsorship Agreement Between Alpha and Beta Inc. This Agreement ...".
_LEAD_TITLE_RE = re.compile(
    r"^((?:(?:[A-Z][\w&'’-]*|#\d+)\s+(?:(?:and|of|for|to|the|on|&)\s+){0,2}){0,6}"
    r"(?:(?:Agreement|Contract|Amendment|Addendum|Licen[cs]e|Lease|Memorandum|Undertaking|Indenture|Guarant(?:y|ee))"
    rf"{_OF_TAIL}?|Plan{_OF_TAIL}))"
    r"(?=\s+(?:[Bb]etween|BETWEEN|[Bb]y|[Dd]ated|[Mm]ade|This|THIS|is|[Ee]ntered|[Aa]mong)\b)"
)


def _lead_title(segment: str) -> str | None:
    match = _LEAD_TITLE_RE.match(segment)
    return match.group(1) if match else None


def _line_title(segment: str) -> str | None:
    """A short line naming a document type in capitalised words, or a line of a few words ending in one.

    "Distributor Agreement"; "Distributorship agreement"."""
    if (
        not 5 <= len(segment) <= 80
        or not _TYPE_WORD_RE.search(segment)
        or re.match(r"(?i)(?:this|the|whereas|if|in)\b|contract\s+(?:no|number)\b", segment)
    ):
        return None
    words = [w for w in re.findall(r"[A-Za-z][\w'-]*", segment) if w.lower() not in SMALL_WORDS]
    capitalised = sum(w[0].isupper() for w in words) >= 0.75 * len(words)
    ends_in_type = bool(words) and words[0][0].isupper() and _TYPE_WORD_RE.fullmatch(words[-1]) is not None
    if words and len(words) <= 10 and (capitalised or (ends_in_type and len(words) <= 5)):
        return segment.rstrip(" .:")
    return None


def _find_date(head: str) -> str | None:
    match = _DATE_RE.search(squash(head[:3000]))
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


_NOT_A_LAW = frozenset({"the", "such", "any", "said", "this", "that", "each", "all", "state", "commonwealth", "province",
                        "republic", "kingdom", "country", "jurisdiction"})


def _find_law(text: str, keep: Collection[str] = ()) -> str | None:
    match = _search_near(_LAW_RE, text, ("law",), 200, 250)
    if match:
        # A connector, in any case, ends the place: "New York Applicable to", "NEW YORK WITHOUT REGARD".
        law = re.split(r"(?i)\s+(?:and|without|excluding|except|applicable|as|in|to|which|that|for)\b", match.group(1))[0]
        law = squash(law)
        if match.group(1).lower().startswith("england and wales"):
            law = "England and Wales"
        # "the laws of the State of ________": a form's blank leaves the bare word "State", which names no law.
        if law.lower() not in _NOT_A_LAW and len(law) > 2:
            return title_case(law, keep)
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


_TRAILING_WORDS = SMALL_WORDS | {"its", "their", "his", "her", "which", "that", "certain", "all", "any", "each"}
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


# "Example Grid Protected Information (EGPI)": a defined topic, used when no purpose is stated.
_TOPIC_RE = re.compile(
    r"\b([A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|of|and)){1,5})\s+\((?:collectively\s+)?[\"“]?([A-Z]{2,6})[\"”]?\)"
)


def _find_topic(head: str, exclude: str, budget: int) -> str | None:
    for match in _TOPIC_RE.finditer(squash(head[:3500])):
        topic = match.group(1)
        if (
            topic.lower() in exclude.lower()
            or name_key(topic) in name_key(exclude)
            or re.search(rf"\b{re.escape(match.group(2))}\b", exclude)  # a party's defined name: "... Hong Kong ("XFN")"
            or name_key(topic) in PLACES  # a place and a legal form: "New York Limited Liability Company ("LLC")"
            or re.search(r"Republic|Kingdom|States|Province|Commonwealth", topic)
        ):
            continue
        phrase = f"on {topic}"
        return phrase if len(phrase) <= budget else None
    return None


def _find_subject(head: str, budget: int) -> str | None:
    """The main subject as a short phrase with its connector ("for ...", "to ..."), at most ``budget`` chars."""
    flat = squash(head[:3500])
    for regex, connector in _SUBJECT_RES:
        for match in regex.finditer(flat):
            phrase = match.group(1).strip(" ,")
            if flat[match.end(1) : match.end(1) + 1].isalnum():  # the pattern's length cap ended it inside a word
                phrase = phrase.rsplit(" ", 1)[0].rstrip(" ,")
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
    if re.search(r"privacy (?:policy|notice|statement)|data protection (?:policy|notice)|cookie policy|\byour privacy\b",
                 probe):
        return "privacy"
    return "other"


@dataclass(frozen=True)
class DocumentFacts:
    """What the builtin summarizer found in a document's text."""

    title: str | None  # the title as the text writes it; None when the text has none
    kind: str  # what the summary calls the document: the title, else type words from the text, else "Contract"
    doc_class: str  # "nda", "privacy" or "other"
    parties: tuple[Party, ...]
    date: str | None
    law: str | None
    term: str | None
    filer: str | None  # the EDGAR filer the text names, when it is not a party
    head: str = field(repr=False)


def extract_facts(document: Document) -> DocumentFacts:
    """Title, type, parties, date, governing law and term, by regular expressions over the document's text.

    The file name and doc id are never read: a summary must say what the text says.
    """
    head = document.text[:HEAD_CHARS]
    keep = acronyms(document.text)
    title = _find_title(head, keep)
    doc_class = _doc_class(title, head)
    parties = tuple(find_parties(head, document.text, keep))
    if doc_class == "privacy" or not parties:
        # A policy speaks for one controller; what the contract rules find in it are third parties or headings.
        # A text with no contract clause naming anyone (terms of use) may still define who "we" are.
        controller = find_controller(head, keep)
        parties = (controller,) if controller else parties
    return DocumentFacts(
        title=title,
        kind=title or _CLASS_LABELS.get(doc_class) or _type_words(head, keep),
        doc_class=doc_class,
        parties=parties,
        date=_find_date(head),
        law=_find_law(document.text, keep),
        term=_find_term(document.text),
        filer=find_filer(document.text, parties, keep),
        head=head,
    )


_CLASS_LABELS = {"nda": "Non-disclosure agreement", "privacy": "Privacy policy"}
# Capitalised words before a type word in running text: "the Distributor Agreement", "this Lease".
_TYPE_PHRASE_RE = re.compile(
    r"\b((?:[A-Z][\w-]*\s+){0,3}(?:Agreement|Contract|Amendment|Addendum|Licen[cs]e|Lease|Memorandum|Deed|"
    r"Undertaking|Indenture|Guarant(?:y|ee)|Terms)s?)\b"
)


def _type_words(head: str, keep: Collection[str]) -> str:
    """What the text calls itself when it has no title ("Distributor Agreement"), else "Contract"."""
    for match in _TYPE_PHRASE_RE.finditer(squash(head[:3000])):
        words = [w for w in match.group(1).split() if w not in ("This", "THIS", "The", "THE")]
        if words:
            return title_case(" ".join(words), keep)
    return "Contract"
