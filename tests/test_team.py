"""Two people at once (docs/deploying.md): one server with sign-in and matters on, two browser contexts
(two cookies: alice and bob, both signed in through the loopback OIDC provider's form) working in the same matter.

Both build at the same time (one build queues behind the other), both edit the same summary without refreshing,
both label the same question's hits: nothing is lost, each sees the other's saved work after a refresh, bob cannot
open a matter the access file does not give him, and the audit trail names who did what. What the pages show is
checked in the browser; what was kept is checked through the library once the server has stopped.
Screenshots go to test-artifacts/team-*.png.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from sac.audit import AuditLog
from sac.config import SacConfig
from sac.evaluation.review import ReviewStore
from sac.index.client import make_client
from sac.index.store import list_indexes
from sac.ingest import catalog
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_methods
from sac.summaries.store import SummaryStore
from sac.types import Document
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace
from tests.test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _open, _settle, require_chromium
from tests.test_signin import CORPUS, QUESTION, _build_small_corpus, signed_in_server
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
ALICE, BOB = "alice@example.org", "bob@example.org"
SHARED, PRIVATE = "acme-v-beta", "globex"
SECRET_CORPUS = "globex-secret"
UPLOADS = {ALICE: "alice-docs", BOB: "bob-docs"}
SUMMARY = {ALICE: "Alice's summary: mutual NDA between the two parties, five years of confidentiality.",
           BOB: "Bob's summary: a non-disclosure agreement, Delaware law, obligations survive termination."}
LABEL = {ALICE: "relevant", BOB: "partly relevant"}
METHODS = ("baseline", "sac-generic", "sac-expert")  # the Corpus page's default methods


@contextlib.contextmanager
def _team_server(tmp: Path, memo):
    """(URL, workspace root): sign-in against the loopback provider and matters on; alice and bob share acme-v-beta
    (two-ndas built for baseline and sac-generic, so a summary edit re-embeds), only alice has globex."""
    root = tmp / "workspace"
    shared = root / "matters" / SHARED
    _build_small_corpus(shared, memo)
    Workbench(SacConfig(workspace=shared), embedder=memo).build(
        CORPUS, Workspace(shared).load_corpus(CORPUS), parse_methods("sac-generic"))
    Workspace(root / "matters" / PRIVATE).add_documents(SECRET_CORPUS, [Document(
        "globex-licence.txt", "LICENCE AGREEMENT between Globex Corporation and Initech, dated 3 March 2025.")])
    access = tmp / "access.toml"
    access.write_text(f'[users]\n"{ALICE}" = ["{SHARED}", "{PRIVATE}"]\n"{BOB}" = ["{SHARED}"]\n', encoding="utf-8")
    with signed_in_server(tmp, root, "streamlit-team.log", env={"SAC_ACCESS_FILE": str(access)}) as (url, _provider):
        yield url, root


@pytest.fixture
def two_people():
    """Two browser contexts of one Chromium: two cookie jars, so two people."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        contexts = [chromium.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
                    for _ in range(2)]
        yield [c.new_page() for c in contexts]
        for c in contexts:
            c.close()
        chromium.close()


def _shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"team-{name}.png"), full_page=True)


def _sign_in(page, url: str, email: str) -> None:
    _open(page, url)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Test identity provider").wait_for(timeout=60_000)
    page.get_by_label("Email").fill(email)
    page.get_by_role("button", name="Continue").click()
    page.locator("[data-testid=stSidebar]").get_by_text(f"Signed in as {email}").wait_for(timeout=120_000)
    _settle(page)


def _open_list(page, label: str) -> None:
    """Open the option list of the selectbox or multiselect labelled ``label``."""
    for _ in range(5):  # a click that lands while the page settles may leave the list closed: click again
        page.get_by_role("combobox", name=label, exact=True).click()
        try:
            page.get_by_role("option").first.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            page.keyboard.press("Escape")
            _settle(page)
    raise AssertionError(f"the list of {label!r} did not open")


