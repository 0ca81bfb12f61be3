"""Target resolution (``+names``): which documents a question is about, and by what evidence.

A question names its contract by a title ("Consider the Non-Disclosure Agreement of Munt; ..."), a company name,
squashed as file names write it ("BELLRINGBRANDS,INC") or not, a rare word, or initials. ``named_targets`` reads
that evidence against the corpus itself (no list of names exists): the whole title quoted, else squashed company
names, else the title's rare words, else initials. ``resolve_targets`` is the pipeline's stage: the documents
named, and how many documents the chunks are then searched inside (a titled question: N; one without a title:
each document it names, or every document when it names none).

What the evidence is read from (each document's squashed text and its substring signatures, its initials, and the
corpus's name vocabulary) is made once per lexical index generation and kept beside it (sac.index.derived);
``prepare`` makes it at build time.

``MAX_NAMED_DOCS`` = 3 and ``RARE_SHARE`` = 0.1 are knobs; docs/methods.md lists each with the data it was set on.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sac.index import lexical, substrings
from sac.index.derived import Keep, code_version
from sac.index.lexical import STOPWORDS, WORD, LexicalIndex
from sac.index.substrings import SubstringIndex, signatures_of
from sac.retrieval import names
from sac.retrieval.trace import TargetsResolved

MAX_NAMED_DOCS = 3  # a name found in more documents than this names none of them
RARE_SHARE = 0.1  # a title word names documents only when at most this share of the corpus holds it


def resolve_targets(documents: LexicalIndex, asked: str, n_docs: int, *, file_names: bool) -> TargetsResolved:
    """The pipeline's target stage: what ``asked`` (the question as the user wrote it) names.

    It also says how many documents the question's chunks are searched inside (``search_inside``: 0 for every
    document)."""
    targets = named_targets(documents, asked)
    return TargetsResolved(named=targets.documents, evidence=targets.evidence, key=targets.key,
                           spelled=targets.spelled, rare=targets.rare, titled=bool(names.split_title(asked)[0]),
                           search_inside=search_inside(targets, asked, n_docs), file_names=file_names)


@dataclass(frozen=True)
class Targets:
    """What a question names (``named_targets``): the documents, by what evidence they were found, and what matched."""

    documents: frozenset[str]
    evidence: str  # "title": their text quotes the whole title; "name": a squashed company name; "words": rare words;
    # "initials": words whose initials an all-caps word of the title is; "": the title names no document (or
    # there is no title)
    key: str = ""  # the squashed title or name, the rare words (", "-joined), or the all-caps word ("ATI")
    spelled: str = ""  # "initials": what the word stands for in the first named document ("AMPHENOL Tuchel Industrial")
    rare: int = field(default=MAX_NAMED_DOCS, compare=False)  # a word held by at most this many documents is rare here


def named_targets(documents: LexicalIndex, query: str) -> Targets:
    """The documents the question names (at most MAX_NAMED_DOCS) and by what evidence.

    First the whole title, squashed, when it has two words or more: the documents whose squashed text quotes it
    (a heading the text gives, "Non-Disclosure Agreement for Project Proposals", where no word is rare). Then
    the squashed names ("BELLRINGBRANDS,INC"): the documents whose squashed text holds one. Else the title's
    rare words (``title_words``; rare: held by at most MAX_NAMED_DOCS documents and RARE_SHARE of the corpus, so
    none under 10 documents, with a title or without, where a word one contract happens to use says little: of
    the 5 demo NDAs only VELCO's writes "NDA", so "Which NDA lets the Receiving Party keep copies?" would name
    it, and "the Mutual NDA of <a name its text never writes>" too;
    bench/notes/2026-12-05-rare-word-under-10-documents-not-adopted.md measures the alternative): the documents
    holding the most of them. Else an all-caps word of the title that no document writes, read as initials
    (``by_initials``). The title is read as asked, not as ``+names`` rewrote it: the pieces of a squashed name its
    contract never writes are plain words ("MRSFIELDSORIGINALCOOKIESINC" -> "Cookies") that other contracts hold
    (on CUAD dev, file-name titles: 64 questions named only wrong documents that way, none as asked;
    bench/notes/2026-12-01-what-the-selection-figures-say.md). A question without a title names documents by its
    squashed names and by its capitalised rare words (``name_words``: "Does Glamis ...?"; otherwise it is searched
    across the corpus, ``search_inside``); lower-case words of a question are what it asks, not whom. The texts
    and words are the lexical ``documents`` index's; a squashed key is looked up through ``sac.index.substrings``,
    which reads only the texts that can hold it."""
    title = names.split_title(query)[0]
    whole = [names.squash(title)] if len(title.split()) > 1 else []
    keys = whole + names.squashed_names(query)
    if keys:
        texts = squashed_texts(documents)
        for key in keys:  # the fullest form first: the title, then "bellringbrandsinc" before "bellringbrands"
            hits = frozenset(documents.ids[i] for i in texts.holding(key))
            if 0 < len(hits) <= MAX_NAMED_DOCS:
                return Targets(hits, "title" if key in whole else "name", key)
    votes: Counter[str] = Counter()
    voters: dict[str, list[str]] = {}
    rare = min(MAX_NAMED_DOCS, int(RARE_SHARE * len(documents)))
    for word in [] if rare < 1 else name_words(query):
        holders = documents.ids_with(word)
        if 0 < len(holders) <= rare:
            votes.update(holders)
            for d in holders:
                voters.setdefault(d, []).append(word)
    if votes:
        most = max(votes.values())
        named = frozenset(d for d, n in votes.items() if n == most)
        if len(named) <= MAX_NAMED_DOCS:
            return Targets(named, "words", ", ".join(dict.fromkeys(w for d in sorted(named) for w in voters[d])), rare=rare)
    return by_initials(documents, query, rare)


def by_initials(documents: LexicalIndex, query: str, rare: int) -> Targets:
    """The documents that write out what an all-caps word of the title abbreviates, where no document writes the word.

    The words are ``names.acronyms``: "ATI's Mutual Non-Disclosure Agreement" names the NDA between "AMPHENOL
    Tuchel Industrial GmbH" and a blank. Read only when nothing else of the title names a document, and, like a
    rare word, only when at most ``rare`` documents hold the initials; the key says what they stand for."""
    for acronym in [] if rare < 1 else names.acronyms(query):
        if acronym.casefold() in STOPWORDS or documents.ids_with(acronym.casefold()):
            continue  # a word the corpus writes is read as a word, above; every text writes "AND", "THE"
        key = acronym.casefold()
        rows = [i for i, text in enumerate(initials_texts(documents)) if key in text]
        if 0 < len(rows) <= rare:
            spelled = names.spelled_out(acronym, documents.document_texts()[rows[0]]) or ""
            return Targets(frozenset(documents.ids[i] for i in rows), "initials", acronym, spelled, rare)
    return Targets(frozenset(), "", rare=rare)


_SQUASH_VERSION = code_version(names, substrings, sys.modules[__name__])  # what squashes, signs and writes them


def squashed_texts(documents: LexicalIndex) -> SubstringIndex:
    """The documents' squashed texts (one line each) and their substring signatures, as ``named_targets`` reads them.

    A squashed text has no line break. Made once per index generation and kept beside it (sac.index.derived);
    asked once per question, so past the first it is one look-up."""
    return documents.derived("substrings", lambda: _substring_index(documents))


def _substring_index(documents: LexicalIndex) -> SubstringIndex:
    def read_signatures(path: Path, rows: int) -> np.ndarray:
        signatures: np.ndarray = np.load(path)
        if signatures.shape != (rows, substrings.BITS // 8):
            raise ValueError(f"kept signatures of shape {signatures.shape} for {rows} documents")
        return signatures

    texts = _kept_lines(documents, "squashed_texts", names.squash)

    def make() -> np.ndarray:
        before = _previous_rows(documents, "squashed_signatures", read_signatures)
        keys = _row_keys(documents)
        fresh = [i for i, key in enumerate(keys) if key not in before]
        made = signatures_of([texts[i] for i in fresh])
        signatures = np.zeros((len(keys), substrings.BITS // 8), dtype=np.uint8)
        for i, key in enumerate(keys):
            if key in before:
                signatures[i] = before[key]
        signatures[fresh] = made
        return signatures

    signatures = documents.derived(
        "squashed_signatures", make,
        Keep(_SQUASH_VERSION, write=lambda signatures, out: np.save(out, signatures),
             read=lambda path: read_signatures(path, len(documents))))
    return SubstringIndex(texts, signatures)


def initials_texts(documents: LexicalIndex) -> list[str]:
    """The documents' initials (``names.initials``: one line each), as ``by_initials`` reads them.

    Made once per index generation and kept beside it (sac.index.derived). About a twentieth of the text's length
    (1.4 MB for the 509 CUAD contracts; bench/notes/2026-12-04-names-derived-data-kept.md), so read whole."""
    return _kept_lines(documents, "initials", names.initials)


def _kept_lines(documents: LexicalIndex, key: str, line: Callable[[str], str]) -> list[str]:
    """``line`` of each document's text (one line: no line break in it), made once per index generation.

    Made only for the documents the generation before did not have (``_previous_rows``), and kept beside the
    generation under ``key`` as one text file."""

    def read(path: Path, rows: int) -> list[str]:
        lines = path.read_text(encoding="utf-8").split("\n") if rows else []
        if len(lines) != rows:
            raise ValueError(f"{len(lines)} kept {key} for {rows} documents")
        return lines

    def make() -> list[str]:
        before = _previous_rows(documents, key, read)
        return [before[k] if k in before else line(text)
                for k, text in zip(_row_keys(documents), documents.document_texts())]

    return documents.derived(
        key, make, Keep(_SQUASH_VERSION, write=lambda lines, out: out.write("\n".join(lines).encode("utf-8")),
                        read=lambda path: read(path, len(documents))))


def _row_keys(documents: LexicalIndex) -> list[tuple[str, str]]:
    return list(zip(documents.ids, documents.signatures))


def _previous_rows(documents: LexicalIndex, key: str, read: Callable[[Path, int], Any]) -> dict[tuple[str, str], Any]:
    """(document id, signature) -> its row of what the generation this one replaced kept under ``key``.

    The rows come from ``LexicalIndex.previous``, read by ``read(path, rows)``; empty where that generation kept
    nothing this code can use."""
    before = documents.previous(key, _SQUASH_VERSION)
    if before is None:
        return {}
    where, path = before
    try:
        data = read(path, len(where))
    except (OSError, ValueError, EOFError):
        return {}
    return {k: data[row] for k, row in where.items()}


_QUESTION_WORD = re.compile(r"[^\W_][\w'’]*")


def title_words(query: str) -> list[str]:
    """The words of a "Consider <title>; <question>" title that could name a document; none without a title.

    Read as the lexical index writes single words (no word pairs: "CEII and NDA" gives no "ceiinda"): 3+
    characters with a letter, no stopword, possessives dropped ("Munt's" -> "munt"). Which of them name a
    document is left to the corpus: a word few documents hold ("Munt", "Visp", "Fonterra"), not one most
    contracts share ("Agreement", "Supply")."""
    return _words_of(names.split_title(query)[0])


def _words_of(text: str) -> list[str]:
    text = re.sub(r"(?<=\w)['’]s?(?!\w)", "", text)
    words = dict.fromkeys(WORD.findall(text.lower()))
    return [w for w in words if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS]


def name_words(query: str) -> list[str]:
    """The words that may name the question's document: its title's, or its capitalised words without a title.

    A titled question's are ``title_words``; a question without a title gives its capitalised words, filtered
    alike ("Glamis" in "Can Glamis terminate the agreement on notice?"; a capitalised common word, "Can", is
    held by too many documents to name any). A sentence's first word is capitalised anyway, so it counts only
    when it looks like a name by more than that: capitals inside it or a possessive ("VELCO", "GluMobile",
    "Glamis's"); "Summarize ..." and "Highlight ..." ask, they do not name (each is held by one to three contracts
    of the dev pools)."""
    if names.split_title(query)[0]:
        return title_words(query)
    kept = []
    for m in _QUESTION_WORD.finditer(query):
        word = m.group(0)
        if not word[0].isupper():
            continue
        starts_sentence = query[:m.start()].rstrip()[-1:] in ("", ".", "?", "!", ";", ":")
        if starts_sentence and not (any(c.isupper() for c in word[1:]) or re.search(r"['’]s?$", word)):
            continue
        kept.append(word)
    return _words_of(" ".join(kept))


def search_inside(targets: Targets, query: str, n_docs: int) -> int:
    """How many documents ``+docs<N>`` searches inside under ``+names``; 0: every document.

    A title says the question is about one document: N, even where the title names none (LegalBench-RAG's form),
    and the whole question chooses among the documents it names (two NDAs of one company). A question without a
    title is about every document it names, so it is searched inside each where it names more than N ("Does the
    Sponsor have exclusive rights?" names the two sponsorship agreements of the 29 demo contracts, and searching
    one would hide the other); one that names none is about the whole corpus ("Which agreements can be
    terminated for convenience?") and is searched across it, since searching one would give the k hits of one
    document the words happen to favour."""
    return n_docs if names.split_title(query)[0] else max(n_docs, len(targets.documents)) if targets.documents else 0


_VOCABULARY = Keep(code_version(names, sys.modules[__name__]),
                   write=lambda vocab, out: out.write(vocab.to_json().encode("utf-8")),
                   read=lambda path: names.NameVocabulary.from_json(path.read_text(encoding="utf-8")))


def name_vocabulary(documents: LexicalIndex) -> names.NameVocabulary:
    """The corpus words ``+names`` spells squashed names with, from the documents' text.

    Made once per index generation and kept beside it (sac.index.derived). A generation that holds every text of
    the one it replaced (an upload, a summary edit) counts only its new texts into that one's vocabulary
    (``NameVocabulary.grown``); after a removal or a changed text, every text is counted."""

    def make() -> names.NameVocabulary:
        texts = documents.document_texts()
        before = documents.previous("names_vocabulary", _VOCABULARY.version)
        if before is not None:
            grown: names.NameVocabulary | None
            try:
                grown = _VOCABULARY.read(before[1]).grown(texts)
            except (OSError, ValueError):
                grown = None
            if grown is not None:
                return grown
        return names.NameVocabulary.from_texts(texts)

    return documents.derived("names_vocabulary", make, _VOCABULARY)


def prepare(lexicons: dict[str, lexical.LexicalIndex]) -> None:
    """Make and keep what the first ``+names`` question of a new index generation would otherwise wait for.

    That is the vocabulary, the squashed texts and their signatures, and the initials; made only for the
    documents, or the vocabulary only for the texts, the generation before lacked. A build and a removal call it
    after the lexical refresh."""
    name_vocabulary(lexicons["documents"])
    squashed_texts(lexicons["documents"])
    initials_texts(lexicons["documents"])
    lexicons["documents"].drop_previous()  # what the generation before made is in these now
