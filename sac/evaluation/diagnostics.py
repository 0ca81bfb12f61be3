"""Why retrieval goes wrong: boilerplate, look-alike documents, and the embedding space itself.

Pure functions over index snapshots (``sac.index.snapshot``) and saved runs; the pages only render them.

- ``boilerplate_counts``: per chunk, how many OTHER documents hold a near-duplicate chunk (cosine >=
  0.95 in the baseline index). A hit with a high count is text every contract of the kind shares: the
  retriever cannot tell from it which contract it came from.
- ``document_risk``: per document, how mixed its neighbourhood is: the share of its chunks' nearest
  neighbours that come from other documents (a DRM-like figure), and the mean best cosine to another
  document's chunk. SAC should lower the first.
- ``embedding_map``: a 2-D projection (PCA, or UMAP when installed) of the chunk vectors of a few
  documents, with the query and its hits, and the silhouette score by document (how well the chunks of
  one document stay together and apart from the others).
- ``query_changes``: which questions gained or lost the right document between two runs, with the corpus
  each was asked of (the Evaluate page links each to Compare).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sac.errors import ConfigError
from sac.evaluation.runs import RunFolder, query_diff
from sac.index.snapshot import IndexSnapshot
from sac.types import Hit

NEAR_DUPLICATE = 0.95
BLOCK = 1024  # rows per matrix product: bounded memory on large indexes
MAX_RISK_ROWS = 20000  # above this, document_risk samples rows per document (stated in its result)


def _cross_document_max(snap: IndexSnapshot, rows: np.ndarray, threshold: float | None = None,
                        neighbours: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """For each of ``rows``, how close other documents come: best cosine, near-duplicate count, neighbour share.

    The highest cosine to a chunk of another document; (with a threshold) how many other documents hold a chunk
    at or above it; (with ``neighbours`` = m) the share of its m nearest chunks that belong to another document."""
    doc_codes = _doc_codes(snap)
    n = len(snap)
    best = np.full(len(rows), -1.0, dtype=np.float32)
    counts = np.zeros(len(rows), dtype=np.int64)
    mix = np.zeros(len(rows), dtype=np.float64)
    m = min(neighbours, n - 1)
    for i in range(0, len(rows), BLOCK):
        part = rows[i:i + BLOCK]
        sims = snap.vectors[part] @ snap.vectors.T  # (b, n)
        if m > 0:
            own = sims.copy()
            own[np.arange(len(part)), part] = -np.inf  # a chunk is not its own neighbour
            nearest = np.argpartition(-own, m - 1, axis=1)[:, :m]
            mix[i:i + len(part)] = (doc_codes[nearest] != doc_codes[part][:, None]).mean(axis=1)
        same = doc_codes[part][:, None] == doc_codes[None, :]
        sims[same] = -1.0
        best[i:i + len(part)] = sims.max(axis=1) if n else -1.0
        if threshold is not None:
            for j, row_sims in enumerate(sims):
                counts[i + j] = len(np.unique(doc_codes[row_sims >= threshold]))
    return best, counts, mix


def _doc_codes(snap: IndexSnapshot) -> np.ndarray:
    def make() -> np.ndarray:
        codes = {d: i for i, d in enumerate(snap.documents)}
        return np.asarray([codes[d] for d in snap.doc_ids], dtype=np.int64)
    return snap.derived("doc_codes", make)


def boilerplate_counts(snap: IndexSnapshot, chunk_ids: Sequence[str], threshold: float = NEAR_DUPLICATE
                       ) -> dict[str, int]:
    """Chunk id -> number of other documents with a chunk at cosine >= ``threshold`` (ids not in the index left out).

    Use the baseline index: there the chunk text alone is embedded."""
    row_of = snap.row_of
    known = [c for c in dict.fromkeys(chunk_ids) if c in row_of]
    if not known:
        return {}
    _, counts, _ = _cross_document_max(snap, np.asarray([row_of[c] for c in known]), threshold)
    return {c: int(n) for c, n in zip(known, counts)}


def hit_boilerplate(snap: IndexSnapshot, hits: Sequence[Hit], threshold: float = NEAR_DUPLICATE) -> list[int | None]:
    """Per hit, its boilerplate count in ``snap`` (None when the chunk is not in that index, e.g. a merged chunk)."""
    counts = boilerplate_counts(snap, [h.chunk.chunk_id for h in hits], threshold)
    return [counts.get(h.chunk.chunk_id) for h in hits]


def document_risk(snap: IndexSnapshot, *, neighbours: int = 8, max_rows: int = MAX_RISK_ROWS, seed: int = 0
                  ) -> pd.DataFrame:
    """Per document, over its chunks, how close other documents come: ``risk``, ``mix`` and ``boilerplate``.

    - ``risk``: the mean best cosine to a chunk of another document (how close its look-alikes come);
    - ``mix``: the mean share of a chunk's ``neighbours`` nearest chunks that belong to another document (a
      DRM-like figure: a question that lands on this document's chunks finds that share of wrong neighbours);
    - ``boilerplate``: the share of its chunks with a near-duplicate (cosine >= 0.95) in another document.

    Above ``max_rows`` chunks, a fixed random sample of rows is scored; ``sampled`` says how many per document.
    """
    n = len(snap)
    columns = ["doc_id", "chunks", "risk", "mix", "boilerplate", "sampled"]
    if n == 0 or len(snap.documents) < 2:
        return pd.DataFrame(columns=columns)
    rows = np.arange(n)
    if n > max_rows:
        rng = np.random.default_rng(seed)
        rows = np.sort(rng.choice(n, size=max_rows, replace=False))
    best, counts, mix = _cross_document_max(snap, rows, NEAR_DUPLICATE, neighbours)
    frame = pd.DataFrame({"doc_id": [snap.doc_ids[r] for r in rows], "best": best, "mix": mix, "dup": counts > 0})
    sizes = pd.Series(snap.doc_ids).value_counts()
    out = frame.groupby("doc_id", sort=False).agg(risk=("best", "mean"), mix=("mix", "mean"),
                                                  boilerplate=("dup", "mean"), sampled=("best", "size")).reset_index()
    out.insert(1, "chunks", out["doc_id"].map(sizes).astype(int))
    return out.sort_values("mix", ascending=False, kind="stable").reset_index(drop=True)[columns]


def compare_risk(baseline: IndexSnapshot, other: IndexSnapshot, **kwargs: int) -> pd.DataFrame:
    """``document_risk`` of the baseline and another index side by side, one row per document.

    Columns: chunks, risk and mix in each (``*_baseline``, ``*_method``), and the baseline's boilerplate share.
    ``kwargs`` go to ``document_risk`` (``neighbours``, ``max_rows``, ``seed``)."""
    a = document_risk(baseline, **kwargs).set_index("doc_id")
    b = document_risk(other, **kwargs).set_index("doc_id").reindex(a.index)
    out = pd.DataFrame({
        "chunks": a["chunks"], "mix_baseline": a["mix"], "mix_method": b["mix"],
        "risk_baseline": a["risk"], "risk_method": b["risk"], "boilerplate": a["boilerplate"],
    })
    return out.reset_index().sort_values("mix_baseline", ascending=False, kind="stable").reset_index(drop=True)


# -- the embedding map ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class MapData:
    """One method's projected chunks (one row per chunk, plus one row for the query when given)."""

    method: str
    points: pd.DataFrame  # doc_id, x, y, text, start, end, hit_rank (0: not a hit), kind ("chunk" | "query")
    silhouette: float | None  # by document, cosine, in the full embedding space; None under 2 documents
    projection: str  # "pca" or "umap"


