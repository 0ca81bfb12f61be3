"""What pages share on screen.

Error and flash messages, progress bars, the chunking and corpus pickers, captions, method labels and links to a
question on Compare.
"""

from __future__ import annotations

import contextlib
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
