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
class TargetsResolved:
    """``+names`` with ``+docs<N>``: the documents the question names, by what evidence, and where to search.

    ``search_inside``: how many documents the chunks are searched inside (0: the question names none and has no
    title, so the whole corpus)."""

    stage: ClassVar[str] = "resolve targets"
    named: frozenset[str]
    evidence: str  # "title": their text quotes the whole title; "name": a squashed company name; "words": rare
    # words; "initials": words whose initials an all-caps word of the title is; "": nothing named
    key: str  # the squashed title or name, the rare words (", "-joined), or the all-caps word ("ATI")
    spelled: str  # "initials": what the word stands for in the first named document
    rare: int  # a word held by at most this many documents counts as rare in this corpus
    titled: bool  # the question has a "Consider <title>; <question>" title
    search_inside: int  # documents the chunks come from; 0: every document
    file_names: bool  # the names were matched against file names as well as the text (``+filename``)


@dataclass(frozen=True, slots=True)
class DocumentsRanked:
    """``+docs<N>``: the documents chosen, best first, with their fused scores."""

    stage: ClassVar[str] = "rank documents"
    documents: tuple[str, ...]
    scores: tuple[float, ...]
    dense_share: float  # of the document score; the rest is the whole-document BM25
    lexical_query: str  # what the document BM25 read


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


TraceEntry = NamesRewritten | TargetsResolved | DocumentsRanked | ChunksRanked | Reranked
Entry = TypeVar("Entry", NamesRewritten, TargetsResolved, DocumentsRanked, ChunksRanked, Reranked)


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
