"""Summarizing a corpus: several strategies, threads, estimates, interruption."""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sac.audit import ids_detail
from sac.errors import ConfigError, SummarizerError
from sac.protocols import Summarizer
from sac.summaries.llm import OpenAISummarizer, _FatalSummarizerError, estimate_cost_usd
from sac.summaries.store import SummaryStore
from sac.types import Document, Summary
from sac.wording import counted

# --------------------------------------------------------------------------------------------------
# Summarizing a corpus
# --------------------------------------------------------------------------------------------------


def summarize_corpus(
    documents: Iterable[Document],
    summarizer: Summarizer,
    store: SummaryStore,
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, str], None] | None = None,
    stop: threading.Event | None = None,
    on_summary: Callable[[Summary], None] | None = None,
) -> dict[str, Summary]:
    """Current summaries by ``doc_id``, making the missing ones; each is stored as soon as it is made.

    Cached summaries are not recomputed, so a rerun continues where an interrupted or failed run
    ended. ``progress(done, total, doc_id)`` is called from the calling thread; ``on_summary(new_summary)``
    from the thread that made the summary, just before it is stored, so a log it writes lists every stored
    summary even when Ctrl-C ends the run (it may also list one made but never stored). When ``stop`` is
    set, no new document is started, the ones under way are finished and the summaries made so far are
    returned (the others are absent). On Ctrl-C (``KeyboardInterrupt``) no new document is started either
    and the exception propagates at once; every summary stored before it is kept, and those under way are
    stored as they finish, for as long as the process lives (a CLI run exits at once, losing them). If
    documents fail, the others are finished first, then a ``SummarizerError`` names the failed ones; a
    rejected key or an unreachable server stops the run at once.
    """
    return summarize_strategies(
        documents, [summarizer], store, concurrency=concurrency, progress=progress, stop=stop,
        on_summary=on_summary,
    )[summarizer.strategy]


def _failures_error(
    failures: Mapping[tuple[str, str], BaseException], first: BaseException, docs: Sequence[Document],
    summarizers: Sequence[Summarizer], not_started: int,
) -> SummarizerError:
    """One message for every summary that failed: which documents, the first error, and that a rerun continues."""
    total = len(docs) * len(summarizers)
    labels = [f"{d.doc_id!r}" if len(summarizers) == 1 else f"{d.doc_id!r} ({s.strategy})"
              for d in docs for s in summarizers if (s.strategy, d.doc_id) in failures]
    listed = ", ".join(labels[:10]) + (f" and {len(labels) - 10} more" if len(labels) > 10 else "")
    if len(summarizers) == 1:
        message = (
            f"{len(labels)} of {total} documents could not be summarized with {summarizers[0].name}: {listed}. "
            f"First error: {first}"
        )
        unit = "documents"
    else:
        names = ", ".join(s.name for s in summarizers)
        message = f"{len(labels)} of {total} summaries ({names}) could not be made: {listed}. First error: {first}"
        unit = "summaries"
    if not_started:
        message += f" ({not_started} {unit} were not started)"
    return SummarizerError(message + ". Finished summaries are saved; run again to continue.")


def _audit_llm(store: SummaryStore, summarizers: Sequence[Summarizer], jobs: Sequence[tuple[str, Summarizer]]) -> None:
    """Record, before they go out, which documents a language model is about to read and on which server."""
    if store.audit is None:
        return
    for summarizer in summarizers:
        ids = list(dict.fromkeys(doc_id for doc_id, s in jobs if s is summarizer))
        if ids and summarizer.model != "builtin":
            server = getattr(summarizer, "base_url", None) or "unknown server"
            store.audit.record("llm", f"{len(ids)} documents to {server}", server=server, model=summarizer.model,
                               strategy=summarizer.strategy, documents=ids_detail(ids))


