"""Sign-in (docs/deploying.md): Streamlit's own OIDC (``st.login`` / ``st.user``) when ``[auth]`` is in
the secrets, the app open as before when it is not.

In a real browser: `streamlit run app.py` as a subprocess, its ``[auth]`` in a secrets.toml passed with
``--secrets.files``, signing in against the loopback OIDC provider of tests/oidc_provider.py through Streamlit's
real login, callback and logout routes (Authlib's client: discovery, code, RS256 id_token, nonce, PKCE). In process
(AppTest, ``at.secrets`` and ``at.user``): the gate on every page, a half-configured ``[auth]``, the reviewer on the
Review page. Screenshots go to test-artifacts/.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.evaluation.review import ReviewStore
from sac.ingest.benchmark import load_benchmark
from sac.workspace import Workspace
from tests.oidc_provider import OIDCProvider
from tests.test_browser import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, _free_port, _open, _settle, require_chromium, streamlit_server

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
CORPUS = "two-ndas"
QUESTION = "How long do the confidentiality obligations last?"
AUTH = {"redirect_uri": "http://127.0.0.1:8501/oauth2callback", "cookie_secret": "a-test-cookie-secret-of-enough-bytes",
        "client_id": "sac-workbench", "client_secret": "a-test-client-secret",
        "server_metadata_url": "http://127.0.0.1:9/.well-known/openid-configuration"}
PAGES = ["pages/1_Corpus.py", "pages/2_Summaries.py", "pages/3_Compare.py", "pages/4_Evaluate.py", "pages/5_Review.py",
         "pages/6_Embedding_map.py"]


def _build_small_corpus(workspace: Path, memo) -> None:
    """Two demo NDAs uploaded as ``two-ndas``, baseline index built (the real model, through ``memo``)."""
    from sac.config import SacConfig
    from sac.methods import parse_methods
    from sac.usecases.workbench import Workbench

    docs = list(load_benchmark(ROOT / "data" / "demo", ["contractnli"])[0].documents[:2])
    added = Workspace(workspace).add_documents(CORPUS, docs)
    Workbench(SacConfig(workspace=workspace), embedder=memo).build(CORPUS, added, parse_methods("baseline"))


def _app(**auth: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=600)
    if auth:
        at.secrets["auth"] = auth
    return at


def _texts(at: AppTest) -> list[str]:
    return [t.value for t in at.get("text")]


# -- in process ----------------------------------------------------------------------------------
def test_without_auth_the_app_is_open_as_before():
    at = _app().run()
    assert not at.exception and "sac_sign_in" not in [b.key for b in at.button] and at.title[0].value == "SAC Workbench"


@pytest.mark.slow
@pytest.mark.parametrize("page", [None, *PAGES])
def test_signed_out_every_page_shows_only_the_sign_in_screen(page):
    at = _app(**AUTH)
    at.user = {"is_logged_in": False}
    if page:
        at.switch_page(page)
    at.run()
    assert not at.exception and not at.error
    assert [b.key for b in at.button] == ["sac_sign_in"]
    assert [t.value for t in at.title] == ["SAC Workbench"]
    assert len(at.sidebar) == 0 and not at.text_input and not at.selectbox and not at.dataframe  # nothing of the app


def test_a_half_configured_auth_section_stops_the_app():
    at = _app(client_id="sac-workbench", server_metadata_url=AUTH["server_metadata_url"])
    at.user = {"is_logged_in": False}
    at.run()
    [error] = at.error
    assert "redirect_uri" in error.value and "cookie_secret" in error.value and "client_secret" in error.value
    assert not at.button and not at.title


def test_the_provider_may_be_given_as_auth_default():
    at = _app(redirect_uri=AUTH["redirect_uri"], cookie_secret=AUTH["cookie_secret"],
              default={k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")})
    at.user = {"is_logged_in": False}
    at.run()
    assert not at.error and [b.key for b in at.button] == ["sac_sign_in"]


@pytest.mark.slow
def test_the_identity_is_the_email_lower_cased_or_else_sub():
    at = _app(**AUTH)
    at.user = {"is_logged_in": True, "email": "  Alice@Example.ORG ", "sub": "user-1"}
    at.run()
    assert "Signed in as alice@example.org" in _texts(at) and at.button(key="sac_sign_out")
    at = _app(**AUTH)
    at.user = {"is_logged_in": True, "sub": "user-1"}
    at.run()
    assert "Signed in as user-1" in _texts(at)


@pytest.mark.slow
def test_signed_in_the_reviewer_is_the_identity(app_memo):
    _build_small_corpus(Path(os.environ["SAC_WORKSPACE"]), app_memo)
    at = _app(**AUTH)
    at.user = {"is_logged_in": True, "email": "Alice@Example.org"}
    at.switch_page("pages/5_Review.py").run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    box = at.text_input(key="rev_reviewer_signed_in")
    assert box.value == "alice@example.org" and box.disabled
    assert "rev_reviewer" not in [t.key for t in at.text_input]  # no free-text name
    at.text_input(key="rev_query").input(QUESTION).run()
    [mode] = [r for r in at.radio if r.key == "rev_gt_mode"]
    mode.set_value("character range").run()
    [rng] = [s for s in at.slider if s.key.startswith("rev_gt_range_")]
    rng.set_value((0, 30)).run()
    at.button(key="rev_gt_add").click().run()
    assert not at.exception and not at.error
    [span] = ReviewStore(Workspace(Path(os.environ["SAC_WORKSPACE"])).reviews_dir).gold()
    assert span.reviewer == "alice@example.org"


# -- in a real browser ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def signin_app(tmp_path_factory, request):
    """(app URL, provider, workspace): the app with sign-in on, against the loopback OIDC provider."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("signin")
    workspace = tmp / "workspace"
    _build_small_corpus(workspace, request.getfixturevalue("memo"))
    with signed_in_server(tmp, workspace, "streamlit-signin.log") as (url, provider):
        yield url, provider, workspace


