r"""Deterministic builders of full-size LegalBench-RAG-style benchmarks from the source datasets.

``build_cuad`` reads ``<sources>/cuad_v1`` (contracts and ``master_clauses.csv``), ``build_contractnli``
``<sources>/contractnli/{test,dev}.json``. Both write the LegalBench-RAG layout, one dataset per split::

    OUT/corpus/<name>-{dev,test}/<file>.txt   OUT/benchmarks/<name>-{dev,test}.json   OUT/manifest.json

so ``python -m sac eval --benchmark OUT --datasets cuad-test`` runs a split against all its documents.
Construction follows LegalBench-RAG's generators (``generate_cuad.py``, ``generate_contractnli.py``):

- CUAD: one question per (contract, clause category with quotes). A quote must occur exactly once in the
  text; a question with a missing or repeated quote is dropped whole, since a gold set lacking an
  annotated passage scores a retriever that finds it as wrong (``keep_partial=True`` keeps the rest).
  Document Name, Parties, Agreement Date and Effective Date are metadata, not clauses (LegalBench-RAG
  skips them); the first two make the first-page titles. A contract split over files (``Part1``/``Part2``,
  ``Agreement2``..``4`` that is not an amendment) is dropped as ambiguous: one title would name several.
- ContractNLI: one question per (NDA, hypothesis) with evidence; gold = the evidence sentences.
- Spans closer than 2 characters merge (LegalBench-RAG's ``max_bridge_gap_len=1``).

Title styles, one per output folder: ``firstpage`` names the document and parties as the document gives
them; ``filename`` names filer and document type as the file name does (how users who see a file list
speak). Documents and gold spans are the same in both; only the query wording differs. Tags per test:
``titles:<style>``, ``split:<split>``, ``identifiable``/``unidentifiable`` (sac.ingest.identifiable) and
``clause:<category>`` or ``hypothesis:<id>``. Texts are exact UTF-8 (``\r\n`` would become ``\n``, as
in the pool loader; the sources have none), so ``corpus[file][start:end] == answer`` holds for what the
loader reads. Same inputs give byte-identical output: everything is sorted, nothing records a time.
"""

from __future__ import annotations

import ast
import csv
import hashlib
import json
import re
import shutil
import unicodedata
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, TypeVar
from urllib.parse import unquote

from sac.errors import ConfigError, CorpusError
from sac.ingest.benchmark_questions import CONTRACTNLI_QUESTIONS, CUAD_QUESTIONS
from sac.ingest.identifiable import DOCTYPE_WORDS, as_text, identifiable, name_words
from sac.types import Span, merge_spans, text_hash

_Item = TypeVar("_Item", bound=tuple[Any, ...])  # a source document: (name, text, what else the builder needs)

TITLE_STYLES: tuple[str, ...] = ("firstpage", "filename")
SPLITS: tuple[str, ...] = ("dev", "test")
MERGE_GAP = 1  # LegalBench-RAG merges spans whose gap is at most this many characters
MANIFEST_VERSION = 3  # 2: the demo's documents are dev documents (split_of); 3: each test keeps its title's names

# Words that name no one in a file name: document types (identifiable.DOCTYPE_WORDS), filler.
_FILLER = DOCTYPE_WORDS | {"way", "unilateral", "bilateral", "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep",
                       "sept", "oct", "nov", "dec", "january", "february", "march", "april", "june", "july", "august",
                       "september", "october", "november", "december"}
