"""The build queue a user controls (sac.usecases.jobs): places in line, cancelling, moving ahead, a user's build before
the demo's background steps, a cancelled build's index flagged incomplete; the time-left estimate
(sac.usecases.estimates) and how durations read (sac.progress.format_duration).

Most tests drive the board with a scripted workbench whose every batch waits for the test, so "while A runs, B waits"
is a state the test holds; the cancel test runs a real Workbench (real Chroma store) with a tiny deterministic
embedder that waits the same way.
"""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

import numpy as np
import pytest

from sac.config import SacConfig
from sac.errors import IndexIncompleteError
from sac.index.store import SyncReport, list_indexes
from sac.methods import parse_methods
from sac.progress import format_duration
from sac.types import Document
from sac.usecases.estimates import EMBED, FINISH, PRIORS, WRITE, PlannedIndex, Rates, plan_seconds
from sac.usecases.job_board import JobBoard
from sac.usecases.jobs import EMBED_STAGE, FINISH_STAGE, BuildJob, BuildStep
from sac.usecases.workbench import Workbench

WAIT = 30  # seconds any step of a test may wait for a thread


class ScriptedWorkbench:
    """Builds nothing: reports each index's progress in batches, each batch waiting for ``go`` (one release per batch),
    and records the order of the indexes it built. ``seconds`` per batch are added to a fake clock, timed as the real
    store reports: it embeds a batch ahead of what it has written, so its first report follows two batches'
    embedding and its last one only the last write."""

    def __init__(self, records: int = 4, batch: int = 2, seconds: float = 0.0) -> None:
        self.records, self.batch, self.seconds = records, batch, seconds
        self.go = threading.Semaphore(0)
        self.built: list[tuple[str, str]] = []
        self.now = 0.0
        self.free = False  # batches pass without waiting

    def clock(self) -> float:
        return self.now

    def chunks(self, document):
        return [document] * self.records

    def plan_build(self, corpus, documents, methods, *, step=0):
        return [PlannedIndex(step, m.index_name, self.records, to_write=self.records, embed_units=self.records * 500)
                for m in dict.fromkeys(methods)]

    def build(self, corpus, documents, methods, *, progress=None, summarizers=()):
        reports = {}
        for method in methods:
            name = method.index_name
            progress(EMBED_STAGE + name, 0, self.records)
            ends = range(self.batch, self.records + 1, self.batch)
            for j, done in enumerate(ends):
                assert self.free or self.go.acquire(timeout=WAIT), "the test never let the batch go"
                self.now += self.seconds * (2 if j == 0 and len(ends) > 1 else 0 if j == len(ends) - 1 and j else 1)
                progress(EMBED_STAGE + name, done, self.records)
            progress(FINISH_STAGE + name, 0, 1)
            self.built.append((corpus, name))
            progress(FINISH_STAGE + name, 1, 1)
            reports[name] = SyncReport(added=self.records, deleted=0, kept=0, documents_changed=1)
        return reports

    def release(self, batches: int = 1) -> None:
        for _ in range(batches):
            self.go.release()


DOC = Document("a.txt", "text")


def _step(corpus: str, methods: str = "baseline", *, background: bool = False) -> BuildStep:
    return BuildStep(corpus, (DOC,), tuple(parse_methods(methods)), background=background)


def _until(condition, timeout: float = WAIT) -> None:
    done = threading.Event()
    deadline = threading.Timer(timeout, done.set)
    deadline.start()
    try:
        while not condition():
            assert not done.wait(0.01), "the condition never held"
    finally:
        deadline.cancel()


def test_waiting_jobs_know_their_place_in_line_and_when_they_start():
    wb = ScriptedWorkbench()
    jobs = JobBoard()
    first = jobs.start(BuildJob(wb, "First", [_step("one")], owner="ann"))
    second = jobs.start(BuildJob(wb, "Second", [_step("two")], owner="bob"))
    third = jobs.start(BuildJob(wb, "Third", [_step("three")], owner="ann"))
    _until(lambda: first.status().state == "running" and third.status().left_s is not None)
    assert [j.status().position for j in (first, second, third)] == [0, 1, 2]
    assert jobs.active() == [first, second, third] and jobs.queued() == [second, third]
    assert second.status().overall.startswith("Second: queued, next in line behind First · starts in about ")
    assert third.status().overall.startswith("Third: queued, 2nd in line behind Second · starts in about ")
    assert third.status().starts_in_s > second.status().starts_in_s > 0
    assert [name for name, _ in jobs.pending("two")] == ["baseline"] and jobs.building("two")
    wb.free = True
    wb.release(2)
    assert jobs.wait_idle(WAIT)
    assert wb.built == [("one", "baseline"), ("two", "baseline"), ("three", "baseline")]
    assert [j.status().position for j in (first, second, third)] == [-1, -1, -1]
    assert not jobs.building("two") and jobs.pending("two") == []


