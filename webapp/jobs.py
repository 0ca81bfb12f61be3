"""Background builds (``sac.usecases.jobs``) started from a page.

The sidebar's panel shows the workspace's line of builds on every page: the one running with its bar and time left,
the ones waiting with their place and when they start, and, for the builds this session started, buttons to cancel
them or move them ahead; then how this session's last build ended. It redraws itself every second (a fragment) and
reruns the page around it only when something that page shows changed: an index of a corpus the page reads was
completed (``incomplete_notice`` registers the corpus), a corpus the page's picker does not list yet became
searchable (``watch_corpora``), or, on pages that list builds (``watch_builds``), a build started or ended.
Another session's build never reruns or greys out a page that does not read what it builds.
"""

from __future__ import annotations

from collections.abc import Sequence

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sac.errors import SacError
from sac.progress import format_duration
from sac.usecases import job_board
from sac.usecases import jobs as sac_jobs
from sac.usecases.workbench import Workbench
from webapp.data import incomplete_methods, index_completed, listing_changed
from webapp.settings import config
from webapp.signin import identity

MY_JOBS_KEY = "sac_my_jobs"  # session state: ids of the jobs this session started
WATCH_KEY = "sac_job_watch"  # session state: what this page's run showed of the builds (see _watched)
WATCH_BUILDS_KEY = "sac_job_watch_builds"  # session state: this page lists builds (Home, Corpus)
ACTIVE_KEY = "sac_job_watch_active"  # session state: the builds not ended when this page last ran
LISTED_KEY = "sac_job_listed"  # session state: the corpora this page's picker listed (None: it has none)
SEEN_KEY = "sac_job_seen_corpora"  # session state: corpora whose first complete index already reran the page


def board() -> job_board.JobBoard:
    """The background builds of this workspace (shared by every session of the server)."""
    return job_board.board(config().workspace)


def owner() -> str:
    """Who this session is to the board: the signed-in user; without sign-in, "" for every session.

    Without sign-in the app cannot tell people apart (a reload or a second tab is a new session of the same person),
    so every session may cancel or move every build; with sign-in, only the person who started it."""
    return identity() or ""


def mine(job: sac_jobs.BuildJob) -> bool:
    """Whether this session may cancel and move ``job`` (and is told how it ended)."""
    return job.owner == owner() or job.job_id in st.session_state.get(MY_JOBS_KEY, [])


def start_build(wb: Workbench, label: str, steps: Sequence[sac_jobs.BuildStep], note: str = "",
                notices: Sequence[tuple[str, str]] = ()) -> sac_jobs.BuildJob:
    """Start a background build; every page's sidebar shows its progress, and it keeps running when the page is left.

    It runs now or waits in line: behind the builds started before it, ahead of any background step (the demo's LLM
    indexes).

    ``notices`` ((kind, text): files of the upload not read, a benchmark saved) go with the job, so they stay on
    show while it runs and with how it ended, not for one rerun.

    The job starts before anything shows on the page: a user who leaves at once (the model can take seconds to
    load) stops this script run at its next element, and a build not yet started would be lost without a word.
    The model then loads here, under its spinner, or in the job if the page was left (one load: the cache locks)."""
    job = board().start(sac_jobs.BuildJob(wb, label, steps, on_change=listing_changed, on_index=index_completed,
                                           note=note, notices=tuple(notices), owner=owner()))
    st.session_state.setdefault(MY_JOBS_KEY, []).append(job.job_id)
    _ = wb.embedder.dim
    return job


def my_last_job() -> sac_jobs.BuildJob | None:
    """The last build this session started, while the board remembers it."""
    started = st.session_state.get(MY_JOBS_KEY, [])
    return board().find(started[-1]) if started else None


