"""The line of builds of one workspace: one runs at a time, the others wait their turn (``sac.usecases.jobs``).

A job its user moved ahead passes their own jobs and the background steps of any job; a running job that finds one
ahead of it at a safe point pauses there until its turn comes back.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

from sac.errors import BuildCancelled
from sac.usecases.estimates import Rates
from sac.usecases.jobs import BuildJob, PendingIndex

HISTORY = 8  # finished jobs a board remembers


class JobBoard:
    """The jobs of one workspace: one runs at a time, the others wait in line (two people building at once both get
    their builds); the last few finished are kept for their reports.

    The line: jobs in the order they were started, except that a job in a background step (the demo's LLM indexes)
    lets every other job go first, and a job its user moved ahead passes their own jobs and background steps (never
    another user's build). A running job that finds a job ahead of it at a safe point pauses there until its turn.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._jobs: list[BuildJob] = []  # every job kept, in the order started
        self._order: list[BuildJob] = []  # the jobs not ended, in the order they run: the first runs now
        self.rates = Rates()  # learnt from every job of the board, so each estimate starts from this machine's rates

    def start(self, job: BuildJob) -> BuildJob:
        """Start ``job``: it runs now, or waits in line."""
        with self._cond:
            active = [j for j in self._jobs if not j.ended]
            ended = [j for j in self._jobs if j.ended]
            self._jobs = [*ended[-HISTORY:], *active, job]
            job.join(self, self.rates)
            self._order.append(job)
            self._reorder()
            job.start()
            self._cond.notify_all()
        return job

    def _reorder(self) -> None:
        """Jobs in a background step go behind every other job (stable otherwise); lock held."""
        self._order.sort(key=lambda j: 0 if j.moved or not j.background_now() else 1)

    def wake(self) -> None:
        with self._cond:
            self._cond.notify_all()

    def wait_turn(self, job: BuildJob) -> bool:
        """Block until ``job`` is first in line; returns whether it had to wait. Raises BuildCancelled if cancelled."""
        waited = False
        with self._cond:
            self._reorder()  # it may have come to a background step
            # Its turn: first in line, once a job it passed has paused at its safe point (never two at once).
            while not job.cancelled and (self._order[0] is not job or any(
                    j.running for j in self._order if j is not job)):
                if not waited:
                    waited = True
                    job.set_waiting()
                    self._cond.notify_all()
                self._cond.wait(1.0)
        if job.cancelled:
            raise BuildCancelled(f"{job.label} was cancelled")
        return waited

    def job_ended(self, job: BuildJob) -> None:
        with self._cond:
            if job in self._order:
                self._order.remove(job)
            self._cond.notify_all()

    def cancel(self, job_id: int) -> bool:
        """Cancel a job not ended yet (``BuildJob.cancel``); False when there is none by that id."""
        job = self.find(job_id)
        if job is None or job.ended:
            return False
        job.cancel()
        return True

    def move_ahead(self, job_id: int) -> bool:
        """Move a waiting job ahead of the jobs its user started and of background steps (not past another user's
        build); a running job it passes pauses at its next safe point. False when it passed nothing."""
        with self._cond:
            job = next((j for j in self._order if j.job_id == job_id), None)
            if job is None:
                return False
            at = self._order.index(job)
            to = at
            while to > 0 and (self._order[to - 1].owner == job.owner or self._order[to - 1].background_now()):
                to -= 1
            if to == at:
                return False
            self._order.remove(job)
            self._order.insert(to, job)
            job.move()
            self._cond.notify_all()
            return True

    def position(self, job: BuildJob) -> int:
        """0: it runs (or is the next to run); n: n jobs are ahead of it; -1: it ended."""
        with self._lock:
            return self._order.index(job) if job in self._order else -1

    def ahead_of(self, job: BuildJob) -> BuildJob | None:
        """The job right ahead of ``job`` in line (None for the first)."""
        with self._lock:
            at = self._order.index(job) if job in self._order else 0
            return self._order[at - 1] if at > 0 else None

    def starts_in(self, job: BuildJob) -> float | None:
        """Estimated seconds until ``job`` runs: the work of every job ahead of it, and of a running job it passed up
        to that job's next safe point. None while one of them has no plan yet."""
        with self._lock:
            if job not in self._order:
                return None
            ahead = self._order[: self._order.index(job)]
            running = [j for j in self._order if j.running and j not in ahead and j is not job]
        total = 0.0
        for other in ahead:
            left = other.left_s()
            if left is None:
                return None
            total += left
        for other in running:
            total += other.left_s(until_safe_point=True) or 0.0
        return total

    def _running(self) -> BuildJob | None:
        return self._order[0] if self._order else None

    def running(self) -> BuildJob | None:
        """The job first in line (it runs, or takes over at the running one's next safe point)."""
        with self._lock:
            return self._running()

    def active(self) -> list[BuildJob]:
        """Every job not ended, in the order they run."""
        with self._lock:
            return list(self._order)

    def queued(self) -> list[BuildJob]:
        """Jobs waiting behind the first, in the order they will run."""
        with self._lock:
            return list(self._order[1:])

    def jobs(self) -> list[BuildJob]:
        """Every job kept (the last few ended ones, and those not ended), in the order they were started."""
        with self._lock:
            return list(self._jobs)

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
        """Whether a running or queued job has an index of ``corpus`` still to build."""
        return bool(self.pending(corpus))

    def pending(self, corpus: str) -> list[tuple[str, BuildJob]]:
        """(index name, job) of every index of ``corpus`` a job not ended has still to build, in the order they come."""
        return [(name, job) for job in self.active() for c, name in job.pending() if c == corpus]

    def pending_indexes(self, corpus: str) -> list[tuple[PendingIndex, BuildJob]]:
        """``pending`` with when each index should be searchable (``BuildJob.pending_indexes``)."""
        return [(p, job) for job in self.active() for p in job.pending_indexes() if p.corpus == corpus]

    def completed_corpora(self) -> set[str]:
        """Every corpus a job kept (running or ended) completed an index of."""
        with self._lock:
            jobs = list(self._jobs)
        return set().union(*(j.completed() for j in jobs))

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no job runs or waits (True) or ``timeout`` passed (False)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._lock:
                last = next((j for j in reversed(self._jobs) if not j.ended), None)
            if last is None:
                return True
            if not last.wait(None if deadline is None else max(deadline - time.monotonic(), 0.0)):
                return False


_boards: dict[str, JobBoard] = {}
_boards_lock = threading.Lock()


def board(workspace: Path | str) -> JobBoard:
    """The job board of a workspace folder, shared by every session of this process."""
    key = str(Path(workspace).resolve())
    with _boards_lock:
        return _boards.setdefault(key, JobBoard())