_ACRONYMS = {"nda", "cnda", "mnda", "odm", "oem", "ip", "usa", "uk", "llc", "lp", "api", "r&d", "a&r", "ii", "iii"}
_SMALL = {"a", "an", "and", "as", "at", "by", "for", "from", "in", "into", "of", "on", "or", "the", "to", "with"}
_TYPE_LINE = re.compile(r"(?i)agreement|\bagmt\b|\bnda\b|undertaking|covenant|contract")
# A name of up to 7 capitalised words ending in a capitalised legal form ("Acme Widgets, Inc.").
_ORG = re.compile(
    r"((?:(?:[A-Z][\w'’.&-]*|&|of)[ \t]+){0,6}?[A-Z][\w'’.&-]*,?[ \t]+"
    r"(?:I(?i:nc)|L(?i:LC)|L\.L\.C|L(?i:td)|L(?i:imited)|C(?i:orporation)|C(?i:orp)|C(?i:ompany)|GmbH|AG|P(?i:LC)"
    r"|plc|L\.?P|LLP|S\.A|N\.V|B\.V|P(?i:te)|P(?i:ty))\b\.?(?:,?[ \t]+(?:Inc|INC|LLC|Ltd|LTD)\b\.?)?)"
)
# "Acme Widgets, a Delaware corporation": a name without a legal form, described as a legal person.
_DESCRIBED = re.compile(r"((?:[A-Z][\w'’.&-]*[ \t]+){0,5}[A-Z][\w'’.&-]*),?[ \t]+an?[ \t]+(?:[A-Z][\w.]*[ \t]+){1,3}"
                        r"(?:corporation|company|partnership|limited|GmbH|B\.V|N\.V)")
# Role words: a "name" made of them is a placeholder or a defined term ("NAME OF COMPANY", "The Company").
_PLACEHOLDER = {"name", "insert", "party", "parties", "recipient", "discloser", "disclosing", "receiving",
                "contractor", "supplier", "client", "customer", "vendor", "company", "the", "this", "such", "your", "full"}
_BETWEEN = re.compile(r"\bbetween:?\s+([A-Z][^,(\n“\"_\[]{1,60}?)\s*[,(“\"\n]")


class Title(NamedTuple):
    """A title as it follows "Consider " (with its article) and the party names it uses."""

    text: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class BuildReport:
    """What one build wrote (per split) and dropped.

    Duplicate, ambiguous and unlabelled documents are counted over the whole source, before ``files``/``limit``;
    quotes and questions over the built ones."""

    dataset: str
    titles: str
    documents: dict[str, int]
    questions: dict[str, int]
    identifiable: dict[str, int]  # questions tagged "identifiable", per split
    duplicates_dropped: int  # documents whose exact text an earlier file (by sorted name) has
    ambiguous_dropped: int = 0  # CUAD contracts split over several files
    unlabelled_dropped: int = 0  # CUAD files without a master_clauses.csv row
    quotes_not_found: int = 0
    quotes_not_unique: int = 0
    questions_dropped: int = 0  # CUAD (contract, category) pairs left with no usable quote set
    sources: dict[str, str] = field(default_factory=dict)  # source file (relative) -> sha256

    def as_dict(self) -> dict[str, object]:
        """The report as plain JSON-ready data."""
        return asdict(self)


@dataclass(frozen=True)
class _Doc:
    file: str
    text: str
    title: Title
    tests: tuple[tuple[str, tuple[tuple[int, int], ...], str], ...]  # (question, spans, category tag)


# --------------------------------------------------------------------------------------------------
# Public builders


def build_cuad(sources: Path, out: Path, *, titles: str, limit: int | None = None,
               files: Collection[str] | None = None, keep_partial: bool = False,
               dev_documents: Collection[str] = ()) -> BuildReport:
    """Build ``cuad-dev`` and ``cuad-test`` under ``out`` from ``<sources>/cuad_v1``.

    Args:
        titles: "firstpage" (Document Name and Parties of master_clauses.csv) or "filename".
        limit: keep only the first ``limit`` documents in sha256-of-text order (a fixed pseudo-random
            sample, so both splits get some); None keeps all.
        files: keep only these file names (before ``limit``); each must be a kept document.
        keep_partial: keep a question with the quotes that were located once instead of dropping it.
        dev_documents: the ``text_hash`` of texts that go to dev whatever their hash says (``split_of``).

    Raises:
        ConfigError: bad ``titles``/``limit``, or ``out`` already holds the other title style.
        CorpusError: the sources are missing or unreadable.
    """
    _check_args(titles, limit)
    root = Path(sources) / "cuad_v1"
    rows = _master_rows(root / "master_clauses.csv")
    paths = sorted((root / "full_contract_txt").glob("*.txt"))
    if not paths:
        raise CorpusError(f"{root / 'full_contract_txt'}: has no .txt contracts")
    texts, duplicates = _dedupe((p.name, _read_text(p)) for p in paths)
    counts = {"ambiguous": 0, "unlabelled": 0, "not_found": 0, "not_unique": 0, "dropped": 0}
    kept: list[tuple[str, str, dict[str, str]]] = []
    for name, text in texts:
        row = rows.get(_file_key(name))
        if row is None:
            counts["unlabelled"] += 1
        elif _ambiguous_part(name, row):
            counts["ambiguous"] += 1
        else:
            kept.append((name, text, row))
    docs = [_cuad_doc(name, text, row, titles, keep_partial, counts)
            for name, text, row in _select(kept, files, limit)]
    sources_hashes = _hashes(root.parent, [root / "master_clauses.csv", *paths])
    return _write("cuad", out, titles, docs, frozenset(dev_documents), BuildReport(
        "cuad", titles, {}, {}, {}, duplicates, counts["ambiguous"], counts["unlabelled"], counts["not_found"],
        counts["not_unique"], counts["dropped"], sources_hashes))