def pending_text(corpus: str) -> str | None:
    """What of ``corpus`` is still to be built, index by index, and when each should be ready: None when nothing is.

    "sac-expert (building now, about 40 s left); sac-generic-llm (later in Demo, about 2 min 10 s left)"."""
    pending = board().pending_indexes(corpus)
    if not pending:
        return None
    parts = []
    for index, job in pending:
        when = f", about {format_duration(index.ready_in_s)} left" if index.ready_in_s is not None else ""
        if index.building:
            parts.append(f"{index.name} (building now{when})")
        else:
            status = job.status()
            how = ("paused" if status.paused else "later" if status.state == "running"
                   else "starting" if status.position == 0 else "queued")
            parts.append(f"{index.name} ({how} in {job.label}{when})")
    return "; ".join(parts)


def incomplete_notice(wb: Workbench, corpus: str) -> None:
    """Say which indexes of ``corpus`` are still being built, or warn of its incomplete indexes.

    While builds have indexes of ``corpus`` to make, a note naming exactly those, building or queued, with when; the
    page uses the indexes that are ready, and reruns when one more is (the sidebar's panel watches ``corpus`` for it).
    Otherwise a warning naming every incomplete index of ``corpus``: they are not searched until finished.
    """
    waiting = pending_text(corpus)
    _watch(corpus)
    if waiting:
        st.info(f"Still being built for {corpus}: {waiting}. Each index is searched as soon as it is complete; this "
                "page takes it up then.", icon=":material/hourglass_top:")
        return
    partial = incomplete_methods(wb, corpus)
    if partial:
        listed = ", ".join(f"{m} ({n:,} chunks so far)" for m, n in partial.items())
        st.warning(f"Incomplete index: {listed}. A build stopped part-way, so it is not searched. Finish it on "
                   "**Corpus** (Finish building); it continues where it stopped.", icon=":material/pending:")


def follow_ready(key: str, ready: Sequence[str]) -> list[str] | None:
    """Let a multiselect's choice (session state ``key``) follow the indexes as builds complete them.

    Until its user changes it. Returns the ``default`` to give the widget (None where the choice is set here, in
    session state)."""
    auto_key = f"{key}__follows"  # the choice the widget shows by itself; None once its user chose
    if key not in st.session_state:
        st.session_state[auto_key] = list(ready)
        return list(ready)
    auto = st.session_state.get(auto_key)
    if auto is None or list(st.session_state[key]) != auto:
        st.session_state[auto_key] = None  # the user's own choice: kept as it is
        return None
    if list(ready) != auto:
        st.session_state[key] = st.session_state[auto_key] = list(ready)
    return None


def building_corpora() -> list[str]:
    """The corpora builds not ended have indexes still to make of, in the order they come."""
    return list(dict.fromkeys(corpus for job in board().active() for corpus, _ in job.pending()))


def waiting_indexes(corpora: Sequence[str]) -> dict[str, list[str]]:
    """Corpus -> the index names builds have still to make of it (only corpora with some)."""
    found = {c: list(dict.fromkeys(name for name, _ in board().pending(c))) for c in dict.fromkeys(corpora)}
    return {c: names for c, names in found.items() if names}


def watch_corpora(listed: Sequence[str]) -> None:
    """This page offers ``listed`` corpora (those with an index): rerun it when a build makes another one searchable."""
    st.session_state[LISTED_KEY] = set(listed)


def watch_builds() -> None:
    """This page lists builds (a button disabled while one runs, a build's report): rerun it when one starts or ends."""
    st.session_state[WATCH_BUILDS_KEY] = True


def _watch(corpus: str) -> None:
    st.session_state.setdefault(WATCH_KEY, {})[corpus] = tuple(n for n, _ in board().pending(corpus))