def umap_available() -> bool:
    """Whether the optional umap-learn package can be imported (the embedding map offers UMAP only then)."""
    try:
        import umap  # noqa: F401 - heavy and optional: imported only to see whether it is there
    except ImportError:
        return False
    return True


def project(vectors: np.ndarray, method: str = "pca", seed: int = 0) -> np.ndarray:
    """2-D coordinates of the rows: PCA (scikit-learn) or UMAP (when the umap package is installed)."""
    if method not in ("pca", "umap"):
        raise ConfigError(f"Unknown projection {method!r}. Choices are: ['pca', 'umap']")
    n = len(vectors)
    if n == 0:
        return np.zeros((0, 2))
    if n < 3:
        return np.column_stack([np.arange(n, dtype=float), np.zeros(n)])
    if method == "umap":
        if not umap_available():
            raise ConfigError("UMAP needs the umap-learn package (pip install umap-learn); PCA works without it")
        import umap  # heavy and optional: loaded when a UMAP projection is first asked for

        reducer = umap.UMAP(n_components=2, metric="cosine", random_state=seed, n_neighbors=min(15, n - 1))
        return np.asarray(reducer.fit_transform(vectors), dtype=float)
    from sklearn.decomposition import PCA  # heavy: loaded when the embedding map is first drawn

    return np.asarray(PCA(n_components=2, random_state=seed).fit_transform(vectors), dtype=float)


