"""Query-side name understanding: turn file-name-style company names into the words a contract uses.

Why: users (and LegalBench-RAG's ContractNLI/CUAD titles) name a contract the way its *file* is named:
"BELLRINGBRANDS,INC", "AMERICANPHYSICIANSCAPITALINC", "GluMobileInc", "ResConnect's NDA". The contract
itself says "BellRing Brands, Inc." or "American Physicians Capital, Inc.", so an embedding of the squashed
form matches nothing and chunks come from the wrong document. We rewrite only such tokens, segmenting them
into words attested in the corpus itself (a frequency-scored word break), so no rule names any company.

Public API:
    NameVocabulary.from_texts(texts) / .from_documents(docs)   corpus word counts, forms, document frequency
    rewrite_query(query, vocab) -> str                          the query with squashed names spelled out
    name_terms(query, vocab) -> list[str]                       distinctive name words, for routing / BM25
    split_title(query) -> (title, question)                     the "Consider the <title>; <question>" form
    initials(text) -> str                                       the initials of its runs of capitalised words
    acronyms(query) -> list[str]                                the title's all-caps words that may be initials
    spelled_out(acronym, text) -> str | None                    the words of ``text`` those initials stand for
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from sac.types import Document

# Tokens are runs of letters/digits (Unicode-aware); "_" is excluded so file-name separators split.
_TOKEN = re.compile(r"[^\W_]+")
# A query token plus an optional possessive ("VELCO's", "AGProjects'"); the bare "'" only after an "s".
_QUERY_TOKEN = re.compile(r"(?P<tok>[^\W_]+)(?P<poss>['’]s\b|(?<=[sS])['’](?![^\W_]))?")
# Two adjacent capitalised words ("AG Projects"): evidence that a camelCase split is how the corpus
# writes the name. The lookahead lets pairs overlap ("American Physicians Capital").
_CAP_PAIR = re.compile(r"\b([A-Z][^\W_]*)[ \t]+(?=([A-Z][^\W_]*))")
_TITLE = re.compile(r"^\s*Consider\s+(?:the\s+)?(?P<title>[^;]+?)\s*;\s*(?P<question>.*)\Z", re.S)

# Company-form words. They are ordinary corpus words too; listing them lets short squashed tokens
# ("MPLXLP") qualify, keeps them out of name_terms (every filer has one) and formats ",INC" glue.
_SUFFIX_FORMS = {
    w.lower(): w
    for w in "Inc Incorporated Corp Corporation Co Company LLC LLP LLLP Ltd Limited LP PLC SA AG NV BV GmbH "
    "Holding Holdings Group Partners Trust Bancorp Bancshares".split()
}
LEGAL_SUFFIXES = frozenset(_SUFFIX_FORMS)

MIN_SQUASHED = 7  # all-caps tokens shorter than this are acronyms ("NDA", "CEII", "VELCO"), not squashed
MAX_WORD = 30  # longest piece the word break considers
MAX_UNKNOWN_SHARE = 0.5  # reject a segmentation whose characters are mostly not corpus words
# Word-break prices in nats. First set by hand on all 510 CUAD filer names (test split included); checked on the
# dev split's 226 squashed filers alone by bench/word_break.py: the best of 80 settings fixes 1 break and spoils
# none, within noise, so these stay (bench/results/word-break.md).
WORD_PENALTY = 4.0  # per word: fewer, longer words
SHORT_PENALTY = 6.0  # extra per 2-letter word that is no company form
UNKNOWN_CHAR = 3.5  # per character of a piece the corpus lacks


@dataclass(slots=True)
class NameVocabulary:
    """Case-insensitive word statistics of a corpus, plus the casing the corpus itself uses.

    ``counts``: lower-case word -> occurrences; ``df``: lower-case word -> documents containing it;
    ``forms``: lower-case word -> preferred original-case spelling (capitalised forms win, since names
    are what we restore; all-caps headings count less than Title/mixed case for longer words);
    ``pairs``: (word, next word) -> count, for adjacent capitalised words only (name bigrams);
    ``raw``: original-case word -> occurrences, which ``forms`` is chosen from; ``texts``: a digest of each text
    counted -> how many times, so that a later corpus holding these texts and more is counted from this one
    (``grown``).
    """

    counts: Counter[str] = field(default_factory=Counter)
    df: Counter[str] = field(default_factory=Counter)
    forms: dict[str, str] = field(default_factory=dict)
    pairs: Counter[tuple[str, str]] = field(default_factory=Counter)
    total: int = 0
    n_docs: int = 0
    raw: Counter[str] = field(default_factory=Counter)
    texts: Counter[str] = field(default_factory=Counter)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> NameVocabulary:
        """Build from raw texts, one per document.

        A few seconds for 510 CUAD contracts (27 MB; bench/notes/2026-12-04-names-derived-data-kept.md)."""
        vocab = cls()
        vocab._count(texts)
        return vocab

    @classmethod
    def from_documents(cls, documents: Iterable[Document]) -> NameVocabulary:
        """Build from documents: ``from_texts`` of their texts."""
        return cls.from_texts(d.text for d in documents)

    def grown(self, texts: Sequence[str]) -> NameVocabulary | None:
        """The vocabulary of ``texts``, equal to ``from_texts(texts)``, made from this one by counting only new texts.

        A new index generation after an upload holds the texts of the one before and more, so only those more are
        counted. None when this one counted a text that ``texts`` lacks (a document removed or changed: counts are
        not taken apart again)."""
        digests = [_digest(text) for text in texts]
        if self.texts - Counter(digests):
            return None
        left = Counter(self.texts)
        new: list[str] = []
        for text, digest in zip(texts, digests):
            if left[digest] > 0:
                left[digest] -= 1
            else:
                new.append(text)
        grown = NameVocabulary(Counter(self.counts), Counter(self.df), dict(self.forms), Counter(self.pairs),
                               self.total, self.n_docs, Counter(self.raw), Counter(self.texts))
        grown._count(new)
        return grown

    def _count(self, texts: Iterable[str]) -> None:
        """Add ``texts`` to the statistics, and choose again the spelling of every word they hold."""
        added: Counter[str] = Counter()
        for text in texts:
            doc = _tally(text)  # raw forms: keeps casing without a second pass
            added.update(doc)
            self.df.update({t.lower() for t in doc})
            self.pairs.update((a.lower(), b.lower()) for a, b in _CAP_PAIR.findall(text))
            self.n_docs += 1
            self.texts[_digest(text)] += 1
        if not added:
            return
        self.raw.update(added)
        for form, n in added.items():
            self.counts[form.lower()] += n
        self.total += sum(added.values())
        seen = {form.lower() for form in added}
        best: dict[str, tuple[float, str]] = {}  # lower-case word -> (weight, form) of its best spelling
        for form, n in self.raw.items():
            if (low := form.lower()) in seen:
                best[low] = max(best.get(low, (-1.0, "")), (_form_weight(form, n), form))
        self.forms.update((low, form) for low, (_, form) in best.items())

    def to_json(self) -> str:
        """The vocabulary as JSON, which ``from_json`` reads back equal.

        About 4 MB for 510 CUAD contracts, read back in a twentieth of the time ``from_texts`` takes
        (bench/notes/2026-12-04-names-derived-data-kept.md); sac.index.derived keeps it beside the index."""
        return json.dumps({"counts": self.counts, "df": self.df, "forms": self.forms, "total": self.total,
                           "n_docs": self.n_docs, "pairs": [[a, b, n] for (a, b), n in self.pairs.items()],
                           "raw": self.raw, "texts": self.texts}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> NameVocabulary:
        """A vocabulary from ``to_json``; ``ValueError`` for text that is not one."""
        try:
            got = json.loads(text)
            return cls(counts=Counter(got["counts"]), df=Counter(got["df"]), forms=dict(got["forms"]),
                       pairs=Counter({(a, b): n for a, b, n in got["pairs"]}), total=int(got["total"]),
                       n_docs=int(got["n_docs"]), raw=Counter(got["raw"]), texts=Counter(got["texts"]))
        except (KeyError, TypeError) as e:
            raise ValueError(f"not a name vocabulary: {e!r}") from e

    def __contains__(self, word: str) -> bool:
        return self.counts.get(word.lower(), 0) > 0

    def form(self, word: str) -> str:
        """The corpus spelling of ``word``, or ``word`` unchanged when the corpus lacks it."""
        return self.forms.get(word.lower(), word)

    def logp(self, word: str) -> float:
        """Unigram log probability; -inf for unattested words."""
        n = self.counts.get(word.lower(), 0)
        return math.log(n / self.total) if n else -math.inf


def _tally(text: str) -> Counter[str]:
    """Occurrences of each word of one text, as written."""
    return Counter(_TOKEN.findall(text))


def _digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def _form_weight(form: str, n: int) -> float:
    """How much one spelling counts as *the* name form.

    Capitalised beats lower case; an all-caps spelling of a longer word is mostly a heading ("AGREEMENT",
    "INC."), so Title/mixed case wins unless all-caps is far more common (true acronyms such as "VELCO", "HPIL"
    have no other form)."""
    if not next((c for c in form if c.isalpha()), "a").isupper():
        return n * 1e-3  # lower case only wins when no capitalised form exists at all ("2TheMart" is not)
    if form.isupper():
        return n * (0.05 if len(form) > 3 else 0.25 if len(form) == 3 else 1.0)
    return float(n)


def split_title(query: str) -> tuple[str, str]:
    """Split "Consider the <title>; <question>" into (title, question); ("", query) otherwise."""
    m = _TITLE.match(query)
    return (m["title"], m["question"]) if m else ("", query)


def _spell(word: str, vocab: NameVocabulary) -> str:
    """Corpus spelling of a name word, capitalised since it is part of a name.

    Company forms get their usual spelling ("Inc", "LLC"), which the corpus may lack or only have as "INC."."""
    if word.lower() in _SUFFIX_FORMS:
        return _SUFFIX_FORMS[word.lower()]
    form = vocab.form(word)
    return form[0].upper() + form[1:] if form[:1].islower() else form


def segment(token: str, vocab: NameVocabulary) -> list[tuple[str, str]]:
    """Best word break of ``token`` as [(piece, kind)], kind "word", "unknown" or "poss".

    A "poss" piece is an "s" that is a squashed possessive: "WOMENSGOLF" -> Women|s|Golf. Maximises summed
    unigram log probability minus a price per word, so fewer, longer, attested words win over shreds of short
    ones ("AT EN TO SA"). Single letters are never words here: initials rarely help and "a"/"i" shred.
    """
    low = token.lower()
    n = len(low)
    poss_score = vocab.logp("s")  # how often the corpus writes "X's" (tokenised as "X", "s")
    # An unseen piece is rarer than any seen word and gets rarer with length: the break prefers corpus
    # words, yet one unknown name ("MPLX") beats shreds of short ones ("MP", "LX").
    unseen = -math.log(vocab.total + 1)
    # best[end] = (score, start of the last piece, kind of the last piece)
    best: list[tuple[float, int, str]] = [(0.0, 0, "word")] + [(-math.inf, 0, "")] * n
    for end in range(1, n + 1):
        for start in range(max(0, end - MAX_WORD), end):
            before = best[start]
            if before[0] == -math.inf:
                continue
            piece = low[start:end]
            score, kind = vocab.logp(piece), "word"
            if piece in LEGAL_SUFFIXES and end == n and start > 0:
                score = WORD_PENALTY  # a closing company form is near-certain ("...INC"): free
            elif piece == "s" and before[2] == "word" and start - before[1] >= 3 and poss_score > -math.inf:
                score, kind = poss_score, "poss"
            elif score == -math.inf or (len(piece) == 1 and not piece.isdigit()):
                score, kind = unseen - UNKNOWN_CHAR * len(piece), "unknown"
            if kind == "word" and len(piece) <= 2 and not piece.isdigit() and piece not in LEGAL_SUFFIXES:
                score -= SHORT_PENALTY  # "AT EN TO SA", "OF G": names are rarely made of 2-letter words
            total = before[0] + score - WORD_PENALTY
            if total > best[end][0]:
                best[end] = (total, start, kind)
    pieces: list[tuple[str, str]] = []
    end = n
    while end > 0:
        _, start, kind = best[end]
        if kind == "unknown" and pieces and pieces[-1][1] == "unknown":
            pieces[-1] = (token[start:end] + pieces[-1][0], "unknown")  # one unknown name, kept whole
        else:
            pieces.append((token[start:end], kind))
        end = start
    pieces.reverse()
    return pieces


def _join(pieces: list[tuple[str, str]], vocab: NameVocabulary) -> list[str]:
    """Words to print: corpus spelling for known words, the user's form for unknown ones, "'s" glued."""
    words: list[str] = []
    for piece, kind in pieces:
        if kind == "poss" and words:
            words[-1] += "'s"
        else:
            words.append(_spell(piece, vocab) if kind == "word" else piece)
    return words


