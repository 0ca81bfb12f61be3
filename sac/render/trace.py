"""A search trace in words: the (label, text) lines Compare and ``sac query`` show under a method's hits."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from sac.retrieval.trace import (
    Candidate,
    ChunksRanked,
    DocumentsPinned,
    DocumentsRanked,
    Match,
    NamesRewritten,
    Reranked,
    SearchTrace,
    TargetsResolved,
)
from sac.types import document_title


def trace_notes(trace: SearchTrace, question: str, targets: frozenset[str] = frozenset(),
                titles: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """What the search did with the question, stage by stage, as (label, text) lines.

    The question as searched where ``+names`` rewrote it, what it names and by what evidence, the documents
    searched inside (and whether the question's own document, where known, is among them), how the chunks were
    ranked, and any reranking. ``titles`` names documents (doc id -> display name; the file title where missing)."""
    notes: list[tuple[str, str]] = []
    rewritten = trace.find(NamesRewritten)
    if rewritten is not None and rewritten.searched != question.strip():
        notes.append(("Searched as:", rewritten.searched))
    resolved = trace.find(TargetsResolved)
    if resolved is not None:
        notes.append(("Named:", _named(resolved, titles or {})))
    pinned = trace.find(DocumentsPinned)
    if pinned is not None:
        notes.append(("Pinned:", "; ".join((titles or {}).get(d, document_title(d)) for d in pinned.documents)
                      + ": searched inside it alone"))
    ranked = trace.find(DocumentsRanked)
    if ranked is not None:
        inside = "; ".join((titles or {}).get(d, document_title(d)) for d in ranked.documents)
        missed = " (not the question's document)" if targets and not targets & set(ranked.documents) else ""
        notes.append(("Searched inside:", inside + missed))
    chunks = trace.find(ChunksRanked)
    if chunks is not None:
        how = "" if chunks.dense_share is None else (
            f"its meaning and its words, fused ({100 * chunks.dense_share:g} % embedding, "
            f"{100 - 100 * chunks.dense_share:g} % BM25)")
        if chunks.without_title:
            notes.append(("Ranked inside by:", f"the question without its title: “{chunks.ranked_by}”"
                          + (f"; {how}" if how else "")))
        elif how:
            notes.append(("Ranked by:", f"the question, {how}"))
    reranked = trace.find(Reranked)
    if reranked is not None:
        notes.append(("Reranked:", f"the top {reranked.candidates} by the {reranked.reranker} reranker"))
    return notes


def named_target(traces: Iterable[SearchTrace]) -> Candidate | None:
    """The contract the question names for sure: the one confident target of every method that is sure of one.

    At the lowest probability those methods give it; None where no method is sure, or two are sure of different
    contracts (then ``offered_targets`` offers both)."""
    sure = [r.target for r in (t.find(TargetsResolved) for t in traces) if r is not None and r.target is not None]
    if not sure or len({c.doc_id for c in sure}) > 1:
        return None
    return min(sure, key=lambda c: c.probability)


def offered_targets(traces: Iterable[SearchTrace], limit: int = 5) -> list[Candidate]:
    """The contracts to offer where the question is ambiguous ("Which contract did you mean?").

    Every method's likely candidates, each once at the highest probability a method gives it, most probable first,
    at most ``limit``; none where ``named_target`` names one for sure."""
    traces = list(traces)
    if named_target(traces) is not None:
        return []
    best: dict[str, Candidate] = {}
    for trace in traces:
        resolved = trace.find(TargetsResolved)
        if resolved is None:
            continue
        for c in resolved.candidates:
            if c.doc_id in resolved.likely and (c.doc_id not in best or c.probability > best[c.doc_id].probability):
                best[c.doc_id] = c
    return sorted(best.values(), key=lambda c: (-c.probability, c.doc_id))[:limit]


def how_sure(probability: float) -> str:
    """A target's probability as every page and the command line say it: "84% sure"."""
    return f"{probability:.0%} sure"


def _named(resolved: TargetsResolved, titles: Mapping[str, str]) -> str:
    """What the question names, how sure, and from what clues; or why it names nothing."""
    where = "file names or text" if resolved.file_names else "text"
    likely = [c for c in resolved.candidates if c.doc_id in resolved.likely]
    if not likely:
        if not resolved.titled:
            return ("nothing: no company name, party, title or capitalised word of the question names a document of "
                    f"this corpus by its {where}, so every document was searched.")
        return ("no document for sure: nothing in the title names one document of this corpus by its "
                f"{where}, so documents were ranked by summary, best chunk and the title's BM25, and a look-alike can "
                "win.")
    if resolved.confident:
        top = likely[0]
        return f"{titles.get(top.doc_id, document_title(top.doc_id))} ({how_sure(top.probability)}): {_clues(top, resolved.file_names)}."
    listed = "; ".join(f"{titles.get(c.doc_id, document_title(c.doc_id))} {c.probability:.0%} ({_clues(c, resolved.file_names)})"
                       for c in likely)
    searched = ("searched inside the most probable" if resolved.titled
                else "a question without a title is searched inside each")
    return f"not sure which contract: {listed}; {searched}. Which contract did you mean?"


def _clues(candidate: Candidate, file_names: bool = False) -> str:
    """The strongest clues that point to a candidate, in words.

    ``file_names``: the clues were read in its file name as well as its text."""
    strength = {"quote": 0, "name": 1, "party": 2, "initials": 3, "start": 4, "text_start": 5, "heading": 6, "title": 7,
                "text": 8}
    seen: set[str] = set()
    shown: list[str] = []
    for m in sorted(candidate.matches, key=lambda m: (strength.get(m.kind, 9), m.holders)):
        if m.word in seen or len(shown) == 3:
            continue
        seen.add(m.word)
        shown.append(_clue(m, "its file name or text" if file_names else "its text"))
    return "; ".join(shown)


def _clue(m: Match, where: str = "its text") -> str:
    held = "no other document writes it" if m.holders == 1 else f"{m.holders} documents write it"
    return {
        "quote": f"{where} quotes the title “{m.word}”",
        "heading": f"{where} has the heading “{m.word}”",
        "name": f"{where} writes the company name “{m.word}” (letters and digits compared)",
        "start": f"its party “{m.found}” starts the company name asked (letters and digits compared)",
        "text_start": f"{where} writes “{m.found}”, the start of the company name asked (letters and digits compared)",
        "party": f"“{m.word}” is a word of its party “{m.found}”",
        "title": f"“{m.word}” is a word of its title “{m.found}”",
        "text": f"{where} writes “{m.found}”",
        "initials": f"{where} spells out “{m.word}”: “{m.found}”",
    }.get(m.kind, m.word) + f" ({held})"