@contextlib.contextmanager
def signed_in_server(tmp: Path, workspace: Path, log_name: str, env: dict[str, str] | None = None):
    """(app URL, provider): `streamlit run` with sign-in on against a loopback OIDC provider, its ``[auth]`` in a
    secrets.toml under ``tmp`` passed with ``--secrets.files`` (the redirect URI needs the app's port first)."""
    port = _free_port()
    redirect = f"http://127.0.0.1:{port}/oauth2callback"
    with OIDCProvider(redirect_uris=(redirect,)) as provider:
        secrets_file = tmp / "secrets.toml"
        secrets_file.write_text(
            "[auth]\n"
            f'redirect_uri = "{redirect}"\n'
            f'cookie_secret = "{secrets.token_hex(32)}"\n'
            f'client_id = "{provider.client_id}"\n'
            f'client_secret = "{provider.client_secret}"\n'
            f'server_metadata_url = "{provider.metadata_url}"\n', encoding="utf-8")
        with streamlit_server(workspace, log_name, "--secrets.files", str(secrets_file), port=port, env=env) as url:
            yield url, provider


@pytest.fixture
def signin_page():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        context = chromium.new_context(viewport={"width": 1400, "height": 1000})
        yield context.new_page()
        context.close()
        chromium.close()


def _shows_sign_in_screen(page) -> bool:
    return (page.get_by_role("button", name="Sign in").is_visible()
            and page.locator("[data-testid=stSidebar]").count() == 0
            and CORPUS not in page.locator("[data-testid=stMain]").inner_text())


@pytest.mark.slow
@pytest.mark.browser
def test_sign_in_review_as_the_identity_and_sign_out(signin_app, signin_page):
    url, provider, workspace = signin_app
    page = signin_page
    ARTIFACTS.mkdir(exist_ok=True)

    _open(page, f"{url}/Review")
    assert _shows_sign_in_screen(page)
    assert page.get_by_text("Review retrieved chunks").count() == 0
    page.screenshot(path=str(ARTIFACTS / "signin-1-signed-out.png"), full_page=True)

    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("heading", name="Test identity provider").wait_for(timeout=60_000)
    assert page.url.startswith(provider.issuer + "/authorize?")
    page.get_by_label("Email").fill("Alice@Example.org")
    page.screenshot(path=str(ARTIFACTS / "signin-2-provider.png"), full_page=True)
    page.get_by_role("button", name="Continue").click()
    sidebar = page.locator("[data-testid=stSidebar]")
    sidebar.get_by_text("Signed in as alice@example.org").wait_for(timeout=120_000)
    _settle(page)
    assert page.url.rstrip("/") == url  # back on the app, the callback done
    assert provider.issued[-1]["email"] == "Alice@Example.org" and provider.issued[-1]["nonce"]
    page.screenshot(path=str(ARTIFACTS / "signin-3-signed-in.png"), full_page=True)

    _open(page, f"{url}/Review")
    reviewer = page.get_by_role("textbox", name="Reviewer", exact=False)
    assert reviewer.input_value() == "alice@example.org" and reviewer.is_disabled()
    box = page.get_by_role("textbox", name="Question", exact=True)
    box.fill(QUESTION)
    box.press("Enter")
    page.wait_for_selector(".sac-hit", timeout=180_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "signin-4-review-as-alice.png"))
    page.locator("[data-testid=stRadio]").filter(has_text="Label for #1").get_by_text("relevant", exact=True).click()
    page.get_by_role("button", name="Save labels for baseline").click()
    page.get_by_text("Saved 1 labels for baseline").wait_for(timeout=60_000)
    _settle(page)
    page.screenshot(path=str(ARTIFACTS / "signin-5-review-saved.png"), full_page=True)
    [label] = ReviewStore(Workspace(workspace).reviews_dir).labels()
    assert (label.reviewer, label.label, label.rank, label.method) == ("alice@example.org", "relevant", 1, "baseline")

    sidebar.get_by_role("button", name="Sign out").click()
    page.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
    _settle(page)
    assert _shows_sign_in_screen(page)
    page.screenshot(path=str(ARTIFACTS / "signin-6-signed-out-again.png"), full_page=True)
    _open(page, f"{url}/Review")  # the cookie is gone: a fresh load is signed out too
    assert _shows_sign_in_screen(page)
