"""Background builds (sac.usecases.jobs): a build keeps running when its page is left, every page shows its progress,
indexes become searchable one by one, and a failed build says why and keeps what it finished.

The embedder is the real packaged model (conftest's ``memo``) behind a gate: embedding waits until the test
opens the gate, so "while the build runs" is a state the test holds, not a race it hopes to win.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.config import SacConfig
from sac.index.store import list_indexes
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_methods
from sac.usecases.job_board import JobBoard, board
from sac.usecases.jobs import BuildJob, BuildStep
from sac.usecases.workbench import Workbench
from tests.conftest import APP, DEMO, finish_build


class GatedEmbedder:
    """The real model; ``embed_documents`` first waits for the gate (for embedding that is still under way)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.gate = threading.Event()

    def embed_documents(self, texts):
        assert self.gate.wait(120), "the test never opened the gate"
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        return self.embed_documents([text])[0]


@pytest.fixture
def gated(memo, monkeypatch):
    from webapp import settings

    embedder = GatedEmbedder(memo)
    monkeypatch.setattr(settings, "make_embedder", lambda cfg: embedder)
    # The demo's shipped vectors would build it without a wait: here every text goes to the gated model.
    monkeypatch.setattr("sac.usecases.workbench.benchmark_seed", lambda folder, configured: None)
    settings._load_embedder.clear()
    yield embedder
    embedder.gate.set()
    board(os.environ["SAC_WORKSPACE"]).wait_idle(120)  # no build left running after its test
    settings._load_embedder.clear()


@pytest.fixture(scope="module")
def ndas():
    return load_benchmark(DEMO, ["contractnli"])[0]


def _client(workspace: Path):
    from sac.index.client import make_client

    return make_client(SacConfig(workspace=workspace))


def _progress_texts(at) -> list[str]:
    return [p.proto.text for p in at.get("progress")]


@pytest.mark.slow
def test_a_build_outlives_its_page_and_every_page_shows_its_progress(gated, tmp_path):
    workspace = tmp_path / "workspace"  # conftest points SAC_WORKSPACE here
    home = AppTest.from_file(APP, default_timeout=120).run()
    home.radio(key="home_demo_datasets").set_value("contractnli")
    home.checkbox(key="home_demo_llm").set_value(False)
    home.button(key="home_load_demo").click().run()
    assert not home.exception, [e.value for e in home.exception]
    # The click returned while nothing is embedded yet: the page says where the build is, and offers no second one.
    assert any("being built in the background" in i.value for i in home.info)
    assert home.button(key="home_load_demo").disabled
    assert any(t.startswith("Demo: ") for t in _progress_texts(home)), _progress_texts(home)

    # Another page, another browser session: the same build in its sidebar; nothing searchable yet.
    compare = AppTest.from_file(APP, default_timeout=120).switch_page("pages/3_Compare.py").run()
    assert not compare.exception
    assert any(t.startswith("Demo: ") for t in _progress_texts(compare))
    assert any("No corpus is indexed" in w.value for w in compare.warning)
    corpus = AppTest.from_file(APP, default_timeout=120).switch_page("pages/1_Corpus.py").run()
    corpus.selectbox(key="corpus_shown").set_value("demo-contractnli").run()
    # Every index still to come, by name, with the build it waits in.
    assert any(i.value.startswith("Still being built for demo-contractnli: baseline (") and "; sac-generic (" in i.value
               and "; sac-expert (" in i.value and " in Demo" in i.value for i in corpus.info), [i.value for i in corpus.info]
    assert not any(b.key == "corpus_finish" for b in corpus.button)  # no finishing a build that is running
    assert corpus.button(key="corpus_rebuild").disabled

    gated.gate.set()
    finish_build(compare)
    assert not compare.exception and not compare.warning
    assert [h.value for h in compare.subheader] == ["baseline", "sac-generic", "sac-expert"]
    assert sum('class="sac-hit' in m.value for m in compare.markdown) == 24
    assert not _progress_texts(compare)  # the build is over: no bar; that session did not start it: no report
    home.run()
    assert any("Demo: done in" in s.value and "Compare" in s.value for s in home.success)
    assert not home.button(key="home_load_demo").disabled
    states = {i.method: i.complete for i in list_indexes(_client(workspace)) if i.corpus == "demo-contractnli"}
    assert states == {"baseline": True, "sac-generic": True, "sac-expert": True}


@pytest.mark.slow
def test_a_click_in_the_moment_someone_else_starts_a_build_is_not_lost(gated, tmp_path, ndas):
    """A page drawn before another person's build started, then a click on it: the sidebar finds the board
    changed on that run. It used to rerun the page there and then, and the rerun dropped the click without a
    word (the upload was neither added nor built)."""
    corpus = AppTest.from_file(APP, default_timeout=120).switch_page("pages/1_Corpus.py").run()
    corpus.multiselect(key="corpus_methods").set_value(["baseline"]).run()
    corpus.text_input(key="corpus_new_name").input("mine").run()
    corpus.file_uploader(key="corpus_files_0").set_value([("mine.txt", ndas.documents[1].text.encode(), "text/plain")]).run()
    someone = Workbench(SacConfig(workspace=tmp_path / "workspace"), embedder=gated)
    theirs = board(os.environ["SAC_WORKSPACE"]).start(
        BuildJob(someone, "Building theirs", [BuildStep("theirs", ndas.documents[:1], tuple(parse_methods("baseline")))]))
    corpus.button(key="corpus_build").click().run()
    assert not corpus.exception, [e.value for e in corpus.exception]
    assert [j.label for j in board(os.environ["SAC_WORKSPACE"]).queued()] == ["Building mine"]
    assert theirs.status().state == "running"
    gated.gate.set()
    finish_build(corpus)
    assert any("Building mine: done in" in s.value for s in corpus.success), [s.value for s in corpus.success]