def build_contractnli(sources: Path, out: Path, *, titles: str, limit: int | None = None,
                      files: Collection[str] | None = None, dev_documents: Collection[str] = ()) -> BuildReport:
    """Build ``contractnli-dev`` and ``contractnli-test`` under ``out`` from ``<sources>/contractnli``.

    Reads ``test.json`` then ``dev.json``; file names are the documents' ``file_name`` (stripped).
    ``titles``, ``limit``, ``files`` and ``dev_documents`` as for ``build_cuad``.
    """
    _check_args(titles, limit)
    paths = [Path(sources) / "contractnli" / f"{part}.json" for part in ("test", "dev")]
    records: dict[str, dict[str, Any]] = {}
    labels: dict[str, dict[str, Any]] = {}
    for path in paths:
        payload = _read_json(path)
        labels.update(payload.get("labels") or {})
        for item in payload["documents"]:
            records.setdefault(item["file_name"].strip(), item)
    texts, duplicates = _dedupe((name, _normalize(records[name]["text"])) for name in sorted(records))
    docs = [_contractnli_doc(name, text, records[name], labels, titles) for name, text in _select(texts, files, limit)]
    return _write("contractnli", out, titles, docs, frozenset(dev_documents), BuildReport(
        "contractnli", titles, {}, {}, {}, duplicates, sources=_hashes(Path(sources), paths)))


BUILDERS: dict[str, Callable[..., BuildReport]] = {"cuad": build_cuad, "contractnli": build_contractnli}


def split_of(text: str, dev_documents: Collection[str] = ()) -> str:
    """The fixed split of a document, dev or test.

    Dev for the texts named in ``dev_documents`` (their ``text_hash``: the demo's, where rules are written, so never
    test data); else the parity of the first byte of the sha256 of its UTF-8 text."""
    if dev_documents and text_hash(text) in dev_documents:
        return "dev"
    return SPLITS[hashlib.sha256(text.encode("utf-8")).digest()[0] % 2]


def merged_ranges(spans: Iterable[tuple[int, int]], gap: int = MERGE_GAP) -> list[tuple[int, int]]:
    """Sort one document's spans and merge those that overlap or lie at most ``gap`` characters apart."""
    return [(s.start, s.end) for s in merge_spans((Span("", a, b) for a, b in spans), gap=gap)]


def hypothesis_question(hypothesis: str) -> str:
    """A generic "Does the document state that ...?" question for a ContractNLI hypothesis."""
    body = hypothesis.strip().rstrip(".")
    return f"Does the document state that {body[:1].lower()}{body[1:]}?"


# --------------------------------------------------------------------------------------------------
# Titles