def _squashed_words(token: str, vocab: NameVocabulary) -> list[str] | None:
    """Words for an all-caps squashed token ("ENERGOUSCORP" -> Energous Corp), or None to keep it."""
    if not token.isupper() or len(token) < 6 or len(token.lower()) != len(token):
        return None
    pieces = segment(token, vocab)
    if len(pieces) < 2:
        return None
    ends_legal = pieces[-1][0].lower() in LEGAL_SUFFIXES
    if len(token) < MIN_SQUASHED and not ends_legal:
        return None  # a short all-caps run is an acronym, not a squashed name
    stem = pieces[:-1] if ends_legal else pieces
    unknown = sum(len(p) for p, kind in stem if kind == "unknown")
    if unknown > MAX_UNKNOWN_SHARE * len(token) and not (ends_legal and len(stem) == 1):
        return None  # mostly unexplained: segmenting would be a guess ("BANGI INC" is still fine)
    return _join(pieces, vocab)


def _camel_parts(token: str) -> list[str]:
    """Split at case and digit boundaries: "AGProjects" -> AG|Projects, "GluMobileInc" -> Glu|Mobile|Inc.

    A loop over str methods rather than [A-Z] classes, so "Société" stays one word."""
    parts, start = [], 0
    for i in range(1, len(token)):
        a, b, after = token[i - 1], token[i], token[i + 1 : i + 2]
        if (a.islower() and b.isupper()) or a.isdigit() != b.isdigit() or (a.isupper() and b.isupper() and after.islower()):
            parts.append(token[start:i])
            start = i
    return parts + [token[start:]]