def test_a_queued_job_cancelled_never_starts_and_leaves_the_line():
    wb = ScriptedWorkbench()
    jobs = JobBoard()
    first = jobs.start(BuildJob(wb, "First", [_step("one")]))
    second = jobs.start(BuildJob(wb, "Second", [_step("two")]))
    third = jobs.start(BuildJob(wb, "Third", [_step("three")]))
    _until(lambda: first.status().state == "running")
    assert jobs.cancel(second.job_id)
    assert second.wait(WAIT)
    assert second.status().state == "cancelled" and second.status().position == -1
    assert second.status().messages[-1] == ("warning", "Second: cancelled before it started; nothing was built.")
    assert jobs.queued() == [third] and third.status().position == 1
    wb.free = True
    wb.release(2)
    assert jobs.wait_idle(WAIT)
    assert ("two", "baseline") not in wb.built and third.status().state == "done"
    assert not jobs.cancel(second.job_id)  # ended already


def test_a_users_build_goes_ahead_of_the_demos_background_steps():
    """The demo builds Compare's methods first; its LLM indexes are background steps: an upload started meanwhile
    waits for the first part only, and the demo pauses and resumes around it."""
    wb = ScriptedWorkbench()
    jobs = JobBoard()
    demo = jobs.start(BuildJob(wb, "Demo", [_step("demo", "baseline,sac-generic"),
                                            _step("demo", "sac-generic-llm", background=True)], owner="ann"))
    _until(lambda: demo.status().state == "running")
    upload = jobs.start(BuildJob(wb, "Building mine", [_step("mine")], owner="bob"))
    assert upload.status().position == 1  # the demo's first step runs to its end
    wb.release(4)  # the demo's baseline and sac-generic
    _until(lambda: upload.status().state == "running")
    demo_status = demo.status()
    assert demo_status.state == "queued" and demo_status.paused and demo_status.position == 1
    assert demo_status.overall.startswith("Demo: paused at 8 / 12 chunks so that Building mine goes first; next in line")
    assert [name for name, _ in jobs.pending("demo")] == ["sac-generic-llm"]
    wb.release(2)
    assert upload.wait(WAIT)
    wb.release(2)
    assert demo.wait(WAIT) and demo.status().state == "done"
    assert wb.built == [("demo", "baseline"), ("demo", "sac-generic"), ("mine", "baseline"), ("demo", "sac-generic-llm")]


def test_moving_a_build_ahead_passes_the_users_own_builds_at_their_next_safe_point_never_another_users():
    wb = ScriptedWorkbench()
    jobs = JobBoard()
    long = jobs.start(BuildJob(wb, "Long", [_step("long", "baseline,sac-generic,sac-expert")], owner="ann"))
    _until(lambda: long.status().state == "running")
    theirs = jobs.start(BuildJob(wb, "Theirs", [_step("theirs")], owner="bob"))
    mine = jobs.start(BuildJob(wb, "Mine", [_step("mine")], owner="ann"))
    assert jobs.active() == [long, theirs, mine]
    assert not jobs.move_ahead(mine.job_id)  # Bob's build is ahead: Ann's cannot pass it
    assert jobs.active() == [long, theirs, mine]
    assert jobs.move_ahead(theirs.job_id) is False  # Ann's running build is not Bob's to pass
    assert jobs.cancel(theirs.job_id) and theirs.wait(WAIT)
    assert jobs.move_ahead(mine.job_id)  # now only Ann's own build is ahead: it pauses after its current index
    assert jobs.active() == [mine, long] and mine.status().position == 0
    wb.release(2)  # Long's baseline completes: its next safe point
    _until(lambda: mine.status().state == "running")
    assert long.status().paused
    wb.release(2)
    assert mine.wait(WAIT)
    wb.release(4)
    assert long.wait(WAIT) and long.status().state == "done"
    assert wb.built == [("long", "baseline"), ("mine", "baseline"), ("long", "sac-generic"), ("long", "sac-expert")]


