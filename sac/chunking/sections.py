"""Section context: the heading path a chunk sits in, found in the document text itself.

A chunk of clause 12.3 says "the Receiving Party shall..." and nothing about where it is; its heading path
("12 CONFIDENTIALITY > 12.3 Exceptions") does. With the ``+sections`` index option the path is embedded
after the summary (``Index.sync(prefixes=...)``); the stored chunk text and its span do not change.

Headings are lines that look like one:

- ``ARTICLE IV`` / ``Article 4 - Term`` (level 0; an all-caps line right after an untitled article names it);
- numbered clauses ``12.``, ``12.3``, ``Section 5.``, ``SECTION 5.1`` followed by a short title on the same
  line, or by a run-in title (``12.3 Exceptions. The Receiving Party...``); the level is the number of
  components;
- short all-caps lines (``CONFIDENTIALITY``) at level 1.

A numbered line that is a plain clause ("1.1 This Agreement shall take effect...") is not a heading.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MAX_TITLE_CHARS = 60
MAX_TITLE_WORDS = 10
MAX_PREFIX_CHARS = 200
MAX_LINE_CHARS = 2000  # longer "lines" are flowing text

_ROMAN = r"[IVXLC]+"
_ARTICLE = re.compile(rf"^\s*(ARTICLE|Article)\s+({_ROMAN}|\d+)\b[\s.:\-–—]*(.*)$")
_SECTION = re.compile(r"^\s*(SECTION|Section)\s+(\d+(?:\.\d+)*)\.?(?=\s|$)[\s:\-–—]*(.*)$")
_NUMBERED = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,3})*)(\.?)(?:\s+|\)\s*)(\S.*)$")


@dataclass(frozen=True, slots=True)
class Heading:
    """A heading line: where it starts, its level (0 = article) and its label ("12.3 Exceptions")."""

    start: int
    level: int
    label: str


def _title(text: str) -> str | None:
    """A heading's title from what follows its number; None when the line is a plain clause.

    The whole line when short, else a run-in title ending at the first '.' or ':'."""
    text = " ".join(text.split())
    if not text:
        return ""
    short = len(text) <= MAX_TITLE_CHARS and len(text.split()) <= MAX_TITLE_WORDS
    if short and not text.endswith((",", ";")) and text[0].isupper():
        return text.rstrip(".:")
    m = re.match(rf"^([^.:;]{{2,{MAX_TITLE_CHARS}}})[.:]\s", text)
    if m and len(m.group(1).split()) <= 6 and m.group(1)[0].isupper() and _titled(m.group(1)):
        return m.group(1).strip()
    return None


def _titled(text: str) -> bool:
    """Title Case or ALL CAPS: most words capitalised (a run-in title, not the start of a sentence)."""
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z'’-]*", text) if len(w) > 3 or w[0].isupper()]
    return bool(words) and sum(w[0].isupper() for w in words) >= 0.6 * len(words)


def _all_caps(line: str) -> bool:
    letters = [c for c in line if c.isalpha()]
    return (
        len(letters) >= 4 and sum(c.isupper() for c in letters) >= 0.9 * len(letters)
        and len(line) <= MAX_TITLE_CHARS + 20 and not line.rstrip().endswith((",", ";"))
        and sum(c.isdigit() for c in line) <= 4
    )


def find_headings(text: str) -> list[Heading]:
    """Every heading line of ``text`` in order."""
    out: list[Heading] = []
    pos = 0
    previous_line_heading: Heading | None = None
    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        stripped = line.strip()
        if not stripped:
            continue
        heading = None
        if len(stripped) <= MAX_LINE_CHARS:
            heading = _heading(stripped, start)
        if (
            heading is not None and heading.level == 1 and not re.match(r"^\d", heading.label)
            and previous_line_heading is not None and previous_line_heading.level == 0
            and len(previous_line_heading.label.split()) == 2 and out and out[-1] is previous_line_heading
        ):
            # "ARTICLE IV" then "CONFIDENTIALITY": the caps line is the article's title.
            out[-1] = Heading(previous_line_heading.start, 0, f"{previous_line_heading.label} {heading.label}")
            previous_line_heading = out[-1]
            continue
        if heading is not None:
            out.append(heading)
        previous_line_heading = heading
    return out


def _heading(line: str, start: int) -> Heading | None:
    m = _ARTICLE.match(line)
    if m:
        title = _title(m.group(3)) or ""
        return Heading(start, 0, f"{m.group(1)} {m.group(2)} {title}".strip())
    m = _SECTION.match(line)
    if m:
        section_title = _title(m.group(3))
        if section_title is None:
            return None
        return Heading(start, m.group(2).count(".") + 1, f"{m.group(1)} {m.group(2)} {section_title}".strip())
    m = _NUMBERED.match(line)
    if m:
        number, rest = m.group(1), m.group(3)
        if "." not in number and not m.group(2) and not line.lstrip()[len(number):].startswith(")"):
            # "5 BENEFITS" is a heading, "5 days" is not: an unpunctuated number needs an all-caps title.
            if not _all_caps(rest):
                return None
        clause_title = _title(rest)
        if not clause_title:
            return None
        return Heading(start, number.count(".") + 1, f"{number} {clause_title}")
    if _all_caps(line) and not re.match(r"^(page\s+\d+|\d+)$", line, re.IGNORECASE):
        return Heading(start, 1, " ".join(line.split()).rstrip(".:"))
    return None


def heading_path(headings: Sequence[Heading], offset: int) -> list[Heading]:
    """The headings in effect at ``offset``: the latest heading of each level above it, outermost first."""
    stack: list[Heading] = []
    for h in headings:
        if h.start > offset:
            break
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
    return stack


def section_prefix(headings: Sequence[Heading], start: int, end: int) -> str:
    """The context line for the chunk ``[start, end)``; empty when the document has no headings there.

    That is its heading path at ``start``, then any headings that begin inside it."""
    labels = [h.label for h in heading_path(headings, start)]
    inside = [h.label for h in headings if start < h.start < end and h.label not in labels]
    if not labels and not inside:
        return ""
    text = " > ".join(labels)
    if inside:
        text = f"{text}; {'; '.join(inside[:2])}" if text else "; ".join(inside[:2])
    if len(text) > MAX_PREFIX_CHARS:
        text = "…" + text[-(MAX_PREFIX_CHARS - 1):]
    return f"Section: {text}"