def _is_camel(token: str) -> bool:
    letters = [c for c in token if c.isalpha()]
    return bool(letters) and letters[0].isupper() and token.upper() != token and len(_camel_parts(token)) > 1


def _camel_words(token: str, vocab: NameVocabulary) -> list[str] | None:
    """Words for a camelCase token ("GluMobileInc" -> Glu Mobile Inc), or None to keep it."""
    parts = _camel_parts(token)
    words: list[str] = []
    i = 0
    while i < len(parts):
        # Re-join neighbours the corpus itself writes as one camelCase word ("2"+"The"+"Mart" ->
        # "2TheMart"); an all-caps or lower-case join ("REALESTATE") is no such evidence.
        for j in range(len(parts), i + 1, -1):
            form = vocab.forms.get("".join(parts[i:j]).lower(), "")
            if len(_camel_parts(form)) > 1:
                words.append(form)
                i = j
                break
        else:
            words.extend(_part_words(parts[i], vocab))
            i += 1
    low = [w.lower() for w in words]
    # Two plain words ("PayPal", "ResConnect") may be a brand the corpus just lacks; split them only
    # when a company-form word or the corpus's own "AG Projects" pair says they are separate words.
    if len(words) == 2 and not set(low) & LEGAL_SUFFIXES and not vocab.pairs.get((low[0], low[1])):
        return None
    return words if len(words) > 1 else None


