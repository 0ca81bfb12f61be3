"""Evaluation results as pandas DataFrames and plotly Figures. Pure: never calls Streamlit.

Input is a metrics frame with the columns of ``sac.evaluation.runs.METRIC_COLUMNS`` (``k`` is a whole
number or ``"mean"``, from a live result or a saved run's ``metrics.csv``). Figures show percentages.
The charts against k take the run's 95 % bootstrap intervals as well (``sac.evaluation.uncertainty``'s
``INTERVAL_COLUMNS``) and draw them as error bars.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from sac.types import document_title, text_hash

# Baseline grey, SAC methods in distinct colours; further methods take plotly's defaults.
METHOD_COLORS: dict[str, str] = {"baseline": "#7f7f7f", "sac-generic": "#1f77b4", "sac-expert": "#d62728"}
_PALETTE = ["#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf", "#bcbd22"]
LABELS = {"drm": "DRM (%)", "precision": "precision (%)", "recall": "recall (%)"}
TITLES = {"drm": "DRM", "precision": "Precision", "recall": "Recall"}
# What a bootstrap draw picks (the Evaluate page's choice), as a radio names it and as a chart's hover says it.
RESAMPLE_LABELS = {"question": "questions", "document": "documents (each with all its questions)"}
RESAMPLED = {"question": "questions resampled", "document": "documents resampled"}


def method_color(method: str, methods: Sequence[str] = ()) -> str:
    """A method's colour: its own for the paper's three, else the palette's by its place in ``methods``."""
    if method in METHOD_COLORS:
        return METHOD_COLORS[method]
    others = [m for m in methods if m not in METHOD_COLORS]
    i = others.index(method) if method in others else int(text_hash(method), 16)
    return _PALETTE[i % len(_PALETTE)]


def per_k(frame: pd.DataFrame, dataset: str | None = None) -> pd.DataFrame:
    """The rows with a numeric k (not the mean), k as int, figures in percent, sorted by k (methods keep their order).

    ``dataset`` picks one dataset; by default "overall" when present, else the only dataset.
    """
    f = frame.copy()
    f["k"] = f["k"].astype(str)
    f = f[f["k"] != "mean"]
    f["k"] = f["k"].astype(int)
    f = f[f["dataset"] == (dataset or default_dataset(frame))]
    for c in ("precision", "recall", "drm"):
        f[c] = f[c].astype(float) * 100
    return f.sort_values("k", kind="stable").reset_index(drop=True)


def default_dataset(frame: pd.DataFrame) -> str:
    """The dataset a metrics frame's plots show by default: "overall" when present, else the first."""
    names = list(dict.fromkeys(frame["dataset"]))
    if "overall" in names:
        return "overall"
    if not names:
        raise ValueError("The metrics frame has no rows")
    return str(names[0])


def methods_in(frame: pd.DataFrame) -> list[str]:
    """Methods in their order of appearance, baseline first."""
    names = list(dict.fromkeys(frame["method"]))
    return sorted(names, key=lambda m: (m != "baseline", names.index(m)))


def _layout(fig: go.Figure, title: str, x: str, y: str, legend: str = "method") -> go.Figure:
    # The legend sits under the plot: beside it, a composed method's name ("sac-generic+docs1+names") took half
    # of a two-column chart's width.
    fig.update_layout(
        title=title, xaxis_title=x, yaxis_title=y, legend_title_text=legend, template="plotly_white",
        legend={"orientation": "h", "yanchor": "top", "y": -0.2, "xanchor": "left", "x": 0},
        margin={"l": 50, "r": 20, "t": 50, "b": 45}, height=420,
    )
    return fig


def error_bars(intervals: pd.DataFrame | None, dataset: str, method: str, metric: str, ks: Sequence[int],
               resample: str = "question") -> dict[str, Any]:
    """A line's error bars from its 95 % intervals, as Scatter arguments; ``{}`` without ``intervals``.

    ``error_y``: up to the interval's high end and down to its low end, in percentage points, from its estimate;
    ``customdata``: each point's interval in words, for the hover.

    A point with no interval (too few questions or documents to draw from, or no row for it) gets NaN, so no bar.
    The arrays are numpy's so the NaN reaches the browser (as binary "bdata"): a list's NaN becomes a JSON null,
    which plotly.js reads as 0, drawing a bar of no length with its caps.
    """
    if intervals is None:
        return {}
    f = intervals[(intervals["dataset"] == dataset) & (intervals["method"] == method) & (intervals["metric"] == metric)]
    bounds = {str(k): (float(e), float(lo), float(hi)) for k, e, lo, hi in zip(f["k"], f["estimate"], f["low"], f["high"])}
    up, down, notes = [], [], []
    for k in ks:
        e, lo, hi = bounds.get(str(k), (math.nan, math.nan, math.nan))
        if all(math.isfinite(v) for v in (e, lo, hi)):
            up.append(100 * (hi - e))
            down.append(100 * (e - lo))
            notes.append(f"95 % interval {100 * lo:.1f}–{100 * hi:.1f} %, {RESAMPLED[resample]}")
        else:
            up.append(math.nan)
            down.append(math.nan)
            notes.append(f"no interval (too few {RESAMPLED[resample].split()[0]} to draw from)")
    return {"error_y": {"type": "data", "symmetric": False, "array": np.array(up), "arrayminus": np.array(down),
                        "thickness": 1.2, "width": 3},
            "customdata": notes}