class GatedFakeEmbedder:
    """A tiny deterministic embedder (a text's sha256 as 8 numbers) whose calls wait while ``gate`` is closed."""

    name = "fake-8"
    dim = 8

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()
        self.calls = 0

    def embed_documents(self, texts):
        self.calls += 1
        assert self.gate.wait(WAIT), "the test never opened the gate"
        rows = np.array([np.frombuffer(hashlib.sha256(t.encode()).digest()[:8], dtype=np.uint8) for t in texts],
                        dtype=np.float32).reshape(len(texts), 8) + 1.0
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


def _documents(n: int = 3) -> list[Document]:
    body = "The Receiving Party shall keep the Confidential Information secret. " * 40
    return [Document(f"nda-{i}.txt", f"Mutual NDA number {i} between Acme {i} and Beta {i}.\n\n{body}") for i in range(n)]


def test_a_running_build_cancelled_stops_at_its_next_safe_point_with_its_index_flagged_incomplete(tmp_path: Path):
    embedder = GatedFakeEmbedder()
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=embedder)
    docs = _documents()
    jobs = JobBoard()
    embedder.gate.clear()
    job = jobs.start(BuildJob(wb, "Mine", [BuildStep("mine", tuple(docs), tuple(parse_methods("baseline,sac-generic")))],
                              owner="ann"))
    _until(lambda: embedder.calls >= 1)  # embedding the baseline's first batch
    assert job.status().state == "running"
    assert jobs.cancel(job.job_id)
    embedder.gate.set()
    assert job.wait(WAIT)
    status = job.status()
    assert status.state == "cancelled" and status.fraction == 1.0 and status.overall.startswith("Mine: cancelled in ")
    states = {i.method: (i.complete, i.chunks) for i in list_indexes(wb.client) if i.corpus == "mine"}
    assert set(states) == {"baseline"} and states["baseline"][0] is False  # flagged, never silently partial
    [(kind, text)] = [m for m in status.messages if m[0] == "warning"]
    assert text.startswith("Mine: cancelled after ")
    assert f"Left incomplete, so not searched: baseline of mine ({states['baseline'][1]:,} chunks so far)" in text
    assert "Not built: sac-generic of mine." in text
    with pytest.raises(IndexIncompleteError):
        wb.search("mine", parse_methods("baseline"), ["confidential information"], 2)
    # Finishing it continues where it stopped: complete, searchable.
    again = jobs.start(BuildJob(wb, "Finishing mine", [BuildStep("mine", tuple(docs), tuple(parse_methods("baseline")))]))
    assert again.wait(WAIT) and again.status().state == "done"
    assert wb.search("mine", parse_methods("baseline"), ["confidential information"], 2)["baseline"][0]


def test_the_estimate_is_the_planned_work_at_measured_rates_and_follows_a_slow_machine():
    """Priors three times too fast: after the first index the estimate is the true time left within 25 %."""
    wb = ScriptedWorkbench(records=512, batch=64, seconds=6.0)  # 8 batches of 6 s per index on this "machine"
    wb.free = True
    rates = Rates({"prepare": 1e-9, WRITE: 2.0e-3, EMBED: 2.0e-5, FINISH: 1e-9})
    first_batch = 64 * 2.0e-3 + 64 * 500 * 2.0e-5  # the prior's cost of a batch: 0.77 s, against 6 s measured
    assert first_batch < 1.0
    seen: list[tuple[float, float | None]] = []
    job = BuildJob(wb, "Three", [_step("three", "baseline,sac-generic,sac-expert")], clock=wb.clock, rates=rates)

    original = wb.build

    def build(*args, progress=None, **kwargs):
        def spy(stage, done, total):
            progress(stage, done, total)
            seen.append((wb.now, job.left_s()))
        return original(*args, progress=spy, **kwargs)

    wb.build = build
    assert job.start().wait(WAIT)
    total = wb.now  # 3 indexes x 8 batches x 6 s = 144 s
    assert total == pytest.approx(144.0)
    first_estimate = next(left for now, left in seen if left is not None)
    assert first_estimate < 0.5 * total  # the priors alone were far off
    after_first_index = [(now, left) for now, left in seen if 48.0 <= now < total and left is not None]
    assert len(after_first_index) >= 16
    for now, left in after_first_index:
        assert abs(left - (total - now)) <= 0.25 * (total - now), (now, left)


