"""How long a build will take, said before it starts and while it runs: its planned work at this machine's rates.

A build's work is known before it starts (``Workbench.plan_build``, which also makes the built-in summaries): per
index, the records it writes, how many of their vectors are copied (shipped with the demo) and how many characters
the model embeds, and the chunks its BM25 and document collection are made of. Each kind of work costs some
seconds per unit: first a prior measured on a quiet 2-core machine (bench/notes/2026-12-06-demo-build-time.md),
then what the builds of this process measured, the prior fading as measured time grows. A kind not measured yet
follows the others: a machine twice as busy as the priors' embeds twice as slowly too. So the estimate is honest
from the first minute and follows the machine's load after.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

PREPARE, WRITE, EMBED, FINISH = "prepare", "write", "embed", "finish"
TEXT_OVERHEAD = 40  # characters' worth of model time per text: tokenizing, [CLS]/[SEP], batching
# Seconds per unit on 2 cores at load <= 2 (bench/demo_build.py --profile): reading an index's records and
# looking for vectors to copy (per record to write); writing a record to Chroma with its HNSW insert; the packaged
# MiniLM per character embedded; BM25, the document collection and settling the graph (per chunk of the index).
PRIORS: dict[str, float] = {PREPARE: 2.0e-4, WRITE: 1.2e-3, EMBED: 3.6e-5, FINISH: 1.5e-3}
PRIOR_SECONDS = 5.0  # how much measured time weighs as much as the prior


def embed_units(text: str) -> int:
    """What embedding ``text`` costs, in characters (with the per-text overhead)."""
    return len(text) + TEXT_OVERHEAD


@dataclass(frozen=True)
class PlannedIndex:
    """The work a build plans for one index (nothing done yet)."""

    step: int  # the build step it belongs to
    name: str  # the index name ("sac-generic")
    records: int  # what the index holds once built
    to_write: int = 0  # records this build writes (0: the index is complete already)
    copied: int = 0  # of those, how many vectors are copied rather than embedded
    embed_units: int = 0  # characters (with the per-text overhead) the model embeds

    @property
    def embedded(self) -> int:
        """Records whose text the model embeds."""
        return self.to_write - self.copied

    def work(self) -> dict[str, float]:
        """Units of each kind of work."""
        return {PREPARE: self.to_write, WRITE: self.to_write, EMBED: self.embed_units,
                FINISH: self.records if self.to_write else 0}


class Rates:
    """Seconds per unit of each kind of work: the prior, then what was measured (shared by the builds of a board)."""

    def __init__(self, priors: Mapping[str, float] | None = None, prior_seconds: float = PRIOR_SECONDS) -> None:
        self._priors = {**PRIORS, **(priors or {})}  # a kind not given keeps the 2-core prior
        self._prior_seconds = prior_seconds
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}
        self._units: dict[str, float] = {}

    def record(self, kind: str, units: float, seconds: float) -> None:
        """``units`` of ``kind`` took ``seconds``."""
        if units <= 0 or seconds < 0 or kind not in self._priors:
            return
        with self._lock:
            self._seconds[kind] = self._seconds.get(kind, 0.0) + seconds
            self._units[kind] = self._units.get(kind, 0.0) + units

    def _load(self) -> float:
        """How much slower than the priors this machine measured, over every kind (1.0 before any measurement)."""
        measured = sum(self._seconds.values())
        expected = sum(self._units[k] * self._priors[k] for k in self._seconds)
        return (measured + self._prior_seconds) / (expected + self._prior_seconds)

    def per_unit(self, kind: str) -> float:
        """Seconds per unit of ``kind``: the measured rate, weighed against the prior scaled by the machine's load."""
        with self._lock:
            prior = self._priors[kind] * self._load()
            seconds, units = self._seconds.get(kind, 0.0), self._units.get(kind, 0.0)
        return (seconds + self._prior_seconds) / (units + self._prior_seconds / prior)

    def cost(self, work: Mapping[str, float]) -> float:
        """Seconds for ``work`` (kind -> units)."""
        return sum(units * self.per_unit(kind) for kind, units in work.items() if units > 0)

    def measured(self) -> dict[str, tuple[float, float]]:
        """Kind -> (seconds, units) measured so far."""
        with self._lock:
            return {k: (self._seconds[k], self._units[k]) for k in self._seconds}


def plan_seconds(plan: Iterable[PlannedIndex], rates: Rates) -> float:
    """The time a whole plan takes at ``rates``."""
    return sum(rates.cost(p.work()) for p in plan)