def _pick(page, label: str, option: str) -> None:
    """Choose ``option`` in the selectbox labelled ``label``."""
    _open_list(page, label)
    page.get_by_role("option", name=option, exact=False).first.click()
    _settle(page)


def _options(page, label: str) -> list[str]:
    """The options a selectbox or multiselect offers (opened, read, closed)."""
    _open_list(page, label)
    names = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    return names


def _prepare_upload(page, url: str, corpus: str, doc: Document) -> None:
    _open(page, f"{url}/Corpus")
    box = page.get_by_role("textbox", name="New corpus name")
    box.fill(corpus)
    box.press("Enter")
    _settle(page)
    page.locator("[data-testid=stFileUploader] input[type=file]").set_input_files(files=[
        {"name": doc.doc_id.rsplit("/", 1)[-1], "mimeType": "text/plain", "buffer": doc.text.encode("utf-8")}])
    page.locator("[data-testid=stFileUploader]").get_by_text("KB").wait_for(timeout=30_000)
    _settle(page)


def _open_summary(page, url: str) -> None:
    _open(page, f"{url}/Summaries")
    _pick(page, "Corpus", CORPUS)
    page.get_by_role("textbox", name="Summary (generic)").wait_for(timeout=60_000)


def _save_summary(page, text: str) -> None:
    area = page.get_by_role("textbox", name="Summary (generic)")
    area.fill(text)
    page.get_by_role("button", name="Save as a new version").click()
    page.get_by_text("of the generic summary", exact=False).wait_for(timeout=180_000)
    _settle(page)


def _open_review(page, url: str) -> None:
    _open(page, f"{url}/Review")
    _pick(page, "Corpus", CORPUS)
    box = page.get_by_role("textbox", name="Question", exact=True)
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_selector(".sac-hit", timeout=180_000)
    _settle(page)