def summarize_strategies(
    documents: Iterable[Document],
    summarizers: Sequence[Summarizer],
    store: SummaryStore,
    *,
    concurrency: int = 4,
    progress: Callable[[int, int, str], None] | None = None,
    stop: threading.Event | None = None,
    on_summary: Callable[[Summary], None] | None = None,
) -> dict[str, dict[str, Summary]]:
    """``summarize_corpus`` for several summarizers at once: current summaries by strategy, then ``doc_id``.

    Requests go out document by document (every summarizer for one document, then the next
    document): a server that reuses the previous request's prompt prefix then reads each document
    once. With ``concurrency`` 1 they go out one at a time in that order, which suits a local server
    that answers one request at a time.
    Long because the job queue, the bookkeeping of what finished and the stop conditions share state; the
    threads (``_run_threads``) and the failure message (``_failures_error``) live apart.
    """
    if concurrency < 1:
        raise ConfigError(f"Expected concurrency >= 1, got {concurrency}")
    strategies = [s.strategy for s in summarizers]
    if not summarizers or len(set(strategies)) != len(strategies):
        raise ConfigError(f"Expected one summarizer per strategy, got strategies {strategies}")
    unique: dict[str, Document] = {}
    for document in documents:
        unique.setdefault(document.doc_id, document)
    docs = list(unique.values())
    total = len(docs) * len(summarizers)
    jobs: deque[tuple[Document, Summarizer]] = deque(
        (d, s) for d in docs for s in summarizers if store.get_cached(d, s) is None
    )
    missing = len(jobs)
    done = total - missing
    _audit_llm(store, summarizers, [(d.doc_id, s) for d, s in jobs])
    failures: dict[tuple[str, str], BaseException] = {}
    fatal: list[BaseException] = []
    if progress:
        progress(done, total, "")

    def record(document: Document, summarizer: Summarizer, summary: Summary | None, err: BaseException | None) -> None:
        nonlocal done
        if err is not None:
            failures[(summarizer.strategy, document.doc_id)] = err
            if isinstance(err, _FatalSummarizerError):
                fatal.append(err)
            return
        done += 1
        if progress:
            progress(done, total, document.doc_id)

    def stopped() -> bool:
        return bool(fatal) or (stop is not None and stop.is_set())

    builtin_only = all(s.model == "builtin" for s in summarizers)
    if jobs and (concurrency == 1 or builtin_only):
        # The builtin is fast and CPU-bound: threads would not help. One request at a time keeps the order.
        while jobs and not stopped():
            document, summarizer = jobs.popleft()
            try:
                summary = _make(document, summarizer, store, on_summary)
            except Exception as err:  # a failed document must not lose the others
                record(document, summarizer, None, err)
                continue
            record(document, summarizer, summary, None)
    elif jobs:
        _run_threads(jobs, lambda d, s: _make(d, s, store, on_summary), min(concurrency, len(jobs)), record, stopped)

    if failures:
        first = fatal[0] if fatal else next(iter(failures.values()))
        raise _failures_error(failures, first, docs, summarizers, not_started=len(jobs)) from first
    out: dict[str, dict[str, Summary]] = {}
    for summarizer in summarizers:
        current = {d.doc_id: c for d in docs if (c := store.current(d, summarizer.strategy)) is not None}
        out[summarizer.strategy] = current
    return out


@dataclass(frozen=True)
class RunEstimate:
    """What summarizing ``documents`` with some summarizers will do, before any request goes out."""

    documents: int
    strategies: tuple[str, ...]
    to_make: int  # summaries not in the store yet
    stored: int
    tokens: dict[str, int]  # ``OpenAISummarizer.estimate_tokens`` summed over the summaries to make
    model: str | None  # the LLM model, when an LLM makes any of them
    cost_usd: float | None  # at list prices; None for an unknown (local) model or no LLM

    def describe(self) -> str:
        """Two lines for a terminal or a page: the work, then the token and cost estimate (LLM runs only)."""
        line = (f"{counted(self.documents, 'document')}, {'strategy' if len(self.strategies) == 1 else 'strategies'} "
                f"{', '.join(self.strategies)}: {counted(self.to_make, 'summary', 'summaries')} to make, "
                f"{self.stored} already stored")
        if not self.to_make or self.model is None:
            return line
        t = self.tokens
        priced = (f"about ${self.cost_usd:.4f} at {self.model} list prices" if self.cost_usd is not None
                  else f"no price known for {self.model!r} (a local or unlisted model)")
        return (f"{line}\nestimate: {counted(t['requests'], 'request')}, ~{t['input_tokens']:,} input tokens, "
                f"~{t['output_tokens']:,} output tokens (at most {t['max_output_tokens']:,} if every summary takes "
                f"every attempt); {priced}")


