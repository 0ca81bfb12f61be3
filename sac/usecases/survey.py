"""Survey: one question, every contract. One row per contract with the best spans of *that* contract, a column per
method, optionally a short LLM answer per row quoting only that row's spans.

The search runs inside each contract, so no row holds a span of another document, by construction. The question
is embedded once (once more without its title under ``+inner``); every chunk vector of the method's index is scored
against it in one matrix product, and each document's top spans are picked from its own rows. The vectors come from
the index read whole once per index version and kept in memory (``sac.index.snapshot``: the app's later surveys of
the corpus read nothing again), or, for a few chosen documents (the Reader's one contract), from those documents'
records only. One filtered Chroma query per document would also search inside each, at one round trip per
contract: bench/survey.py measures both.

Under ``+hybrid<w>`` a span's score is ``w * minmax(cosine) + (1 - w) * minmax(BM25)``, each scaled over every chunk
of the documents surveyed, so scores compare across rows; each contract's spans are its best by that score. Without
it the score is the cosine. Options that choose documents (``+docs<N>``, ``+docw<w>``, ``+names``) do not apply:
every document is searched. Neither does ``+rerank``: a reranker over every contract's candidates costs a model call
per contract. ``ignored_options`` names them, and the page and the CLI say so.

Which method to rank inside a contract by: the chunks' own words (``DEFAULT_METHOD``, ``baseline+hybrid0.5``). A SAC
summary is the same on every chunk of a contract, so it cannot tell them apart, and it pulls short chunks, which
embed as little more than the summary, to the top: on the demo's governing-law clauses the best span held CUAD's
annotated clause for 18 of 24 contracts with ``baseline+hybrid0.5``, 2 of 24 with ``sac-generic`` (bench/survey.py).
"""

from __future__ import annotations

import dataclasses
import io
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from sac.errors import ConfigError, SacError
from sac.index import lexical, snapshot
from sac.index.snapshot import IndexSnapshot
from sac.index.store import Index
from sac.methods import MethodSpec
from sac.progress import Progress
from sac.retrieval.hybrid import minmax
from sac.retrieval.pipeline import question_proper
from sac.summaries import answers as llm_answers
from sac.summaries.display import DisplayName
from sac.types import Chunk, Document, Hit, Span, check_query
from sac.usecases.names import display_names
from sac.usecases.workbench import Workbench

__all__ = ["DEFAULT_METHOD", "EXPORT_FORMATS", "SurveyRow", "SurveyTable", "default_methods", "export_bytes",
           "ignored_options", "llm_configured", "survey", "write_table"]

# Inside one contract, the chunks' own words rank best: a summary, the same on every chunk of a contract, does not tell
# them apart and pulls short chunks up (bench/survey.py measures each method on the demo's governing-law clauses).
DEFAULT_METHOD = "baseline+hybrid0.5"
FEW_DOCUMENTS = 8  # up to this many chosen documents, only their records are read (not the whole index)
MAX_PER_DOCUMENT = 64  # the Reader marks as many hits as Compare shows (k up to 64)
EXPORT_FORMATS = ("csv", "xlsx")
llm_configured = llm_answers.llm_configured


def default_methods(options: Sequence[str]) -> list[str]:
    """What a survey offers first among ``options`` (method names): ``DEFAULT_METHOD``, else a built index with
    ``+hybrid0.5``, else the first option."""
    wanted = [DEFAULT_METHOD, *(f"{o}+hybrid0.5" for o in options if "+" not in o)]
    return next(([m] for m in wanted if m in options), list(options[:1]))


def ignored_options(method: MethodSpec) -> tuple[str, ...]:
    """The options of ``method`` a survey does not apply (module docstring), as written after a ``+``."""
    return tuple(f"+{t}" for t in method.search.tokens() if not t.startswith(("hybrid", "inner")))


@dataclass(frozen=True)
class SurveyRow:
    """One contract: its name and, per method, its best spans (best first; none where the index holds none of it)."""

    doc_id: str
    name: DisplayName
    hits: Mapping[str, tuple[Hit, ...]]
    answers: Mapping[str, str] = field(default_factory=dict)  # method -> the LLM's short answer from these spans
    quoted: Mapping[str, bool | None] = field(default_factory=dict)  # method -> its quotes all in the spans (None: none)

    def best(self, method: str) -> Hit | None:
        """The method's best span in this contract."""
        found = self.hits.get(method, ())
        return found[0] if found else None