def error_bar_note(resample: str, shown: bool) -> str:
    """The caption under the charts against k: what their error bars are, or why there are none."""
    if not shown:
        return f"No error bars: this run gives no 95 % intervals with {RESAMPLED[resample]} (see below)."
    return (f"Error bars: 95 % interval, {RESAMPLED[resample]} (bootstrap; the unit is chosen under "
            "**How sure are these figures?** below). A point with too few to draw from has no bar.")


def _hover(method: str, metric: str, bars: dict[str, Any]) -> str:
    interval = "<br>%{customdata}" if bars else ""
    return f"{method}<br>k=%{{x}}<br>{metric}=%{{y:.1f}}%{interval}<extra></extra>"


def metric_vs_k(frame: pd.DataFrame, metric: str = "drm", dataset: str | None = None,
                intervals: pd.DataFrame | None = None, resample: str = "question") -> go.Figure:
    """One line per method: ``metric`` against k (log-2 axis); with ``intervals``, their error bars (``error_bars``)."""
    f = per_k(frame, dataset)
    methods = methods_in(f)
    name = dataset or default_dataset(frame)
    fig = go.Figure()
    for m in methods:
        rows = f[f["method"] == m]
        bars = error_bars(intervals, name, m, metric, rows["k"].tolist(), resample)
        fig.add_trace(go.Scatter(
            x=rows["k"].tolist(), y=rows[metric].tolist(), mode="lines+markers", name=m,
            line={"color": method_color(m, methods)}, hovertemplate=_hover(m, metric, bars), **bars,
        ))
    fig.update_xaxes(type="log", tickvals=sorted(set(f["k"])), ticktext=[str(k) for k in sorted(set(f["k"]))])
    return _layout(fig, f"{TITLES[metric]} against k ({name})", "k", LABELS[metric])


def drm_per_dataset(frame: pd.DataFrame, k: int | str = "mean") -> go.Figure:
    """Grouped bars: DRM of every method (baseline beside SAC) for each dataset, at ``k`` or the mean over k."""
    f = frame.copy()
    f["k"] = f["k"].astype(str)
    f = f[(f["k"] == str(k)) & (f["dataset"] != "overall")]
    datasets = list(dict.fromkeys(f["dataset"]))
    methods = methods_in(f) if len(f) else []
    fig = go.Figure()
    for m in methods:
        rows = f[f["method"] == m].set_index("dataset").reindex(datasets)
        fig.add_trace(go.Bar(
            x=datasets, y=(rows["drm"].astype(float) * 100).round(2).tolist(), name=m,
            marker_color=method_color(m, methods),
            hovertemplate=f"{m}<br>%{{x}}<br>DRM=%{{y:.1f}}%<extra></extra>",
        ))
    fig.update_layout(barmode="group")
    label = "mean over k" if str(k) == "mean" else f"k={k}"
    return _layout(fig, f"DRM per dataset ({label})", "dataset", LABELS["drm"])


def precision_recall_vs_k(frame: pd.DataFrame, dataset: str | None = None, intervals: pd.DataFrame | None = None,
                          resample: str = "question") -> go.Figure:
    """Two panels side by side: precision against k and recall against k, one line per method.

    With ``intervals``, their error bars (``error_bars``)."""
    f = per_k(frame, dataset)
    methods = methods_in(f)
    name = dataset or default_dataset(frame)
    fig = make_subplots(rows=1, cols=2, subplot_titles=("precision against k", "recall against k"))
    for m in methods:
        rows = f[f["method"] == m]
        for col, metric in ((1, "precision"), (2, "recall")):
            bars = error_bars(intervals, name, m, metric, rows["k"].tolist(), resample)
            fig.add_trace(go.Scatter(
                x=rows["k"].tolist(), y=rows[metric].tolist(), mode="lines+markers", name=m,
                legendgroup=m, showlegend=col == 1, line={"color": method_color(m, methods)},
                hovertemplate=_hover(m, metric, bars), **bars,
            ), row=1, col=col)
    ticks = sorted(set(f["k"]))
    fig.update_xaxes(type="log", tickvals=ticks, ticktext=[str(k) for k in ticks], title_text="k")
    fig.update_yaxes(title_text="%")
    return _layout(fig, f"Precision and recall against k ({name})", "", "")