def silhouette_by_document(vectors: np.ndarray, doc_ids: Sequence[str]) -> float | None:
    """Mean silhouette (cosine) with documents as the clusters; None with fewer than 2 documents.

    Near 1, each document's chunks sit together and apart from the others; near 0 or below, the documents
    overlap."""
    labels = list(doc_ids)
    if len(set(labels)) < 2 or len(set(labels)) >= len(labels):
        return None
    from sklearn.metrics import silhouette_score  # heavy: loaded when the embedding map is first drawn

    return float(silhouette_score(np.asarray(vectors, dtype=np.float32), labels, metric="cosine"))


def embedding_map(
    snap: IndexSnapshot,
    method: str,
    doc_ids: Sequence[str],
    *,
    query_vector: np.ndarray | None = None,
    hits: Sequence[Hit] = (),
    projection: str = "pca",
) -> MapData:
    """The chunks of ``doc_ids`` in one index, projected to 2-D together with the query."""
    rows = snap.rows(list(dict.fromkeys(doc_ids)))
    if len(rows) == 0:
        raise ConfigError(f"None of the chosen documents is in the {method} index")
    vectors = snap.vectors[rows]
    rank_of = {h.chunk.chunk_id: h.rank for h in hits}
    stacked = vectors if query_vector is None else np.vstack([vectors, np.asarray(query_vector, dtype=np.float32)])
    xy = project(stacked, projection)
    points = pd.DataFrame({
        "doc_id": [snap.doc_ids[r] for r in rows],
        "x": xy[: len(rows), 0], "y": xy[: len(rows), 1],
        "text": [snap.texts[r] for r in rows],
        "start": [int(snap.starts[r]) for r in rows], "end": [int(snap.ends[r]) for r in rows],
        "hit_rank": [rank_of.get(snap.ids[r], 0) for r in rows],
        "kind": "chunk",
    })
    if query_vector is not None:
        query_row = pd.DataFrame([{"doc_id": "", "x": xy[-1, 0], "y": xy[-1, 1], "text": "", "start": 0, "end": 0,
                                   "hit_rank": 0, "kind": "query"}])
        points = pd.concat([points, query_row], ignore_index=True)
    return MapData(method, points, silhouette_by_document(vectors, [snap.doc_ids[r] for r in rows]), projection)


def default_map_documents(snap: IndexSnapshot, target: str | None, n: int = 5) -> list[str]:
    """The target document and its closest look-alikes (by mean chunk vector), or the first n documents."""
    docs = snap.documents
    if not docs:
        return []
    if target not in docs:
        return docs[:n]
    bounds = snap.doc_bounds
    means = np.vstack([snap.vectors[slice(*bounds[d])].mean(axis=0) for d in docs])
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    sims = means @ means[docs.index(str(target))]
    order = [docs[i] for i in np.argsort(-sims, kind="stable")]
    return [str(target), *[d for d in order if d != target][: n - 1]]


# -- runs ----------------------------------------------------------------------------------------------
def query_changes(run_a: RunFolder, run_b: RunFolder, k: int = 8, *, corpus_of: Mapping[str, str],
                  only_changed: bool = True) -> pd.DataFrame:
    """``sac.evaluation.runs.query_diff`` plus the question text and the corpus it was asked of.

    ``corpus_of`` maps a dataset name to its corpus (``sac.ingest.catalog.dataset_corpus``)."""
    diff = query_diff(run_a, run_b, k=k)
    if only_changed:
        diff = diff[diff["change"] != "same"]
    texts = {**run_a.query_texts(), **run_b.query_texts()}
    questions = [texts.get((str(ds), str(qid)), "") for ds, qid in zip(diff["dataset"], diff["query_id"])]
    return diff.assign(query=questions, corpus=[corpus_of[ds] for ds in diff["dataset"]]).reset_index(drop=True)