def cuad_filename_title(file_name: str) -> Title:
    """Filer and document type as a CUAD file name gives them, the filer spelt as the file does (often squashed).

    "BELLRINGBRANDS,INC_02_07_2020-EX-10.18-MASTER SUPPLY AGREEMENT.txt" -> "the Master Supply Agreement of
    BELLRINGBRANDS,INC"."""
    stem = file_name[:-4] if file_name.lower().endswith(".txt") else file_name
    patterns = (r"^(?P<filer>.+?)_\d{8}_.*?_\d+_EX[^_]*_(?P<doc>.*)$",  # Filer_YYYYMMDD_FORM_EX-n_id_EX-n_Type
                r"^(?P<filer>.+?)_\d\d_\d\d_\d{4}-EX[^-]*-[^-]*-(?P<doc>.*)$",  # FILER_MM_DD_YYYY-EX-n-TYPE
                r"^(?P<filer>.+?)\s+-\s+(?P<doc>.*)$")  # Filer - Type
    for pattern in patterns:
        match = re.match(pattern, stem)
        if match:
            filer = match["filer"].strip()
            # The file names write "&" as "_" ("A_R", "SALES _ MARKETING") and "/" or ":" as "_ ".
            doc = re.sub(r"(?<=\b[A-Z])_(?=[A-Z]\b)| _ ", lambda m: m[0].replace("_", "&"), match["doc"])
            doc = re.sub(r"(?<=[A-Za-z])(\d+)$", r" \1", " ".join(doc.replace("_", " ").split()))
            return Title(f"the {_smart_case(doc) or 'Agreement'} of {filer}", (filer,))
    return Title(f"the {_smart_case(' '.join(stem.replace('_', ' ').split()))}", (stem,))


def cuad_firstpage_title(row: dict[str, str], text: str) -> Title:
    """Document name and parties as the contract gives them (master_clauses.csv Document Name, Parties)."""
    names = _in_text_order(_quotes(row.get("Document Name", "")), text) or [row.get("Document Name-Answer", "")]
    names = [_smart_case(_clean(n)) for n in names if _clean(n)]
    doc = " to ".join(names[:2]) if len(names) > 1 and names[0].lower().startswith("amendment") \
        else (names[0] if names else "Agreement")
    answer = row.get("Parties-Answer", "")
    parties = [p for p in _in_text_order(_quotes(row.get("Parties", "")), text) if _is_party(p, answer, text)]
    return _with_parties(doc, _distinct([_clean(p) for p in parties])[:4])


def contractnli_filename_title(file_name: str) -> Title:
    """Name and document type as a ContractNLI file name gives them: "NDA_Acme.txt" -> "Acme's Non-Disclosure Agreement".

    With no name in the file name, the file name itself ("the NDA V3")."""
    stem = unquote(re.sub(r"(\.htm)?\.txt$", "", file_name.strip()))
    words = [w for w in re.split(r"[\s_\-]+", stem) if w]
    squashed = _squash(stem)
    doc = "Confidentiality Agreement" if "confidential" in squashed and "disclos" not in squashed else "Non-Disclosure Agreement"
    doc = f"Mutual {doc}" if "mutual" in squashed else doc
    name_words = [w for w in words if _is_name_word(w)]
    if not name_words:  # the file name is all the user sees: "the NDA V3", "the Non-Disclosure Agreement 41629 1"
        named = re.search(r"agreement|nda|disclos|confidential", squashed)
        return Title(f"the {' '.join(words)}" if named else f"the {doc} {' '.join(words)}", ())
    name = " ".join(name_words)
    return Title(_possessive(name, doc), (name,))


def contractnli_firstpage_title(text: str) -> Title:
    """Heading and parties from the head of an NDA: "the Mutual Non-Disclosure Agreement between A and B".

    "A's Non-Disclosure Agreement" when one party is named, or the heading alone."""
    lines = [line.strip() for line in text[:4000].splitlines() if line.strip()][:15]
    lines = [line for line in lines if not line.lower().startswith("exhibit")] or ["Agreement"]
    heading = next((line for line in lines if _TYPE_LINE.search(line) and len(line.split()) <= 12
                    and not line.endswith((".", ","))), "Non-Disclosure Agreement")
    heading = _smart_case(_clean(heading))
    head = text[:2500]
    # "a Delaware corporation" describes a party; it is not one.
    matches = sorted([*_ORG.finditer(head), *_DESCRIBED.finditer(head)], key=lambda m: m.start())
    found = (m[1] for m in matches if not re.search(r"\ban?\s+$", head[max(0, m.start() - 4):m.start()]))
    parties = [m for m in map(_strip_lead, found) if m]
    if not parties:
        parties = [m.strip() for m in _BETWEEN.findall(head)][:1]
    return _with_parties(heading, _distinct(parties)[:2])


