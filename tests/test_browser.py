"""The app in a real browser: `streamlit run` as a subprocess, driven by Playwright on Debian's Chromium.

Loads the demo's ContractNLI dataset through the home page, compares the three methods on benchmark
questions (highlighted ground truth, wrong-document flags), and uploads a hostile document whose
<script>, <img onerror> and javascript: link must show as text while nothing runs.

The server's workspace starts as a copy of conftest's ``demo_workspace`` (the same demo, really built
through the home page's button in this process, Chroma store included), so the button's load here finds
every chunk already indexed instead of embedding the demo a second time; building from nothing through
that button is tested in-process by tests/test_pages.py.
Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import urllib.parse
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from sac.ingest.benchmark import load_benchmark
from sac.types import document_title
from tests.waiting import wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
EVIL_NAME = 'evil <img src=x onerror="window.__sacXss=5">.txt'
EVIL_TEXT = """MUTUAL NON-DISCLOSURE AGREEMENT between Evil Corp and Victim LLC, dated 1 May 2024.

<script>window.__sacXss = 1; alert("script ran")</script>
<img src=x onerror="window.__sacXss = 2; alert('img ran')">
<a href="javascript:window.__sacXss=3;alert('link ran')">click here for the governing law</a>
<iframe srcdoc="<script>parent.__sacXss=4</script>"></iframe><style>body{display:none}</style>
[a markdown link](javascript:alert(1)) **not bold** $x^2$ :red[not red]

8. Governing law. This Agreement is governed by the laws of the State of Delaware, and the
Receiving Party shall keep the Confidential Information secret for five years.
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


ALCO_QUESTION = "Governing law of the agency agreement between GE Capital and Duckwall-Alco"


def _alco_corpus() -> list:
    """The demo CUAD contract behind the blank-hit report (the ALCO agency agreement) and three other demo contracts."""
    cuad = load_benchmark(ROOT / "data" / "demo", ["cuad"])[0]
    alco = next(d for d in cuad.documents if "ALCOSTORES" in d.doc_id)
    return [alco, *[d for d in cuad.documents if d is not alco][:3]]


def _add_corpora(workspace: Path, memo) -> None:
    """Two uploaded corpora beside the demo, built before the server starts: ``alco`` (sac-generic, default
    chunking) and ``three-ndas`` (baseline and sac-expert), whose sac-expert build is then cut short."""
    from sac.config import SacConfig
    from sac.methods import parse_methods
    from sac.usecases.workbench import Workbench
    from sac.workspace import Workspace
    from tests.conftest import interrupt_index

    wb = Workbench(SacConfig(workspace=workspace), embedder=memo)
    ws = Workspace(workspace)
    alco = ws.add_documents("alco", _alco_corpus())
    wb.build("alco", alco, parse_methods("sac-generic"))
    ndas = ws.add_documents("three-ndas", list(load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents[:3]))
    wb.build("three-ndas", ndas, parse_methods("baseline,sac-expert"))
    interrupt_index(workspace, "three-ndas", "sac-expert", ndas[0].doc_id)


WORKSPACES: dict[str, Path] = {}  # app_url -> its server's workspace


@pytest.fixture(scope="module")
def app_url(tmp_path_factory, request):
    """A real `streamlit run app.py` on a free loopback port with its own workspace: a copy of the session's
    demo workspace."""
    require_chromium()
    workspace = tmp_path_factory.mktemp("browser") / "workspace"
    shutil.copytree(request.getfixturevalue("demo_workspace"), workspace)
    _add_corpora(workspace, request.getfixturevalue("memo"))
    with streamlit_server(workspace, "streamlit-server.log") as url:
        WORKSPACES[url] = workspace
        yield url


def require_chromium() -> None:
    if not CHROMIUM.is_file() and not os.environ.get("CI"):
        # A developer machine without Chromium still runs everything else; CI installs it, and there a
        # missing browser is a failure, never a skip.
        pytest.skip(f"{CHROMIUM} is missing: install Debian's chromium (apt-get install chromium) to run the browser tests")
    if not CHROMIUM.is_file():
        pytest.fail(f"{CHROMIUM} is missing on CI: .ci/run installs Debian's chromium")