@pytest.mark.slow
def test_the_overall_bar_counts_every_index_and_each_completed_index_is_announced(memo, tmp_path, ndas):
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    docs = ndas.documents[:2]
    changes: list[int] = []
    job = BuildJob(wb, "Two NDAs", [BuildStep("two", docs, tuple(parse_methods("baseline,sac-generic")))],
                   on_change=lambda: changes.append(1))
    seen = []
    job.start()
    while not job.wait(0.05):
        seen.append(job.status())
    final = job.status()
    chunks = sum(len(wb.chunks(d)) for d in docs)
    assert final.state == "done" and final.fraction == 1.0
    assert final.overall.startswith("Two NDAs: done in")
    assert [r["method"] for r in final.reports] == ["baseline", "sac-generic"]
    assert [r["chunks embedded"] for r in final.reports] == [chunks, chunks]
    assert any(t == f"two: 2 documents indexed for baseline, sac-generic: {2 * chunks:,} chunks embedded, 0 already indexed."
               for k, t in final.messages if k == "info")
    fractions = [s.fraction for s in seen if s.running]  # (the last look may catch it ended, at 1.0)
    assert fractions == sorted(fractions) and all(f < 1 for f in fractions)
    totals = {s.overall.split(": ", 1)[1].split(" chunks")[0].split(" / ")[1] for s in seen if " / " in s.overall}
    assert totals <= {f"{2 * chunks:,}"}  # planned from the chunk count before the first index says its own
    # a change when each index appears (incomplete) and when it is completed, one for the step, one at the end:
    # pages drop their cached listings and rerun on each
    assert len(changes) == 6 and final.generation == 6

    again = BuildJob(wb, "Again", [BuildStep("two", docs, tuple(parse_methods("baseline,sac-generic")))]).start()
    assert again.wait(60)
    assert [r["already indexed"] for r in again.status().reports] == [chunks, chunks]
    assert again.status().fraction == 1.0


def test_a_failed_build_says_why_and_keeps_the_indexes_it_finished(memo, tmp_path, ndas):
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    docs = ndas.documents[:1]
    # No generic-llm summaries exist in this workspace: that index cannot be built, the baseline before it can.
    job = BuildJob(wb, "Mixed", [BuildStep("one", docs, tuple(parse_methods("baseline"))),
                                 BuildStep("one", docs, tuple(parse_methods("sac-generic-llm")))]).start()
    assert job.wait(60)
    status = job.status()
    assert status.state == "failed" and status.fraction == 1.0
    [(kind, text)] = [m for m in status.messages if m[0] == "error"]
    assert text.startswith("Mixed stopped: No 'generic-llm' summaries for 1 of 1 documents")
    assert "Finish building on Corpus" in text
    states = {i.method: (i.complete, i.chunks) for i in list_indexes(wb.client) if i.corpus == "one"}
    assert states == {"baseline": (True, len(wb.chunks(docs[0])))}


@pytest.mark.slow
def test_what_was_said_when_a_build_started_stays_with_it_to_the_end(memo, tmp_path, ndas):
    """A file of the upload that could not be read is said with the build, from its start to how it ended."""
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    unread = ("warning", "scan.pdf: cannot be read as a PDF, it may be truncated or corrupt")
    job = BuildJob(wb, "Upload", [BuildStep("one", ndas.documents[:1], tuple(parse_methods("baseline")))],
                   notices=[unread])
    assert job.status().messages == (unread,)  # before it runs: what the page shows beside its progress
    assert job.start().wait(60)
    kinds = [kind for kind, _ in job.status().messages]
    assert job.status().messages[0] == unread and kinds == ["warning", "info", "success"]


@pytest.mark.slow
def test_one_build_at_a_time_per_workspace_the_next_queues_behind_it(memo, tmp_path, ndas):
    gated = GatedEmbedder(memo)
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=gated)
    jobs = JobBoard()
    first = jobs.start(BuildJob(wb, "First", [BuildStep("one", ndas.documents[:1], tuple(parse_methods("baseline")))]))
    second = jobs.start(BuildJob(wb, "Second", [BuildStep("two", ndas.documents[1:2], tuple(parse_methods("baseline")))]))
    third = jobs.start(BuildJob(wb, "Third", [BuildStep("one", ndas.documents[:1], tuple(parse_methods("sac-generic")))]))
    assert jobs.running() is first and jobs.queued() == [second, third]
    assert second.status().state == "queued"
    assert second.status().overall.startswith("Second: queued, next in line behind First")
    assert third.status().overall.startswith("Third: queued, 2nd in line behind Second") and third.status().fraction == 0.0
    assert jobs.building("one") and jobs.building("two") and not jobs.building("other")
    assert not jobs.wait_idle(0.5)
    gated.gate.set()
    assert jobs.wait_idle(120)
    assert [j.status().state for j in (first, second, third)] == ["done", "done", "done"]
    assert first._finished <= second._started and second._finished <= third._started  # one after the other
    built = {(i.corpus, i.method) for i in list_indexes(wb.client) if i.complete}
    assert built == {("one", "baseline"), ("two", "baseline"), ("one", "sac-generic")}
    assert jobs.start(BuildJob(wb, "Fourth", [BuildStep("two", ndas.documents[1:2], tuple(parse_methods("baseline")))])).wait(60)
    assert board(tmp_path / "ws") is board(str(tmp_path / "ws" / ".." / "ws"))  # one board per folder