def test_loading_the_model_is_no_work_the_rates_learn_from():
    """The model loads once, before the first step that embeds: its seconds are booked to no kind of work, so the
    first batch's rate is the embedding's alone."""

    class Loading(ScriptedWorkbench):
        loads = 0

        @property
        def embedder(self):
            self.loads += 1
            self.now += 30.0  # a slow model load
            return object()

    wb = Loading(records=512, batch=64, seconds=6.0)
    wb.free = True
    rates = Rates()
    job = BuildJob(wb, "Two", [_step("two", "baseline,sac-generic")], clock=wb.clock, rates=rates)
    assert job.start().wait(WAIT) and job.status().state == "done"
    assert wb.loads == 1 and wb.now == pytest.approx(30.0 + 2 * 8 * 6.0)
    booked = sum(seconds for seconds, _ in rates.measured().values())
    assert booked == pytest.approx(2 * 8 * 6.0)  # every batch's seconds, none of the load's


def test_rates_start_at_the_prior_and_follow_what_is_measured_even_for_kinds_not_measured_yet():
    rates = Rates({WRITE: 1.0e-3, EMBED: 1.0e-5}, prior_seconds=10.0)
    assert rates.per_unit(EMBED) == pytest.approx(1.0e-5)
    rates.record(WRITE, 10_000, 30.0)  # writes 3x slower than the prior: a busy machine
    # The machine runs (30 + 10) / (10 + 10) = 2x slower than the priors; writes: (30 + 10) / (10,000 + 10 / 2e-3)
    assert rates.per_unit(WRITE) == pytest.approx(40 / 15_000)
    assert rates.per_unit(EMBED) == pytest.approx(2.0e-5)  # embedding has not been timed, but the machine is busy
    plan = [PlannedIndex(0, "baseline", 100, to_write=100, embed_units=50_000)]
    assert plan_seconds(plan, rates) == pytest.approx(100 * rates.per_unit(WRITE) + 50_000 * rates.per_unit(EMBED)
                                                      + 100 * rates.per_unit("prepare") + 100 * rates.per_unit(FINISH))
    assert set(PRIORS) >= {WRITE, EMBED, FINISH}


@pytest.mark.parametrize(("seconds", "text"), [
    (0.4, "0 s"), (0.5, "1 s"), (42.0, "42 s"), (59.4, "59 s"), (59.6, "1 min 00 s"), (60.0, "1 min 00 s"),
    (119.5, "2 min 00 s"), (125.2, "2 min 05 s"), (1739.6, "29 min 00 s"), (3599.4, "59 min 59 s"),
    (3599.7, "1 h 00 min"), (3725.0, "1 h 02 min"), (7199.0, "2 h 00 min"), (-3.0, "0 s"),
])
def test_a_duration_reads_with_its_seconds_carried_never_60(seconds, text):
    assert format_duration(seconds) == text


