"""Compare and the contract a question names: a pin searches inside that contract alone, the contract the question
names for sure flags the hits from any other, an ambiguous question offers its likely contracts to pin ("I meant …"),
and the trace names contracts by their parties. On the survey's three contracts with the real packaged model."""

from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.methods import RECOMMENDED, parse_method
from sac.render.trace import named_target, offered_targets
from sac.retrieval.trace import Candidate, DocumentsRanked, SearchTrace, TargetsResolved
from tests import survey_corpus

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
ACCURAY = "Accuray / Siemens · Distributor Agreement · 2010"
FLOTEK = "Florida Chemical / Flotek Chemistry · Supply Agreement · 2019"
NAMES = {"accuray.txt": ACCURAY, "flotek.txt": FLOTEK}


def _resolved(*candidates: tuple[str, float], confident: bool) -> SearchTrace:
    found = tuple(Candidate(d, p, ()) for d, p in candidates)
    return SearchTrace((TargetsResolved(found, 0.05, tuple(d for d, p in candidates if p >= 0.1), confident,
                                        titled=False, search_inside=1, file_names=False),))


def test_the_named_contract_is_the_one_every_sure_method_agrees_on():
    unsure = _resolved(("a", 0.45), ("b", 0.45), confident=False)
    no_targets = SearchTrace((DocumentsRanked(("a",), (1.0,), 0.5, "q"),))
    sure = _resolved(("a", 0.9), confident=True)
    assert named_target([no_targets, sure, _resolved(("a", 0.7), confident=True), unsure]) == Candidate("a", 0.7, ())
    assert named_target([no_targets, unsure]) is None and named_target([]) is None
    assert named_target([sure, _resolved(("b", 0.8), confident=True)]) is None  # two sure of different contracts


def test_an_ambiguous_question_offers_each_likely_contract_once_most_probable_first_at_most_five():
    assert offered_targets([_resolved(("a", 0.9), confident=True)]) == []
    assert offered_targets([SearchTrace()]) == []
    offered = offered_targets([_resolved(("a", 0.3), ("b", 0.2), ("c", 0.05), confident=False),
                               _resolved(("b", 0.4), confident=False)])
    assert [(c.doc_id, c.probability) for c in offered] == [("b", 0.4), ("a", 0.3)]  # "c" is not likely
    many = _resolved(*((f"d{i}", 0.12) for i in range(7)), confident=False)
    assert len(offered_targets([many])) == 5
    split = offered_targets([_resolved(("a", 0.9), confident=True), _resolved(("b", 0.8), confident=True)])
    assert [c.doc_id for c in split] == ["a", "b"]  # the sure methods disagree: both are offered


@pytest.fixture(scope="module")
def built(tmp_path_factory, memo) -> Path:
    workspace = tmp_path_factory.mktemp("target") / "workspace"
    survey_corpus.build(workspace, memo)
    return workspace