def _with_parties(doc: str, parties: list[str]) -> Title:
    if not parties:
        return Title(f"the {doc}", ())
    if len(parties) == 1:
        return Title(_possessive(parties[0], doc), tuple(parties))
    joined = " and ".join(parties) if len(parties) == 2 else ", ".join(parties[:-1]) + f", and {parties[-1]}"
    return Title(f"the {doc} between {joined}", tuple(parties))


def _possessive(name: str, doc: str) -> str:
    # LegalBench-RAG writes "X's NDA" without an article but "the Xs' NDA" with one.
    if not name.endswith("s"):
        return f"{name}'s {doc}"
    return f"{name}' {doc}" if name.lower().startswith("the ") else f"the {name}' {doc}"


def _smart_case(text: str) -> str:
    """Title-case a phrase in capitals ("MASTER SUPPLY AGREEMENT (Domestic)" -> "Master Supply Agreement (Domestic)")."""
    letters = [c for c in text if c.isalpha()]
    if sum(c.isupper() for c in letters) < 0.8 * len(letters) or not letters:
        return text
    words = re.sub(r"[A-Za-z&]+(?:['’][A-Za-z]+)?",
                   lambda m: m[0].upper() if m[0] in _ACRONYMS else m[0].capitalize(), text.lower()).split(" ")
    return " ".join(w.lower() if i and w.lower() in _SMALL else w for i, w in enumerate(words))


def _clean(text: str) -> str:
    """One line, single spaces, no long asides ("(formerly known as ...)"), no dangling punctuation."""
    text = re.sub(r"\s*\([^()]{13,}\)", "", " ".join(text.split()))
    return text.strip(" :;,(\"“”-–")


def _is_party(quote: str, answer: str, text: str) -> bool:
    """A Parties quote that names a party, not a defined-term alias ("Licensee") or a sentence."""
    q = quote.strip()
    if not q or "_" in q or any(c in q for c in "\"“”") or not q[0].isupper() or len(q) > 100:
        return False
    alias = any(f"{a}{q}{b}" in s for s in (answer, text) for a, b in (('"', '"'), ("“", "”")))
    return not alias and bool(name_words(q))


def _strip_lead(name: str) -> str:
    words = name.split()
    while words and words[0].lower().strip(",") in {"this", "by", "between", "and", "whereas", "agreement",
                                                     "made", "dated", "non-disclosure", "mutual", "of"}:
        words.pop(0)
    name = " ".join(words)
    core = name_words(name)
    return name if core and not set(core) & _PLACEHOLDER else ""


def _distinct(names: list[str]) -> list[str]:
    """Names in order, dropping one whose squashed form another (longer) kept name contains, or vice versa."""
    kept: list[str] = []
    for name in names:
        s = _squash(name)
        clash = next((i for i, k in enumerate(kept) if s in _squash(k) or _squash(k) in s), None)
        if clash is None:
            kept.append(name)
        elif len(s) > len(_squash(kept[clash])):
            kept[clash] = name
    return kept


def _in_text_order(quotes: list[str], text: str) -> list[str]:
    positions = {q: text.find(q) for q in quotes}
    return sorted(dict.fromkeys(quotes), key=lambda q: (positions[q] < 0, positions[q], q))


# --------------------------------------------------------------------------------------------------
# Names


def _is_name_word(word: str) -> bool:
    """A file-name word that may name a party: letters only (codes like "dex4" or "rev0" name no one)."""
    w = word.lower().strip(".")
    return bool(re.fullmatch(r"[a-z][a-z.&'’]+", w)) and w not in _FILLER and _squash(w) not in _FILLER


def _squash(text: str) -> str:
    return "".join(ch for ch in text.casefold() if ch.isalpha())


# --------------------------------------------------------------------------------------------------
# Documents and questions


