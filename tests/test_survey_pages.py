"""The Survey and Reader pages, driven with AppTest on three small indexed contracts (tests/survey_corpus.py): the
survey shows one row per contract with a link to read it in place and both downloads; the Reader opens a contract
from such a link with the question's hits marked and steps from one to the next."""

from __future__ import annotations

import shutil
import urllib.parse
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests import survey_corpus

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
QUESTION = "Which law governs the agreement?"


@pytest.fixture
def workspace(survey_workspace, app_memo, monkeypatch, tmp_path) -> Path:
    copy = tmp_path / "workspace"
    shutil.copytree(survey_workspace, copy)
    monkeypatch.setenv("SAC_WORKSPACE", str(copy))
    return copy


def _ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    return at


def _survey() -> AppTest:
    at = _ok(AppTest.from_file(APP, default_timeout=300).switch_page("pages/8_Survey.py").run())
    at.selectbox(key="survey_corpus").set_value(survey_corpus.CORPUS).run()
    at.text_input(key="survey_question").input(QUESTION).run()
    return _ok(at)


def test_the_survey_shows_a_row_per_contract_with_a_reader_link_and_both_downloads(workspace):
    at = _survey()
    frame = at.dataframe[0].value
    assert len(frame) == 3 and list(frame.columns) == ["contract", "file", "score", "spans", "text", "read"]
    assert "Accuray / Siemens · Distributor Agreement · 2010" in set(frame["contract"])
    assert all("Governing Law" in text for text in frame["text"])
    link = frame["read"][list(frame["file"]).index("flotek")]
    params = dict(urllib.parse.parse_qsl(link.split("?", 1)[1]))
    assert link.startswith("Reader?") and params["rd_doc"] == "flotek.txt" and params["rd_q"] == QUESTION
    assert params["rd_method"] == "baseline+hybrid0.5" and params["rd_corpus"] == survey_corpus.CORPUS and "rd_at" in params
    assert [b.label for b in at.get("download_button")] == ["Download CSV", "Download XLSX"]
    at.text_input(key="survey_filter").input("siemens").run()
    assert list(_ok(at).dataframe[0].value["file"]) == ["accuray"]


def test_several_methods_give_a_column_each_and_say_which_options_a_survey_skips(workspace):
    at = _survey()
    at.multiselect(key="survey_methods").set_value(["baseline", "sac-generic+docs1+hybrid0.75+inner+names"]).run()
    frame = _ok(at).dataframe[0].value
    assert "score · baseline" in frame.columns and "score · recommended (sac-generic+docs1+hybrid0.75+inner+names)" in frame.columns
    assert any("+docs1, +names do not apply to a survey" in c.value for c in at.caption)


def test_the_reader_opens_a_contract_at_the_hit_followed_and_steps_with_next(workspace):
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/9_Reader.py")
    at.query_params.update({"rd_corpus": survey_corpus.CORPUS, "rd_doc": "accuray.txt", "rd_q": QUESTION,
                            "rd_method": "sac-generic", "rd_k": "3"})
    _ok(at.run())
    assert at.subheader[0].value == "Accuray / Siemens · Distributor Agreement · 2010"
    shown = [m.value for m in at.markdown if "sac-reader" in m.value]
    assert len(shown) == 1 and shown[0].count("sac-selected") >= 1 and "sac-chunk" in shown[0]
    assert any(m.value.startswith("**Hit 1 of 3**") for m in at.markdown)
    at.button(key="rd_next").click().run()
    assert any(m.value.startswith("**Hit 2 of 3**") for m in _ok(at).markdown) and at.radio(key="rd_pos").value == 1
    at.button(key="rd_next").click().run()
    assert at.radio(key="rd_pos").value == 2 and at.button(key="rd_next").disabled
    at.button(key="rd_prev").click().run()
    assert at.radio(key="rd_pos").value == 1


def test_a_link_to_a_span_outside_the_top_hits_opens_on_that_span(workspace):
    text = next(d.text for d in survey_corpus.documents() if d.doc_id == "venture.txt")
    start = text.index("5. Notices")
    at = AppTest.from_file(APP, default_timeout=300).switch_page("pages/9_Reader.py")
    at.query_params.update({"rd_corpus": survey_corpus.CORPUS, "rd_doc": "venture.txt", "rd_q": QUESTION,
                            "rd_method": "baseline", "rd_k": "1", "rd_at": f"{start}-{start + 40}"})
    _ok(at.run())
    assert any(m.value.startswith("**Hit 2 of 2** · the hit you followed") for m in at.markdown)
    shown = next(m.value for m in at.markdown if "sac-reader" in m.value)
    selected = shown.split('sac-selected" style="')[1].split(">", 1)[1].split("</mark>")[0]
    assert selected.startswith("5. Notices")