@pytest.fixture
def compare(built, app_memo, monkeypatch, tmp_path):
    """Compare on the three contracts, baseline and recommended, a question of one's own: ask(question) runs it."""
    workspace = tmp_path / "workspace"
    shutil.copytree(built, workspace)
    monkeypatch.setenv("SAC_WORKSPACE", str(workspace))
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/3_Compare.py").run()
    at.selectbox(key="cmp_corpus").set_value(survey_corpus.CORPUS).run()
    # recommended runs on the sac-generic index: options show as the list labels them
    assert f"recommended ({parse_method('recommended').name})" in at.multiselect(key="cmp_methods").options
    at.multiselect(key="cmp_methods").set_value(["baseline", RECOMMENDED]).run()
    at.radio(key="cmp_source").set_value("Your own question").run()

    def ask(question: str) -> AppTest:
        at.text_input(key="cmp_query_text").input(question).run()
        return _ok(at)

    return at, ask


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _text(markup: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def _hit_documents(at: AppTest) -> list[str]:
    """The document each hit card names, in the columns' order."""
    cards = [_text(m.value) for m in at.markdown if 'class="sac-hit' in m.value]
    return [re.search(r"#\d+ · (.+?) · score", c).group(1) for c in cards]  # type: ignore[union-attr]


def _notes(at: AppTest, label: str) -> list[str]:
    return [t for t in (_text(m.value) for m in at.markdown if m.value.startswith('<div class="sac-plain"'))
            if t.startswith(label)]


def _meant(at: AppTest) -> list:
    return [b for b in at.button if b.key and b.key.startswith("cmp_meant_")]


@pytest.mark.slow
def test_a_question_naming_one_contract_names_it_and_flags_hits_from_the_others(compare):
    at, ask = compare
    ask("Which law governs the agreement with Siemens?")  # only Accuray's contract writes "Siemens"
    [named] = _notes(at, "Named:")
    assert named.startswith(f"Named: {ACCURAY} — accuray (") and "% sure)" in named
    assert "Siemens" in named and "no other document writes it" in named
    [caption] = [c.value for c in at.caption if c.value.startswith("Flagged against")]
    assert f"the contract the question names: {ACCURAY} — accuray (" in caption and "% sure)" in caption and " % sure" not in caption
    documents = _hit_documents(at)
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    wrong = [d for d, c in zip(documents, cards) if "sac-hit-wrong" in c]
    assert wrong and all(not d.startswith(ACCURAY) for d in wrong)  # the baseline's hits from the others
    assert all(("sac-hit-wrong" in c) != d.startswith(ACCURAY) for d, c in zip(documents, cards))
    assert not _meant(at)  # sure: nothing to choose
    assert at.session_state["last_comparison"].pinned == ()  # the page's reading, not the user's pin


@pytest.mark.slow
def test_an_ambiguous_question_offers_its_contracts_and_the_one_chosen_is_searched_alone(compare):
    at, ask = compare
    ask("Which law governs the agreement with Flotek or Siemens?")
    assert any(m.value.startswith("**Which contract did you mean?**") for m in at.markdown)
    assert not [c for c in at.caption if c.value.startswith("Flagged against")]
    buttons = {b.key: b.label for b in _meant(at)}
    assert set(buttons) == {"cmp_meant_accuray.txt", "cmp_meant_flotek.txt"}
    for doc_id, label in buttons.items():
        assert re.fullmatch(rf"I meant {re.escape(NAMES[doc_id.removeprefix('cmp_meant_')])} \(\d+ %\)", label)
    [named] = _notes(at, "Named:")
    assert "not sure which contract" in named and ACCURAY in named and FLOTEK in named
    at.button(key="cmp_meant_flotek.txt").click().run()
    _ok(at)
    assert at.selectbox(key="cmp_pin").value == "flotek.txt"
    documents = _hit_documents(at)
    assert documents and all(d == f"{FLOTEK} — flotek" for d in documents)
    assert len(_notes(at, "Pinned:")) == 2 and not _meant(at)
    assert at.session_state["last_comparison"].pinned == ("flotek.txt",)


@pytest.mark.slow
def test_a_pin_restricts_every_methods_hits_to_that_contract(compare):
    at, ask = compare
    ask("Which law governs the agreement?")
    assert len({d for d in _hit_documents(at)}) == 3  # unpinned: all three contracts answer
    pin = at.selectbox(key="cmp_pin")
    assert "searches inside that contract only" in pin.label
    pin.set_value("accuray.txt").run()
    _ok(at)
    documents = _hit_documents(at)
    assert [h.value for h in at.subheader] == ["baseline", f"recommended ({RECOMMENDED})"]
    assert documents and all(d == f"{ACCURAY} — accuray" for d in documents)
    assert [n for n in _notes(at, "Pinned:")] == [f"Pinned: {ACCURAY} — accuray: searched inside it alone"] * 2
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert not any("sac-hit-wrong" in c for c in cards)