def _cuad_doc(name: str, text: str, row: dict[str, str], titles: str, keep_partial: bool,
              counts: dict[str, int]) -> _Doc:
    tests = []
    for category, question in CUAD_QUESTIONS.items():
        quotes = _quotes(row.get(category, ""))
        if not quotes:
            continue
        spans = []
        for quote in quotes:
            start = text.find(quote)
            if start < 0 or text.find(quote, start + 1) >= 0:
                counts["not_found" if start < 0 else "not_unique"] += 1
            else:
                spans.append((start, start + len(quote)))
        if not spans or (len(spans) < len(quotes) and not keep_partial):
            counts["dropped"] += 1
            continue
        tests.append((question, tuple(merged_ranges(spans)), f"clause:{category}"))
    title = cuad_firstpage_title(row, text) if titles == "firstpage" else cuad_filename_title(name)
    return _Doc(name, text, title, tuple(tests))


def _contractnli_doc(name: str, text: str, record: dict[str, Any], labels: dict[str, dict[str, Any]], titles: str) -> _Doc:
    tests = []
    annotations = record["annotation_sets"][0]["annotations"] if record.get("annotation_sets") else {}
    for hid in sorted(annotations, key=lambda h: (len(h), h)):  # nda-1 < nda-2 < nda-10
        evidence = annotations[hid].get("spans") or []
        if annotations[hid].get("choice") not in ("Entailment", "Contradiction") or not evidence:
            continue
        question = CONTRACTNLI_QUESTIONS.get(hid) or hypothesis_question(labels.get(hid, {}).get("hypothesis", hid))
        spans = merged_ranges(tuple(record["spans"][i]) for i in evidence)
        tests.append((question, tuple(spans), f"hypothesis:{hid}"))
    title = contractnli_firstpage_title(text) if titles == "firstpage" else contractnli_filename_title(name)
    return _Doc(name, text, title, tuple(tests))


def _ambiguous_part(name: str, row: dict[str, str]) -> bool:
    """LegalBench-RAG's rule: Part1/Part2 files, or Agreement2..4 files that are not amendments."""
    lower = name.lower()
    numbered = any(f"agreement{n}" in lower for n in (2, 3, 4))
    named = (row.get("Document Name", "") + row.get("Document Name-Answer", "")).lower()
    return "part1" in lower or "part2" in lower or (numbered and "amendment" not in named)


# --------------------------------------------------------------------------------------------------
# Output


def _write(dataset: str, out: Path, titles: str, docs: list[_Doc], dev_documents: frozenset[str],
           report: BuildReport) -> BuildReport:
    out = Path(out)
    manifest_path = out / "manifest.json"
    manifest = json.loads(manifest_path.read_text("utf-8")) if manifest_path.is_file() else {}
    if manifest.get("titles", titles) != titles:
        raise ConfigError(f"{out}: holds {manifest['titles']!r} titles; build {titles!r} titles into another folder")
    counts: dict[str, dict[str, int]] = {"documents": {}, "questions": {}, "identifiable": {}}
    for split in SPLITS:
        name = f"{dataset}-{split}"
        members = sorted((d for d in docs if split_of(d.text, dev_documents) == split), key=lambda d: d.file)
        tests = _split_tests(name, split, titles, members)
        corpus = out / "corpus" / name
        if corpus.exists():
            shutil.rmtree(corpus)  # a smaller rebuild must not leave old documents in the pool
        corpus.mkdir(parents=True)
        for doc in members:
            (corpus / doc.file).write_bytes(doc.text.encode("utf-8"))
        (out / "benchmarks").mkdir(parents=True, exist_ok=True)
        (out / "benchmarks" / f"{name}.json").write_bytes(_dumps({"tests": tests}))
        counts["documents"][split] = len(members)
        counts["questions"][split] = len(tests)
        counts["identifiable"][split] = sum("identifiable" in t["tags"] for t in tests)
    report = BuildReport(**{**asdict(report), **counts})
    manifest.update({"version": MANIFEST_VERSION, "titles": titles, "builder": __name__,
                     "dev_documents": sorted(dev_documents)})
    manifest.setdefault("builds", {})[dataset] = report.as_dict()
    manifest_path.write_bytes(_dumps(manifest, sort_keys=True))
    return report


