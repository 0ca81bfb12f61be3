"""Compare opens on the benchmark's first question, in the file's order, not one picked for how it comes out, and says
so while it shows it: one question can go either way, the figures over every question are in the expander below."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.conftest import APP

DEFAULT_NOTE = "Questions are listed in the benchmark's order and the first is shown."


@pytest.fixture
def demo(demo_workspace, monkeypatch, app_memo):
    """The shared demo workspace (read-only), the app embedding through the session's model."""
    monkeypatch.setenv("SAC_WORKSPACE", str(demo_workspace))


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _notes(at: AppTest) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith(DEFAULT_NOTE)]


@pytest.mark.slow
def test_the_first_question_is_the_default_and_the_page_says_why(demo, demo_datasets):
    questions = demo_datasets["contractnli"].queries
    at = _ok(AppTest.from_file(APP, default_timeout=600).switch_page("pages/3_Compare.py").run())
    at.selectbox(key="cmp_corpus").set_value("demo-contractnli").run()
    _ok(at)
    assert at.radio(key="cmp_source").value == "Benchmark question"
    pick = at.selectbox(key="cmp_query_pick")
    assert pick.value == questions[0].query_id  # the file's first question
    assert pick.options == [q.text for q in questions]  # listed in the file's order
    [note] = _notes(at)
    n = len(questions)
    assert note == (f"{DEFAULT_NOTE} One question can go either way: the figures over every question are in "
                    f"**How the methods do on all {n} questions…** below.")
    assert any(e.label.startswith(f"How the methods do on all {n} questions") for e in at.expander)

    pick.set_value(questions[1].query_id).run()  # another question picked: the note has done its work
    _ok(at)
    assert at.selectbox(key="cmp_query_pick").value == questions[1].query_id
    assert _notes(at) == []
    assert any(c.value.startswith("Ground truth is known for this question") for c in at.caption)

    at.radio(key="cmp_source").set_value("Your own question").run()  # nor for a question of one's own
    _ok(at)
    assert _notes(at) == []
