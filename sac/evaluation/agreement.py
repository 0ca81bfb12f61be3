"""Agreement between reviewers, and between reviewers and the benchmark.

Between reviewers: where two experts labelled the same retrieved chunks, how often they agree.

A chunk is the same whichever method retrieved it: (corpus, question, document, start, end). A reviewer's label
of it is their latest one, in whichever method's tab it was given (labels carry the time they were saved). For
each pair of reviewers, over the chunks both labelled:

    observed     p_o = the share of those chunks given the same label
    by chance    p_e = sum over the labels c of p_A(c) * p_B(c)    (each reviewer's own share of label c)
    Cohen's kappa  = (p_o - p_e) / (1 - p_e)                        (none when p_e = 1: one label throughout)

Kappa 1 is full agreement; 0 is what two reviewers reach who label at random with their own label frequencies.
It is given on the five labels and on relevance alone (relevant or partly relevant, against the other three),
each with a 95 % percentile bootstrap interval over the chunks (a draw in which both gave one label throughout
has no kappa and is left out; under MIN_UNITS chunks there is no interval). Two reviewers with few common chunks
get a wide interval: a kappa from ten chunks says little.

``labels_against_flags`` sets the experts beside the benchmark: how their labels fall on the hits DRM counts as
the right document's and as another document's.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from sac.evaluation.review import LABELS, ChunkLabel
from sac.evaluation.uncertainty import MIN_UNITS

RELEVANT = frozenset({"relevant", "partly relevant"})
N_RESAMPLES = 2000
BLOCK_CELLS = 1_000_000  # (resample, chunk) cells drawn at once
AGREEMENT_COLUMNS = ["reviewer A", "reviewer B", "chunks", "same label", "kappa", "kappa low", "kappa high",
                     "same relevance", "relevance kappa", "relevance kappa low", "relevance kappa high"]
FLAG_COLUMNS = ["label", "right document", "another document (flagged)"]
DISAGREEMENT_COLUMNS = ["labels", "document", "start", "end", "query", "corpus"]

Chunk = tuple[str, str, str, int, int]  # corpus, query, document, start, end


def latest_labels(labels: Sequence[ChunkLabel]) -> dict[Chunk, dict[str, str]]:
    """Per chunk, each reviewer's latest label of it (over every method that retrieved it)."""
    latest: dict[Chunk, dict[str, tuple[str, int, str]]] = {}
    for order, lab in enumerate(labels):
        chunk = (lab.corpus, lab.query, lab.doc_id, lab.start, lab.end)
        mine = latest.setdefault(chunk, {})
        if lab.reviewer not in mine or (lab.created, order) >= mine[lab.reviewer][:2]:
            mine[lab.reviewer] = (lab.created, order, lab.label)
    return {chunk: {who: got[2] for who, got in by.items()} for chunk, by in latest.items()}


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float:
    """Cohen's kappa of two reviewers' labels of the same items (module docstring); NaN where it is undefined."""
    if len(a) != len(b):
        raise ValueError(f"Expected two label lists of one length, got {len(a)} and {len(b)}")
    if not a:
        return math.nan
    x, y, n_labels = _encoded(a, b)
    return float(_kappas(x[None, :], y[None, :], n_labels)[0])


def _encoded(a: Sequence[str], b: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Both reviewers' labels as small integer codes of one shared alphabet, and its size."""
    codes = {label: i for i, label in enumerate(sorted(set(a) | set(b)))}
    x, y = (np.asarray([codes[v] for v in labels], dtype=np.int8) for labels in (a, b))
    return x, y, len(codes)


def _kappas(a: np.ndarray, b: np.ndarray, n_labels: int) -> np.ndarray:
    """Kappa of each row pair of two (draws, items) arrays of label codes; NaN where p_e = 1."""
    observed = (a == b).mean(axis=1)
    chance = sum((a == c).mean(axis=1) * (b == c).mean(axis=1) for c in range(n_labels))
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.isclose(chance, 1.0), np.nan, (observed - chance) / (1.0 - chance))