@dataclass(frozen=True)
class SurveyTable:
    """A survey's rows, best first by the first method's score, and what it did."""

    corpus: str
    question: str
    methods: tuple[str, ...]
    rows: tuple[SurveyRow, ...]
    ignored: Mapping[str, tuple[str, ...]]  # method -> options the survey did not apply
    seconds: float
    notes: tuple[str, ...] = ()

    def where(self, text: str) -> SurveyTable:
        """The rows whose contract name, file title, span text or answer holds ``text`` (case aside)."""
        needle = " ".join(text.split()).lower()
        if not needle:
            return self

        def holds(row: SurveyRow) -> bool:
            said = [row.name.name, row.name.file_title, *row.answers.values(),
                    *(" ".join(h.chunk.text.split()) for hits in row.hits.values() for h in hits)]
            return any(needle in part.lower() for part in said)

        return dataclasses.replace(self, rows=tuple(r for r in self.rows if holds(r)))

    def frame(self) -> pd.DataFrame:
        """One row per contract: contract (display name), file, document id; per method its best score, the spans
        (``[start, end)``, ``;``-separated), their text (`` … ``-separated) and, with answers, the answer.

        With one method the columns are ``score``, ``spans``, ``text`` (and with answers ``answer``, ``quotes found``:
        whether every quote of the answer is in the spans); with several, each is followed by `` · <method>``."""
        several = len(self.methods) > 1
        answered = any(r.answers for r in self.rows)
        records = []
        for row in self.rows:
            record: dict[str, object] = {"contract": row.name.name, "file": row.name.file_title, "document": row.doc_id}
            for method in self.methods:
                hits = row.hits.get(method, ())
                suffix = f" · {method}" if several else ""
                record[f"score{suffix}"] = round(hits[0].score, 4) if hits else None
                record[f"spans{suffix}"] = "; ".join(f"[{h.span.start}, {h.span.end})" for h in hits)
                record[f"text{suffix}"] = " … ".join(" ".join(h.chunk.text.split()) for h in hits)
                if answered:
                    record[f"answer{suffix}"] = row.answers.get(method, "")
                    record[f"quotes found{suffix}"] = row.quoted.get(method)
            records.append(record)
        columns = ["contract", "file", "document"]
        return pd.DataFrame(records, columns=columns if not records else None)


def survey(
    wb: Workbench, corpus: str, methods: Sequence[MethodSpec], question: str, *,
    documents: Sequence[Document] | None = None, per_document: int = 1, progress: Progress | None = None,
    answers: bool = False,
) -> SurveyTable:
    """Search ``question`` inside every contract of ``corpus`` (or ``documents``) with each method.

    Args:
        documents: the contracts to survey (their text names them); None: every document the first method's index
            holds, named from its text as the index's chunks rebuild it.
        per_document: spans per contract and method, best first.
        answers: also ask the configured LLM for a short answer per row and method, quoting only its spans (a
            ConfigError without an LLM: ``llm_configured``).
    """
    started = time.perf_counter()
    text = check_query(question)
    if not methods:
        raise ConfigError("Choose at least one method to survey with")
    if not 1 <= per_document <= MAX_PER_DOCUMENT:
        raise ConfigError(f"Expected 1 to {MAX_PER_DOCUMENT} spans per contract, got {per_document}")
    if answers and not llm_configured(wb.config):
        raise ConfigError("Answers need an LLM: set SAC_LLM_BASE_URL (an OpenAI-compatible server) or OPENAI_API_KEY")
    for method in methods:
        wb.index(corpus, method).require_complete()
    wanted = [d.doc_id for d in documents] if documents is not None else None
    # Naming the contracts (regular expressions, Python) overlaps reading the index (mostly the store's own code).
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="sac-survey-names") as namer:
        naming = namer.submit(display_names, documents) if documents is not None else None
        hits, read = _search_inside(wb, corpus, methods, text, wanted, per_document, progress)
        if documents is None:
            first = read[methods[0].index_name]
            documents = [Document(d, first.document_text(d)) for d in first.documents]
        names = naming.result() if naming is not None else display_names(documents)
    rows = [SurveyRow(d.doc_id, names[d.doc_id], {m.name: hits[m.name].get(d.doc_id, ()) for m in methods})
            for d in documents]
    rows.sort(key=lambda r: (-_best_score(r, methods[0].name), r.name.name))
    notes: tuple[str, ...] = ()
    if answers:
        rows, notes = _answered(wb, text, rows, {d.doc_id: d for d in documents}, progress)
    return SurveyTable(corpus, text, tuple(m.name for m in methods), tuple(rows),
                       {m.name: ignored_options(m) for m in methods}, time.perf_counter() - started, notes)