def estimate_run(documents: Sequence[Document], summarizers: Sequence[Summarizer], store: SummaryStore) -> RunEstimate:
    """Count the summaries ``summarize_strategies`` would make and estimate their LLM tokens and cost."""
    docs = list({d.doc_id: d for d in documents}.values())
    tokens = {"documents": 0, "requests": 0, "input_tokens": 0, "output_tokens": 0, "max_output_tokens": 0}
    to_make = 0
    model = None
    for summarizer in summarizers:
        todo = [d for d in docs if store.get_cached(d, summarizer) is None]
        to_make += len(todo)
        if isinstance(summarizer, OpenAISummarizer) and todo:
            model = summarizer.model
            for key, value in summarizer.estimate_tokens(todo).items():
                tokens[key] = tokens.get(key, 0) + value
    cost = estimate_cost_usd(tokens, model) if model else None
    return RunEstimate(
        documents=len(docs), strategies=tuple(s.strategy for s in summarizers), to_make=to_make,
        stored=len(docs) * len(summarizers) - to_make, tokens=tokens, model=model, cost_usd=cost,
    )


def _make(document: Document, summarizer: Summarizer, store: SummaryStore,
          on_summary: Callable[[Summary], None] | None) -> Summary:
    """Make one summary, hand it to ``on_summary``, then store it (in that order: see ``summarize_corpus``)."""
    summary = summarizer.summarize(document)
    if on_summary:
        on_summary(summary)
    return store.put(summary)


def _run_threads(
    jobs: deque[tuple[Document, Summarizer]],
    make: Callable[[Document, Summarizer], Summary],
    workers: int,
    record: Callable[[Document, Summarizer, Summary | None, BaseException | None], None],
    stopped: Callable[[], bool],
) -> None:
    """Run ``jobs`` on ``workers`` daemon threads; ``record`` each result in the calling thread.

    A worker stores its summary itself, so a summary is kept even when the calling thread is gone
    (Ctrl-C). The threads are daemons: an interrupted process exits without waiting for requests
    still under way (a server keeps no state between them).
    """
    lock = threading.Lock()
    halt = threading.Event()
    results: queue.SimpleQueue[tuple[Document, Summarizer, Summary | None, BaseException | None]] = (
        queue.SimpleQueue()
    )
    taken = 0

    def take() -> tuple[Document, Summarizer] | None:
        nonlocal taken
        with lock:
            if halt.is_set() or not jobs:
                return None
            taken += 1
            return jobs.popleft()

    def work() -> None:
        while (job := take()) is not None:
            document, summarizer = job
            try:
                summary = make(document, summarizer)
            except Exception as err:
                if isinstance(err, _FatalSummarizerError):
                    halt.set()  # every other request would fail the same way
                results.put((document, summarizer, None, err))
                continue
            results.put((document, summarizer, summary, None))

    threads = [threading.Thread(target=work, name=f"sac-summarize-{i}", daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    received = 0
    try:
        while True:
            if stopped():
                halt.set()
            with lock:
                if received >= taken and (halt.is_set() or not jobs):
                    break
            try:
                item = results.get(timeout=0.1)  # a short wait keeps Ctrl-C responsive
            except queue.Empty:
                continue
            received += 1
            record(*item)
    except BaseException:
        halt.set()
        raise
