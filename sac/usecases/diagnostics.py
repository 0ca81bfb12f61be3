"""See why a method confuses documents: an index read whole (look-alike risk per document, boilerplate hits) and the
embedding map, a few documents' chunks in 2-D with a question and its hits."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from sac.evaluation import diagnostics
from sac.evaluation.diagnostics import MapData, umap_available
from sac.index import snapshot as index_snapshot
from sac.index.snapshot import IndexSnapshot
from sac.methods import parse_method
from sac.types import Hit, check_query
from sac.usecases.workbench import Workbench

# What the app shows of an index read whole, and whether the UMAP projection can be offered.
__all__ = [
    "IndexSnapshot", "MapData", "embedding_maps", "hit_boilerplate", "look_alike_risk", "map_documents", "snapshot",
    "umap_available",
]


def snapshot(wb: Workbench, corpus: str, method: str) -> IndexSnapshot:
    """Every record of one index in memory (for look-alike risk and the embedding map), read once per index version
    and shared by every caller of the store client (``sac.index.snapshot`` caches it)."""
    return index_snapshot.snapshot(wb.client, wb.index(corpus, parse_method(method)))


def look_alike_risk(wb: Workbench, corpus: str, other: str) -> pd.DataFrame:
    """Per document of ``corpus``: its wrong-document neighbours, closest other document and boilerplate share in the
    baseline index beside ``other``'s (sac.evaluation.diagnostics.compare_risk)."""
    return diagnostics.compare_risk(snapshot(wb, corpus, "baseline"), snapshot(wb, corpus, other))


def hit_boilerplate(wb: Workbench, corpus: str, hits: Mapping[str, Sequence[Hit]]) -> dict[str, list[int | None]]:
    """Per method, for each of its hits: how many other documents hold a near-identical chunk in the baseline index
    (no summary: the text alone), so a hit that cannot tell its contract apart says so."""
    baseline = snapshot(wb, corpus, "baseline")
    return {method: diagnostics.hit_boilerplate(baseline, found) for method, found in hits.items()}


def map_documents(wb: Workbench, corpus: str, method: str, target: str | None, n: int = 5) -> tuple[list[str], list[str]]:
    """Every document in ``method``'s index of ``corpus``, and the ``n`` a map opens on: the target document and its
    closest look-alikes (by mean chunk vector), or the first ``n`` without a target."""
    snap = snapshot(wb, corpus, method)
    return snap.documents, diagnostics.default_map_documents(snap, target, n=n)


def embedding_maps(wb: Workbench, corpus: str, methods: Sequence[str], doc_ids: Sequence[str], question: str,
                   hits: Mapping[str, Sequence[Hit]], projection: str = "pca") -> list[MapData]:
    """One map per method: the chunks of ``doc_ids`` in its index projected to 2-D with the question (embedded once),
    its hits ringed, and the silhouette by document."""
    vector = wb.embed_queries([check_query(question)])[0]
    return [diagnostics.embedding_map(snapshot(wb, corpus, m), m, doc_ids, query_vector=vector, hits=hits[m],
                                      projection=projection)
            for m in methods]