def _work_together(url: str, people: dict, uploads: dict) -> str | None:
    """Everything alice and bob do in their browsers, with what each page must show; returns who saw the
    "Queued next" line (None when the builds never overlapped on screen)."""
    alice, bob = people[ALICE], people[BOB]
    for who, page in people.items():
        _sign_in(page, url, who)
    _shot(bob, "1-bob-signed-in")

    # -- both build at once: one queues behind the other, both finish ------------------------------------
    for who, page in people.items():
        _prepare_upload(page, url, UPLOADS[who], uploads[who])
    for page in people.values():
        page.get_by_role("button", name="Add and build indexes").click()
    queued_seen = None
    pending = dict(people)

    def both_built() -> bool:
        nonlocal queued_seen
        for who, page in list(pending.items()):
            if queued_seen is None and page.locator("[data-testid=stSidebar]").get_by_text(
                    "Queued next:", exact=False).count():
                queued_seen = who
                _shot(page, "2-queued")
            if page.get_by_text(f"Building {UPLOADS[who]}: done in", exact=False).count():
                del pending[who]
        return not pending

    wait_until(both_built, timeout=600, interval=0.3, what="both builds to finish",
               detail=lambda: f"builds still running for {list(pending)}")
    for who, page in people.items():
        _settle(page)
        assert page.get_by_text(f"{UPLOADS[who]}: 1 document indexed for ", exact=False).count()
        assert page.get_by_text("stopped:", exact=False).count() == 0
    _shot(alice, "3-alice-built")
    _shot(bob, "3-bob-built")

    # -- both edit the same summary: alice saves, then bob, whose page still shows the version before hers ----
    for page in people.values():
        _open_summary(page, url)
    _save_summary(alice, SUMMARY[ALICE])
    _shot(alice, "4-alice-summary-saved")
    _save_summary(bob, SUMMARY[BOB])
    _shot(bob, "4-bob-summary-saved")

    # -- both label the first baseline hit of one question at the same time -------------------------------
    for page in people.values():
        _open_review(page, url)
    for who, page in people.items():
        page.locator("[data-testid=stRadio]:visible").filter(has_text="Label for #1").get_by_text(
            LABEL[who], exact=True).click()
        _settle(page)
    for page in people.values():
        page.get_by_role("button", name="Save labels for baseline").click()
    for page in people.values():
        page.get_by_text("Saved 1 labels for baseline").wait_for(timeout=60_000)
        _settle(page)

    # -- after a refresh each sees the other's work ------------------------------------------------------
    for who, page in people.items():
        other = BOB if who == ALICE else ALICE
        _open_review(page, url)
        assert page.get_by_text("All 2 labels", exact=False).count() == 1  # the other's label counted
        _shot(page, f"5-{who.split('@')[0]}-review-refreshed")

        _open(page, f"{url}/Corpus")
        _pick(page, "Corpus", UPLOADS[other])
        page.get_by_text(f"indexes built with the current settings: {', '.join(METHODS)}",
                         exact=False).wait_for(timeout=60_000)
        _shot(page, f"6-{who.split('@')[0]}-sees-{other.split('@')[0]}s-corpus")

        _open_summary(page, url)
        # bob saved last: his text is the current version; alice's is the one before it in the history
        assert page.get_by_role("textbox", name="Summary (generic)").input_value() == SUMMARY[BOB]
        _shot(page, f"7-{who.split('@')[0]}-summaries-refreshed")

    # -- matters: bob is refused globex and sees nothing of it; alice opens it ---------------------------
    bob.goto(f"{url}/Corpus?matter={PRIVATE}")
    bob.get_by_text(f"{BOB} may not open the matter '{PRIVATE}'", exact=False).wait_for(timeout=120_000)
    _settle(bob)
    body = bob.locator("body").inner_text()
    assert SECRET_CORPUS not in body and "Globex" not in body and "Initech" not in body
    assert bob.locator("[data-testid=stSidebar]").count() == 0
    _shot(bob, "8-bob-refused-globex")
    _open(alice, f"{url}/Corpus?matter={PRIVATE}")
    assert SECRET_CORPUS in _options(alice, "Add to corpus")
    _shot(alice, "8-alice-opens-globex")

    # -- the audit trail, as alice: uploads, builds, both edits; then an export ----------------------------
    _open(alice, f"{url}/Audit_trail?matter={SHARED}")
    alice.get_by_text("the chain of hashes is unbroken", exact=False).wait_for(timeout=60_000)
    assert {"upload", "build", "summary-edit"} <= set(_options(alice, "Actions"))
    assert {ALICE, BOB} <= set(_options(alice, "Who"))
    with alice.expect_download() as download:
        alice.get_by_role("button", name="Export as CSV").click()
    assert "summary-edit" in Path(download.value.path()).read_text(encoding="utf-8")
    _settle(alice)
    _open(alice, f"{url}/Audit_trail?matter={SHARED}")
    assert "export" in _options(alice, "Actions")
    _shot(alice, "9-alice-audit-trail")

    return queued_seen


