"""Progress of long stages (chunking, summarizing, embedding and indexing, evaluating) as people read it.

``Workbench.build`` and ``evaluate`` call a ``Progress`` callback with ``(stage, done, total)``; the stage
names are the user's steps ("embedding and indexing sac-generic"). ``StageClock`` turns those calls into the
line a progress bar shows: how far, how fast, and about how long is left, from the rate measured so far.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

Progress = Callable[[str, int, int], None]  # (stage, done, total)


def format_duration(seconds: float) -> str:
    """A duration as people read it: "42 s", "3 min 05 s", "1 h 02 min".

    Rounded to the whole second first, so 59.6 s reads "1 min 00 s", never "60 s" or "0 min 60 s"; from an hour on,
    to the whole minute."""
    whole = max(int(seconds + 0.5), 0)  # half up: Python's round() would make 0.5 s "0 s" and 1.5 s "2 s"
    if whole < 60:
        return f"{whole} s"
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    minutes = (whole + 30) // 60
    return f"{minutes // 60} h {minutes % 60:02d} min"


@dataclass(frozen=True, slots=True)
class StageStatus:
    """What a progress bar shows for one stage."""

    fraction: float  # 0..1, for the bar
    text: str  # "embedding and indexing baseline: 1,024 / 4,525 · 41 chunks/s · about 1 min 25 s left"
    finished: bool


class StageClock:
    """Rate and time left per stage, measured from each stage's first call (so resumed work is not counted)."""

    def __init__(self, unit: str = "items", clock: Callable[[], float] = time.perf_counter) -> None:
        self.unit = unit
        self._clock = clock
        self._started: dict[str, tuple[float, int]] = {}

    def update(self, stage: str, done: int, total: int) -> StageStatus:
        """The status after ``done`` of ``total`` items of ``stage``, with the rate and time left once measurable."""
        now = self._clock()
        t0, d0 = self._started.setdefault(stage, (now, done))
        fraction = min(done / total, 1.0) if total else 1.0
        text = f"{stage}: {done:,} / {total:,}"
        elapsed = now - t0
        finished = bool(total) and done >= total
        if done > d0 and elapsed > 0.2 and not finished:
            rate = (done - d0) / elapsed
            text += f" · {rate:,.0f} {self.unit}/s · about {format_duration((total - done) / rate)} left"
        elif finished:
            text += f" · done in {format_duration(elapsed)}"
        return StageStatus(fraction, text, finished)
