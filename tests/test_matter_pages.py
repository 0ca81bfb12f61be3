"""Matters in the app (AppTest with ``AppTest.user`` as the signed-in identity; the real sign-in flow is
tests/test_signin.py): each user sees only the matters the access file gives them, a crafted ``?matter=``
is refused by the library and logged, and the audit trail page shows and exports the matter's log.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from sac.audit import AuditLog
from sac.ingest.benchmark import load_benchmark
from sac.workspace import Workspace
from tests.conftest import DEMO
from tests.test_signin import AUTH

ROOT = Path(__file__).resolve().parents[1]
CORPUS_PAGE = "pages/1_Corpus.py"
ACCESS = """
[users]
"alice@example.org" = ["acme-v-beta", "globex"]
"bob@example.org" = ["acme-v-beta"]
"""


@pytest.fixture
def deployment(tmp_path, monkeypatch) -> Path:
    """Two matters, each with one uploaded corpus named after it."""
    access = tmp_path / "access.toml"
    access.write_text(ACCESS)
    monkeypatch.setenv("SAC_ACCESS_FILE", str(access))
    root = tmp_path / "workspace"
    monkeypatch.setenv("SAC_WORKSPACE", str(root))
    docs = load_benchmark(DEMO, datasets=["contractnli"])[0].documents
    Workspace(root / "matters" / "acme-v-beta").add_documents("acme-ndas", docs[:2])
    Workspace(root / "matters" / "globex").add_documents("globex-ndas", docs[2:3])
    return root


def _as(who: str | None, page: str = CORPUS_PAGE, **params: str) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).switch_page(page)
    at.secrets["auth"] = AUTH
    if who is not None:
        at.user = {"is_logged_in": True, "email": who, "name": who.split("@")[0]}
    for key, value in params.items():
        at.query_params[key] = value
    return at


def _corpora(at: AppTest) -> list[str]:
    return [o.split(" (")[0] for o in at.selectbox(key="corpus_shown").options]


def test_each_user_sees_only_the_matters_the_access_file_gives_them(deployment):
    at = _as("alice@example.org").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    matter = at.sidebar.selectbox(key="sac_matter_pick")
    assert matter.options == ["acme-v-beta", "globex"] and matter.value == "acme-v-beta"
    assert [o for o in _corpora(at) if "ndas" in o] == ["acme-ndas"]
    matter.set_value("globex").run()
    assert [o for o in _corpora(at) if "ndas" in o] == ["globex-ndas"]
    assert at.query_params["matter"] in ("globex", ["globex"])

    bob = _as("bob@example.org").run()
    assert bob.sidebar.selectbox(key="sac_matter_pick").options == ["acme-v-beta"]


def test_a_crafted_matter_in_the_url_is_refused_and_logged(deployment):
    at = _as("bob@example.org", matter="globex").run()
    assert [e.value for e in at.error] == ["This matter cannot be opened."]
    assert "bob@example.org may not open the matter 'globex'. Ask whoever keeps the access file to add it." in [
        t.value for t in at.get("text")]  # as text: the identity and the URL's matter are never markdown
    assert "access.toml" not in str([t.value for t in at.get("text")])  # the server's paths stay on the server
    assert "corpus_shown" not in [s.key for s in at.selectbox]  # the page stopped before any content
    denied = AuditLog(deployment).entries()
    assert [(e["action"], e["who"], e["what"]) for e in denied] == [("access-denied", "bob@example.org", "matter 'globex'")]
    assert [e["action"] for e in AuditLog(deployment / "matters" / "globex").entries()] == ["upload"]  # the fixture's


@pytest.mark.slow
def test_matters_need_a_signed_in_identity(deployment):
    at = _as(None).run()  # signed out: the sign-in screen, nothing of any matter
    assert [b.label for b in at.button] == ["Sign in"] and "corpus_shown" not in [s.key for s in at.selectbox]
    no_auth = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120).switch_page(CORPUS_PAGE)
    no_auth.user = {"is_logged_in": True, "email": "alice@example.org"}
    no_auth.run()  # an access file without sign-in configured: refused, not opened to anyone
    assert "needs sign-in" in no_auth.error[0].value
    assert "corpus_shown" not in [s.key for s in no_auth.selectbox]


@pytest.mark.slow
def test_the_audit_trail_page_shows_the_matters_log_and_exports_it(deployment):
    at = _as("alice@example.org", "pages/7_Audit_trail.py").run()
    assert not at.exception and not at.error
    table = at.dataframe[0].value
    assert list(table["action"]) == ["upload"] and table["what"][0] == "corpus 'acme-ndas'"
    assert "unbroken" in at.success[0].value
    at.sidebar.selectbox(key="sac_matter_pick").set_value("globex").run()
    assert list(at.dataframe[0].value["what"]) == ["corpus 'globex-ndas'"]


@pytest.mark.slow
def test_a_matter_is_removed_whole_from_home_and_opens_empty_and_writable_again(deployment, memo):
    from sac.config import SacConfig
    from sac.index.client import make_client
    from sac.index.store import list_indexes
    from sac.methods import parse_methods
    from sac.usecases.matters import open_matter
    from sac.usecases.workbench import Workbench

    root = SacConfig.from_env()
    acme = open_matter(root, "alice@example.org", "acme-v-beta")
    docs = Workspace(acme.workspace).load_corpus("acme-ndas")
    Workbench(acme, embedder=memo).build("acme-ndas", docs, parse_methods("baseline"))
    at = _as("alice@example.org", "app.py").run()  # opens acme's store in this process, as a server would
    assert not at.exception and not at.error
    assert at.button(key="home_matter_remove").disabled
    at.text_input(key="home_matter_confirm").input("acme-v-beta").run()
    at.button(key="home_matter_remove").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [s.value for s in at.success][0].startswith("Removed the matter 'acme-v-beta' (")
    # The page reran in the matter, whose name stays in the access file: it opened again, empty.
    assert not (acme.workspace / "corpora").exists() and not (acme.workspace / "audit.jsonl").exists()
    assert (deployment / "matters" / "globex" / "corpora").is_dir()
    entry = AuditLog(deployment).entries()[-1]
    assert (entry["who"], entry["action"], entry["what"]) == ("alice@example.org", "delete", "matter 'acme-v-beta'")
    assert "acme-ndas" not in _corpora(_as("alice@example.org").run())
    assert list_indexes(make_client(acme)) == []  # and its store takes writes again
    report = Workbench(acme, embedder=memo).build("again", docs[:1], parse_methods("baseline"))
    assert report["baseline"].added > 0