@pytest.mark.slow
@pytest.mark.browser
def test_two_people_build_edit_and_review_at_once_and_see_each_others_work(tmp_path, memo, two_people):
    require_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    people = dict(zip((ALICE, BOB), two_people))
    nda = load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents[2]
    contract = min(load_benchmark(ROOT / "data" / "demo", ["cuad"])[0].documents, key=lambda d: len(d.text))
    uploads = {ALICE: nda, BOB: contract}  # 3,456 and 1,902 characters: small, the machine is slow
    started = time.monotonic()
    with _team_server(tmp_path, memo) as (url, root):
        try:
            queued_seen = _work_together(url, people, uploads)
        except Exception:
            for who, page in people.items():
                _shot(page, f"failed-{who.split('@')[0]}")
            raise

    # -- what was kept, read through the library once the server has stopped -----------------------------------
    shared = Workspace(root / "matters" / SHARED)
    assert {UPLOADS[ALICE], UPLOADS[BOB]} <= {e.name for e in catalog.list_corpora(shared)}
    built = {(i.corpus, i.method) for i in list_indexes(make_client(SacConfig(workspace=shared.root)))
             if i.complete and i.chunks > 0}
    assert {(UPLOADS[who], m) for who in people for m in METHODS} <= built

    nda = shared.load_corpus(CORPUS)[0]  # the Summaries page's first document
    history = SummaryStore(shared.summaries_dir).history(nda.content_hash, "generic")
    assert [(s.model, s.text) for s in history[-2:]] == [("human", SUMMARY[ALICE]), ("human", SUMMARY[BOB])]

    labels = ReviewStore(shared.reviews_dir).labels()
    assert sorted((lab.reviewer, lab.label, lab.method, lab.rank) for lab in labels) == [
        (ALICE, LABEL[ALICE], "baseline", 1), (BOB, LABEL[BOB], "baseline", 1)]

    entries = AuditLog(shared.root).entries()
    done = {(e["who"], e["action"], e["what"]) for e in entries}
    for who in people:
        assert (who, "upload", f"corpus {UPLOADS[who]!r}") in done
        assert (who, "build", f"corpus {UPLOADS[who]!r}") in done
        assert (who, "summary-edit", f"document {nda.doc_id!r}") in done
    assert any(e["who"] == ALICE and e["action"] == "export" for e in entries)
    assert AuditLog(shared.root).verify() is None
    refused = [e for e in AuditLog(root).entries() if e["action"] == "access-denied"]
    assert [(e["who"], e["what"]) for e in refused] == [(BOB, f"matter {PRIVATE!r}")]
    assert not any(e["action"] == "access-denied" for e in entries)  # never in the matter's own log
    print(f"two people at once: {time.monotonic() - started:.0f} s; queued line seen by {queued_seen or 'nobody'}")


def test_a_summary_edit_saved_after_someone_elses_keeps_both(app_memo):
    """In process, the same race as above: the page is open at one version, someone else saves the next, then
    this person types and saves. Their text is stored (not a copy of the other's), after it, and both are kept."""
    from streamlit.testing.v1 import AppTest

    workspace = Workspace(Path(os.environ["SAC_WORKSPACE"]))
    documents = workspace.add_documents(CORPUS, list(load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents[:2]))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).switch_page("pages/2_Summaries.py").run()
    assert not at.exception and not at.error
    [box] = [t for t in at.text_area if t.label == "Summary (generic)"]
    opened = box.value
    SummaryStore(workspace.summaries_dir).save_edit(documents[0], "generic", SUMMARY[ALICE])  # alice, elsewhere
    box.input(SUMMARY[BOB])
    at.button(key="sum_save").click().run()
    assert not at.exception and not at.error
    history = SummaryStore(workspace.summaries_dir).history(documents[0].content_hash, "generic")
    assert [s.text for s in history] == [opened, SUMMARY[ALICE], SUMMARY[BOB]]
    at.run()
    [box] = [t for t in at.text_area if t.label == "Summary (generic)"]
    assert box.value == SUMMARY[BOB] and not at.warning  # this session's own save is what it shows next


@pytest.mark.slow
def test_the_edit_box_names_a_version_saved_by_someone_else(app_memo):
    from streamlit.testing.v1 import AppTest

    workspace = Workspace(Path(os.environ["SAC_WORKSPACE"]))
    documents = workspace.add_documents(CORPUS, list(load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents[:2]))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).switch_page("pages/2_Summaries.py").run()
    SummaryStore(workspace.summaries_dir).save_edit(documents[0], "generic", SUMMARY[ALICE])
    at.run()
    [warning] = at.warning
    assert "Version 2 was saved by someone else after you opened version 1" in warning.value
    at.button(key="sum_load_latest").click().run()
    [box] = [t for t in at.text_area if t.label == "Summary (generic)"]
    assert box.value == SUMMARY[ALICE] and not at.warning
