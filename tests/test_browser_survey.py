"""The survey in a real browser: `streamlit run` as a subprocess on a copy of conftest's ``demo_workspace`` (the demo's
ContractNLI NDAs, really built through the home page), driven by Playwright on Debian's Chromium (tests/test_browser.py's
server and browser). A question typed on Survey gives a row per NDA; one row's Reader link opens that NDA with a hit
marked. Screenshots go to test-artifacts/."""

from __future__ import annotations

import shutil
import urllib.parse

import pytest

from tests.test_browser import ARTIFACTS, _open, _settle, browser, page, require_chromium, streamlit_server  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

QUESTION = "Which law governs the agreement?"


@pytest.fixture(scope="module")
def survey_url(tmp_path_factory, request):
    require_chromium()
    workspace = tmp_path_factory.mktemp("browser-survey") / "workspace"
    shutil.copytree(request.getfixturevalue("demo_workspace"), workspace)
    with streamlit_server(workspace, "streamlit-survey-server.log") as url:
        yield url


def test_a_survey_gives_a_row_per_contract_and_a_row_opens_its_contract_in_the_reader(survey_url, page):  # noqa: F811
    _open(page, f"{survey_url}/Survey")
    box = page.get_by_role("textbox", name="Your question")
    box.fill(QUESTION)
    box.press("Enter")
    page.get_by_text("5 contracts of 5", exact=False).wait_for(timeout=120_000)
    _settle(page)
    table = page.locator("[data-testid=stDataFrame]").first
    table.wait_for(timeout=60_000)
    cells = " ".join(table.locator("[role=gridcell]").all_inner_texts())
    assert "AG Projects · Non-Disclosure Agreement" in cells and "Governing" in cells  # names, and the law clause
    assert "survey_question=" in page.url and "governs" in urllib.parse.unquote_plus(page.url)  # a link holds it
    page.screenshot(path=str(ARTIFACTS / "browser-survey.png"), full_page=True)

    page.get_by_role("link", name="in the Reader", exact=False).click()
    page.wait_for_url("**/Reader?**", timeout=60_000)
    page.locator(".sac-reader mark.sac-selected").first.wait_for(timeout=120_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-reader.png"), full_page=True)
    assert "rd_doc=" in page.url and page.locator("h3").first.inner_text().strip() in cells  # a row's contract
    assert page.get_by_text("Hit 1 of", exact=False).count() == 1
    marked = page.locator(".sac-reader mark.sac-selected").first
    marked.scroll_into_view_if_needed()
    assert marked.is_visible() and marked.inner_text().strip()
    page.get_by_role("button", name="Next").click()
    page.get_by_text("Hit 2 of", exact=False).wait_for(timeout=60_000)