def _split_tests(name: str, split: str, titles: str, members: list[_Doc]) -> list[dict[str, Any]]:
    pool = [as_text(d.text) for d in members]
    cache: dict[str, int] = {}
    tests = []
    for doc, own in zip(members, pool):
        tag = "identifiable" if identifiable(doc.title.names, own, pool, cache) else "unidentifiable"
        for question, spans, category in doc.tests:
            tests.append({
                "query": f"Consider {doc.title.text}; {question}",
                "snippets": [{"file_path": f"{name}/{doc.file}", "span": [s, e], "answer": doc.text[s:e]}
                             for s, e in spans],
                "tags": [f"titles:{titles}", f"split:{split}", tag, category],
                "names": list(doc.title.names),  # what the title names: which pool's contract it names alone
                "split": split,
            })
    return tests


def _dumps(payload: object, sort_keys: bool = False) -> bytes:
    return (json.dumps(payload, indent=2, ensure_ascii=False, sort_keys=sort_keys) + "\n").encode("utf-8")


# --------------------------------------------------------------------------------------------------
# Reading sources


def _check_args(titles: str, limit: int | None) -> None:
    if titles not in TITLE_STYLES:
        raise ConfigError(f"titles must be one of {', '.join(TITLE_STYLES)}, not {titles!r}")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ConfigError(f"limit must be a positive integer or None, not {limit!r}")


def _read_text(path: Path) -> str:
    try:
        return _normalize(path.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: cannot be read as UTF-8 text ({exc})") from None


def _read_json(path: Path) -> dict[str, Any]:
    try:
        payload = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CorpusError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise CorpusError(f"{path}: missing the \"documents\" list of a ContractNLI file")
    return payload


def _normalize(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _master_rows(path: Path) -> dict[str, dict[str, str]]:
    """master_clauses.csv rows keyed by a file-name key that survives the csv's spelling of the name.

    The csv writes "A&R" for the file's "A_R", adds a trailing space or ".PDF"."""
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return {_file_key(row["Filename"]): row for row in csv.DictReader(handle)}
    except (OSError, KeyError, UnicodeDecodeError, csv.Error) as exc:
        raise CorpusError(f"{path}: cannot be read as CUAD's master_clauses.csv ({exc})") from None


def _file_key(name: str) -> str:
    stem = re.sub(r"(?i)\.(pdf|txt)'?$", "", name.strip())
    return "".join(c for c in unicodedata.normalize("NFKD", stem).casefold() if c.isascii() and c.isalnum())


def _quotes(cell: str) -> list[str]:
    """The quotes of a master_clauses.csv cell, a Python list literal."""
    try:
        value = ast.literal_eval(cell) if cell.strip() else []
    except (ValueError, SyntaxError):
        return []
    return [q for q in value if isinstance(q, str) and q.strip()] if isinstance(value, list) else []


def _dedupe(items: Iterable[tuple[str, str]]) -> tuple[list[tuple[str, str]], int]:
    """Keep the first (name, text) of each exact text (items come sorted by name); count the others."""
    items = list(items)
    first: dict[str, str] = {}
    for name, text in items:
        first.setdefault(text, name)
    return [(name, text) for text, name in first.items()], len(items) - len(first)


def _select(items: list[_Item], files: Collection[str] | None, limit: int | None) -> list[_Item]:
    """The (name, text, ...) items named in ``files`` (all when None), then the first ``limit`` of them.

    The first in sha256-of-text order, returned in name order."""
    if files is not None:
        missing = sorted(set(files) - {it[0] for it in items})
        if missing:
            raise CorpusError(f"not among the kept source documents: {', '.join(missing)}")
        items = [it for it in items if it[0] in set(files)]
    if limit is None:
        return items
    chosen = sorted(items, key=lambda it: hashlib.sha256(it[1].encode("utf-8")).hexdigest())[:limit]
    return sorted(chosen, key=lambda it: it[0])


def _hashes(base: Path, paths: Sequence[Path]) -> dict[str, str]:
    """sha256 of each source file by its path relative to ``base``; the contract texts fold into one."""
    digests = {p.relative_to(base).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in paths}
    texts = sorted(k for k in digests if k.endswith(".txt"))
    result = {k: v for k, v in digests.items() if not k.endswith(".txt")}
    if texts:
        folded = "".join(f"{k.rsplit('/', 1)[1]}\0{digests[k]}\n" for k in texts)
        result[f"{texts[0].rsplit('/', 1)[0]}/*.txt"] = hashlib.sha256(folded.encode("utf-8")).hexdigest()
    return result