def _part_words(part: str, vocab: NameVocabulary) -> list[str]:
    """One camelCase part as words: its corpus spelling, else a squashed word break, else the part as written.

    The squashed word break ("Creditcardscom") counts only when every piece is a corpus word; otherwise the part
    stays as the user wrote it."""
    if part.lower() in _SUFFIX_FORMS:
        return [_SUFFIX_FORMS[part.lower()]]  # "Llc" -> "LLC"
    if part in vocab:
        form = vocab.form(part)
        return [form if len(_camel_parts(form)) > 1 else part]  # user's "Glu"; corpus's "CytoDyn"
    if len(part) >= MIN_SQUASHED and len(part.lower()) == len(part):
        pieces = segment(part, vocab)
        if len(pieces) > 1 and all(kind != "unknown" for _, kind in pieces):
            return _join(pieces, vocab)
    return [part]


def _rewrite_token(token: str, vocab: NameVocabulary) -> list[str] | None:
    """Replacement words for one token, or None to keep it.

    Corpus words are never rewritten."""
    if token in vocab or not any(c.isalpha() for c in token):
        return None
    return _camel_words(token, vocab) if _is_camel(token) else _squashed_words(token, vocab)


def _name_like(token: str) -> bool:
    return len(token) > 1 and (token.isupper() or _is_camel(token))