def _with_interval(a: list[str], b: list[str], seed: int, n_resamples: int) -> tuple[float, float, float]:
    """Kappa and its bootstrap interval over the items (module docstring)."""
    kappa = cohen_kappa(a, b)
    if len(a) < MIN_UNITS:
        return kappa, math.nan, math.nan
    x, y, n_labels = _encoded(a, b)
    rng = np.random.default_rng(seed)
    block = max(1, BLOCK_CELLS // len(a))  # resamples drawn at once: memory stays flat however many chunks
    parts = []
    for done in range(0, n_resamples, block):
        draws = rng.integers(0, len(a), size=(min(block, n_resamples - done), len(a)), dtype=np.int32)
        parts.append(_kappas(x[draws], y[draws], n_labels))
    replicates = np.concatenate(parts)
    replicates = replicates[~np.isnan(replicates)]
    if not len(replicates):
        return kappa, math.nan, math.nan
    low, high = np.percentile(replicates, [2.5, 97.5])
    return kappa, float(low), float(high)


def agreement_table(labels: Sequence[ChunkLabel], *, seed: int = 0, n_resamples: int = N_RESAMPLES) -> pd.DataFrame:
    """One row per pair of reviewers who labelled at least one chunk in common (AGREEMENT_COLUMNS).

    Shares as fractions, kappas with their intervals, NaN where there is none."""
    latest = latest_labels(labels)
    reviewers = sorted({who for by in latest.values() for who in by})
    rows = []
    for first, second in itertools.combinations(reviewers, 2):
        both = [(by[first], by[second]) for by in latest.values() if first in by and second in by]
        if not both:
            continue
        a, b = [x for x, _ in both], [y for _, y in both]
        rel_a, rel_b = [_relevance(x) for x in a], [_relevance(y) for y in b]
        kappa = _with_interval(a, b, seed, n_resamples)
        relevance = _with_interval(rel_a, rel_b, seed, n_resamples)
        rows.append([first, second, len(both), float(np.mean([x == y for x, y in both])), *kappa,
                     float(np.mean([x == y for x, y in zip(rel_a, rel_b)])), *relevance])
    return pd.DataFrame(rows, columns=AGREEMENT_COLUMNS)


def _relevance(label: str) -> str:
    return "relevant" if label in RELEVANT else "not relevant"


def disagreements(labels: Sequence[ChunkLabel]) -> pd.DataFrame:
    """The chunks two or more reviewers labelled differently, for adjudication (DISAGREEMENT_COLUMNS).

    ``labels``: "Ada: relevant · Grace: not relevant", reviewers in name order."""
    rows = []
    for (corpus, query, doc, start, end), by in sorted(latest_labels(labels).items()):
        if len(set(by.values())) > 1:
            rows.append([" · ".join(f"{who}: {by[who]}" for who in sorted(by)), doc, start, end, query, corpus])
    return pd.DataFrame(rows, columns=DISAGREEMENT_COLUMNS)


def format_agreement(table: pd.DataFrame) -> pd.DataFrame:
    """The agreement table as a page shows it: shares in %, each kappa with its interval ("0.62 [0.41, 0.80]")."""
    def kappa(value: float, low: float, high: float) -> str:
        if math.isnan(value):
            return "none (one label throughout)"
        return f"{value:.2f}" + ("" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]")

    return pd.DataFrame({
        "reviewers": [f"{a} · {b}" for a, b in zip(table["reviewer A"], table["reviewer B"])],
        "chunks both labelled": table["chunks"],
        "same label": [f"{v * 100:.0f} %" for v in table["same label"]],
        "kappa (5 labels)": [kappa(*r) for r in zip(table["kappa"], table["kappa low"], table["kappa high"])],
        "same relevance": [f"{v * 100:.0f} %" for v in table["same relevance"]],
        "kappa (relevance)": [kappa(*r) for r in zip(table["relevance kappa"], table["relevance kappa low"],
                                                     table["relevance kappa high"])],
    })


def labels_against_flags(labels: Sequence[ChunkLabel], gold: Mapping[tuple[str, str], Iterable[str]]) -> pd.DataFrame:
    """How experts labelled the hits the benchmark calls right and those it flags as another document's.

    The flagged hits are DRM's wrong-document hits. One row per label, counting each reviewer's latest label of each
    chunk once.
    ``gold``: (corpus, query id) -> the question's documents; labels of other questions (live ones) are left out.
    A flagged hit labelled relevant is harm DRM counts that the expert did not see (a look-alike clause that
    answers the question as well); a right-document hit labelled wrong document, a ground truth that misses one."""
    ids = {(lab.corpus, lab.query): lab.query_id for lab in labels}
    counts = {label: [0, 0] for label in LABELS}
    for (corpus, query, doc, _start, _end), by in latest_labels(labels).items():
        docs = gold.get((corpus, ids[(corpus, query)]))
        if docs is not None:
            for label in by.values():
                counts[label][doc not in set(docs)] += 1
    return pd.DataFrame([[label, *n] for label, n in counts.items()], columns=FLAG_COLUMNS)
