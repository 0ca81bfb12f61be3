"""Contracts named by their parties: the name from the text's facts, the file title beside it, unique in a list, the
file title where the text names no party, computed once per document version, and shown in Compare's pin list."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.methods import RECOMMENDED
from sac.summaries.display import DisplayName, display_name, party_label, unique_names
from sac.summaries.parties import Party
from sac.types import Document
from sac.usecases import names as names_case
from sac.usecases.names import display_names
from tests import survey_corpus

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")


def test_a_contract_is_named_by_its_parties_type_and_year_with_its_file_title_beside():
    named = display_names(survey_corpus.documents())
    assert named["accuray.txt"] == DisplayName("Accuray / Siemens · Distributor Agreement · 2010", "accuray")
    assert named["flotek.txt"].name == "Florida Chemical / Flotek Chemistry · Supply Agreement · 2019"
    assert named["venture.txt"].name.startswith("Tate & Lyle / Igene Biotechnology · Joint Venture Agreement · 2003")
    assert named["accuray.txt"].label == "Accuray / Siemens · Distributor Agreement · 2010 — accuray"


def test_a_demo_contract_is_named_as_its_first_page_names_its_parties():
    path = next((ROOT / "data" / "demo" / "corpus" / "cuad").glob("ALCOSTORES*"))
    named = display_name(Document(f"cuad/{path.name}", path.read_text("utf-8")))
    assert named.name == "General Electric Capital / Duckwall-Alco Stores · Agency Agreement · 2005"
    assert named.file_title == path.stem


@pytest.mark.parametrize(("party", "label"), [
    (Party("Duckwall-Alco Stores, Inc."), "Duckwall-Alco Stores"),
    (Party("Holiday RV Superstores, Inc. (Recreation USA)"), "Holiday RV Superstores"),
    (Party("Town of Vinton, Virginia"), "Town of Vinton"),
    (Party("Siemens AG"), "Siemens"),
    (Party("Information System Associates Technologies, Inc.", ("ISA",)), "ISA"),  # long: the short name it defines
    (Party("Wilmington Savings Fund Society of Delaware, FSB", ("Second-Lien Notes",)), "Wilmington Savings Fund"),
])
def test_a_party_shows_without_its_legal_form_and_a_long_one_by_its_short_name(party, label):
    assert party_label(party) == label


def test_a_text_that_names_no_party_keeps_its_file_title():
    doc = Document("notes/Board%20minutes%202021.txt", "Minutes of the meeting. Nothing was decided and nobody signed.")
    assert display_name(doc) == DisplayName("Board minutes 2021", "Board minutes 2021")
    assert display_name(doc).label == "Board minutes 2021"


def test_names_two_documents_share_get_their_file_titles_and_then_their_ids():
    text = survey_corpus.documents()[0].text
    named = display_names([Document("a/first.txt", text), Document("a/second.txt", text), Document("b/first.txt", text)])
    assert named["a/second.txt"].name == "Accuray / Siemens · Distributor Agreement · 2010 (second)"
    assert named["a/first.txt"].name == "Accuray / Siemens · Distributor Agreement · 2010 (first) [a/first.txt]"
    assert len({n.name for n in named.values()}) == 3
    same_file = unique_names({"x/a.txt": DisplayName("a", "a"), "y/a.txt": DisplayName("a", "a")})
    assert [n.name for n in same_file.values()] == ["a [x/a.txt]", "a [y/a.txt]"]


def test_a_name_is_read_once_per_document_version(monkeypatch):
    calls = []
    monkeypatch.setattr(names_case, "display_name", lambda d: calls.append(d.doc_id) or display_name(d))
    monkeypatch.setattr(names_case, "_cache", type(names_case._cache)())
    docs = survey_corpus.documents()
    first = display_names(docs)
    assert display_names(docs) == first and len(calls) == 3
    changed = Document(docs[0].doc_id, docs[0].text.replace("2010", "2011"))
    assert display_names([changed])[changed.doc_id].name.endswith("· 2011") and len(calls) == 4


@pytest.fixture(scope="module")
def built(tmp_path_factory, memo) -> Path:
    workspace = tmp_path_factory.mktemp("names") / "workspace"
    survey_corpus.build(workspace, memo)
    return workspace


def test_the_pin_list_and_the_hits_on_compare_name_contracts_by_their_parties(built, app_memo, monkeypatch, tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(built, workspace)
    monkeypatch.setenv("SAC_WORKSPACE", str(workspace))
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/3_Compare.py").run()
    at.selectbox(key="cmp_corpus").set_value(survey_corpus.CORPUS).run()
    at.radio(key="cmp_source").set_value("Your own question").run()
    at.text_input(key="cmp_query_text").input("Which law governs the agreement?").run()
    assert not at.exception, [e.value for e in at.exception]
    pins = at.selectbox(key="cmp_pin").options
    assert "Accuray / Siemens · Distributor Agreement · 2010 — accuray" in pins  # typing "Siemens" finds it
    cards = [m.value for m in at.markdown if 'class="sac-hit' in m.value]
    assert cards and any("Florida Chemical / Flotek Chemistry · Supply Agreement · 2019 — flotek" in c for c in cards)
    # The question names Accuray's contract by its party: hits outside it are flagged, each named by its parties.
    at.multiselect(key="cmp_methods").set_value(["baseline", RECOMMENDED]).run()
    at.text_input(key="cmp_query_text").input("Which law governs the agreement with Siemens?").run()
    flagged = [m.value for m in at.markdown if "sac-hit-wrong" in m.value]  # a wrong-document flag names the contract
    assert flagged and all("Accuray / Siemens" not in c and " · 20" in c.split("score")[0] for c in flagged)
