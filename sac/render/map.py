"""The embedding map as a plotly Figure (pure: never calls Streamlit).

One panel per method (baseline beside SAC), one trace per document in each panel (the same colour and
legend group in every panel, so a click on a document in the legend hides it everywhere), the query as
a star and its top-k hits ringed and numbered. Hover text is the chunk's text, HTML-escaped: a chunk
that contains markup shows it as characters.
"""

from __future__ import annotations

import html
import textwrap
from collections.abc import Sequence

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sac.evaluation.diagnostics import MapData
from sac.types import document_title

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf", "#393b79", "#ad494a", "#637939", "#8c6d31", "#7b4173"]
HOVER_CHARS = 400


LEGEND_CHARS = 40


def hover_text(text: str, width: int = 70, limit: int = HOVER_CHARS) -> str:
    """Plain text for a hover label: cut to ``limit`` characters, escaped, wrapped with <br>."""
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    lines = textwrap.wrap(flat, width) or ["(whitespace only)"]
    return "<br>".join(html.escape(line, quote=False) for line in lines)


def short_label(text: str, limit: int = LEGEND_CHARS) -> str:
    """A legend entry: at most ``limit`` characters (the full name is in the hover text)."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def embedding_map_figure(maps: Sequence[MapData], targets: Sequence[str] = ()) -> go.Figure:
    """Panels side by side, one per method; ``targets`` (the question's documents) get a thicker outline."""
    docs = list(dict.fromkeys(d for m in maps for d in m.points["doc_id"] if d))
    colour = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(docs)}
    titles = [f"{m.method} · silhouette {m.silhouette:.2f}" if m.silhouette is not None else m.method for m in maps]
    fig = make_subplots(rows=1, cols=max(1, len(maps)), subplot_titles=titles, horizontal_spacing=0.04)
    for col, m in enumerate(maps, start=1):
        chunks = m.points[m.points["kind"] == "chunk"]
        for doc in docs:
            part = chunks[chunks["doc_id"] == doc]
            if part.empty:
                continue
            title = document_title(doc)
            fig.add_trace(go.Scatter(
                x=part["x"], y=part["y"], mode="markers", name=html.escape(short_label(title), quote=False),
                legendgroup=doc, showlegend=col == 1,
                marker={"color": colour[doc], "size": 7, "opacity": 0.75,
                        "line": {"width": 1.5 if doc in targets else 0, "color": "black"}},
                hovertext=[f"<b>{html.escape(title, quote=False)}</b> [{s}, {e})<br>{hover_text(t)}"
                           for s, e, t in zip(part["start"], part["end"], part["text"])],
                hoverinfo="text", meta={"role": "document", "doc_id": doc, "method": m.method},
            ), row=1, col=col)
        hits = chunks[chunks["hit_rank"] > 0].sort_values("hit_rank")
        if not hits.empty:
            fig.add_trace(go.Scatter(
                x=hits["x"], y=hits["y"], mode="markers+text", name="top-k hits", legendgroup="hits",
                showlegend=col == 1, text=[str(r) for r in hits["hit_rank"]], textposition="top center",
                marker={"symbol": "circle-open", "size": 15, "color": "black", "line": {"width": 2}},
                hovertext=[f"hit #{r} · {html.escape(document_title(d), quote=False)}"
                           for r, d in zip(hits["hit_rank"], hits["doc_id"])],
                hoverinfo="text", meta={"role": "hits", "method": m.method},
            ), row=1, col=col)
        query = m.points[m.points["kind"] == "query"]
        if not query.empty:
            fig.add_trace(go.Scatter(
                x=query["x"], y=query["y"], mode="markers", name="query", legendgroup="query", showlegend=col == 1,
                marker={"symbol": "star", "size": 18, "color": "gold", "line": {"width": 1, "color": "black"}},
                hovertext=["the query"], hoverinfo="text", meta={"role": "query", "method": m.method},
            ), row=1, col=col)
    fig.update_xaxes(showticklabels=False, zeroline=False)
    fig.update_yaxes(showticklabels=False, zeroline=False)
    projection = maps[0].projection.upper() if maps else "PCA"
    # The legend sits under the panels: beside them, long file names squeezed each panel to a sliver.
    fig.update_layout(height=640, margin={"l": 10, "r": 10, "t": 60, "b": 10},
                      legend={"title": "document", "orientation": "h", "yanchor": "top", "y": -0.04, "x": 0},
                      title=f"Chunk embeddings ({projection}, 2-D), coloured by document")
    return fig


def document_risk_figure(frame: pd.DataFrame, method: str) -> go.Figure:
    """Per document, the share of its chunks' nearest neighbours from other documents, baseline beside ``method``.

    Rows of ``sac.evaluation.diagnostics.compare_risk``; bars in percent."""
    titles = [document_title(d) for d in frame["doc_id"]]
    fig = go.Figure([
        go.Bar(y=titles, x=frame["mix_baseline"] * 100, name="baseline", orientation="h", marker_color="#7f7f7f"),
        go.Bar(y=titles, x=frame["mix_method"] * 100, name=method, orientation="h", marker_color="#1f77b4"),
    ])
    fig.update_layout(
        barmode="group", height=max(300, 26 * len(titles) + 120), margin={"l": 10, "r": 10, "t": 50, "b": 40},
        title="Look-alike risk: % of a chunk's 8 nearest chunks from another document",
        xaxis_title="% of nearest neighbours from another document", yaxis={"autorange": "reversed"},
    )
    return fig
