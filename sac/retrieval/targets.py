"""Target resolution (``+names``): which documents a question is about, how sure, and from what evidence.

A question names its contract by a title ("Consider the Non-Disclosure Agreement of Munt; ..."), a company name,
squashed as file names write it ("BELLRINGBRANDS,INC") or not, a defined short name, a rare word, or initials.
``evidence`` reads every such clue against the corpus itself (no list of names exists) and ``candidates`` scores
the documents with one small model, a conditional logit over every document and a "none of them" option:

    score(d) = sum over kinds of clue f of WEIGHTS[f] * x_f(d)
    none = NULL_SCORE + UNHELD_WEIGHT * unheld
    P(d) = exp(score(d)) / (exp(none) + sum over every document d' of exp(score(d')))

where x_f(d) counts the clues of kind f that d holds, and a document with no clue scores 0. Rarity comes from the
sum over every document: a clue that one document of this corpus holds lifts it alone, one that ten documents share
lifts all ten, so each keeps a tenth of what it would; the same clue is the more convincing the smaller the corpus.
The kinds: the whole title quoted in the text (``quote``; ``heading`` where the title is type words alone, "Mutual
Non-Disclosure Agreement"), a squashed company name (``name``), a word of the document's parties or their defined
short names (``party``), of its title (``title``), of its text at all (``text``), a party whose first word(s) start
a squashed name no document writes whole (``start``: "Flotek Chemistry, LLC" for "FLOTEKINDUSTRIESINCCN"), the
longest start of such a name that the texts write as whole words, where a text writes it in its head (``text_start``:
"Rubio's" for "RUBIOSRESTAURANTSINC", where the contract names its party in a form layout), and initials the text
spells out where no document writes the word (``initials``); ``alone`` counts the clues no other document holds, which name one
document whatever the corpus's size, and ``alone_ln_corpus`` is that count times the natural log of the corpus's size:
every document starts equally likely, so a clue that points to one document of N must outweigh the N - 1 others, and
one no other of 250 documents holds says more than one no other of 3 does (the dev fit gives it a weight near 1, as
that reasoning expects). ``unheld`` counts the question's name words that no document of the corpus writes at all,
nor a start of them as words ("Flotek" asked of five NDAs): the contract it names is likely not in the corpus, so they
lift the "none" option. The weights, UNHELD_WEIGHT, NULL_SCORE, CONFIDENT and LIKELY are fitted and chosen on the dev
split (bench/target_model.py; docs/methods.md lists every knob with the data it was set on).

``resolve_targets`` is the pipeline's stage: the candidates with their probabilities and evidence, whether the top
one is sure (P >= CONFIDENT), and how many documents the chunks are searched inside (a titled question: N, the
likely candidates ranked first by their probability; one without a title: each likely candidate (P >= LIKELY), or
every document when it names none).

What the evidence is read from (each document's parties and title from its text, its squashed text and substring
signatures, its initials, the corpus's name vocabulary) is made once per lexical index generation and kept beside
it (sac.index.derived); ``prepare`` makes it at build time.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from sac.index import lexical, substrings
from sac.index.derived import Keep, code_version
from sac.index.lexical import STOPWORDS, WORD, LexicalIndex
from sac.index.substrings import SubstringIndex, signatures_of
from sac.ingest.identifiable import DOCTYPE_WORDS, MIN_PREFIX
from sac.retrieval import names
from sac.retrieval.trace import Candidate, Match, TargetsResolved
from sac.summaries import facts, parties
from sac.summaries.facts import extract_facts
from sac.summaries.parties import ROLE_WORDS
from sac.types import Document

FEATURES = ("quote", "heading", "name", "start", "text_start", "party", "title", "text", "initials", "alone",
            "alone_ln_corpus")
# Fitted on the dev split (bench/results/target-model-dev.json, made by bench/target_model.py fit).
WEIGHTS: dict[str, float] = {"quote": 0.1923, "heading": 3.8018, "name": 2.9293, "start": 0.7762, "text_start": 0.8203,
                             "party": 1.5973, "title": 2.8041, "text": 1.3238, "initials": 0.9467, "alone": 0.9734,
                             "alone_ln_corpus": 1.0673}
UNHELD_WEIGHT = 2.3215  # the "none" option's lift per name word of the question that no document writes
NULL_SCORE = 3.8676  # the "none of these documents" option's score
CONFIDENT = 0.502  # the top candidate is sure from this probability on (chosen on dev for at most 1 % wrong)
LIKELY = 0.1  # a candidate this probable is offered ("which contract did you mean?") and ranked first (a stated choice)
MAX_HOLDERS = 50  # a clue more documents hold than this is no clue (it would count at most 1/50)
MAX_SHARE = 0.5  # nor is one that more than half the corpus holds: it says nothing about which of them
SHOWN = 5  # candidates a trace keeps
# A company's legal form ("LLC", "Inc.", "Company", "University"): every party has one, so it names none.
LEGAL_FORM_WORDS = frozenset(w.lower() for w in re.findall(r"[A-Za-z]{2,}", parties.SUFFIX))
# Words that say what kind of document or party, not which: a title made of them quotes no one, a squashed name or a
# word of them names no one; only a document's title may hold them as a clue.
GENERIC_WORDS = DOCTYPE_WORDS | ROLE_WORDS | LEGAL_FORM_WORDS


def resolve_targets(documents: LexicalIndex, asked: str, n_docs: int, *, file_names: bool) -> TargetsResolved:
    """The pipeline's target stage: the documents ``asked`` (the question as the user wrote it) may be about.

    With their probabilities and evidence, whether the top one is sure, and how many documents the question's chunks
    are searched inside (``search_inside``: 0 for every document)."""
    found, none = candidates(documents, asked)
    titled = bool(names.split_title(asked)[0])
    likely = [c for c in found if c.probability >= LIKELY]
    inside = n_docs if titled else max(n_docs, len(likely)) if likely else 0
    confidence = found[0].probability if found else 0.0
    return TargetsResolved(candidates=tuple(found[:SHOWN]), none=none, likely=tuple(c.doc_id for c in likely),
                           confident=confidence >= CONFIDENT, titled=titled, search_inside=inside,
                           file_names=file_names)


def candidates(documents: LexicalIndex, asked: str, weights: dict[str, float] | None = None,
               null_score: float | None = None, unheld_weight: float | None = None) -> tuple[list[Candidate], float]:
    """Every document with a clue of ``asked``, most probable first, and the probability that it names none."""
    weights = WEIGHTS if weights is None else weights
    null_score = NULL_SCORE if null_score is None else null_score
    unheld_weight = UNHELD_WEIGHT if unheld_weight is None else unheld_weight
    clues = evidence(documents, asked)
    order = sorted(clues)
    scores = np.array([sum(weights[f] * x for f, x in features(clues[d], len(documents)).items()) for d in order])
    p, none = probabilities(scores, len(documents), null_score + unheld_weight * unheld(documents, asked))
    found = [Candidate(d, float(q), tuple(clues[d])) for d, q in zip(order, p)]
    found.sort(key=lambda c: (-c.probability, c.doc_id))
    return found, none


def probabilities(scores: np.ndarray, corpus: int, null_score: float) -> tuple[np.ndarray, float]:
    """The candidates' probabilities and the "none" option's, in a corpus of ``corpus`` documents.

    Every document without a clue scores 0 and shares the rest: a clue that many documents hold lifts each a little,
    one only this document holds lifts it alone."""
    top = max(float(scores.max()) if len(scores) else 0.0, null_score, 0.0)
    exp = np.exp(scores - top)
    rest = max(corpus - len(scores), 0) * float(np.exp(-top))
    none = float(np.exp(null_score - top))
    total = float(exp.sum()) + rest + none
    return exp / total, none / total


def features(matches: list[Match], corpus: int) -> dict[str, float]:
    """x_f of one document of a corpus of ``corpus`` documents: per kind of clue, how many distinct ones it holds.

    ``alone``: how many no other document holds, and ``alone_ln_corpus`` that count times ln(corpus). A quoted
    title, a squashed name, its starts and initials count once each, their fullest form; a heading of type words alone
    ("Non-Disclosure Agreement") is no clue that only its holder holds."""
    x = dict.fromkeys(FEATURES, 0.0)
    for kind in ("quote", "heading", "name", "start", "text_start", "initials"):
        x[kind] = float(any(m.kind == kind for m in matches))
    for kind in ("party", "title", "text"):
        x[kind] = float(len({m.word for m in matches if m.kind == kind}))
    x["alone"] = float(len({m.word for m in matches if m.holders == 1 and m.kind != "heading"}))
    x["alone_ln_corpus"] = x["alone"] * float(np.log(max(corpus, 1)))
    return x


def evidence(documents: LexicalIndex, asked: str) -> dict[str, list[Match]]:
    """Document id -> the clues of ``asked`` it holds (``Match``), for every document holding at least one.

    The title (or, without one, the question) is read as asked, not as ``+names`` rewrote it: the pieces of a
    squashed name its contract never writes are plain words that other contracts hold. Lower-case words of a
    question without a title are what it asks, not whom (``name_words``)."""
    out: dict[str, list[Match]] = {}
    ids = documents.ids
    most = min(MAX_HOLDERS, max(1, int(MAX_SHARE * len(ids))))
    for d, match in _squashed_clues(documents, asked, most):
        out.setdefault(d, []).append(match)
    words = name_words(asked)
    if words:
        known = document_evidence(documents)
        texts_of = documents.document_texts()
        row_of = documents.row_of
        for word in words:
            holders = documents.ids_with(word)
            if not 0 < len(holders) <= most:
                continue
            for d in holders:
                row = row_of[d]
                text = texts_of[row]
                where = re.search(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])", text, re.IGNORECASE)
                at = where.start() if where else -1
                clues: list[Match] = []
                parties, heading = known[row]
                if heading and word in _words_of(heading):
                    clues.append(Match(word, "title", heading, _find(text, heading), len(holders)))
                if word not in GENERIC_WORDS:  # a type or role word ("agreement", "licensee") says what kind, not which
                    clues.append(Match(word, "text", text[at:at + len(word)] if where else word, at, len(holders)))
                    party = next((p for p in parties if word in _words_of(p)), None)
                    if party is not None:
                        clues.append(Match(word, "party", party, _find(text, party), len(holders)))
                if clues:
                    out.setdefault(d, []).extend(clues)
    for acronym in names.acronyms(asked):
        key = acronym.casefold()
        if key in STOPWORDS or documents.ids_with(key):
            continue  # a word the corpus writes is read as a word, above; every text writes "AND", "THE"
        rows = [i for i, text in enumerate(initials_texts(documents)) if key in text]
        if 0 < len(rows) <= most:
            for r in rows:
                spelled = names.spelled_out(acronym, documents.document_texts()[r]) or acronym
                out.setdefault(ids[r], []).append(
                    Match(acronym, "initials", spelled, _find(documents.document_texts()[r], spelled), len(rows)))
    return out


def _squashed_clues(documents: LexicalIndex, asked: str, most: int) -> list[tuple[str, Match]]:
    """(document id, clue) for each clue of ``asked`` read from the documents' squashed texts.

    The title quoted whole, a squashed company name, and, for a name no form of which any text writes, a party that
    starts it (``_party_start``)."""
    ids = documents.ids
    title = names.split_title(asked)[0]
    specific = [w for w in _words_of(title) if w not in GENERIC_WORDS and not w.isdigit()]
    keys = ([("quote" if specific else "heading", names.squash(title), title)] if len(title.split()) > 1 else [])
    keys += [("name", key, key) for key in names.squashed_names(asked) if key not in GENERIC_WORDS]
    if not keys:
        return []
    found: list[tuple[str, Match]] = []
    texts = squashed_texts(documents)
    held: list[str] = []
    unwritten: list[str] = []
    for kind, key, written in keys:
        rows = texts.holding(key)
        if 0 < len(rows) <= most:
            found += [(ids[r], Match(written, kind, key, -1, len(rows))) for r in rows]
        if kind == "name":
            (held if rows else unwritten).append(key)
    # a name no form of which is written ("europeanmicroholdingsinc" is written as "europeanmicro")
    unwritten = [key for key in unwritten if not any(key.startswith(h) or h.startswith(key) for h in held)]
    texts_of = documents.document_texts()
    for start, starters in dict(_party_start(documents, key) for key in unwritten).items():
        if start and 0 < len(starters) <= most:
            found += [(ids[row], Match(start, "start", name, _find(texts_of[row], name), len(starters)))
                      for row, name in starters]
    for start, writers in dict(_text_start(documents, key, most) for key in unwritten).items():
        if start:
            found += [(ids[row], Match(start, "text_start", spelled, at, len(writers))) for row, spelled, at in writers]
    return found


def _text_start(documents: LexicalIndex, key: str, most: int) -> tuple[str, list[tuple[int, str, int]]]:
    """The longest start of squashed name ``key`` that a text writes as whole words, and the texts whose head does.

    "RUBIOSRESTAURANTSINC" where the contract writes "Rubio's Fresh Mexican Grill": the start "rubios", written as
    the words "Rubio's". At least ``MIN_PREFIX`` letters and shorter than ``key``; type, role and legal-form words
    alone are no start. The longest start any text writes is taken for the name's first word(s): a shorter one is
    another word that shares its letters ("Europe" of "EUROPEANMICROHOLDINGSINC" where a text writes "European"). It
    is a clue of the texts that write it in their head (``facts.HEAD_CHARS``, where the summarizer reads the
    parties): a contract names its own company there, and the same word far into another contract is a mention. No
    clue where more than ``most`` heads write it. Returns the start and (row, what the text writes, where) of each text whose head writes
    it; ("", []) where none is."""
    texts = squashed_texts(documents)
    texts_of = documents.document_texts()
    for n in range(len(key) - 1, MIN_PREFIX - 1, -1):
        start = key[:n]
        rows = texts.holding(start)
        if not rows:
            continue
        pattern = re.compile(r"(?<![^\W_])" + r"[\W_]*".join(map(re.escape, start)) + r"(?![^\W_])", re.IGNORECASE)
        somewhere = next((m for m in (pattern.search(texts_of[row]) for row in rows) if m), None)
        if somewhere is None:
            continue
        if all(w in GENERIC_WORDS for w in _words_of(somewhere.group(0))):
            return "", []  # "Non-Disclosure Agreement (NDA" of "NONDISCLOSUREAGREEMENTNDASAMITT": says what kind
        written: list[tuple[int, str, int]] = []
        for row in rows:
            where = pattern.search(texts_of[row], 0, facts.HEAD_CHARS)
            if where:
                written.append((row, where.group(0), where.start()))
                if len(written) > most:
                    return "", []
        return start, written
    return "", []


def _party_start(documents: LexicalIndex, key: str) -> tuple[str, list[tuple[int, str]]]:
    """The longest start of squashed name ``key`` that is a party's first word(s), and (row, party) of each holder.

    A file name squashes its filer's whole name ("FLOTEKINDUSTRIESINCCN") where the contract names the party by its
    first word and another ("Flotek Chemistry, LLC"): the party's leading words, squashed, must spell a start of
    ``key`` of ``MIN_PREFIX`` letters or more, shorter than ``key``. Read from the parties alone, not the whole text:
    a common word the name starts with ("European" of "EUROPEANMICROHOLDINGSINC") is written in many texts that are
    not that company's. A type, role or legal-form word ("distributor") is no start. ("", []) where none is."""
    best, holders = "", list[tuple[int, str]]()
    for row, party, runs in _party_runs(documents).get(key[:MIN_PREFIX], []):
        start = next((run for run in reversed(runs) if key.startswith(run)), "")
        if len(start) < MIN_PREFIX or len(start) >= len(key) or start in GENERIC_WORDS or len(start) < len(best):
            continue
        if len(start) > len(best):
            best, holders = start, []
        if all(r != row for r, _ in holders):
            holders.append((row, party))
    return best, holders


