"""Which contract a question means, in a real browser (`streamlit run` + Playwright on Debian's Chromium).

A user uploads six look-alike supply agreements (one template, six pairs of parties; only one of them names
Siemens) on Corpus and builds them. On Compare, under `recommended`, a question that names Siemens says which
contract it means and how sure, and every hit comes from that contract; the baseline's hits from other contracts
are flagged. A question that names two of the parties asks "Which contract did you mean?" with a button per
candidate instead of picking one; a click pins that contract and every hit then comes from it. The methods and the
question are in the URL: a second page opened on it gets the same comparison. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import urllib.parse

import pytest

from sac.methods import RECOMMENDED, method_label
from tests.survey_corpus import contract
from tests.test_browser import ARTIFACTS, _open, _settle, browser, page, require_chromium, streamlit_server  # noqa: F401

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CORPUS = "six-suppliers"
# (file, opening clause, governing law): the same template, six pairs of parties.
PARTIES = [
    ("northwind.txt", "Northwind Traders Ltd (\"Northwind\") and Contoso Foods Inc (\"Contoso\")", "the State of Oregon"),
    ("fabrikam.txt", "Fabrikam Industries LLC (\"Fabrikam\") and Siemens AG (\"Siemens\")", "the Federal Republic of Germany"),
    ("tailspin.txt", "Tailspin Toys Corp (\"Tailspin\") and Wingtip Supplies Ltd (\"Wingtip\")", "the State of New York"),
    ("adatum.txt", "Adatum Chemicals Inc (\"Adatum\") and Litware Logistics LLC (\"Litware\")", "the State of Texas"),
    ("proseware.txt", "Proseware Metals Ltd (\"Proseware\") and Woodgrove Trading Inc (\"Woodgrove\")", "England and Wales"),
    ("lucerne.txt", "Lucerne Packaging AG (\"Lucerne\") and Margie Freight Ltd (\"Margie\")", "Switzerland"),
]
NAMED = "fabrikam.txt"


def _contracts() -> list[dict[str, object]]:
    files = []
    for i, (name, parties, law) in enumerate(PARTIES):
        text = contract("SUPPLY AGREEMENT", f"This Supply Agreement is made on {i + 1} March 2021 between {parties}.",
                        "Buyer", law, 3)
        files.append({"name": name, "mimeType": "text/plain", "buffer": text.encode("utf-8")})
    return files


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    require_chromium()
    with streamlit_server(tmp_path_factory.mktemp("browser-targets") / "workspace", "streamlit-targets.log") as url:
        yield url


def _compare(base: str, question: str, **more: str) -> str:
    """Compare's URL: a bound select box's parameter holds the option as the box shows it (the method's label)."""
    params = [("cmp_corpus", CORPUS), ("cmp_source", "Your own question"), ("cmp_methods", "baseline"),
              ("cmp_methods", method_label(RECOMMENDED)), ("cmp_query_text", question), *more.items()]
    return f"{base}/Compare?{urllib.parse.urlencode(params)}"


def _hit_files(column) -> list[str]:
    """The file each hit of a column comes from, read from its header (the display name, the file title beside)."""
    return [text.split("score")[0] for text in column.locator(".sac-hit").all_inner_texts()]


def test_a_party_names_its_contract_and_an_ambiguous_question_asks_which(app_url, page):  # noqa: F811
    _open(page, f"{app_url}/Corpus")
    name_box = page.get_by_role("textbox", name="New corpus name")
    name_box.fill(CORPUS)
    name_box.press("Enter")
    _settle(page)
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(files=_contracts())
    page.locator("[data-testid=stFileUploader]").get_by_text("northwind.txt").wait_for(timeout=30_000)
    _settle(page)
    page.get_by_role("button", name="Add and build indexes").click()
    page.locator("[data-testid=stSidebar]").get_by_text(f"Building {CORPUS}: done in", exact=False).wait_for(
        timeout=600_000)

    # A party one contract names: that contract, how sure, and every recommended hit from it.
    _open(page, _compare(app_url, "Which law governs the supply agreement with Siemens?"))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-targets-named.png"), full_page=True)
    columns = page.locator("[data-testid=stColumn]").filter(has=page.locator(".sac-hit"))
    assert columns.count() == 2
    named = columns.nth(1).get_by_text("% sure)", exact=False).first
    assert "Fabrikam" in named.inner_text() and "Siemens" in named.inner_text()
    recommended = _hit_files(columns.nth(1))
    assert recommended and all("fabrikam" in h for h in recommended)
    assert page.get_by_text("Flagged against the contract the question names", exact=False).count() == 1
    baseline = _hit_files(columns.nth(0))
    wrong = columns.nth(0).locator(".sac-hit-wrong").count()
    assert wrong == sum("fabrikam" not in h for h in baseline)  # the baseline's other contracts are flagged

    # The same URL in a second page brings the same methods, question and hits back.
    shared = page.url
    assert "cmp_methods=" in shared and "Siemens" in urllib.parse.unquote_plus(shared)
    other = page.context.new_page()
    _open(other, shared)
    other.wait_for_selector(".sac-hit", timeout=120_000)
    _settle(other)
    again = other.locator("[data-testid=stColumn]").filter(has=other.locator(".sac-hit"))
    assert _hit_files(again.nth(1)) == recommended
    other.close()

    # Two parties of two contracts: candidates, not a silent pick; choosing one searches inside it alone.
    _open(page, _compare(app_url, "Which law governs the supply agreement with Siemens or Contoso?"))
    page.get_by_text("Which contract did you mean?", exact=False).first.wait_for(timeout=120_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-targets-which.png"), full_page=True)
    buttons = page.get_by_role("button", name="I meant", exact=False)
    labels = buttons.all_inner_texts()
    assert len(labels) == 2 and any("Fabrikam" in b for b in labels) and any("Northwind" in b for b in labels)
    page.get_by_role("button", name="I meant Northwind", exact=False).click()
    _settle(page)
    page.get_by_text("Pinned:", exact=False).first.wait_for(timeout=60_000)
    columns = page.locator("[data-testid=stColumn]").filter(has=page.locator(".sac-hit"))
    for i in range(columns.count()):
        hits = _hit_files(columns.nth(i))
        assert hits and all("northwind" in h for h in hits)
    assert "cmp_pin=" in page.url and "northwind" in page.url
    page.screenshot(path=str(ARTIFACTS / "browser-targets-pinned.png"), full_page=True)