@contextlib.contextmanager
def streamlit_server(workspace: Path, log_name: str, *args: str, port: int | None = None,
                     env: Mapping[str, str] | None = None):
    """A real `streamlit run app.py` on a loopback port (a free one unless given) with ``workspace`` as its
    SAC_WORKSPACE, ``args`` as extra command-line options and ``env`` as extra environment variables (e.g.
    SAC_ACCESS_FILE); yields its URL. Its log goes to test-artifacts/."""
    port = port or _free_port()
    server_env = {**os.environ, "SAC_WORKSPACE": str(workspace), "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1",
                  **(env or {})}
    server_env.pop("OPENAI_API_KEY", None)
    ARTIFACTS.mkdir(exist_ok=True)
    log = open(ARTIFACTS / log_name, "w")  # noqa: SIM115 - open for the server's life
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
         "--server.address", "127.0.0.1", "--server.port", str(port), "--browser.gatherUsageStats", "false", *args],
        cwd=ROOT, env=server_env, stdout=log, stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        def healthy() -> bool:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as reply:
                    if reply.status == 200:
                        return True
            except OSError:
                if proc.poll() is not None:
                    raise RuntimeError(f"streamlit did not start; see {ARTIFACTS / log_name}") from None
            return False

        wait_until(healthy, timeout=90, interval=0.5, what=f"streamlit to start; see {ARTIFACTS / log_name}")
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1500, "height": 1100})
    page = context.new_page()
    page.dialogs = []
    page.console_lines = []
    page.on("dialog", lambda d: (page.dialogs.append(d.message), d.dismiss()))
    page.on("console", lambda m: page.console_lines.append(f"{m.type}: {m.text}"))
    yield page
    context.close()


def _settle(page, timeout: float = 120) -> None:
    """Wait until the script run finished and stayed finished for a moment."""
    quiet = 0

    def stayed_finished() -> bool:
        nonlocal quiet
        state = page.get_attribute("[data-testid=stApp]", "data-test-script-state")
        quiet = quiet + 1 if state == "notRunning" else 0
        return quiet >= 4

    wait_until(stayed_finished, timeout=timeout, interval=0.25, what="the app's script run to finish (it kept running)")


def _open(page, url: str) -> None:
    page.goto(url)
    page.wait_for_selector("h1", timeout=120_000)
    _settle(page)


def _compare_url(base: str, **params: str) -> str:
    return f"{base}/Compare?{urllib.parse.urlencode(params)}"


def test_demo_compare_highlights_ground_truth_and_flags_wrong_documents(app_url, page):
    _open(page, app_url)
    page.get_by_text("ContractNLI only", exact=False).click()
    _settle(page)
    page.get_by_role("button", name="Load the demo corpus").click()
    page.get_by_text("Demo: done in", exact=False).wait_for(timeout=600_000)
    _settle(page)
    # Corpora indexed (demo-contractnli and the two uploaded corpora), indexes: the three contractnli indexes, the two
    # from the shipped LLM summary sets, alco's one and three-ndas' two.
    assert page.locator("[data-testid=stMetricValue]").all_inner_texts()[:2] == ["3", "8"]
    # The navigation names the home page "Home" (not the file name "app") and offers the glossary everywhere.
    sidebar = page.locator("[data-testid=stSidebar]").inner_text()
    assert "Home" in sidebar and "Embedding map" in sidebar and "Glossary" in sidebar
    assert "app" not in sidebar.split()
    page.screenshot(path=str(ARTIFACTS / "browser-home.png"), full_page=True)

    queries = load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].queries
    for query in queries[:12]:
        _open(page, _compare_url(app_url, cmp_corpus="demo-contractnli", cmp_query_pick=query.text))
        page.wait_for_selector(".sac-hit", timeout=120_000)
        if page.locator(".sac-hit mark.sac-gold").count():
            break
    assert page.locator(".sac-hit").count() == 24
    assert [h.inner_text() for h in page.locator("h3").all()][:3] == ["baseline", "sac-generic", "sac-expert"]
    gold = page.locator(".sac-hit mark.sac-gold").first
    gold.scroll_into_view_if_needed()
    assert gold.is_visible() and gold.inner_text().strip()
    assert page.locator(".sac-hit").filter(has_text="right document").count() >= 1
    wrong = page.locator(".sac-hit-wrong .sac-badge-wrong").first
    wrong.scroll_into_view_if_needed()
    assert wrong.is_visible() and "wrong document" in wrong.inner_text()
    page.get_by_text("#1 in its document").first.click()
    context_mark = page.locator(".sac-context mark.sac-chunk").first
    context_mark.wait_for(timeout=30_000)
    assert context_mark.is_visible()
    page.screenshot(path=str(ARTIFACTS / "browser-compare.png"), full_page=True)
    assert not page.dialogs


