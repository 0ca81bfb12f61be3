"""What a search decided, stage by stage, and from what evidence: returned with the hits.

Each stage of ``sac.retrieval.pipeline`` appends one entry; Compare and ``sac query`` word the entries
(``sac.render.trace``), so what a user reads is a record of the search itself, never a second computation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, TypeVar

from sac.types import Hit


@dataclass(frozen=True, slots=True)
class NamesRewritten:
    """``+names``: the question with its squashed company names written as the corpus writes them."""

    stage: ClassVar[str] = "rewrite names"
    asked: str
    searched: str


@dataclass(frozen=True, slots=True)
class Match:
    """One clue of a question found in a document: what the question wrote, of what kind, what the document writes."""

    word: str  # the question's word, name or title
    kind: str  # "quote", "heading", "name", "start", "text_start", "party", "title", "text" or "initials" (targets.FEATURES)
    found: str  # what the document writes: the party or title it is a word of, the spelled-out initials, or the word
    at: int  # where in the document's text (a character offset; -1 where the clue is not one place)
    holders: int  # how many documents of the corpus hold it


@dataclass(frozen=True, slots=True)
class Candidate:
    """A document the question may be about, with its probability and the clues that point to it."""

    doc_id: str
    probability: float
    matches: tuple[Match, ...]


@dataclass(frozen=True, slots=True)
class TargetsResolved:
    """``+names`` with ``+docs<N>``: the documents the question may be about, how sure, and where it is searched.

    ``candidates`` (a document, its probability, the clues that point to it) come most probable first; ``none`` is
    the probability that the question names none of them; ``likely`` are the candidates probable enough to offer
    and to rank first (sac.retrieval.targets.LIKELY)."""

    stage: ClassVar[str] = "resolve targets"
    candidates: tuple[Candidate, ...]
    none: float
    likely: tuple[str, ...]
    confident: bool  # the top candidate's probability reaches the sure threshold (targets.CONFIDENT)
    titled: bool  # the question has a "Consider <title>; <question>" title
    search_inside: int  # documents the chunks come from; 0: every document
    file_names: bool  # the clues were read in file names as well as the text (``+filename``)

    @property
    def target(self) -> Candidate | None:
        """The sure candidate, or None."""
        return self.candidates[0] if self.confident and self.candidates else None

    @property
    def probability_of(self) -> dict[str, float]:
        """Document id -> its probability, for the candidates kept."""
        return {c.doc_id: c.probability for c in self.candidates}


@dataclass(frozen=True, slots=True)
class DocumentsRanked:
    """``+docs<N>``: the documents chosen, best first, with their fused scores."""

    stage: ClassVar[str] = "rank documents"
    documents: tuple[str, ...]
    scores: tuple[float, ...]
    dense_share: float  # of the document score; the rest is the whole-document BM25
    lexical_query: str  # what the document BM25 read


@dataclass(frozen=True, slots=True)
class DocumentsPinned:
    """The user pinned the contract(s) the question is about: the search keeps to them."""

    stage: ClassVar[str] = "pinned"
    documents: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ChunksRanked:
    """How the hits were ranked: by which text, inside which documents, dense or fused with BM25."""

    stage: ClassVar[str] = "rank chunks"
    ranked_by: str  # the text whose embedding (and BM25) ranked the chunks
    without_title: bool  # ``+inner``: ``ranked_by`` is the question without its title
    within: tuple[str, ...]  # the documents searched inside; () for the whole corpus
    dense_share: float | None  # ``+hybrid<w>``: w; None for dense only
    candidates: int  # chunks ranked before the top k was cut


@dataclass(frozen=True, slots=True)
class Reranked:
    """``+rerank[N]``: the first stage's top N reordered by a reranker."""

    stage: ClassVar[str] = "rerank"
    reranker: str
    candidates: int


TraceEntry = NamesRewritten | TargetsResolved | DocumentsRanked | DocumentsPinned | ChunksRanked | Reranked
Entry = TypeVar("Entry", NamesRewritten, TargetsResolved, DocumentsRanked, DocumentsPinned, ChunksRanked, Reranked)


@dataclass(frozen=True, slots=True)
class SearchTrace:
    """The entries of one question's search, in stage order."""

    entries: tuple[TraceEntry, ...] = ()

    def find(self, kind: type[Entry]) -> Entry | None:
        """The entry of that stage, or None where the stage did not run."""
        for entry in self.entries:
            if isinstance(entry, kind):
                return entry
        return None

    @property
    def searched_inside(self) -> tuple[str, ...]:
        """The documents the hits were restricted to; () for the whole corpus."""
        ranked = self.find(ChunksRanked)
        return ranked.within if ranked else ()


@dataclass(frozen=True, slots=True)
class SearchResult:
    """One question's hits, best first, and the trace of how they were found."""

    hits: tuple[Hit, ...]
    trace: SearchTrace