class TurnstileEmbedder(GatedFakeEmbedder):
    """The tiny embedder, each call waiting for a permit the test hands out (``allow``), or free once ``free`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.permits = threading.Semaphore(0)
        self.free = threading.Event()

    def allow(self, calls: int = 1) -> None:
        for _ in range(calls):
            self.permits.release()

    def embed_documents(self, texts):
        if len(texts) > 1:  # a build's batch (a question is one text: it never waits)
            self.calls += 1
            while not self.free.is_set():
                if self.permits.acquire(timeout=0.05):
                    break
        return GatedFakeEmbedder.embed_documents(self, texts)


def _sidebar_captions(at) -> list[str]:
    return [c.value for c in at.sidebar.caption] + [p.proto.text for p in at.sidebar.get("progress")]


@pytest.fixture
def demo_loading(monkeypatch):
    """Home's **Load the demo corpus** clicked (ContractNLI, no LLM indexes), every text embedded through a turnstile
    the test opens batch by batch: (the home page, the embedder, the job board). Afterwards the turnstile is opened
    and the board left idle."""
    import os

    from streamlit.testing.v1 import AppTest

    from sac.usecases.job_board import board
    from tests.conftest import APP
    from webapp import settings

    embedder = TurnstileEmbedder()
    monkeypatch.setattr(settings, "make_embedder", lambda cfg: embedder)
    monkeypatch.setattr("sac.usecases.workbench.benchmark_seed", lambda folder, configured: None)  # every text embedded
    settings._load_embedder.clear()
    jobs = board(os.environ["SAC_WORKSPACE"])
    try:
        home = AppTest.from_file(APP, default_timeout=60).run()
        home.radio(key="home_demo_datasets").set_value("contractnli")
        home.checkbox(key="home_demo_llm").set_value(False)
        home.button(key="home_load_demo").click().run()
        yield home, embedder, jobs
    finally:
        embedder.free.set()
        jobs.wait_idle(WAIT)
        settings._load_embedder.clear()


@pytest.mark.slow
def test_the_sidebar_shows_my_builds_in_line_and_i_move_my_upload_ahead_and_cancel_the_demo(demo_loading):
    """Home's demo load, then an upload on Corpus, in one browser session: the upload waits next in line; moved ahead,
    it takes over when the demo completes its current index (the demo pauses there); the demo, cancelled while
    paused, ends with nothing part-way and says what it did not build."""
    at, embedder, jobs = demo_loading
    [demo] = jobs.active()
    _until(lambda: embedder.calls >= 1)  # the demo's baseline waits to be embedded

    at.switch_page("pages/1_Corpus.py").run()
    at.multiselect(key="corpus_methods").set_value(["baseline"]).run()
    at.text_input(key="corpus_new_name").input("mine").run()
    at.file_uploader(key="corpus_files_0").set_value([("mine.txt", _documents(1)[0].text.encode(), "text/plain")]).run()
    at.button(key="corpus_build").click().run()
    assert not at.exception, [e.value for e in at.exception]
    [_, upload] = jobs.active()
    _until(lambda: upload.status().starts_in_s is not None)
    at.run()
    captions = _sidebar_captions(at)
    assert any(c.startswith("Building mine: queued, next in line behind Demo · starts in about ") for c in captions), captions
    assert any(c.startswith("Demo: ") and " left" in c for c in captions), captions  # the bar, with its time left

    at.button(key=f"sac_job_ahead_{upload.job_id}").click().run()
    assert jobs.active() == [upload, demo] and demo.status().state == "running"
    embedder.allow(1)  # the demo's baseline: a safe point, where it pauses
    _until(lambda: upload.status().state == "running")
    at.run()
    assert demo.status().paused
    assert any(c.startswith("Demo: paused at ") and "so that Building mine goes first" in c
               for c in _sidebar_captions(at)), _sidebar_captions(at)

    at.button(key=f"sac_job_cancel_{demo.job_id}").click().run()
    assert demo.wait(WAIT) and demo.status().state == "cancelled"
    embedder.free.set()
    assert upload.wait(WAIT) and upload.status().state == "done"
    at.run()
    [(_, said)] = [m for m in demo.status().messages if m[0] == "warning"]
    assert "No index was left part-way." in said
    assert "Not built: sac-generic, sac-expert of demo-contractnli." in said
    built = {(i.corpus, i.method): i.complete for i in list_indexes(upload.workbench.client)}
    assert built == {("demo-contractnli", "baseline"): True, ("mine", "baseline"): True}
    assert not [c for c in _sidebar_captions(at) if "queued" in c or "paused" in c]


@pytest.mark.slow
def test_compare_during_the_demo_build_names_what_it_waits_for_and_its_methods_follow_the_indexes(demo_loading):
    """Compare opened while the demo builds searches the indexes that are ready, names the others with when they
    should be ready, and takes each one up as it is completed, until the user chooses the methods."""
    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP

    _, embedder, jobs = demo_loading
    [demo] = jobs.active()

    compare = AppTest.from_file(APP, default_timeout=60).switch_page("pages/3_Compare.py").run()
    assert any("No corpus is indexed" in w.value for w in compare.warning)
    assert any(i.value.startswith("Still being built for demo-contractnli: baseline (") for i in compare.info)

    embedder.allow(1)  # the baseline
    _until(lambda: [n for n, _ in jobs.pending("demo-contractnli")] == ["sac-generic", "sac-expert"])
    compare.run()
    assert compare.multiselect(key="cmp_methods").value == ["baseline"]
    [notice] = [i.value for i in compare.info if i.value.startswith("Still being built")]
    assert notice.startswith("Still being built for demo-contractnli: sac-generic (building now, about ")
    assert "; sac-expert (later in Demo, about " in notice and "baseline" not in notice
    assert [h.value for h in compare.subheader] == ["baseline"]  # it answers with what is ready

    embedder.allow(2)  # sac-generic: its chunks, then its document collection
    _until(lambda: [n for n, _ in jobs.pending("demo-contractnli")] == ["sac-expert"])
    compare.run()  # what the sidebar's panel does in a browser when it sees the index completed
    assert compare.multiselect(key="cmp_methods").value == ["baseline", "sac-generic"]

    compare.multiselect(key="cmp_methods").set_value(["sac-generic"]).run()  # the user's own choice
    embedder.free.set()
    assert demo.wait(WAIT)
    compare.run()
    assert compare.multiselect(key="cmp_methods").value == ["sac-generic"]
    assert not [i for i in compare.info if i.value.startswith("Still being built")]
