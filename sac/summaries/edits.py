"""Reading, regenerating and comparing summaries across strategies: the logic behind the Summaries page.

Pure: the page passes in the store, the summarizer and the embedder's vectors; nothing here draws.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import pandas as pd

from sac.protocols import Summarizer
from sac.summaries.runs import summarize_corpus
from sac.summaries.store import SummaryStore
from sac.types import Document, Summary, document_title

FILTERS = ("all", "hand-edited", "cut to fit", "look-alikes")


def regenerate(
    store: SummaryStore,
    documents: Sequence[Document],
    summarizer: Summarizer,
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, str], None] | None = None,
) -> dict[str, Summary]:
    """Make ``summarizer``'s summary the current one of each document, replacing any hand edit.

    Summaries the summarizer already made (same model, prompt and length) are reused from the store.
    When the regenerated text equals an older version, it is stored again as the newest version (as
    an edit restoring that text), since the highest version is the one in use.
    """
    generated = {}
    for doc in documents:
        cached = store.get_cached(doc, summarizer)
        if cached is not None:
            generated[doc.doc_id] = cached
    missing = [d for d in documents if d.doc_id not in generated]
    if missing:
        made = summarize_corpus(missing, summarizer, store, concurrency=concurrency, progress=progress)
        for doc in missing:
            fresh = store.get_cached(doc, summarizer)
            if fresh is not None:
                generated[doc.doc_id] = fresh
            elif doc.doc_id in made:
                generated[doc.doc_id] = made[doc.doc_id]
    strategy = str(summarizer.strategy)
    out = {}
    for doc in documents:
        summary = generated.get(doc.doc_id)
        if summary is None:
            continue
        current = store.current(doc, strategy)
        if current is None or current.text != summary.text:
            current = store.save_edit(doc, strategy, summary.text)
        out[doc.doc_id] = current
    return out


def summaries_frame(
    documents: Sequence[Document],
    summaries: Mapping[str, Mapping[str, Summary]],
    chunk_counts: Mapping[str, int],
    lookalikes: Mapping[str, pd.DataFrame] | None = None,
) -> pd.DataFrame:
    """One row per document, with per strategy its summary and how it compares.

    Per strategy: the summary, the cosine similarity to the most similar other document's summary (and which
    one), its length and version ("edited" for hand edits, "cut" when cut to fit). Columns come grouped by
    strategy, the summary and its similarity first."""
    lookalikes = lookalikes or {}
    near = {s: frame.set_index("doc_id") for s, frame in lookalikes.items() if len(frame)}
    rows = []
    for doc in documents:
        row: dict[str, object] = {"doc_id": doc.doc_id, "document": document_title(doc.doc_id)}
        for strategy, by_doc in summaries.items():
            summary = by_doc.get(doc.doc_id)
            row[strategy] = summary.text if summary else None
            if strategy in near and doc.doc_id in near[strategy].index:
                row[f"{strategy} similarity"] = round(float(near[strategy].loc[doc.doc_id, "similarity"]), 3)
                row[f"{strategy} most similar"] = document_title(str(near[strategy].loc[doc.doc_id, "most_similar"]))
            row[f"{strategy} chars"] = len(summary.text) if summary else None
            row[f"{strategy} version"] = (
                f"v{summary.version}" + (" edited" if summary.model == "human" else "") + (" cut" if summary.cut else "")
                if summary else None
            )
        row["chunks"] = chunk_counts.get(doc.doc_id, 0)
        rows.append(row)
    return pd.DataFrame(rows)


def lookalike_pairs(lookalikes: Mapping[str, pd.DataFrame], threshold: float) -> pd.DataFrame:
    """Pairs of documents whose summaries are at least ``threshold`` similar, once per pair, most similar first."""
    rows = []
    for strategy, frame in lookalikes.items():
        seen: set[frozenset[str]] = set()
        for doc_id, other, sim in frame[["doc_id", "most_similar", "similarity"]].itertuples(index=False):
            pair = frozenset((doc_id, other))
            if sim >= threshold and pair not in seen:
                seen.add(pair)
                rows.append({"strategy": strategy, "document": document_title(doc_id),
                             "look-alike": document_title(str(other)), "cosine": round(float(sim), 3)})
    out = pd.DataFrame(rows, columns=["strategy", "document", "look-alike", "cosine"])
    return out.sort_values("cosine", ascending=False, kind="stable").reset_index(drop=True)


def filter_summaries(frame: pd.DataFrame, text: str = "", show: str = "all", threshold: float = 0.9) -> pd.DataFrame:
    """Rows whose document or any summary contains ``text`` (case-insensitive), narrowed by ``show``."""
    if show not in FILTERS:
        raise ValueError(f"Unknown filter {show!r}. Choices are: {FILTERS}")
    out = frame
    needle = text.strip().lower()
    if needle:
        text_cols = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c])]
        mask = frame[text_cols].apply(lambda col: col.astype(str).str.lower().str.contains(needle, regex=False)).any(axis=1)
        out = out[mask]
    version_cols = [c for c in frame.columns if c.endswith(" version")]
    if show == "hand-edited":
        out = out[out[version_cols].apply(lambda col: col.astype(str).str.contains("edited")).any(axis=1)]
    elif show == "cut to fit":
        out = out[out[version_cols].apply(lambda col: col.astype(str).str.contains("cut")).any(axis=1)]
    elif show == "look-alikes":
        sim_cols = [c for c in frame.columns if c.endswith(" similarity")]
        out = out[(out[sim_cols] >= threshold).any(axis=1)] if sim_cols else out.iloc[0:0]
    return out.reset_index(drop=True)
