"""Expert review: labels on retrieved chunks and new ground-truth spans, kept in the workspace.

```
<workspace>/reviews/labels.jsonl        one label per line; a later line for the same key wins
<workspace>/reviews/ground_truth.jsonl  new ground-truth spans; a line with "deleted": true removes one
```
Both files are append-only (a crash loses at most the line being written) and survive restarts.
New ground truth is a benchmark of its own (``reviewed_dataset``: the corpus's documents, one question per query
reviewed), evaluated on the corpus's own indexes, and exports as a LegalBench-RAG benchmark: ``{"tests": [{"query",
"snippets": [{"file_path", "span", "answer"}], "tags"}]}`` where ``corpus[file_path][start:end] == answer``.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from sac.errors import ConfigError, CorpusError
from sac.files import append_jsonl, read_jsonl, utc_now
from sac.types import Chunk, Dataset, Document, Hit, Query, Span

LABELS: tuple[str, ...] = ("relevant", "partly relevant", "not relevant", "wrong document", "boilerplate")
MAX_NOTE_CHARS = 2000


@dataclass(frozen=True, slots=True)
class ChunkLabel:
    """A reviewer's judgement of one retrieved chunk for one query and method."""

    corpus: str
    query_id: str
    query: str
    method: str
    doc_id: str
    start: int
    end: int
    label: str
    reviewer: str
    rank: int = 0
    note: str = ""
    source: str = "live"  # a saved run id, or "live" for a comparison run in the app
    created: str = ""

    @property
    def key(self) -> tuple[str, str, str, str, int, int, str]:
        """What a later label replaces: the same reviewer on the same chunk of the same question and method."""
        return (self.corpus, self.query, self.method, self.doc_id, self.start, self.end, self.reviewer)


@dataclass(frozen=True, slots=True)
class GoldSpan:
    """A span a reviewer marked as ground truth for a query."""

    corpus: str
    query_id: str
    query: str
    doc_id: str
    start: int
    end: int
    answer: str  # exactly the document's text[start:end]
    reviewer: str
    note: str = ""
    created: str = ""

    @property
    def key(self) -> tuple[str, str, str, int, int]:
        """What a later entry replaces or deletes: the same span of the same question."""
        return (self.corpus, self.query, self.doc_id, self.start, self.end)


def _check_common(reviewer: str, note: str) -> None:
    if not reviewer.strip():
        raise ConfigError("Enter a reviewer name: every label and span records who made it.")
    if len(note) > MAX_NOTE_CHARS:
        raise ConfigError(f"The note has {len(note):,} characters; the limit is {MAX_NOTE_CHARS:,}.")


def check_label(label: ChunkLabel) -> ChunkLabel:
    """``label`` if its label, reviewer, note and span can be saved, else a ConfigError saying what is wrong."""
    if label.label not in LABELS:
        raise ConfigError(f"Unknown label {label.label!r}. Choices are: {', '.join(LABELS)}")
    _check_common(label.reviewer, label.note)
    if not 0 <= label.start <= label.end:
        raise ConfigError(f"Expected 0 <= start <= end, got [{label.start}, {label.end})")
    return label


def make_gold_span(
    *, corpus: str, query_id: str, query: str, doc_id: str, doc_text: str, start: int, end: int,
    reviewer: str, note: str = "",
) -> GoldSpan:
    """A ground-truth span checked against its document; ``answer`` is the document's text there."""
    _check_common(reviewer, note)
    if not query.strip():
        raise ConfigError("A ground-truth span needs the query it answers.")
    if not 0 <= start < end <= len(doc_text):
        raise ConfigError(
            f"Expected a non-empty span inside the document (0 <= start < end <= {len(doc_text)}), "
            f"got [{start}, {end})"
        )
    return GoldSpan(corpus, query_id, query.strip(), doc_id, start, end, doc_text[start:end], reviewer.strip(), note)


