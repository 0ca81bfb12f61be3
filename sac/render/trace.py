"""A search trace in words: the (label, text) lines Compare and ``sac query`` show under a method's hits."""

from __future__ import annotations

from sac.retrieval.trace import ChunksRanked, DocumentsRanked, NamesRewritten, Reranked, SearchTrace, TargetsResolved
from sac.types import document_title
from sac.wording import counted


def trace_notes(trace: SearchTrace, question: str, targets: frozenset[str] = frozenset()) -> list[tuple[str, str]]:
    """What the search did with the question, stage by stage, as (label, text) lines.

    The question as searched where ``+names`` rewrote it, what it names and by what evidence, the documents
    searched inside (and whether the question's own document, where known, is among them), how the chunks were
    ranked, and any reranking."""
    notes: list[tuple[str, str]] = []
    rewritten = trace.find(NamesRewritten)
    if rewritten is not None and rewritten.searched != question.strip():
        notes.append(("Searched as:", rewritten.searched))
    resolved = trace.find(TargetsResolved)
    if resolved is not None:
        notes.append(("Named:", _named(resolved)))
    ranked = trace.find(DocumentsRanked)
    if ranked is not None:
        inside = "; ".join(document_title(d) for d in ranked.documents)
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


def _named(resolved: TargetsResolved) -> str:
    """What the question names and by what evidence, or why it names nothing."""
    named = sorted(resolved.named)
    listed = "; ".join(document_title(d) for d in named)
    whose = "its" if len(named) == 1 else "their"
    text = f"{whose} file name or text" if resolved.file_names else f"{whose} text"  # +filename reads both
    why = {
        "title": f"{text} quotes the whole title",
        "name": f"{text} writes the company name “{resolved.key}” (letters and digits compared)",
        "words": f"{text} holds the {'title' if resolved.titled else 'question'}'s rare word(s) {resolved.key} "
                 f"(at most {counted(resolved.rare, 'document')} {'does' if resolved.rare == 1 else 'do'})",
        "initials": f"{text} writes out what the title's “{resolved.key}” stands for: “{resolved.spelled}” (no "
                    "document writes the word itself)",
    }.get(resolved.evidence, "")
    few = (f"more than {counted(resolved.rare, 'document')} {'shares' if resolved.rare == 1 else 'share'} it"
           if resolved.rare else "in a corpus under 10 documents no word counts as rare")
    if not named and not resolved.titled:
        where = "file name or text" if resolved.file_names else "text"
        return ("nothing: the question has no “Consider <document>; <question>” title, and no company name or "
                f"capitalised rare word of it is in a document's {where} ({few}), so every document was searched.")
    if not named:
        where = "file names or text" if resolved.file_names else "text"
        return ("no document: no quoted heading, company name, rare word or spelled-out initials of the title is in "
                f"this corpus's {where} ({few}), so documents were ranked by summary, best chunk and the title's BM25, "
                "and a look-alike can win.")
    chose = ("" if len(named) < 2 else "; the whole question chose between them" if resolved.titled
             else "; a question without a title is searched inside each")
    return f"{listed}: {why}{chose}."