def _opens_sentence(text: str, i: int) -> bool:
    j = i - 1
    while j >= 0 and text[j].isspace():
        j -= 1
    return j < 0 or text[j] in ".;:?!"


def _rewrite(query: str, vocab: NameVocabulary) -> tuple[str, list[str]]:
    """The rewritten query and the name words it found (rewritten tokens and name-like tokens)."""
    out: list[str] = []
    names: list[str] = []
    pos = 0
    rewritten_end = -1  # end offset of the last rewritten token, to format a glued ",INC"
    for m in _QUERY_TOKEN.finditer(query):
        token = m["tok"]
        out.append(query[pos : m.start()])
        pos = m.end()
        glued = m.start() == rewritten_end + 1 and query[rewritten_end : m.start()] in (",", ".")
        if glued and token.lower() in LEGAL_SUFFIXES:
            # "BELLRINGBRANDS,INC" -> "BellRing Brands, Inc": give the suffix its own word.
            out.append(" " + _spell(token, vocab) + (m["poss"] or ""))
            rewritten_end = m.end()
            continue
        words = _rewrite_token(token, vocab)
        # Possessives only go on name-like tokens: "VELCO's" -> "VELCO", but "Papa John's" stays.
        poss = "" if words or _name_like(token) else m["poss"] or ""
        if words:
            out.append(" ".join(words) + poss)
            names.extend(words)
            rewritten_end = m.end()
        else:
            out.append(token + poss)
            # A capitalised word opening a sentence ("Consider", "Does") is no name unless it looks
            # like one (all caps, camelCase) or has digits.
            mixed = any(c.isdigit() for c in token) and any(c.isalpha() for c in token)  # "On2"
            if _name_like(token) or mixed or (token[:1].isupper() and not _opens_sentence(query, m.start())):
                names.append(token)
    out.append(query[pos:])
    return "".join(out), names


def rewrite_query(query: str, vocab: NameVocabulary) -> str:
    """Spell out squashed, camelCase and possessive company names in ``query`` using corpus words.

    Only such tokens change; everything else (spacing, punctuation, other words) stays byte-identical,
    so a question without file-name-style names comes back unchanged. Works on "Consider the <title>;
    <question>" titles and on free text alike.
    """
    return _rewrite(query, vocab)[0]


def name_terms(query: str, vocab: NameVocabulary, max_df_share: float = 0.05) -> list[str]:
    """Distinctive name words of ``query`` (after rewriting), as spelled there, in order of appearance.

    A word qualifies when it is capitalised (or came from a rewritten name), the corpus has it, it is
    no company-form suffix, and it is rare across documents (df <= max_df_share of documents, at least 1)
    -- exactly the words that can route a question to its document ("Physicians", "Energous", "VELCO").
    """
    limit = max(1.0, max_df_share * vocab.n_docs)
    seen: set[str] = set()
    terms: list[str] = []
    for word in _rewrite(query, vocab)[1]:
        for piece in _TOKEN.findall(word):
            low = piece.lower()
            if low in seen or low in LEGAL_SUFFIXES or not vocab.df.get(low) or vocab.df[low] > limit:
                continue
            seen.add(low)
            terms.append(piece)
    return terms


def squash(text: str) -> str:
    """Lower-case letters and digits only: "BellRing Brands, Inc." and "BELLRINGBRANDS,INC" meet here."""
    return "".join(ch for ch in text.lower() if ch.isalnum())