def find_quote(text: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` occurs in ``text`` (first occurrence; surrounding whitespace ignored), or None."""
    q = quote.strip()
    if not q:
        return None
    pos = text.find(q)
    return (pos, pos + len(q)) if pos >= 0 else None


class ReviewStore:
    """Labels and new ground truth under ``root`` (``Workspace.reviews_dir``)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def labels_path(self) -> Path:
        """The labels, one JSON line per saved label (append-only)."""
        return self.root / "labels.jsonl"

    @property
    def gold_path(self) -> Path:
        """The ground-truth spans, one JSON line per addition or deletion (append-only)."""
        return self.root / "ground_truth.jsonl"

    # -- labels --------------------------------------------------------------------------
    def save_labels(self, labels: Iterable[ChunkLabel]) -> list[ChunkLabel]:
        """Check and append ``labels``, stamped with the time; returns them as saved."""
        now = utc_now()
        checked = [dataclasses.replace(check_label(lab), reviewer=lab.reviewer.strip(), created=now) for lab in labels]
        append_jsonl(self.labels_path, [dataclasses.asdict(lab) for lab in checked])
        return checked

    def labels(self, *, corpus: str | None = None, query: str | None = None) -> list[ChunkLabel]:
        """The latest label per (corpus, query, method, chunk, reviewer), oldest first."""
        names = {f.name for f in dataclasses.fields(ChunkLabel)}
        latest: dict[tuple[Any, ...], ChunkLabel] = {}
        for row in read_jsonl(self.labels_path):
            try:
                lab = ChunkLabel(**{k: v for k, v in row.items() if k in names})
            except TypeError:
                continue
            if (corpus is None or lab.corpus == corpus) and (query is None or lab.query == query):
                latest.pop(lab.key, None)
                latest[lab.key] = lab
        return list(latest.values())

    # -- ground truth --------------------------------------------------------------------
    def add_gold(self, span: GoldSpan) -> GoldSpan:
        """Append a ground-truth span, stamped with the time; returns it as saved."""
        saved = dataclasses.replace(span, created=utc_now())
        append_jsonl(self.gold_path, [dataclasses.asdict(saved)])
        return saved

    def remove_gold(self, span: GoldSpan) -> None:
        """Append the deletion of a ground-truth span (``gold`` then leaves it out)."""
        append_jsonl(self.gold_path, [{**dataclasses.asdict(span), "deleted": True, "created": utc_now()}])

    def gold(self, *, corpus: str | None = None) -> list[GoldSpan]:
        """The current ground-truth spans (of ``corpus``): each span's latest entry, unless that is a deletion."""
        names = {f.name for f in dataclasses.fields(GoldSpan)}
        current: dict[tuple[Any, ...], GoldSpan] = {}
        for row in read_jsonl(self.gold_path):
            try:
                span = GoldSpan(**{k: v for k, v in row.items() if k in names})
            except TypeError:
                continue
            if corpus is not None and span.corpus != corpus:
                continue
            current.pop(span.key, None)
            if not row.get("deleted"):
                current[span.key] = span
        return list(current.values())


def run_hits(
    rows: Sequence[dict[str, Any]], dataset: str, query_id: str, texts: Mapping[str, str], k: int | None = None,
) -> dict[str, list[Hit]]:
    """Per method, the hits a saved run retrieved for one query, rebuilt from the documents' texts.

    A hit whose document is not in ``texts`` (a distractor pool document) keeps its span with empty text.
    """
    out: dict[str, list[Hit]] = {}
    for row in rows:
        if row.get("dataset") != dataset or row.get("query_id") != query_id:
            continue
        hits = []
        for rank, item in enumerate(row.get("retrieved", [])[:k], start=1):
            start, end = (int(v) for v in item["span"])
            span = Span(str(item["file_path"]), start, end)
            text = texts.get(span.doc_id, "")[start:end]
            hits.append(Hit(Chunk(span, text), float(item.get("score", 0.0)), rank))
        out[str(row["method"])] = hits
    return out


def labels_frame(labels: Sequence[ChunkLabel]) -> pd.DataFrame:
    """One row per label, one column per ``ChunkLabel`` field."""
    columns = [f.name for f in dataclasses.fields(ChunkLabel)]
    return pd.DataFrame([dataclasses.asdict(lab) for lab in labels], columns=columns)


def labels_csv(labels: Sequence[ChunkLabel]) -> str:
    """``labels_frame`` as CSV text, for download."""
    buffer = io.StringIO()
    labels_frame(labels).to_csv(buffer, index=False)
    return buffer.getvalue()


def label_summary(labels: Sequence[ChunkLabel]) -> pd.DataFrame:
    """Per method: how many chunks got each label, and the share labelled relevant or partly relevant."""
    columns = ["method", *LABELS, "labelled", "relevant share"]
    if not labels:
        return pd.DataFrame(columns=columns)
    frame = labels_frame(labels)
    counts = frame.pivot_table(index="method", columns="label", values="doc_id", aggfunc="count", fill_value=0)
    counts = counts.reindex(columns=list(LABELS), fill_value=0).astype(int)
    counts["labelled"] = counts[list(LABELS)].sum(axis=1)
    counts["relevant share"] = ((counts["relevant"] + counts["partly relevant"]) / counts["labelled"]).round(3)
    out = counts.reset_index()
    out.columns.name = None
    return out[columns]


def benchmark_json(spans: Sequence[GoldSpan]) -> dict[str, Any]:
    """New ground truth as a LegalBench-RAG benchmark: one test per query, its spans as snippets."""
    tests: dict[str, dict[str, Any]] = {}
    for s in sorted(spans, key=lambda s: (s.query, s.doc_id, s.start, s.end)):
        test = tests.setdefault(s.query, {"query": s.query, "snippets": [], "tags": ["sac-review"]})
        test["snippets"].append({"file_path": s.doc_id, "span": [s.start, s.end], "answer": s.answer})
    return {"tests": list(tests.values())}


def reviewed_dataset(corpus: str, documents: Sequence[Document], spans: Sequence[GoldSpan]) -> Dataset:
    """The corpus's documents with one question per query that has reviewed ground truth, its spans as the gold.

    Questions are grouped by their text (as the export groups them) and keep the first span's query id. A span must
    still hold its answer to the character: a document replaced or removed since the span was marked raises
    CorpusError naming the span, so no figure is scored against text that moved.
    """
    texts = {d.doc_id: d.text for d in documents}
    grouped: dict[str, list[GoldSpan]] = {}
    for s in sorted(spans, key=lambda s: (s.query, s.doc_id, s.start, s.end)):
        if s.corpus != corpus:
            raise ConfigError(f"A span of corpus {s.corpus!r} was given for corpus {corpus!r}")
        text = texts.get(s.doc_id)
        if text is None:
            raise CorpusError(f"Reviewed ground truth for {s.query!r} points at {s.doc_id!r}, which corpus {corpus!r} "
                              "no longer holds: remove that span on Review first.")
        if text[s.start : s.end] != s.answer:
            raise CorpusError(f"Reviewed ground truth for {s.query!r} at [{s.start}, {s.end}) of {s.doc_id!r} no longer "
                              "holds the words marked (the document changed since): remove that span on Review and "
                              "mark it again.")
        grouped.setdefault(s.query, []).append(s)
    if not grouped:
        raise ConfigError(f"Corpus {corpus!r} has no reviewed ground truth yet: mark some on Review first.")
    queries = tuple(
        Query(group[0].query_id, query, tuple(Span(s.doc_id, s.start, s.end) for s in group), corpus)
        for query, group in grouped.items()
    )
    return Dataset(corpus, tuple(documents), queries)


def reviewed_settings(corpus: str, dataset: Dataset) -> dict[str, Any]:
    """What a run of ``reviewed_dataset(corpus, ...)`` records beside its other settings.

    Its benchmark named as reviewed ground truth, the corpus it searched, and how many questions and spans it was
    scored on."""
    return {"benchmark": f"reviewed ground truth of {corpus}", "corpora": {dataset.name: corpus},
            "reviewed": {"corpus": corpus, "questions": len(dataset.queries),
                         "spans": sum(len(q.gold) for q in dataset.queries)}}
