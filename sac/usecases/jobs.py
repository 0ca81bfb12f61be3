"""Builds that outlive the page that started them: a background thread per build, progress any page can read.

A page puts a ``BuildJob`` on its workspace's ``JobBoard`` and returns at once; every page shows the board's
running job (one bar for the whole build with the time left, and the current stage) and, when it ends, what
it did. Leaving the page or closing the browser does not stop a job; stopping the server does, and the index
it was filling stays marked incomplete (``sac.index.store``) until "Finish building" resumes it where it
stopped. One job runs per workspace at a time: two builds on two cores only slow each other down.

The overall bar counts chunks to embed: each index's planned share is its chunk count until its build says
how many it really has to embed (fewer when some are already indexed or can be copied from another index).
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sac.errors import SacError
from sac.methods import MethodSpec
from sac.progress import StageClock, format_duration
from sac.types import Document
from sac.wording import counted

EMBED_STAGE = "embedding and indexing "  # Workbench.build's stage name before an index name
HISTORY = 8  # finished jobs a board remembers


@dataclass(frozen=True)
class BuildStep:
    """One ``Workbench.build`` call of a job: a corpus, its documents, the methods to build."""

    corpus: str
    documents: tuple[Document, ...]
    methods: tuple[MethodSpec, ...]
    summarizers: tuple[Any, ...] = ()
    label: str = ""  # put before its stage names ("contractnli · chunking"); the corpus when empty


@dataclass(frozen=True)
class JobStatus:
    """What a page shows of a job."""

    job_id: int
    label: str
    corpora: tuple[str, ...]
    state: str  # "queued" (behind another build of the workspace), "running", "done" or "failed"
    fraction: float  # the whole build, 0..1
    overall: str  # "Loading the demo: 1,204 / 2,310 chunks · about 40 s left"
    stage: str  # the current stage's line (rate and time left of that stage)
    generation: int  # grows each time an index is completed: pages rerun to pick it up
    messages: tuple[tuple[str, str], ...]  # (kind, text): info, success, error
    reports: tuple[dict[str, Any], ...]  # one row per index: what its sync did
    elapsed_s: float

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def active(self) -> bool:
        """Queued or running: not ended yet."""
        return self.state in ("queued", "running")


@dataclass
class _Share:
    planned: int
    done: int = 0
    total: int | None = None  # known once the index's build reports it
    finished: bool = False

    @property
    def size(self) -> int:
        return self.planned if self.total is None else self.total


_ids = itertools.count(1)


@dataclass
class BuildJob:
    """Runs ``steps`` one after another on a daemon thread through ``workbench.build``.

    ``on_change`` runs (on the job's thread) when an index starts and when it is completed, after each step
    and at the end, so caches of index listings can be dropped while the rest is still building.
    """

    workbench: Any
    label: str
    steps: Sequence[BuildStep]
    on_change: Callable[[], None] = lambda: None
    note: str = ""  # added to the success message ("Open Compare to see DRM at work.")
    notices: Sequence[tuple[str, str]] = ()  # (kind, text) known when it starts (a file of the upload not read, a
    # benchmark saved): its first messages, shown with its progress and with how it ended
    clock: Callable[[], float] = time.perf_counter
    job_id: int = field(default_factory=lambda: next(_ids))

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._done_event = threading.Event()
        self._shares: dict[tuple[int, str], _Share] = {}
        self._stages = StageClock("chunks", clock=self.clock)
        self._stage_text = "starting…"
        self._state = "running"
        self._after: BuildJob | None = None
        self._generation = 0
        self._messages: list[tuple[str, str]] = list(self.notices)
        self._reports: list[dict[str, Any]] = []
        self._started = self.clock()
        self._finished: float | None = None
        self._first_unit: tuple[float, int] | None = None  # when embedding began, and units done then
        # The starter's context goes with the job (who acts, for the audit trail): a thread starts with an empty one.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run,), name=f"sac-build-{self.job_id}",
                                        daemon=True)

    @property
    def corpora(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.corpus for s in self.steps))

    def start(self, after: BuildJob | None = None) -> BuildJob:
        """Start the job's thread; with ``after``, it waits (state "queued") until that job has ended."""
        with self._lock:
            self._after = after
            if after is not None:
                self._state = "queued"
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ended (True) or ``timeout`` seconds passed (False)."""
        return self._done_event.wait(timeout)

    # -- the work -------------------------------------------------------------------------
    def _plan(self) -> None:
        for i, step in enumerate(self.steps):
            chunks = sum(len(self.workbench.chunks(d)) for d in step.documents)
            for method in step.methods:
                self._shares.setdefault((i, method.index_name), _Share(planned=chunks))

    def _run(self) -> None:
        if self._after is not None:
            self._after.wait()
            with self._lock:
                self._state, self._started, self._generation = "running", self.clock(), self._generation + 1
            self.on_change()
        try:
            with self._lock:
                self._stage_text = "chunking…"
            self._plan()
            for i, step in enumerate(self.steps):
                reports = self.workbench.build(step.corpus, step.documents, step.methods,
                                               progress=self._progress_of(i, step), summarizers=step.summarizers)
                self._step_finished(i, step, reports)
            with self._lock:
                self._state = "done"
                done = f"{self.label}: done in {format_duration(self._elapsed())}."
                self._messages.append(("success", f"{done} {self.note}".strip()))
        except Exception as err:  # shown to the user; the indexes it was filling stay marked incomplete
            with self._lock:
                self._state = "failed"
                text = str(err) if isinstance(err, SacError) else f"{type(err).__name__}: {err}"
                self._messages.append(("error", f"{self.label} stopped: {text} Finished indexes are kept; "
                                                "Finish building on Corpus resumes the rest."))
        finally:
            with self._lock:
                self._finished = self.clock()
                self._generation += 1
            self._done_event.set()
            self.on_change()

    def _progress_of(self, i: int, step: BuildStep) -> Callable[[str, int, int], None]:
        prefix = f"{step.label or step.corpus} · "

        def report(stage: str, done: int, total: int) -> None:
            changed = False
            with self._lock:
                self._stage_text = self._stages.update(prefix + stage, done, total).text
                if stage.startswith(EMBED_STAGE):
                    share = self._shares.setdefault((i, stage[len(EMBED_STAGE):]), _Share(planned=total))
                    changed = share.total is None  # the index exists now (incomplete): listings should show it
                    share.total, share.done = total, done
                    if self._first_unit is None and done > 0:
                        self._first_unit = (self.clock(), self._units_done())
                    if done >= total and not share.finished:
                        share.finished = changed = True  # complete: searchable from now on
                    if changed:
                        self._generation += 1
            if changed:
                self.on_change()

        return report

    def _step_finished(self, i: int, step: BuildStep, reports: dict[str, Any]) -> None:
        with self._lock:
            for (j, _name), share in self._shares.items():
                if j == i and not share.finished:  # nothing to embed: already indexed
                    share.total, share.done, share.finished = share.done, share.done, True
            for name, r in reports.items():
                self._reports.append({"corpus": step.corpus, "method": name, "chunks embedded": r.embedded,
                                      "copied from another index": r.copied, "copied from shipped vectors": r.shipped,
                                      "already indexed": r.kept,
                                      "removed": r.deleted, "documents changed": r.documents_changed})
            added = sum(r.embedded for r in reports.values())
            kept = sum(r.kept for r in reports.values())
            shipped = sum(r.shipped for r in reports.values())
            copied = f", {shipped:,} copied from the shipped vectors" if shipped else ""
            n = len(step.documents)
            self._messages.append(("info", f"{step.label or step.corpus}: {counted(n, 'document')} indexed "
                                           f"for {', '.join(reports)}: {added:,} chunks embedded{copied}, {kept:,} already indexed."))
            self._generation += 1
        self.on_change()

    # -- reading --------------------------------------------------------------------------
    def _elapsed(self) -> float:
        return (self._finished or self.clock()) - self._started

    def _units_done(self) -> int:
        return sum(s.done for s in self._shares.values())

    def status(self) -> JobStatus:
        with self._lock:
            total = sum(s.size for s in self._shares.values())
            done = self._units_done()
            fraction = 1.0 if self._state not in ("running", "queued") else (min(done / total, 0.99) if total else 0.0)
            overall = f"{self.label}: {done:,} / {total:,} chunks" if total else f"{self.label}: preparing"
            if self._state == "queued" and self._after is not None:
                overall = f"{self.label}: queued behind {self._after.label}"
            elif self._state == "running" and self._first_unit is not None:
                t0, d0 = self._first_unit
                elapsed = self.clock() - t0
                if done > d0 and elapsed > 1.0:
                    left = (total - done) / ((done - d0) / elapsed)
                    overall += f" · about {format_duration(left)} left"
            elif self._state in ("done", "failed"):
                overall = f"{self.label}: {self._state} in {format_duration(self._elapsed())}"
            return JobStatus(
                self.job_id, self.label, self.corpora, self._state, fraction, overall, self._stage_text,
                self._generation, tuple(self._messages), tuple(self._reports), self._elapsed(),
            )


class JobBoard:
    """The jobs of one workspace: one runs at a time, later ones queue behind it in the order they were started
    (two people building at once both get their builds); the last few finished are kept for their reports."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: list[BuildJob] = []

    def start(self, job: BuildJob) -> BuildJob:
        """Start ``job`` now, or queue it behind the last job not yet ended."""
        with self._lock:
            active = [j for j in self._jobs if not j._done_event.is_set()]
            ended = [j for j in self._jobs if j._done_event.is_set()]
            self._jobs = [*ended[-HISTORY:], *active, job]
            return job.start(after=active[-1] if active else None)

    def _running(self) -> BuildJob | None:
        return next((j for j in self._jobs if not j._done_event.is_set()), None)

    def running(self) -> BuildJob | None:
        """The job that runs now (the oldest not ended); queued ones wait behind it."""
        with self._lock:
            return self._running()

    def queued(self) -> list[BuildJob]:
        """Jobs waiting behind the running one, in the order they will run."""
        with self._lock:
            return [j for j in self._jobs if not j._done_event.is_set()][1:]

    def latest(self) -> BuildJob | None:
        with self._lock:
            return self._jobs[-1] if self._jobs else None

    def find(self, job_id: int) -> BuildJob | None:
        with self._lock:
            return next((j for j in self._jobs if j.job_id == job_id), None)

    def signature(self) -> tuple[tuple[int, int], ...]:
        """(job id, generation) of every job kept: it changes when a job starts, completes an index or ends."""
        with self._lock:
            jobs = list(self._jobs)
        return tuple((j.job_id, j.status().generation) for j in jobs)

    def building(self, corpus: str) -> bool:
        """Whether a running or queued job builds ``corpus``."""
        with self._lock:
            return any(corpus in j.corpora for j in self._jobs if not j._done_event.is_set())

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job runs or waits (True) or ``timeout`` passed (False)."""
        with self._lock:
            last = next((j for j in reversed(self._jobs) if not j._done_event.is_set()), None)
        return last is None or last.wait(timeout)


_boards: dict[str, JobBoard] = {}
_boards_lock = threading.Lock()


def board(workspace: Path | str) -> JobBoard:
    """The job board of a workspace folder, shared by every session of this process."""
    key = str(Path(workspace).resolve())
    with _boards_lock:
        return _boards.setdefault(key, JobBoard())
