"""Builds that outlive the page that started them: a background thread per build, progress any page can read.

A page puts a ``BuildJob`` on its workspace's ``JobBoard`` and returns at once; every page shows the board's
running job (one bar for the whole build with the time left, and the current stage) and, when it ends, what
it did. Leaving the page or closing the browser does not stop a job; stopping the server does, and the index
it was filling stays marked incomplete (``sac.index.store``) until "Finish building" resumes it where it
stopped. One job runs per workspace at a time: two builds on two cores only slow each other down.

The queue is the user's: each waiting job knows its place in line and when it starts; a job can be cancelled
(queued: it never starts; running: it stops at its next safe point, the index under way left marked incomplete and
named) or moved ahead. A user's build goes ahead of a job's background steps (the demo's LLM indexes), and a job
moved ahead of a running one takes over at that one's next safe point (an index completed, or a step's end), where
the other pauses until its turn comes back.

The overall bar counts chunks to embed: each index's planned share is its chunk count until its build says
how many it really has to embed (fewer when some are already indexed or can be copied from another index). The
time left comes from the work planned before the job starts (``Workbench.plan_build``) at this machine's measured
rates (``sac.usecases.estimates``), for the job and for every job ahead of a queued one.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from sac.errors import BuildCancelled, SacError
from sac.index.store import list_indexes
from sac.methods import MethodSpec
from sac.progress import StageClock, format_duration
from sac.types import Document
from sac.usecases.estimates import EMBED, FINISH, PREPARE, WRITE, PlannedIndex, Rates
from sac.wording import counted

EMBED_STAGE = "embedding and indexing "  # Workbench.build's stage name before an index name
FINISH_STAGE = "BM25 and document index "  # and its last stage of an index: done == total, the index is searchable
UNKNOWN_TEXT = 560  # characters embedded per chunk where a build could not be planned (summary + chunk)


@dataclass(frozen=True)
class BuildStep:
    """One ``Workbench.build`` call of a job: a corpus, its documents, the methods to build."""

    corpus: str
    documents: tuple[Document, ...]
    methods: tuple[MethodSpec, ...]
    summarizers: tuple[Any, ...] = ()
    label: str = ""  # put before its stage names ("contractnli · chunking"); the corpus when empty
    background: bool = False  # another user's build may go first (the demo's LLM indexes, after Compare's methods)


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
    position: int = 0  # in the workspace's line: 0 runs (or runs next), 1 waits behind one job, ...; -1 ended
    left_s: float | None = None  # estimated seconds of work left (None: ended, or not planned yet)
    starts_in_s: float | None = None  # a waiting job: estimated seconds until it runs
    paused: bool = False  # it ran, and waits at a safe point for a job moved ahead of it
    owner: str = ""  # who started it (a browser session), for the buttons only they get

    @property
    def running(self) -> bool:
        return self.state == "running"

    @property
    def active(self) -> bool:
        """Queued or running: not ended yet."""
        return self.state in ("queued", "running")

    @property
    def ended(self) -> bool:
        """Done, failed or cancelled."""
        return not self.active


@dataclass(frozen=True)
class PendingIndex:
    """An index a job has still to build, and when it should be searchable."""

    corpus: str
    name: str  # the index name ("sac-expert")
    building: bool  # under way now (else it comes later, or its job waits in line)
    ready_in_s: float | None  # estimated seconds until it is searchable (None before the job's plan)


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


class Line(Protocol):
    """What a job asks of the board it waits on (``sac.usecases.job_board.JobBoard``)."""

    def wait_turn(self, job: BuildJob) -> bool: ...

    def job_ended(self, job: BuildJob) -> None: ...

    def wake(self) -> None: ...

    def position(self, job: BuildJob) -> int: ...

    def starts_in(self, job: BuildJob) -> float | None: ...

    def ahead_of(self, job: BuildJob) -> BuildJob | None: ...


def _embedded(written: int, to_write: int, batch: int) -> int:
    """Records the store has embedded when it reports ``written`` of ``to_write`` written: a ``batch`` ahead (it
    embeds the next batch while the last one is written: sac.index.store, ``_embed_and_write``), all at the end."""
    if written <= 0:
        return 0
    return to_write if written >= to_write else min(written + batch, to_write)


@dataclass(eq=False)  # a job is itself (hashable, compared by identity), not its fields
class BuildJob:
    """Runs ``steps`` one after another on a daemon thread through ``workbench.build``.

    ``on_change`` runs (on the job's thread) when an index starts and when it is completed, after each step,
    when a job that waited starts and at the end, so cached index listings can be read again while the rest is
    still building; ``on_index`` when an index is completed.
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
    owner: str = ""  # who started it (a browser session): only they get its buttons, and it passes only their jobs
    on_index: Callable[[str, str], None] = lambda corpus, index: None  # (corpus, index name), on the job's thread,
    # when an index is completed: searches of that corpus only are read again
    rates: Rates | None = None  # seconds per unit of work: the board's (shared by its jobs, so learnt) when None

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._done_event = threading.Event()
        self._cancel = threading.Event()
        self._board: Line | None = None  # set by the board that runs it
        self._rates = self.rates or Rates()
        self._shares: dict[tuple[int, str], _Share] = {}
        self._plan: dict[tuple[int, str], PlannedIndex] = {}
        self._left: dict[tuple[int, str], dict[str, float]] = {}  # work not done yet, per index, by kind
        self._batch: dict[tuple[int, str], int] = {}  # per index, the records of its store's first written batch
        self._planned = False
        self._tick: tuple[float, str, int] = (self.clock(), "", 0)  # the last report: when, which stage, how far
        self._current: tuple[int, str] | None = None  # the index under way
        self._step = 0  # the step running, or next to run
        self._ran = False  # it has run (a queued job that ran is paused)
        self._started_running = False  # its clock was set when it first ran
        self._moved = False  # its user moved it ahead
        self._stages = StageClock("chunks", clock=self.clock)
        self._stage_text = "planning…"
        self._state = "queued"
        self._generation = 0
        self._messages: list[tuple[str, str]] = list(self.notices)
        self._reports: list[dict[str, Any]] = []
        self._started = self.clock()
        self.created = self._started  # when it was started (``_started`` moves to when it first runs)
        self._finished: float | None = None
        # The starter's context goes with the job (who acts, for the audit trail): a thread starts with an empty one.
        context = contextvars.copy_context()
        self._thread = threading.Thread(target=context.run, args=(self._run,), name=f"sac-build-{self.job_id}",
                                        daemon=True)

    @property
    def corpora(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s.corpus for s in self.steps))

    def start(self) -> BuildJob:
        """Start the job's thread: it plans its work, then builds when its board (if any) gives it its turn."""
        self._thread.start()
        return self

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the job ended (True) or ``timeout`` seconds passed (False)."""
        return self._done_event.wait(timeout)

    def cancel(self) -> None:
        """Stop it: a waiting job never starts; a running one stops at its next safe point (``BuildCancelled``)."""
        self._cancel.set()
        if self._board is not None:
            self._board.wake()

    def join(self, board: Line, rates: Rates) -> None:
        """Wait on ``board``, learning at its ``rates`` unless the job was given its own."""
        self._board = board
        if self.rates is None:
            self._rates = rates

    @property
    def ended(self) -> bool:
        """Whether it has finished (done, failed or cancelled)."""
        return self._done_event.is_set()

    @property
    def moved(self) -> bool:
        """Whether its user moved it ahead in line."""
        return self._moved

    def move(self) -> None:
        """Mark it moved ahead by its user (the board keeps it ahead of background steps)."""
        self._moved = True

    @property
    def running(self) -> bool:
        """Whether it is building now (not waiting, paused or ended)."""
        with self._lock:
            return self._state == "running"

    def set_waiting(self) -> None:
        """It waits for its turn at a safe point (paused if it ran)."""
        with self._lock:
            self._state = "queued"

    @property
    def cancelled(self) -> bool:
        """Whether its cancellation was asked for."""
        return self._cancel.is_set()

    def background_now(self) -> bool:
        """Whether the step it runs (or runs next) lets other users' builds go first."""
        return self._step < len(self.steps) and self.steps[self._step].background

    def pending(self) -> list[tuple[str, str]]:
        """(corpus, index name) of every index it has still to build (all its steps' until it has planned them)."""
        with self._lock:
            if self._planned:
                return [(self.steps[i].corpus, name) for (i, name), plan in self._plan.items()
                        if plan.to_write and not self._shares.get((i, name), _Share(0)).finished]
        return list(dict.fromkeys((s.corpus, m.index_name) for s in self.steps for m in s.methods))

    def pending_indexes(self) -> list[PendingIndex]:
        """Every index it has still to build, in the order it builds them, each with when it should be searchable."""
        starts_in = 0.0
        if self._board is not None and self._board.position(self) > 0:
            starts_in = self._board.starts_in(self) or 0.0
        with self._lock:
            if not self._planned:
                return [PendingIndex(s.corpus, m.index_name, False, None)
                        for s in self.steps for m in dict.fromkeys(s.methods)]
            since = self.clock() - self._tick[0] if self._state == "running" else 0.0
            found: list[PendingIndex] = []
            ready = starts_in
            for key, plan in self._plan.items():
                left = self._left.get(key, {})
                cost = self._rates.cost(left)
                if key == self._current and self._state == "running":
                    cost = max(cost - since, 0.0)
                ready += cost
                share = self._shares.get(key)
                if plan.to_write and not (share is not None and share.finished):
                    found.append(PendingIndex(self.steps[key[0]].corpus, key[1],
                                              key == self._current and self._state == "running", ready))
            return found

    @property
    def finished_at(self) -> float | None:
        """When it ended (its clock), None while it has not."""
        return self._finished

    def completed(self) -> set[str]:
        """The corpora it completed an index of (so far)."""
        with self._lock:
            return {self.steps[i].corpus for (i, _), share in self._shares.items() if share.finished}

    # -- the work -------------------------------------------------------------------------
    def _make_plan(self) -> None:
        """Plan every step's work before building (``Workbench.plan_build``): the estimates, and the bar's shares."""
        plan: list[PlannedIndex] = []
        for i, step in enumerate(self.steps):
            try:
                plan.extend(self.workbench.plan_build(step.corpus, step.documents, step.methods, step=i))
            except Exception:  # noqa: BLE001 - only an estimate: the build itself says what is wrong
                chunks = sum(len(self.workbench.chunks(d)) for d in step.documents)
                plan.extend(PlannedIndex(i, m.index_name, chunks, to_write=chunks, embed_units=chunks * UNKNOWN_TEXT)
                            for m in dict.fromkeys(step.methods))
        with self._lock:
            for p in plan:
                self._plan[p.step, p.name] = p
                self._left[p.step, p.name] = p.work()
                self._shares.setdefault((p.step, p.name), _Share(planned=p.to_write))
            self._planned = True

    def _await_turn(self) -> None:
        """A safe point: stop here if cancelled; wait while a job moved ahead of this one runs (paused, if it ran)."""
        if self._cancel.is_set():
            raise BuildCancelled(f"{self.label} was cancelled")
        waited = self._board.wait_turn(self) if self._board is not None else False
        with self._lock:
            self._state, self._ran = "running", True
            self._tick = (self.clock(), "", 0)  # the wait is no work
            if waited:
                self._generation += 1
            if not self._started_running:
                self._started, self._started_running = self.clock(), True
        if waited:
            self.on_change()

    def _run(self) -> None:
        try:
            with self._lock:
                self._stage_text = "planning…"
            self._make_plan()
            for i, step in enumerate(self.steps):
                with self._lock:
                    self._step = i
                self._await_turn()
                self._load_model(i)
                with self._lock:
                    self._stage_text = "chunking…"
                reports = self.workbench.build(step.corpus, step.documents, step.methods,
                                               progress=self._progress_of(i, step), summarizers=step.summarizers)
                self._step_finished(i, step, reports)
            with self._lock:
                self._state = "done"
                done = f"{self.label}: done in {format_duration(self._elapsed())}."
                self._messages.append(("success", f"{done} {self.note}".strip()))
        except BuildCancelled:
            text = self._cancelled_text()
            with self._lock:
                self._state = "cancelled"
                self._messages.append(("warning", text))
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
            if self._board is not None:
                self._board.job_ended(self)
            self._done_event.set()
            self.on_change()

    def _cancelled_text(self) -> str:
        """How a cancelled job left its indexes: the one under way named as incomplete, never silently partial."""
        if not self._ran:
            return f"{self.label}: cancelled before it started; nothing was built."
        wanted = {(self.steps[i].corpus, name) for i, name in self._plan} or {
            (s.corpus, m.index_name) for s in self.steps for m in s.methods}
        try:
            wb = self.workbench
            found = [i for i in list_indexes(wb.client) if (i.corpus, i.method) in wanted
                     and i.embedder == wb.embedder_name and i.chunking == wb.config.chunking_key]
        except Exception:  # noqa: BLE001 - the store cannot be read: say what this job knows
            found = []
        partial = [f"{i.method} of {i.corpus} ({i.chunks:,} chunks so far)" for i in found if not i.complete]
        text = f"{self.label}: cancelled after {format_duration(self._elapsed())}."
        if partial:
            text += (f" Left incomplete, so not searched: {', '.join(partial)}. Finish building on Corpus continues "
                     "where it stopped.")
        else:
            text += " No index was left part-way."
        started = {(i.corpus, i.method) for i in found}
        never: dict[str, list[str]] = {}
        for corpus, name in self.pending():
            if (corpus, name) not in started:
                never.setdefault(corpus, []).append(name)
        if never:
            text += " Not built: " + "; ".join(f"{', '.join(names)} of {corpus}" for corpus, names in never.items()) + "."
        return text

    def _progress_of(self, i: int, step: BuildStep) -> Callable[[str, int, int], None]:
        prefix = f"{step.label or step.corpus} · "

        def report(stage: str, done: int, total: int) -> None:
            if self._cancel.is_set():
                raise BuildCancelled(f"{self.label} was cancelled")  # the index under way stays marked incomplete
            changed = completed = False
            with self._lock:
                self._stage_text = self._stages.update(prefix + stage, done, total).text
                self._account(i, stage, done, total)
                if stage.startswith(EMBED_STAGE):
                    share = self._shares.setdefault((i, stage[len(EMBED_STAGE):]), _Share(planned=total))
                    changed = share.total is None  # the index exists now (incomplete): listings should show it
                    share.total, share.done = total, done
                elif stage.startswith(FINISH_STAGE) and done >= total:
                    share = self._shares.get((i, stage[len(FINISH_STAGE):]), _Share(0, finished=True))
                    # Its sync marked it complete (searchable from now on), and its BM25 and documents are made.
                    changed = completed = share.total is not None and not share.finished
                if changed and not completed:
                    self._generation += 1
            if completed:
                self.on_index(step.corpus, stage[len(FINISH_STAGE):])
            if changed:
                self.on_change()
            if completed:  # said complete only now, after the caches were told: a page that sees it finds it listed
                with self._lock:
                    self._shares[i, stage[len(FINISH_STAGE):]].finished = True
                    self._generation += 1
            if stage.startswith(FINISH_STAGE) and done >= total:
                self._await_turn()  # an index is complete: a job moved ahead of this one may go first

        return report

    def _account(self, i: int, stage: str, done: int, total: int) -> None:
        """Book the time since the last report to the work it did, at the rates the board learns (lock held)."""
        now = self.clock()
        last_time, last_stage, last_done = self._tick
        spent = max(now - last_time, 0.0)
        self._tick = (now, stage, done)
        if stage.startswith(EMBED_STAGE):
            key = (i, stage[len(EMBED_STAGE):])
            plan, left = self._plan.get(key), self._left.get(key)
            if plan is None or left is None:
                return
            self._current = key
            if stage != last_stage:  # opening the index, reading its records, looking for vectors to copy
                self._spend(left, PREPARE, left[PREPARE], spent)
                return
            records = done - last_done
            if records <= 0:
                return
            # The store embeds one batch ahead of what it has written (the next batch is embedded while the last
            # is written), so a report of ``done`` written follows ``_embedded(done)`` embedded.
            batch = self._batch.setdefault(key, records)  # the store's batch: what its first report wrote
            ahead = _embedded(done, plan.to_write, batch) - _embedded(last_done, plan.to_write, batch)
            chars = plan.embed_units * ahead / max(plan.to_write, 1)
            write, embed = records * self._rates.per_unit(WRITE), chars * self._rates.per_unit(EMBED)
            self._spend(left, WRITE, records, spent * write / (write + embed))
            if chars > 0:
                self._spend(left, EMBED, chars, spent * embed / (write + embed))
        elif stage.startswith(FINISH_STAGE) and done >= total:
            key = (i, stage[len(FINISH_STAGE):])
            left = self._left.get(key)
            if left is not None:
                for kind in (PREPARE, WRITE, EMBED):  # whatever the plan over-counted is not to come
                    left[kind] = 0.0
                self._spend(left, FINISH, left[FINISH], spent)
            self._current = None

    def _load_model(self, i: int) -> None:
        """Load the embedding model before step ``i`` when its plan embeds any text, as work of its own: the rates
        learn nothing from it (loading once is no per-record cost), and the first batch is not booked with it."""
        if not any(p.embed_units for (j, _), p in self._plan.items() if j == i):
            return
        with self._lock:
            self._stage_text = "loading the embedding model…"
        getattr(self.workbench, "embedder", None)  # loaded once per workbench; later steps find it loaded
        with self._lock:
            self._tick = (self.clock(), "", 0)  # the load is no work the rates learn from

    def _spend(self, left: dict[str, float], kind: str, units: float, seconds: float) -> None:
        self._rates.record(kind, units, seconds)
        left[kind] = max(left[kind] - units, 0.0)

    def _step_finished(self, i: int, step: BuildStep, reports: dict[str, Any]) -> None:
        with self._lock:
            for (j, _name), share in self._shares.items():
                if j == i and not share.finished:  # nothing to embed: already indexed
                    share.total, share.done, share.finished = share.done, share.done, True
            for (j, _name), left in self._left.items():
                if j == i:
                    left.update(dict.fromkeys(left, 0.0))
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

    def left_s(self, *, until_safe_point: bool = False) -> float | None:
        """Estimated seconds of work left (to its next safe point with ``until_safe_point``); None before its plan."""
        with self._lock:
            return self._left_locked(until_safe_point)

    def _left_locked(self, until_safe_point: bool = False) -> float | None:
        if not self._planned or self._done_event.is_set():
            return None
        current = self._left.get(self._current) if self._current is not None else None
        now_cost = self._rates.cost(current) if current else 0.0
        since = self.clock() - self._tick[0] if self._state == "running" else 0.0
        if until_safe_point:
            return max(now_cost - since, 0.0)
        total = sum(self._rates.cost(left) for left in self._left.values())
        return max(total - min(since, now_cost), 0.0)

    def steps_left_s(self, steps: Sequence[int]) -> float | None:
        """Estimated seconds until the work of ``steps`` (and of the steps before them) is done."""
        with self._lock:
            if not self._planned:
                return None
            last = max(steps, default=-1)
            total = sum(self._rates.cost(left) for (i, _), left in self._left.items() if i <= last)
            current = self._left.get(self._current) if self._current is not None else None
            since = self.clock() - self._tick[0] if self._state == "running" else 0.0
            return max(total - min(since, self._rates.cost(current) if current else 0.0), 0.0)

    def status(self) -> JobStatus:
        board = self._board
        position = board.position(self) if board is not None else (0 if not self._done_event.is_set() else -1)
        starts_in = board.starts_in(self) if board is not None and position > 0 else None
        ahead = board.ahead_of(self) if board is not None and position > 0 else None
        with self._lock:
            total = sum(s.size for s in self._shares.values())
            done = self._units_done()
            ended = self._state not in ("running", "queued")
            fraction = 1.0 if ended else (min(done / total, 0.99) if total else 0.0)
            left = self._left_locked()
            paused = self._state == "queued" and self._ran
            overall = f"{self.label}: {done:,} / {total:,} chunks" if total else f"{self.label}: preparing"
            if self._state == "queued" and position == 0 and not paused:
                overall = f"{self.label}: planning the build (what to embed, what to copy)"
                if left is not None:
                    overall += f" · about {format_duration(left)} of work"
            elif self._state == "queued":
                line = ("next in line" if position <= 1 else f"{_ordinal(position)} in line")
                line += f" behind {ahead.label}" if ahead is not None else ""
                if paused:
                    first = ahead.label if ahead is not None else "another build"
                    overall = f"{self.label}: paused at {done:,} / {total:,} chunks so that {first} goes first; {line}"
                else:
                    overall = f"{self.label}: queued, {line}"
                if starts_in is not None:
                    overall += f" · {'resumes' if paused else 'starts'} in about {format_duration(starts_in)}"
                if left is not None:
                    overall += f" · then about {format_duration(left)} of work"
            elif self._state == "running":
                if left is not None:
                    overall += f" · about {format_duration(left)} left"
            else:
                overall = f"{self.label}: {self._state} in {format_duration(self._elapsed())}"
            return JobStatus(
                self.job_id, self.label, self.corpora, self._state, fraction, overall, self._stage_text,
                self._generation, tuple(self._messages), tuple(self._reports), self._elapsed(),
                position=-1 if ended else position, left_s=None if ended else left,
                starts_in_s=starts_in, paused=paused, owner=self.owner,
            )


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th, ..., 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