def _search_inside(
    wb: Workbench, corpus: str, methods: Sequence[MethodSpec], text: str, wanted: Sequence[str] | None,
    per_document: int, progress: Progress | None,
) -> tuple[dict[str, dict[str, tuple[Hit, ...]]], dict[str, IndexSnapshot]]:
    """Per method, each document's best spans; and the records read, per index (read once for all its methods)."""
    vectors = wb.embed_queries([text])[0]
    hits: dict[str, dict[str, tuple[Hit, ...]]] = {}
    read: dict[str, IndexSnapshot] = {}
    for method in methods:
        index = wb.index(corpus, method)
        if progress:
            progress(f"reading the {method.index_name} index", 0, 1)
        records = read.get(method.index_name) or _records(wb, index, wanted)
        read[method.index_name] = records
        if progress:
            progress(f"reading the {method.index_name} index", 1, 1)
        asked, vector = text, vectors
        proper = question_proper(text) if method.search.inner else ""
        if proper:
            asked, vector = proper, wb.embed_queries([proper])[0]
        scores = records.vectors @ np.asarray(vector, dtype=np.float32) if len(records) else np.zeros(0, np.float32)
        if method.search.hybrid is not None and len(records):
            scores = _fused(index, wb, method, records, asked, scores, method.search.hybrid)
        hits[method.name] = _top_inside(records, scores, wanted, per_document, method.name, progress)
    return hits, read


def _best_score(row: SurveyRow, method: str) -> float:
    best = row.best(method)
    return best.score if best is not None else -np.inf


def _records(wb: Workbench, index: Index, doc_ids: Sequence[str] | None) -> IndexSnapshot:
    """The index's records: the whole index (kept in memory per index version), or only a few documents' records."""
    if doc_ids is not None and len(doc_ids) <= FEW_DOCUMENTS:
        ids, matrix, metas, texts = index.all_embeddings(doc_ids) if doc_ids else ([], np.zeros((0, 0)), [], [])
        order = sorted(range(len(ids)), key=lambda i: (str(metas[i]["doc_id"]), int(metas[i]["start"])))
        return IndexSnapshot(
            collection=index.key.collection_name, ids=[ids[i] for i in order],
            vectors=np.ascontiguousarray(matrix[order], dtype=np.float32) if ids else np.zeros((0, 0), np.float32),
            doc_ids=[str(metas[i]["doc_id"]) for i in order],
            starts=np.array([int(metas[i]["start"]) for i in order], dtype=np.int64),
            ends=np.array([int(metas[i]["end"]) for i in order], dtype=np.int64),
            texts=[texts[i] or "" for i in order], metas=[metas[i] for i in order])
    held = snapshot.snapshot(wb.client, index)
    # The snapshot is kept per record count: a rebuild by another process that kept the count is caught here.
    fingerprint = index.fingerprint()
    if held.derived("fingerprint", lambda: fingerprint) != fingerprint:
        snapshot.forget(wb.client, index.key.collection_name)
        held = snapshot.snapshot(wb.client, index)
        held.derived("fingerprint", lambda: fingerprint)
    return held


def _fused(index: Index, wb: Workbench, method: MethodSpec, records: IndexSnapshot, question: str, cosines: np.ndarray,
           weight: float) -> np.ndarray:
    """``+hybrid<w>``: dense and BM25 fused per chunk, each min-max scaled over every chunk of the records."""
    chunks = lexical.for_method(index, wb.summary_store, method)["chunks"]
    bm25 = chunks.scores(question)
    row_of = chunks.row_of
    rows = np.asarray([row_of.get(cid, -1) for cid in records.ids], dtype=np.int64)
    lexical_scores = np.where(rows >= 0, bm25[np.maximum(rows, 0)], 0.0)  # a chunk written since: no BM25 yet
    fused: np.ndarray = weight * minmax(cosines.astype(np.float64)) + (1.0 - weight) * minmax(lexical_scores)
    return fused