def _party_runs(documents: LexicalIndex) -> dict[str, list[tuple[int, str, tuple[str, ...]]]]:
    """Every party's leading words squashed and run together one more at a time ("flotek", "flotekchemistry", ...).

    As (row, party, runs), filed under the first ``MIN_PREFIX`` letters of its longest run, so that the parties a
    squashed name can start with are looked up, not searched, per question. A word that squashes to nothing ("&")
    ends the runs. Made once per loaded index generation from ``document_evidence``."""

    def make() -> dict[str, list[tuple[int, str, tuple[str, ...]]]]:
        filed: dict[str, list[tuple[int, str, tuple[str, ...]]]] = {}
        for row, (found, _) in enumerate(document_evidence(documents)):
            for party in found:
                runs: list[str] = []
                for word in (names.squash(w) for w in party.split()):
                    if not word:
                        break
                    runs.append((runs[-1] if runs else "") + word)
                if runs and len(runs[-1]) >= MIN_PREFIX:
                    filed.setdefault(runs[-1][:MIN_PREFIX], []).append((row, party, tuple(runs)))
        return filed

    return documents.derived("party_runs", make)


def unheld(documents: LexicalIndex, asked: str) -> int:
    """How many of the question's name words no document of the corpus writes.

    Type, role and legal-form words aside (``GENERIC_WORDS``); a word written inside a squashed name counts as
    written ("flotekindustries" holds "flotek"), and so does a squashed name a text writes a start of as whole words
    ("Rubio's" of "rubiosrestaurantsinc": ``_text_start``)."""
    words = [w for w in name_words(asked) if w not in GENERIC_WORDS]
    if not words:
        return 0
    texts = squashed_texts(documents)
    return sum(1 for w in words if not documents.ids_with(w) and not texts.holding(names.squash(w))
               and not _text_start(documents, names.squash(w), len(documents))[0])


