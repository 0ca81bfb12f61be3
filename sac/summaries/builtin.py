"""The built-in extractive summarizer: offline, deterministic, no model."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from sac.errors import ConfigError
from sac.summaries.facts import BUILTIN_VERSION, DocumentFacts, _find_subject, _find_topic, extract_facts
from sac.summaries.parties import join_parties
from sac.summaries.prompts import MIN_TARGET_CHARS, SLACK_CHARS, cut_at_word, made_summary
from sac.types import Document, Summary, text_hash

STRATEGIES = ("generic", "expert")
# Facts that answer clause questions rather than tell which contract it is: a summary does not write them.
ANSWER_FIELDS = ("law", "term")


@dataclass(repr=False)
class BuiltinSummarizer:
    """Offline extractive summaries that name their contract: type, parties, date, filer, subject; no model.

    ``generic`` reads as a sentence ("Supply Agreement between A Inc. (Alpha) and B Ltd. (28 Feb 2019)
    (filed by C Corp.), to ..."); ``expert`` is a fielded line ("<TYPE>: <parties>; <date>; <subject>;
    filer: <filer>"). Everything comes from the text, never the file name. Parties come first and may use the
    20 characters of slack; their defined short names and the filer go in where they fit; other fields that do
    not fit the target are left out; only names that alone exceed target + 20 are cut. Deterministic.

    A summary tells which contract it is and answers no clause question: the governing law and the term
    (``ANSWER_FIELDS``) are not written, since a summary that states "Texas law" draws a governing-law question to
    its contract whichever contract the question names (chosen on dev with documents resampled:
    bench/notes/2026-12-07-summaries-that-name.md). The other facts keep the place they have beside a law or a
    term, as in the summaries measured there: the room the answers leave is not given to a longer subject.
    """

    strategy: str = "generic"
    target_chars: int = 150
    model: str = field(default="builtin", init=False)
    name: str = field(default="", init=False)
    prompt_hash: str = field(default="", init=False)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ConfigError(f"Expected builtin strategy 'generic' or 'expert', got {self.strategy!r}")
        if self.target_chars < MIN_TARGET_CHARS:
            raise ConfigError(f"Expected target_chars >= {MIN_TARGET_CHARS}, got {self.target_chars}")
        self.name = f"builtin-{self.strategy}"
        # The version is in the hash: a heuristic change makes every cached builtin summary stale.
        self.prompt_hash = text_hash(f"builtin {self.strategy} extractive summary v{BUILTIN_VERSION}")

    def __repr__(self) -> str:
        return f"BuiltinSummarizer(strategy={self.strategy!r}, target_chars={self.target_chars})"

    def summarize(self, document: Document) -> Summary:
        """The extractive summary of ``document``, cut at a word when it is over ``target_chars`` (plus slack)."""
        text = self.summary_text(document)
        limit = self.target_chars + SLACK_CHARS
        cut = len(text) > limit
        if cut:
            text = cut_at_word(text, limit)
        return made_summary(self, document, text, cut=cut)

    def summary_text(self, document: Document) -> str:
        """The summary before any cut (may exceed the limit only when the names alone do)."""
        facts = extract_facts(document)
        if self.strategy == "expert":
            return self._expert(facts)
        return self._generic(facts)

    def _generic(self, facts: DocumentFacts) -> str:
        target = self.target_chars
        date = f" ({facts.date})" if facts.date else ""
        law = "" if not facts.law else f", {facts.law}" if facts.law.endswith(" law") else f", {facts.law} law"
        text = facts.kind
        if facts.parties:
            # "between" needs two parties; a policy is issued by its one controller.
            joiner = " of " if facts.doc_class == "privacy" else " between " if len(facts.parties) > 1 else " with "
            budget = max(40, target + SLACK_CHARS - len(text) - len(joiner))
            text += joiner + join_parties(facts.parties, budget, target - len(text) - len(joiner) - len(date + law))
        if date and len(text) + len(date) <= target:
            text += date
        if law and len(text) + len(law) > target:
            law = ""
        law_at = len(text)
        text += law
        # The filer names the contract as file lists do ("ACMECORP_..._Supply Agreement"): the parties' names
        # miss it when the filer is a parent or a third party. It may use the slack.
        if facts.filer and len(text) + len(facts.filer) + 12 <= target + SLACK_CHARS:
            text += f" (filed by {facts.filer})"
        # The subject may use half the slack: with it a summary still tells more than without.
        subject = self._subject(facts, target + SLACK_CHARS // 2 - len(text) - 2, text)
        text = f"{text}, {subject}" if subject else text
        # The law held its place while the other facts were fitted (see the class); it is not written.
        return text[:law_at] + text[law_at + len(law) :]

    def _expert(self, facts: DocumentFacts) -> str:
        target = self.target_chars
        kind = facts.kind
        if facts.doc_class == "nda" and not re.search(r"(?i)non[- ]?disclosure|\bnda\b", kind):
            kind = f"NDA ({kind})"
        reserve = sum(len(v) + 2 for v in (facts.date, facts.law and f"law: {facts.law}") if v)
        budget = max(40, target + SLACK_CHARS - len(kind) - 2)
        parties = join_parties(facts.parties, budget, target - len(kind) - 2 - reserve) or "parties not named"
        fields: dict[str, str] = {}
        # Fill by how well a field tells documents apart; write in the fixed order below. The filer may use
        # the slack (see _generic).
        for key, value, limit in (("date", facts.date, target), ("law", facts.law, target),
                                  ("filer", facts.filer, target + SLACK_CHARS), ("term", facts.term, target)):
            if value:
                trial = {**fields, key: value}
                if len(self._expert_line(kind, parties, trial)) <= limit:
                    fields = trial
        budget = target + SLACK_CHARS // 2 - len(self._expert_line(kind, parties, fields)) - 2
        subject = self._subject(facts, budget, kind + parties)
        if subject:
            fields["subject"] = subject
        return self._expert_line(kind, parties, {k: v for k, v in fields.items() if k not in ANSWER_FIELDS})

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
        if "filer" in fields:
            parts.append(f"filer: {fields['filer']}")
        if "law" in fields:
            parts.append(f"law: {fields['law']}")
        if "term" in fields:
            parts.append(f"term: {fields['term']}")
        return "; ".join(parts)