def _top_inside(records: IndexSnapshot, scores: np.ndarray, wanted: Sequence[str] | None, n: int, method: str,
                progress: Progress | None) -> dict[str, tuple[Hit, ...]]:
    """Per document, its ``n`` best rows by ``scores`` as hits, best first; ties to the earlier row."""
    bounds = records.doc_bounds
    doc_ids = [d for d in (wanted if wanted is not None else records.documents) if d in bounds]
    out: dict[str, tuple[Hit, ...]] = {}
    for i, doc_id in enumerate(doc_ids, start=1):
        first, last = bounds[doc_id]
        best = np.argsort(-scores[first:last], kind="stable")[:n] + first
        out[doc_id] = tuple(
            Hit(Chunk(Span(doc_id, int(records.starts[r]), int(records.ends[r])), records.texts[r]), float(scores[r]), rank)
            for rank, r in enumerate(best, start=1))
        if progress and (i % 50 == 0 or i == len(doc_ids)):
            progress(f"surveying with {method}", i, len(doc_ids))
    return out


def _answered(wb: Workbench, question: str, rows: list[SurveyRow], documents: Mapping[str, Document],
              progress: Progress | None) -> tuple[list[SurveyRow], tuple[str, ...]]:
    """The rows with the LLM's answer per method from that row's spans; after a failure no more are asked."""
    maker = llm_answers.answer_maker(wb.config)
    asks = [(i, method, hits) for i, row in enumerate(rows) for method, hits in row.hits.items() if hits]
    replies: dict[tuple[int, str], str] = {}
    failed: list[str] = []

    def ask(item: tuple[int, str, tuple[Hit, ...]]) -> None:
        i, method, hits = item
        if failed:
            return
        try:
            replies[(i, method)] = llm_answers.answer(maker, question, documents[rows[i].doc_id], rows[i].name.name,
                                                      [h.chunk.text for h in hits])
        except SacError as err:
            failed.append(str(err))

    with ThreadPoolExecutor(max_workers=wb.config.llm_concurrency, thread_name_prefix="sac-survey-answer") as pool:
        for done, _ in enumerate(pool.map(ask, asks), start=1):
            if progress:
                progress("answering", done, len(asks))
    out = []
    for i, row in enumerate(rows):
        said = {m: replies[(i, m)] for m in row.hits if (i, m) in replies}
        quoted = {m: llm_answers.quotes_found(a, [h.chunk.text for h in row.hits[m]]) for m, a in said.items()}
        out.append(SurveyRow(row.doc_id, row.name, row.hits, said, quoted))
    notes = (f"Answers stopped after an error: {failed[0]}",) if failed else ()
    return out, notes


def export_bytes(table: SurveyTable, fmt: str) -> bytes:
    """The table as a CSV (UTF-8) or XLSX file's bytes."""
    frame = table.frame()
    if fmt == "csv":
        return str(frame.to_csv(index=False)).encode("utf-8")
    if fmt != "xlsx":
        raise ConfigError(f"Unknown export format {fmt!r}. Choices are: {list(EXPORT_FORMATS)}")
    # openpyxl takes about a second to import: loaded for an XLSX export only.
    from openpyxl import Workbook as Sheets
    from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE  # with it, for the same reason

    book = Sheets()
    sheet = book.active
    assert sheet is not None  # a new workbook has one sheet
    sheet.title = "survey"
    sheet.append(list(frame.columns))
    for values in frame.itertuples(index=False):
        sheet.append([ILLEGAL_CHARACTERS_RE.sub("", v) if isinstance(v, str) else (None if pd.isna(v) else v)
                      for v in values])
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            if isinstance(cell.value, str) and cell.value.startswith("="):
                cell.data_type = "s"  # contract text, never a formula
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def write_table(table: SurveyTable, path: Path) -> Path:
    """Write the table to ``path`` as its suffix says (``.csv`` or ``.xlsx``)."""
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in EXPORT_FORMATS:
        raise ConfigError(f"Expected a .csv or .xlsx file to write the survey to, got {path.name!r}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(export_bytes(table, fmt))
    return path
