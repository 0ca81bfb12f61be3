"""A user's day with the build queue, in a real browser (`streamlit run` + Playwright on Debian's Chromium).

Load the whole demo, upload a contract while the demo builds, see the upload's place in line, move it ahead, cancel
the demo, ask the upload a question on Compare, open the hit in the Reader, and open the shared URLs in a second
browser session to get the same pages back.

The server runs with chunks of 400 characters (``SAC_CHUNK_SIZE``), so no text of the demo is in its shipped vectors
and the demo embeds for minutes: "while the demo builds" is a state that lasts, not a race with a build that copies
its vectors in seconds. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _open, _settle, require_chromium, streamlit_server

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CONTRACT = """SUPPLY AGREEMENT

This Supply Agreement is made on 3 March 2025 between Northwind Traders Ltd ("Supplier") and Contoso Foods Inc
("Buyer").

1. Supply. The Supplier shall deliver roasted coffee beans to the Buyer's warehouses every month.

2. Price. The Buyer shall pay 12 dollars per kilogram within thirty days of each delivery.

3. Term. This Agreement runs for three years and renews for one year unless either party gives notice.

4. Governing law. This Agreement is governed by the laws of the State of Oregon, and the courts of Portland, Oregon
have exclusive jurisdiction over any dispute arising from it.

5. Termination. Either party may terminate this Agreement for convenience on ninety days' written notice.
"""
QUESTION = "Which law governs the supply agreement between Northwind and Contoso?"


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    require_chromium()
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


def _new_page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.dialogs = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    return context, page


def _row(sidebar, label: str):
    """The sidebar's row of the build whose line starts with ``label``."""
    return sidebar.locator("[class*='st-key-sac_job_row_']").filter(has_text=f"{label}:")


def test_upload_goes_ahead_of_the_demo_then_is_asked_read_and_shared(tmp_path, browser):
    workspace = tmp_path / "workspace"
    with streamlit_server(workspace, "streamlit-queue.log", env={"SAC_CHUNK_SIZE": "400"}) as url:
        context, page = _new_page(browser)
        try:
            _open(page, url)
            page.get_by_text("ContractNLI and CUAD", exact=False).click()
            _settle(page)
            page.get_by_role("button", name="Load the demo corpus").click()
            sidebar = page.locator("[data-testid=stSidebar]")
            _row(sidebar, "Demo").first.wait_for(timeout=120_000)

            # Upload while the demo builds.
            _open(page, f"{url}/Corpus")
            name_box = page.get_by_role("textbox", name="New corpus name")
            name_box.fill("mine")
            name_box.press("Enter")
            _settle(page)
            page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(files=[
                {"name": "northwind-supply.txt", "mimeType": "text/plain", "buffer": CONTRACT.encode("utf-8")}])
            page.locator("[data-testid=stFileUploader]").get_by_text("KB").first.wait_for(timeout=30_000)
            _settle(page)
            page.get_by_role("button", name="Add and build indexes").click()

            # Its place in line, and when it starts.
            mine = _row(sidebar, "Building mine")
            mine.get_by_text("Building mine: queued, next in line behind Demo", exact=False).wait_for(timeout=120_000)
            assert "starts in about" in mine.inner_text() or "then about" in mine.inner_text()
            page.screenshot(path=str(ARTIFACTS / "browser-queue-waiting.png"), full_page=True)

            # Move it ahead: the demo pauses at its next safe point; then cancel the demo.
            mine.get_by_role("button", name="Move ahead").click()
            _row(sidebar, "Demo").get_by_role("button", name="Cancel").click()
            sidebar.get_by_text("Demo: cancelled after", exact=False).wait_for(timeout=600_000)
            said = sidebar.get_by_text("Demo: cancelled after", exact=False).first.inner_text()
            assert "Left incomplete, so not searched: " in said or "No index was left part-way." in said, said
            sidebar.get_by_text("Building mine: done in", exact=False).wait_for(timeout=600_000)
            assert not sidebar.get_by_text("Demo: ", exact=False).filter(has_text="queued").count()
            page.screenshot(path=str(ARTIFACTS / "browser-queue-done.png"), full_page=True)

            # Ask the upload a question.
            _open(page, f"{url}/Compare?cmp_corpus=mine")
            page.get_by_text("Your own question", exact=True).click()
            _settle(page)
            box = page.get_by_role("textbox", name="Your question")
            box.fill(QUESTION)
            box.press("Enter")
            page.wait_for_selector(".sac-hit", timeout=120_000)
            _settle(page)
            assert page.locator(".sac-hit").first.inner_text().count("Oregon") or any(
                "Oregon" in t for t in page.locator(".sac-hit").all_inner_texts())
            compare_url = page.url
            assert "cmp_query_text=" in compare_url
            hits_here = page.locator(".sac-hit").count()

            # Open the hit in the Reader.
            page.get_by_role("link", name="Read in place").first.click()
            page.get_by_role("heading", name="Reader: a whole contract, the question's hits marked").wait_for(
                timeout=120_000)
            _settle(page)
            reader_url = page.url
            query = urllib.parse.parse_qs(urllib.parse.urlparse(reader_url).query)
            assert query["rd_corpus"] == ["mine"] and query["rd_q"] == [QUESTION]
            reader_text = page.locator("[data-testid=stMain]").inner_text()
            assert "Oregon" in reader_text
            page.screenshot(path=str(ARTIFACTS / "browser-queue-reader.png"), full_page=True)
            assert not page.dialogs
        finally:
            context.close()

        # Share the URLs: a second browser session gets the same pages back.
        context, other = _new_page(browser)
        try:
            _open(other, reader_url)
            assert other.get_by_role("textbox", name="Question").input_value() == QUESTION
            assert "Oregon" in other.locator("[data-testid=stMain]").inner_text()
            _open(other, compare_url)
            other.wait_for_selector(".sac-hit", timeout=120_000)
            assert other.get_by_role("textbox", name="Your question").input_value() == QUESTION
            assert other.locator(".sac-hit").count() == hits_here
        finally:
            context.close()