def _watched_changed(jobs: job_board.JobBoard) -> bool:
    """Whether a build changed something this page's last run showed.

    An index of a corpus it reads was completed (or queued), or, where it lists builds, a build started or ended."""
    watched = st.session_state.get(WATCH_KEY, {})
    if any(tuple(n for n, _ in jobs.pending(corpus)) != names for corpus, names in watched.items()):
        return True
    listed = st.session_state.get(LISTED_KEY)
    if listed is not None:
        seen = st.session_state.setdefault(SEEN_KEY, set())
        new = jobs.completed_corpora() - listed - seen
        if new:  # once per corpus: one that the page still does not list (other settings) reruns it no more
            seen |= new
            return True
    return bool(st.session_state.get(WATCH_BUILDS_KEY)) and st.session_state.get(ACTIVE_KEY) != _active_ids(jobs)


def _active_ids(jobs: job_board.JobBoard) -> tuple[int, ...]:
    return tuple(j.job_id for j in jobs.active())


def _job_row(job: sac_jobs.BuildJob, controls: bool) -> None:
    with st.container(key=f"sac_job_row_{job.job_id}"):
        _job_row_content(job, controls)


def _job_row_content(job: sac_jobs.BuildJob, controls: bool) -> None:
    status = job.status()
    if status.state == "running" or status.position == 0:  # running, or about to (planning, or taking over)
        st.progress(status.fraction, text=status.overall)
        st.caption(status.stage)
    else:
        st.caption(status.overall)
    if job.cancelled:
        st.caption(f"Cancelling {job.label}: it stops at its next safe point.")
    elif controls:
        cols = st.columns(2)
        if cols[0].button("Cancel", key=f"sac_job_cancel_{job.job_id}", width="stretch",
                          help="Waiting: it never starts. Running: it stops at its next safe point, and the index under "
                               "way is left marked incomplete (Finish building on Corpus continues it)."):
            board().cancel(job.job_id)
        if status.position > 0 and cols[1].button(
                "Move ahead", key=f"sac_job_ahead_{job.job_id}", width="stretch",
                help="Before your other builds and the demo's background indexes (a running one pauses at its next "
                     "safe point); never before another person's build."):
            if not board().move_ahead(job.job_id):
                st.toast("It cannot pass the build ahead of it: another person started that one.")


def _job_panel() -> None:
    """Draw the sidebar's build panel.

    Every build not ended, in the order they run: the running one with its bar, the others with their place in line
    and when they start; this session's with Cancel and Move ahead. Then how this session's last build ended. While
    a build runs it redraws every second, and reruns the page only when what the page shows changed (``_watched``).
    """
    jobs = board()
    active = jobs.active()
    kept = jobs.jobs()
    own = [j for j in kept if mine(j)]
    my_last = own[-1] if own else None
    if active:
        with st.container(border=True, key="sac_job_panel"):
            running = [j for j in active if j.status().state == "running"]
            for job in [*running, *(j for j in active if j not in running)]:
                _job_row(job, mine(job))
            st.caption("Runs in the background: other pages can be used meanwhile.")
    # How this session's builds ended: the last one's, and any other's that ended since the last one was started
    # (the demo cancelled while the upload runs).
    ended = [j for j in own if not j.status().active and my_last is not None
             and (j is my_last or (j.finished_at or 0.0) >= my_last.created)]
    if ended:
        with st.container(border=True, key="sac_job_done"):
            for job in ended:
                for kind, text in job.status().messages:
                    getattr(st, kind)(text)
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run and _watched_changed(jobs):
        # Only from the panel's own timed run: a whole page's run draws the page afresh anyway, and a rerun there
        # would drop the click that started it (someone else's build starting in the moment before it).
        st.rerun(scope="app")


def job_panel() -> None:
    """The sidebar's build panel, redrawn every second while a build runs or waits."""
    try:
        active = bool(board().active())
    except SacError:
        return  # bad settings: the page itself says what is wrong
    # What this page's run shows is registered afresh by the page (incomplete_notice, watch_builds).
    st.session_state[WATCH_KEY] = {}
    st.session_state[WATCH_BUILDS_KEY] = False
    st.session_state[LISTED_KEY] = None
    st.session_state[ACTIVE_KEY] = _active_ids(board())
    st.fragment(_job_panel, run_every=1.0 if active else None)()