def test_hostile_document_shows_as_text_and_nothing_runs(app_url, page):
    _open(page, f"{app_url}/Corpus")
    name_box = page.get_by_role("textbox", name="New corpus name")
    name_box.fill("evil-docs")
    name_box.press("Enter")
    _settle(page)
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(
        files=[{"name": EVIL_NAME, "mimeType": "text/plain", "buffer": EVIL_TEXT.encode("utf-8")}]
    )
    page.locator("[data-testid=stFileUploader]").get_by_text("KB").wait_for(timeout=30_000)
    _settle(page)
    page.get_by_role("button", name="Add and build indexes").click()
    page.get_by_text("evil-docs: 1 document indexed for ", exact=False).wait_for(timeout=300_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-upload.png"), full_page=True)

    _open(page, _compare_url(app_url, cmp_corpus="evil-docs", cmp_source="Your own question",
                             cmp_query_text="script onerror javascript link governing law"))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    page.get_by_text("in its document").first.click()
    page.locator(".sac-context").first.wait_for(timeout=30_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-hostile.png"), full_page=True)

    cards = page.locator(".sac-hit")
    assert cards.count() >= 1
    text = " ".join(cards.all_inner_texts())
    assert '<script>window.__sacXss = 1; alert("script ran")</script>' in text
    assert "<img src=x onerror=" in text and 'href="javascript:' in text
    assert 'evil <img src=x onerror="window.__sacXss=5">' in text  # the file name, as text
    assert "[a markdown link](javascript:alert(1)) **not bold** $x^2$ :red[not red]" in text
    assert page.locator(".sac-hit script, .sac-hit img, .sac-hit iframe, .sac-hit style, .sac-context img").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert page.evaluate("window.__sacXss") is None
    assert page.locator(".sac-hit").first.is_visible()  # the injected <style> hid nothing
    assert page.dialogs == []
    assert not [line for line in page.console_lines if "__sacXss" in line or "ran" in line.split(": ", 1)[-1]]


PAGE_PATHS = ["", "Corpus", "Summaries", "Compare", "Evaluate", "Review", "Embedding_map", "Survey", "Reader"]


def test_every_page_fits_a_1280_by_800_screen_without_horizontal_scroll(app_url, browser):
    """Each page on the demo, at a laptop's 1280×800: it renders without an error box, and neither the page
    nor its main column scrolls sideways (wide tables scroll inside themselves). Screenshots in test-artifacts."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    try:
        for path in PAGE_PATHS:
            _open(page, f"{app_url}/{path}")
            name = path or "Home"
            page.screenshot(path=str(ARTIFACTS / f"page-1280-{name}.png"), full_page=True)
            assert page.locator("[data-testid=stException]").count() == 0, name
            widths = page.evaluate(
                "() => { const main = document.querySelector('[data-testid=stMain]');"
                " return [document.documentElement.scrollWidth, window.innerWidth,"
                " main ? main.scrollWidth : 0, main ? main.clientWidth : 0]; }")
            assert widths[0] <= widths[1] and widths[2] <= widths[3] + 1, (name, widths)
    finally:
        context.close()


HIT_HEAD = re.compile(r"#(\d+) · (.+?) · score [\d.]+ \[(\d+), (\d+)\)")


def _column_hits(page, method: str) -> list[tuple[str, int, int]]:
    """(document title, start, end) of every hit card under the method's heading on Compare."""
    column = page.locator("[data-testid=stColumn]").filter(has=page.get_by_role("heading", name=method, exact=True))
    hits = []
    for head in column.first.locator(".sac-hit-head").all_inner_texts():
        found = HIT_HEAD.search(" ".join(head.split()))
        assert found, head
        hits.append((found.group(2), int(found.group(3)), int(found.group(4))))
    return hits


def test_no_blank_hit_for_the_question_that_names_its_contract(app_url, page):
    """The report's question on the ALCO agency agreement: every sac-generic hit is real text (25 or more non-space
    characters), where the paper's splitter filled the top 8 with newline-only chunks (tests/test_methods.py)."""
    _open(page, _compare_url(app_url, cmp_corpus="alco", cmp_source="Your own question", cmp_query_text=ALCO_QUESTION))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-alco-no-blank-hits.png"), full_page=True)
    texts = {document_title(d.doc_id): d.text for d in _alco_corpus()}
    hits = _column_hits(page, "sac-generic")
    assert len(hits) == 8
    assert any("ALCO" in title.upper() for title, _, _ in hits)  # the named contract is found
    for title, start, end in hits:
        text = texts[title.rsplit(" — ", 1)[-1]]  # a hit's header: the contract's name, then its file title
        assert len("".join(text[start:end].split())) >= 25, (title, start, end, text[start:end])


def test_an_interrupted_build_is_shown_and_finished_in_one_click(app_url, page):
    _open(page, _compare_url(app_url, cmp_corpus="three-ndas", cmp_source="Your own question",
                             cmp_query_text="Which law governs the agreement?"))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    warning = page.get_by_text("Incomplete index: sac-expert", exact=False)
    assert warning.is_visible()
    assert [h.inner_text() for h in page.locator("h3").all()][:1] == ["baseline"]
    assert page.get_by_role("heading", name="sac-expert", exact=True).count() == 0  # never searched while incomplete
    page.screenshot(path=str(ARTIFACTS / "browser-interrupted-compare.png"), full_page=True)

    _open(page, f"{app_url}/Corpus")
    picker = page.get_by_role("combobox", name="Corpus", exact=True)
    picker.click()
    page.get_by_role("option", name="three-ndas", exact=False).first.click()
    _settle(page)
    page.get_by_role("button", name="Finish building sac-expert").click()
    sidebar = page.locator("[data-testid=stSidebar]")
    sidebar.get_by_text("Finishing three-ndas: done in", exact=False).wait_for(timeout=300_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-interrupted-finished.png"), full_page=True)
    assert page.get_by_text("Incomplete index", exact=False).count() == 0

    _open(page, _compare_url(app_url, cmp_corpus="three-ndas", cmp_source="Your own question",
                             cmp_query_text="Which law governs the agreement?"))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    _settle(page)
    assert [h.inner_text() for h in page.locator("h3").all()][:2] == ["baseline", "sac-expert"]
    assert page.get_by_text("Incomplete index", exact=False).count() == 0


def test_a_pin_belongs_to_its_question(app_url, page):
    _open(page, _compare_url(app_url, cmp_corpus="demo-contractnli", cmp_source="Your own question",
                             cmp_query_text="Which law governs the agreement?"))
    page.wait_for_selector(".sac-hit", timeout=120_000)
    assert page.locator(".sac-badge-wrong").count() == 0  # no pin, no known document: nothing is flagged
    before = page.locator(".sac-hit").all_inner_texts()
    assert sum("AGProjects-NDA" not in hit.split("score")[0] for hit in before) > 0  # hits from several NDAs
    page.get_by_role("combobox", name="The contract this question is about", exact=False).click()
    page.get_by_role("option", name="AG Projects · Non-Disclosure Agreement — AGProjects-NDA", exact=True).click()
    _settle(page)
    page.get_by_text("Pinned:", exact=False).first.wait_for(timeout=60_000)  # pinned: searched inside it alone
    hits = page.locator(".sac-hit").all_inner_texts()
    assert hits and all("AGProjects-NDA" in hit.split("score")[0] for hit in hits)
    assert page.locator(".sac-badge-wrong").count() == 0
    assert "cmp_pin=" in page.url and "AGProjects" in page.url  # the pin is in the link, with its question
    box = page.get_by_role("textbox", name="Your question")
    box.fill("How long do the confidentiality obligations last?")
    box.press("Enter")
    page.get_by_text("Unpinned AG Projects · Non-Disclosure Agreement — AGProjects-NDA", exact=False).wait_for(timeout=60_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "browser-pin-cleared.png"), full_page=True)
    assert page.locator(".sac-badge-wrong").count() == 0 and page.locator(".sac-hit").count() > 0
    assert "AGProjects" not in urllib.parse.unquote(page.url)


def test_the_map_after_a_corpus_switch_shows_the_new_corpus(app_url, page):
    _open(page, f"{app_url}/Embedding_map")
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    picker = page.get_by_role("combobox", name="Corpus", exact=True)
    picker.click()
    page.get_by_role("option", name="alco", exact=False).first.click()
    _settle(page)
    box = page.get_by_role("textbox", name="Question")
    if box.count():
        box.fill(ALCO_QUESTION)
        box.press("Enter")
        _settle(page)
    page.locator(".js-plotly-plot").first.wait_for(timeout=120_000)
    page.screenshot(path=str(ARTIFACTS / "browser-map-after-switch.png"), full_page=True)
    assert page.get_by_text("Choose at least two documents").count() == 0
    legend = " ".join(page.locator(".js-plotly-plot .legendtext").evaluate_all("els => els.map(e => e.textContent)"))
    assert "ALCO" in legend.upper() and "AGProjects" not in legend


def test_a_build_runs_on_while_the_user_moves_to_another_page(app_url, page):
    """Upload two demo contracts and build; move to Compare while it runs: the sidebar there shows the same
    build's bar, and when it ends the page reruns by itself and lists the new corpus. A third file, not a PDF though
    named one, is not read: its warning stays on show with the build (its error used to show for one rerun only)."""
    cuad = load_benchmark(ROOT / "data" / "demo", ["cuad"])[0]
    docs = sorted(cuad.documents, key=lambda d: len(d.text))[-5:-3]  # about 140,000 characters: 20 s or more
    _open(page, f"{app_url}/Corpus")
    name_box = page.get_by_role("textbox", name="New corpus name")
    name_box.fill("background")
    name_box.press("Enter")
    _settle(page)
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(files=[
        {"name": d.doc_id.rsplit("/", 1)[-1], "mimeType": "text/plain", "buffer": d.text.encode("utf-8")} for d in docs]
        + [{"name": "scan.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4 a scan cut short"}])
    page.locator("[data-testid=stFileUploader]").get_by_text("KB").first.wait_for(timeout=30_000)
    _settle(page)
    page.get_by_role("button", name="Add and build indexes").click()
    sidebar = page.locator("[data-testid=stSidebar]")
    bar = sidebar.get_by_text("Building background: ", exact=False).first
    bar.wait_for(timeout=120_000)
    page.get_by_text("running in the background", exact=False).wait_for(timeout=30_000)
    unread = "scan.pdf: cannot be read as a PDF"
    main = page.locator("[data-testid=stMain]")
    assert main.get_by_text(unread, exact=False).is_visible()
    page.screenshot(path=str(ARTIFACTS / "browser-background-corpus.png"), full_page=True)

    # The same session, another page (a click that lands while the sidebar's bar refreshes is clicked again).
    for _ in range(10):
        sidebar.get_by_role("link", name="Compare").click()
        try:
            page.wait_for_url("**/Compare**", timeout=10_000)
            break
        except PlaywrightTimeout:
            continue
    page.get_by_role("heading", name="Compare methods on one question").wait_for(timeout=120_000)
    assert sidebar.get_by_text("Building background: ", exact=False).first.is_visible()
    page.screenshot(path=str(ARTIFACTS / "browser-background-compare.png"), full_page=True)
    sidebar.get_by_text("Building background: done in", exact=False).wait_for(timeout=600_000)
    _settle(page)
    assert sidebar.get_by_text(unread, exact=False).is_visible()  # with how the build ended, on any page
    page.get_by_role("combobox", name="Corpus", exact=True).click()
    assert page.get_by_role("option", name="background", exact=False).count() == 1  # listed without a reload
    page.keyboard.press("Escape")
    page.screenshot(path=str(ARTIFACTS / "browser-background-done.png"), full_page=True)


def test_evaluate_switches_to_reviewed_ground_truth_with_its_dataset_chosen(app_url, page):
    """A span marked on Review makes the corpus's reviewed ground truth a benchmark on Evaluate. Switching to it in a
    browser left no dataset chosen ("Choose at least one dataset."), though the page's own tests passed: each
    benchmark now keeps its own choice, all its datasets at first."""
    from sac.evaluation.review import ReviewStore, make_gold_span
    from sac.workspace import Workspace

    nda = load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0]
    question = nda.queries[0]
    [gold, *_] = question.gold
    text = next(d.text for d in nda.documents if d.doc_id == gold.doc_id)
    store = ReviewStore(Workspace(WORKSPACES[app_url]).reviews_dir)
    span = store.add_gold(make_gold_span(corpus="demo-contractnli", query_id="live-b1", query=question.text,
                                         doc_id=gold.doc_id, doc_text=text, start=gold.start, end=gold.end,
                                         reviewer="Ada"))
    try:
        _open(page, f"{app_url}/Evaluate")
        page.get_by_role("combobox", name="Benchmark").click()
        page.get_by_role("option", name="Reviewed ground truth of demo-contractnli (1 question)").click()
        _settle(page)
        page.get_by_role("button", name="Run the evaluation").click()
        refused = page.get_by_text("Choose at least one dataset.")
        page.get_by_text("Run saved as", exact=False).or_(refused).first.wait_for(timeout=300_000)
        _settle(page)
        assert refused.count() == 0
        assert page.get_by_text("Run saved as", exact=False).count() == 1
        page.screenshot(path=str(ARTIFACTS / "browser-evaluate-reviewed.png"), full_page=True)
    finally:
        store.remove_gold(span)  # the other tests see the workspace without it


def test_a_demo_load_survives_leaving_the_page_at_once(tmp_path, browser):
    """On a fresh server, click "Load the demo corpus" and leave for Compare while the model loads: the build still
    runs and Compare answers from it. (The page used to load the model before starting the build, and a user who
    left meanwhile lost the click without a word.)"""
    query = load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].queries[0]
    with streamlit_server(tmp_path / "workspace", "streamlit-leave-at-once.log") as url:
        page = browser.new_page(viewport={"width": 1500, "height": 1100})
        _open(page, url)
        page.get_by_role("button", name="Load the demo corpus").click()
        page.get_by_text("Loading the embedding model", exact=False).wait_for(timeout=60_000)
        compare = _compare_url(url, cmp_corpus="demo-contractnli", cmp_query_pick=query.text)
        page.goto(compare)
        def answered() -> bool:
            if page.locator(".sac-hit").count() >= 24:  # 8 hits for each of the three paper methods, as each completes
                return True
            _open(page, compare)  # looked at again after the next interval
            return False

        wait_until(answered, timeout=600, interval=5, what="a build to answer on Compare (no build answered on Compare)")
        page.close()
