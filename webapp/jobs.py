"""Background builds (``sac.usecases.jobs``) started from a page.

The sidebar's panel shows a build on every page while it runs, and how it ended.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sac.errors import SacError
from sac.usecases import jobs as sac_jobs
from sac.usecases.workbench import Workbench
from webapp.data import incomplete_methods, invalidate
from webapp.settings import config

MY_JOBS_KEY = "sac_my_jobs"  # session state: ids of the jobs this session started
JOB_GENERATION_KEY = "sac_job_generation"  # session state: (job id, generation) this session last showed


def board() -> sac_jobs.JobBoard:
    """The background builds of this workspace (shared by every session of the server)."""
    return sac_jobs.board(config().workspace)


def start_build(wb: Workbench, label: str, steps: Sequence[sac_jobs.BuildStep], note: str = "",
                notices: Sequence[tuple[str, str]] = ()) -> sac_jobs.BuildJob:
    """Start a background build; every page's sidebar shows its progress, and it keeps running when the page is left.

    Raises SacError while another build of this workspace runs.

    ``notices`` ((kind, text): files of the upload not read, a benchmark saved) go with the job, so they stay on
    show while it runs and with how it ended, not for one rerun.

    The job starts before anything shows on the page: a user who leaves at once (the model can take seconds to
    load) stops this script run at its next element, and a build not yet started would be lost without a word.
    The model then loads here, under its spinner, or in the job if the page was left (one load: the cache locks)."""
    job = board().start(sac_jobs.BuildJob(wb, label, steps, on_change=invalidate, note=note,
                                           notices=tuple(notices)))
    st.session_state.setdefault(MY_JOBS_KEY, []).append(job.job_id)
    st.session_state[JOB_GENERATION_KEY] = None
    _ = wb.embedder.dim
    return job


def my_last_job() -> sac_jobs.BuildJob | None:
    """The last build this session started, while the board remembers it."""
    mine = st.session_state.get(MY_JOBS_KEY, [])
    return board().find(mine[-1]) if mine else None


def incomplete_notice(wb: Workbench, corpus: str) -> None:
    """Say that ``corpus`` is being built, or warn of its incomplete indexes.

    While a build of ``corpus`` runs, a note that it is being built; otherwise a warning naming every incomplete
    index of ``corpus``: they are not searched until finished.
    """
    if board().building(corpus):
        st.info("This corpus is being built now (progress in the sidebar). Each index is searched as soon as it is "
                "complete.", icon=":material/hourglass_top:")
        return
    partial = incomplete_methods(wb, corpus)
    if partial:
        listed = ", ".join(f"{m} ({n:,} chunks so far)" for m, n in partial.items())
        st.warning(f"Incomplete index: {listed}. A build stopped part-way, so it is not searched. Finish it on "
                   "**Corpus** (Finish building); it continues where it stopped.", icon=":material/pending:")


def _job_panel() -> None:
    """Draw the sidebar's build panel.

    The running build (whoever started it) and the builds queued behind it, then how this session's last build
    ended. While a build runs it refreshes every second, and reruns the page each time an index is completed, a
    build starts or one ends.
    """
    jobs = board()
    running = jobs.running()
    mine = st.session_state.get(MY_JOBS_KEY, [])
    my_last = jobs.find(mine[-1]) if mine else None
    if running is not None:
        status = running.status()
        with st.container(border=True, key="sac_job_panel"):
            st.progress(status.fraction, text=status.overall)
            st.caption(status.stage)
            for queued in jobs.queued():
                st.caption(f"Queued next: {queued.label}" + (" (yours)" if queued.job_id in mine else "")
                           + ". It starts when the build above ends.")
            st.caption("Runs in the background: other pages can be used meanwhile.")
    if my_last is not None and not my_last.status().active:
        with st.container(border=True, key="sac_job_done"):
            for kind, text in my_last.status().messages:
                getattr(st, kind)(text)
    seen = st.session_state.get(JOB_GENERATION_KEY)
    now = jobs.signature()
    st.session_state[JOB_GENERATION_KEY] = now
    ctx = get_script_run_ctx()
    if seen is not None and seen != now and ctx is not None and ctx.fragment_ids_this_run:
        # An index was completed, or a build started or ended: show it on the page. Only from the panel's own
        # timed run: a whole page's run draws the page afresh anyway, and a rerun there would drop the click
        # that started it (someone else's build starting in the moment before it).
        st.rerun(scope="app")


def job_panel() -> None:
    """The sidebar's build panel, refreshed every second while a build runs."""
    try:
        running = board().running() is not None
    except SacError:
        return  # bad settings: the page itself says what is wrong
    st.fragment(_job_panel, run_every=1.0 if running else None)()