def _find(text: str, phrase: str) -> int:
    """Where ``phrase`` first stands in ``text``, case aside; -1 where it does not."""
    return text.casefold().find(phrase.casefold())


def document_evidence(documents: LexicalIndex) -> list[tuple[tuple[str, ...], str]]:
    """Per document, its parties (names and defined short names) and its title, as its text gives them.

    Read by the built-in summarizer's fact extraction (sac.summaries.facts); made once per index generation for the
    documents the generation before did not have, and kept beside it."""
    lines = _kept_lines(documents, "evidence", _evidence_line)
    out = []
    for line in lines:
        data = json.loads(line)
        out.append((tuple(data["parties"]), str(data["title"])))
    return out


def _evidence_line(text: str) -> str:
    facts = extract_facts(Document("", text))
    parties = [name for party in facts.parties for name in (party.name, *party.short_names)]
    return json.dumps({"parties": parties, "title": facts.title or ""}, ensure_ascii=False)


# What squashes, signs, reads facts from and writes the kept lines.
_SQUASH_VERSION = code_version(names, substrings, facts, parties, sys.modules[__name__])


def squashed_texts(documents: LexicalIndex) -> SubstringIndex:
    """The documents' squashed texts (one line each) and their substring signatures, as ``evidence`` reads them.

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
    """The documents' initials (``names.initials``: one line each), as ``evidence`` reads them.

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
    document_evidence(lexicons["documents"])
    lexicons["documents"].drop_previous()  # what the generation before made is in these now
