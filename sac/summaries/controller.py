"""The controller of a privacy policy, for the built-in summarizer: the organisation the policy speaks for.

A policy names who issues it, not who it is "between", so the contract rules of ``sac.summaries.parties`` find
third parties or headings in it. Every rule is general: none names a particular policy or company.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from sac.summaries.casing import SMALL_WORDS
from sac.summaries.parties import (
    NAME_FIRST,
    NAME_WORD,
    QUOTED_RE,
    SUFFIX,
    Party,
    clean_name,
    is_role,
    name_key,
    not_a_name,
)

# A policy names who issues it, not who it is "between": the name it defines as "we" / "us" / "our"
# ("Example Media S.a r.l., its subsidiaries and affiliates ("Example" or "we")"), the one it "describes how"
# collects data, or the one that "respects your privacy". Names never span a line break here: a policy's
# heading line ("Example App Privacy Policy") sits right above its first sentence.
_LINE_NAME = rf"{NAME_FIRST}(?:[ \t]+{NAME_WORD}){{0,6}}?(?:,?[ \t]+{SUFFIX}\.?)?"
_WE = r"[\"“'‘][ \t]*(?:we|We|us|our)\b"
_CONTROLLER_RES = (
    re.compile(rf"(?<![\w&])({_LINE_NAME})(?:,?[ \t]+(?:and[ \t]+)?its[ \t][^()\n]{{0,80}}?)?,?[ \t]*"
               rf"\((?:[^()\n]{{0,60}}?)?{_WE}"),
    re.compile(rf"\b(?:describes|explains|sets[ \t]+out|outlines|tells[ \t]+you)[ \t]+how[ \t]+({_LINE_NAME})"
               r"(?=[ \t]*[(,]|[ \t]+(?:and[ \t]+its|collects?|uses?|treats?|handles?|processes|protects?|shares?|"
               r"gathers?|may)\b)"),
    re.compile(rf"(?<![\w&])({_LINE_NAME})[ \t]+(?:respects|values|is[ \t]+committed[ \t]+to[ \t]+protecting|"
               r"cares[ \t]+about)[ \t]+(?:your|the)[ \t]+privacy"),
)
_POLICY_WORDS = frozenset("privacy policy statement notice cookie cookies site website app application service "
                          "services platform terms".split())
_OPENING_WORDS_RE = re.compile(r"^(?:(?:welcome|here)\s+(?:to|at)|at|by|for|from|on|with|this|these|our)\s+(?=\S)",
                               re.IGNORECASE)


def find_controller(head: str, keep: Collection[str] = ()) -> Party | None:
    """The organisation a privacy policy speaks for, with the short names it defines beside "we" ("Example").

    Found by the first of ``_CONTROLLER_RES`` that finds a name; None when no pattern names one."""
    for regex in _CONTROLLER_RES:
        for match in regex.finditer(head):
            name = clean_name(_OPENING_WORDS_RE.sub("", match.group(1)), keep)
            words = {w for w in re.findall(r"[a-z]+", name.lower()) if w not in SMALL_WORDS}
            if not words or words <= _POLICY_WORDS or not_a_name(name):
                continue
            tail = head[match.end(1) : match.end()]
            shorts = tuple(dict.fromkeys(
                t for t in QUOTED_RE.findall(tail)
                if t[:1].isupper() and t.lower() not in {"we", "us", "our"} and name_key(t) != name_key(name)
                and not is_role(t.lower())))
            return Party(name, shorts)
    return None