def precision_vs_recall(frame: pd.DataFrame, dataset: str | None = None) -> go.Figure:
    """Each method's precision/recall curve; one point per k, labelled with k."""
    f = per_k(frame, dataset)
    methods = methods_in(f)
    fig = go.Figure()
    for m in methods:
        rows = f[f["method"] == m]
        fig.add_trace(go.Scatter(
            x=rows["recall"].tolist(), y=rows["precision"].tolist(), mode="lines+markers+text", name=m,
            text=[f"k={k}" for k in rows["k"]], textposition="top center", textfont={"size": 9},
            line={"color": method_color(m, methods)},
            hovertemplate=f"{m}<br>%{{text}}<br>recall=%{{x:.1f}}%<br>precision=%{{y:.1f}}%<extra></extra>",
        ))
    name = dataset or default_dataset(frame)
    return _layout(fig, f"Precision against recall ({name})", LABELS["recall"], LABELS["precision"])


def document_titles(doc_ids: str) -> str:
    """Display names of one document or of several "|"-joined ones."""
    return " | ".join(document_title(d) for d in doc_ids.split("|"))


def json_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows for a JSON download; a value that does not exist (a bound from too few questions) is null, not NaN."""
    return frame.astype(object).where(frame.notna(), None).to_dict("records")  # type: ignore[no-any-return]


def results_table(frame: pd.DataFrame) -> pd.DataFrame:
    """Every row of the frame, figures in percent rounded to 0.1, ready to show or download."""
    f = frame.copy()
    for c in ("precision", "recall", "drm"):
        f[c] = (f[c].astype(float) * 100).round(1)
    f["retrieved_chars"] = f["retrieved_chars"].astype(float).round(0)
    return f.rename(columns={"precision": "precision %", "recall": "recall %", "drm": "drm %"})


def label_counts_figure(summary: pd.DataFrame) -> go.Figure:
    """Stacked bars of review labels per method (``summary`` from ``sac.evaluation.review.label_summary``)."""
    fig = go.Figure()
    label_cols = [c for c in summary.columns if c not in ("method", "labelled", "relevant share")]
    colors = {"relevant": "#2ca02c", "partly relevant": "#98df8a", "not relevant": "#c7c7c7",
              "wrong document": "#d62728", "boilerplate": "#ff9896"}
    for label in label_cols:
        fig.add_trace(go.Bar(x=summary["method"].tolist(), y=summary[label].tolist(), name=label,
                             marker_color=colors.get(label)))
    fig.update_layout(barmode="stack")
    return _layout(fig, "Review labels per method", "method", "labelled chunks", legend="label")


RUN_DIFF_NUMBERS = ("precision % (A)", "precision % (B)", "Δ precision", "recall % (A)", "recall % (B)", "Δ recall",
                    "DRM % (A)", "DRM % (B)", "Δ DRM")


def run_diff_table(frame: pd.DataFrame) -> pd.DataFrame:
    """``sac.evaluation.runs.compare_runs`` with readable headers: run A, run B and the change B − A, in percent."""
    out = frame.reset_index()
    names = {"dataset": "dataset", "method": "method"}
    for metric, label in (("precision", "precision"), ("recall", "recall"), ("drm", "DRM")):
        names.update({f"{metric}_a": f"{label} % (A)", f"{metric}_b": f"{label} % (B)", f"{metric}_diff": f"Δ {label}"})
    return out.rename(columns=names)[["dataset", "method", *RUN_DIFF_NUMBERS]]


def risk_table(frame: pd.DataFrame, method: str) -> pd.DataFrame:
    """``sac.evaluation.diagnostics.compare_risk`` for reading: document titles, shares in percent (one decimal)."""
    out = pd.DataFrame({
        "document": [document_title(d) for d in frame["doc_id"]],
        "chunks": frame["chunks"],
        "wrong-document neighbours % (baseline)": (frame["mix_baseline"] * 100).round(1),
        f"wrong-document neighbours % ({method})": (frame["mix_method"] * 100).round(1),
        "closest other document, cosine (baseline)": frame["risk_baseline"].round(3),
        f"closest other document, cosine ({method})": frame["risk_method"].round(3),
        "boilerplate chunks %": (frame["boilerplate"] * 100).round(1),
    })
    return out


NOT_MEASURABLE = "—"


def percent_table(frame: pd.DataFrame, columns: dict[str, str]) -> pd.DataFrame:
    """Fractions in ``columns`` (name -> new header) as percent with one decimal; "—" where not measurable."""
    out = frame.copy()
    for name in columns:
        out[name] = [NOT_MEASURABLE if v is None or pd.isna(v) else f"{100 * float(v):.1f}" for v in out[name]]
    return out.rename(columns=columns)
