"""Render: safe HTML for untrusted text, plotly figures and tables; no Streamlit.

Names load on first use (PEP 562), so importing one stage never imports the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sac._exports import lazy_getattr

if TYPE_CHECKING:
    from sac.render.highlight import (
        Mark,
        context_window,
        escape,
        gold_marks,
        render_context,
        render_hit,
        render_labelled,
        render_plain,
        render_text,
    )
    from sac.render.map import document_risk_figure, embedding_map_figure, hover_text
    from sac.render.plots import drm_per_dataset, metric_vs_k, precision_recall_vs_k, precision_vs_recall, results_table

_EXPORTS = {
    "Mark": "highlight",
    "context_window": "highlight",
    "document_risk_figure": "map",
    "drm_per_dataset": "plots",
    "embedding_map_figure": "map",
    "escape": "highlight",
    "gold_marks": "highlight",
    "hover_text": "map",
    "metric_vs_k": "plots",
    "precision_recall_vs_k": "plots",
    "precision_vs_recall": "plots",
    "render_context": "highlight",
    "render_hit": "highlight",
    "render_labelled": "highlight",
    "render_plain": "highlight",
    "render_text": "highlight",
    "results_table": "plots",
}

__all__ = [
    "Mark",
    "context_window",
    "document_risk_figure",
    "drm_per_dataset",
    "embedding_map_figure",
    "escape",
    "gold_marks",
    "hover_text",
    "metric_vs_k",
    "precision_recall_vs_k",
    "precision_vs_recall",
    "render_context",
    "render_hit",
    "render_labelled",
    "render_plain",
    "render_text",
    "results_table",
]

__getattr__ = lazy_getattr(__name__, _EXPORTS)
