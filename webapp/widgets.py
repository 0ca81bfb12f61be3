"""What pages share on screen.

Error and flash messages, progress bars, the chunking and corpus pickers, captions, method labels and links to a
question on Compare.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from typing import Any
from urllib.parse import urlencode

import pandas as pd
import streamlit as st

from sac.config import SacConfig
from sac.errors import SacError
from sac.methods import method_label
from sac.progress import StageClock
from webapp.matters import matter_param
from webapp.settings import set_settings, settings

FLASH_KEY = "sac_flash"
CHUNKING_LABELS = {"merged": "merged (default)", "paper": "paper's splitter"}
CHUNKING_HELP = ("merged: the paper's splitter, then pieces with fewer than 25 non-space characters join a neighbour, "
                 "so no hit is blank. paper's splitter: exactly the paper's chunks, whitespace pieces kept, to reproduce "
                 "its tables. Indexes are kept per chunking: switching builds (or uses) the other set of indexes.")
# The session's corpus: the one last chosen or built on any page. Every page keeps its own picker (and its URL
# binding, on Compare); a picker moves to the session's corpus when that changed since the picker last showed,
# so a corpus just uploaded on Corpus is the one Summaries, Compare and the map open on.
_CURRENT_CORPUS = "current_corpus"


@contextlib.contextmanager
def stop_on_error() -> Iterator[None]:
    """Show a SacError raised inside as the page's error message, and stop the page there.

    For a page's steps that can fail on the user's input or data: the message says what went wrong and what to do,
    never a traceback.
    """
    try:
        yield
    except SacError as err:
        st.error(str(err))
        st.stop()


def literal(text: str) -> str:
    """``text`` (a document's name, a question) as written, in a label or caption that reads Markdown.

    Its Markdown marks are escaped, so a name can make no link, image, colour or emphasis; Streamlit renders no HTML
    there."""
    return re.sub(r"([\\`*_\[\]<>~$|#])", r"\\\1", text)


def flash(kind: str, text: str) -> None:
    """A message to show after the next rerun (``kind``: success, info, warning, error)."""
    st.session_state.setdefault(FLASH_KEY, []).append((kind, text))


def show_flashes() -> None:
    """Show the messages ``flash`` kept for this run."""
    for kind, text in st.session_state.pop(FLASH_KEY, []):
        getattr(st, kind)(text)


class ProgressReporter:
    """A Streamlit progress bar per stage, its text from ``sac.progress.StageClock`` (rate, time left).

    Call it as the ``progress(stage, done, total)`` callback of ``Workbench.build`` or ``evaluate``.
    """

    def __init__(self, container: Any, unit: str = "items") -> None:
        self._container = container
        self._bars: dict[str, Any] = {}
        self._clock = StageClock(unit)
        self.log: list[str] = []

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Move ``stage``'s bar to ``done`` of ``total``."""
        if stage not in self._bars:
            self._bars[stage] = self._container.progress(0.0, text=f"{stage}…")
        status = self._clock.update(stage, done, total)
        if status.finished:
            self.log.append(status.text)
        self._bars[stage].progress(status.fraction, text=status.text)


def chunking_select(key: str) -> None:
    """The chunking setting (shared by every page of this session): merged by default, paper one switch away."""
    current = settings()["chunking"]
    choice = st.selectbox("Chunking", list(CHUNKING_LABELS), index=list(CHUNKING_LABELS).index(current), key=key,
                          format_func=CHUNKING_LABELS.get, help=CHUNKING_HELP)
    if choice != current:
        set_settings(chunking=choice)


def set_current_corpus(name: str) -> None:
    """Make ``name`` the session's corpus: every page's picker opens on it."""
    st.session_state[_CURRENT_CORPUS] = name


def corpus_picker(names: Sequence[str], key: str, where: Any = None, **kwargs: Any) -> str:
    """A "Corpus" select box over ``names`` that follows the session's corpus; what is picked becomes it."""
    current = st.session_state.get(_CURRENT_CORPUS)
    seen = f"{key}__corpus_seen"
    if current in names and st.session_state.get(seen) != current:
        st.session_state[key] = current
    chosen = (where or st).selectbox("Corpus", list(names), key=key, **kwargs)
    st.session_state[_CURRENT_CORPUS] = st.session_state[seen] = chosen
    return str(chosen)


def index_settings_caption(cfg: SacConfig) -> str:
    """One line saying the index settings of ``cfg``."""
    overlap = f", overlap {cfg.chunk_overlap}" if cfg.chunk_overlap else ""
    return (f"Index settings: chunks of {cfg.chunk_size} characters{overlap}, {cfg.chunking} chunking "
            f"(index key `{cfg.chunking_key}`), summaries of about {cfg.summary_chars} characters, "
            f"embedder {cfg.embedder}.")


def labelled(frame: pd.DataFrame, column: str = "method") -> pd.DataFrame:
    """``frame`` for display, its methods named as every list names them ("recommended (…)", "(reads file names)").

    Runs and downloads keep the names a method resolved to.
    """
    return frame.assign(**{column: frame[column].map(method_label)})


def compare_link(corpus: str, query_text: str, page: str = "Compare") -> str:
    """A relative URL that opens one benchmark question on the Compare page.

    Its corpus and question widgets are bound to these query parameters (the question by its text, as the page
    shows it). The widget keys belong to the pages, so the link is made here, not in the library.
    """
    return f"{page}?{urlencode({'cmp_corpus': corpus, 'cmp_query_pick': query_text, **(matter_param() or {})})}"


def reader_params(corpus: str, doc_id: str, question: str, method: str, k: int,
                  at: tuple[int, int] | None = None) -> dict[str, str]:
    """The query parameters that open one document on the Reader page with a question's hits marked.

    ``at``: the span of the hit the link comes from (the Reader opens on it). The Reader binds its widgets to these."""
    params = {"rd_corpus": corpus, "rd_doc": doc_id, "rd_q": question, "rd_method": method, "rd_k": str(int(k))}
    if at is not None:
        params["rd_at"] = f"{int(at[0])}-{int(at[1])}"
    return {**params, **(matter_param() or {})}


def reader_link(corpus: str, doc_id: str, question: str, method: str, k: int, at: tuple[int, int] | None = None) -> str:
    """A relative URL that opens one document on the Reader page (``reader_params``), for a table's link column."""
    return f"Reader?{urlencode(reader_params(corpus, doc_id, question, method, k, at))}"


# A run's selective figures (``RunFolder.selective()``): the metric column and its header, percent or not.
SELECTIVE_HEADERS = {"coverage": "coverage % [95 % interval]", "drm@1 covered": "DRM@1 covered % [95 % interval]",
                     "auroc": "AUROC [95 % interval]"}
SELECTIVE_CAPTION = ("Coverage is the share of questions where the method was sure which contract is meant; DRM@1 "
                     "covered is how often, on those questions, its top hit still came from another contract; AUROC is "
                     "how well its stated confidence separates the right contract from a wrong one (0.5 is chance, 1 "
                     "is perfect); each interval redraws whole contracts.")


def selective_cell(metric: str, estimate: float, low: float, high: float) -> str:
    """One selective figure of a run as "estimate [low, high]".

    Coverage and DRM@1 covered in percent to 0.1 (``"62.5 % [40.0, 81.2]"``), AUROC to 3 decimals
    (``"0.734 [0.612, 0.846]"``); "n/a" without an estimate, "[no interval]" without bounds (one document to draw
    from)."""
    if not pd.notna(estimate):
        return "n/a"
    percent = metric != "auroc"
    scale, unit, digits = (100.0, " %", 1) if percent else (1.0, "", 3)
    e, lo, hi = (format(float(v) * scale + 0.0, f".{digits}f") if pd.notna(v) else "" for v in (estimate, low, high))
    return f"{e}{unit} [{lo}, {hi}]" if lo and hi else f"{e}{unit} [no interval]"


def selective_table(selective: pd.DataFrame) -> pd.DataFrame:
    """A run's selective figures (dataset, method, metric, estimate, low, high) as a table to show.

    Rows (dataset, method) in the run's order, one ``SELECTIVE_HEADERS`` column per figure, cells ``selective_cell``
    strings."""
    cells = [selective_cell(m, e, lo, hi) for m, e, lo, hi in
             zip(selective["metric"], selective["estimate"], selective["low"], selective["high"])]
    table = selective.assign(cell=cells).pivot(index=["dataset", "method"], columns="metric", values="cell")
    order = pd.MultiIndex.from_frame(selective[["dataset", "method"]].drop_duplicates())
    table = table.reindex(index=order, columns=[m for m in SELECTIVE_HEADERS if m in table.columns])
    return table.rename(columns=SELECTIVE_HEADERS).rename_axis(columns=None)


def selective_ui(selective: pd.DataFrame, key: str) -> None:
    """Show "How sure the method is of the contract": a run's selective figures with a caption.

    Nothing for a run without a method that says how sure it is (``+names`` with ``+docs<N>``)."""
    if not len(selective):
        return
    st.markdown("**How sure the method is of the contract**: questions routed with confidence, 95 % intervals")
    st.dataframe(selective_table(labelled(selective)), key=key)
    st.caption(SELECTIVE_CAPTION)