def squashed_names(query: str) -> list[str]:
    """Squashed forms of the question's file-name-style names, for matching against squashed document text.

    A name is an all-caps or camel-case run of at least ``MIN_SQUASHED`` letters and digits, with a glued
    company form (",INC") kept and also tried without it: "BELLRINGBRANDS,INC" gives "bellringbrandsinc" and
    "bellringbrands". Company forms are taken off one after another, each leaving at least 5 letters: a filer is
    often the holding of the company that signs ("EUROPEANMICROHOLDINGSINC" for a contract that writes "European
    Micro"). Spaced names are left to ``rewrite_query``; they need no squashing.
    """
    title = split_title(query)[0] or query
    out: list[str] = []
    for m in re.finditer(r"[^\W_]+(?:[,.][^\W_]+)*", title):
        raw = m.group(0)
        parts = re.split(r"[,.]", raw)
        head = parts[0]
        if not (head.isupper() or _is_camel(head)) or len(squash(head)) < MIN_SQUASHED:
            continue
        forms = [squash(raw), squash(head)]
        for form in list(forms):  # "energouscorp" is also tried as "energous" (the text may say "Corporation")
            while suffix := next((s for s in sorted(LEGAL_SUFFIXES, key=len, reverse=True)
                                  if form.endswith(s) and len(form) - len(s) >= 5), None):
                form = form[: -len(suffix)]
                forms.append(form)
        out.extend(forms)
    return list(dict.fromkeys(out))


# Initials. A title may name a contract by the initials of a name its text writes out and never abbreviates:
# "ATI's Mutual Non-Disclosure Agreement" for "AMPHENOL Tuchel Industrial GmbH", "LMS's NDA" for "Last Man
# Stands". ``initials`` writes each run of capitalised words as its initials, so that an acronym is a substring
# of a document's initials exactly where a run of consecutive capitalised words spells it.
_RUN_WORD = re.compile(r"[^\W\d_][^\W_]*(?:['’][^\W_]+)*|[^\s]")  # a word (its possessive kept) or one mark
_RUN_BREAK = re.compile(r"\n|\s{3}|\t")  # a line break or a gap (table columns) between two words ends a run
# Small words inside a name that its acronym skips ("Department of Homeland Security", "Customs and Border
# Protection", "University of Arkansas at Little Rock"), in any case.
_CONNECTIVES = frozenset("of and for the at on in & de du des la le del di y et".split())
MIN_ACRONYM, MAX_ACRONYM = 3, 6  # shorter all-caps words are too often someone else's initials ("BT", "GE")


def _initial_runs(text: str) -> list[list[tuple[str, int, int]]]:
    """The runs of capitalised words (connectives inside a run skipped), each as [(initial, start, end)].

    A hyphen joins words of a run ("Non-Disclosure": N, D); any other mark, a digit, a lower-case word, a line
    break or a wider gap (table columns, a signature block) ends it."""
    runs: list[list[tuple[str, int, int]]] = [[]]
    end = 0
    for m in _RUN_WORD.finditer(text):
        word = m.group(0)
        if runs[-1] and _RUN_BREAK.search(text, end, m.start()):
            runs.append([])
        end = m.end()
        if word.casefold() in _CONNECTIVES and runs[-1]:
            continue
        if word[0].isalpha() and word[0].isupper():
            runs[-1].append((word[0].casefold(), m.start(), m.end()))
        elif word != "-" and runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def initials(text: str) -> str:
    """The initials of ``text``'s runs of capitalised words, lower case, one space between runs.

    "Last Man Stands, (the Disclosing Party)" -> "lms dp". An acronym names a run that spells it where it is a
    substring of this ("lms"); a space keeps runs apart."""
    return " ".join("".join(i for i, _, _ in run) for run in _initial_runs(text))


def acronyms(query: str) -> list[str]:
    """The words of a "Consider <title>; <question>" title that may be initials; none without a title.

    Such a word is all capital letters, ``MIN_ACRONYM`` to ``MAX_ACRONYM`` of them, and no company form ("ATI",
    "UALR"; not "INC", "BT")."""
    words = _TOKEN.findall(split_title(query)[0])
    return list(dict.fromkeys(w for w in words if w.isalpha() and w.isupper()
                              and MIN_ACRONYM <= len(w) <= MAX_ACRONYM and w.casefold() not in LEGAL_SUFFIXES))


def spelled_out(acronym: str, text: str) -> str | None:
    """The first words of ``text`` whose initials spell ``acronym``, as written, or None.

    Initials are read as ``initials`` reads them: "AMPHENOL Tuchel Industrial" for "ATI"."""
    key = acronym.casefold()
    for run in _initial_runs(text):
        letters = "".join(i for i, _, _ in run)
        at = letters.find(key)
        if at >= 0:
            return text[run[at][1] : run[at + len(key) - 1][2]]
    return None
