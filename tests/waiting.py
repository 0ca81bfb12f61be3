"""Waiting in tests: poll an observable condition until a deadline, never a bare ``sleep``.

``wait_until(condition, timeout=..., what=...)`` calls ``condition`` every ``interval`` seconds until it returns
something true (which it returns; with ``stable``, true on every poll for that long) and raises AssertionError
naming ``what`` it waited for when ``timeout`` seconds pass first. ``wait_for_clock`` is the same for time that
must pass on purpose: it polls the clock itself until it reads the moment asked for (or ``unless`` turns true),
its last step landing on the moment."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def wait_until(condition: Callable[[], T], *, timeout: float, interval: float = 0.05, what: str = "the condition",
               detail: Callable[[], object] | None = None, stable: float = 0.0) -> T:
    """Poll ``condition()`` until it is true (and, with ``stable``, has stayed true on every poll for that many
    seconds) and return its value; AssertionError naming ``what`` (and ``detail()``, e.g. a log, when given) if
    that has not happened after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    since: float | None = None
    while True:
        value = condition()
        now = time.monotonic()
        if value:
            since = now if since is None else since
            if now - since >= stable:
                return value
        else:
            since = None
        left = deadline - now
        if left <= 0:
            extra = f": {detail()}" if detail is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{extra}")
        time.sleep(min(interval, left))


def wait_for_clock(moment: float, *, clock: Callable[[], float] = time.monotonic, interval: float = 0.05,
                   unless: Callable[[], bool] | None = None) -> bool:
    """Poll ``clock()`` until it reads ``moment`` or later (True), or until ``unless()`` is true (False):
    time that must pass on purpose, as a fact observed on the clock. Each step waits at most ``interval``
    and never past ``moment``, so the wait ends on the moment, not up to ``interval`` after it."""
    while True:
        if unless is not None and unless():
            return False
        left = moment - clock()
        if left <= 0:
            return True
        time.sleep(min(interval, left))
