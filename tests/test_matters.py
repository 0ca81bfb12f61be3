"""Matters kept apart (sac.usecases.matters) and the audit trail (sac.audit), in the library.

The access file decides which signed-in identity opens which matter; every lookup of a corpus, run,
review or index happens inside the matter's own workspace (and, with a Chroma server, its own database),
so another matter's name, corpus or run cannot be reached by naming it. The audit trail records uploads,
builds, summary edits and language-model requests with who made them, never the documents' text.
"""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path

import pytest

from sac.audit import AuditLog, acting_as, current_actor, entries_csv
from sac.config import SacConfig
from sac.errors import AccessDenied, ConfigError, CorpusError
from sac.evaluation.runs import open_run
from sac.index.client import make_client
from sac.index.store import list_indexes
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_methods
from sac.summaries.llm import OpenAISummarizer
from sac.types import Document
from sac.usecases.jobs import BuildJob, BuildStep
from sac.usecases.matters import Access, open_matter, remove_matter
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace
from tests.conftest import DEMO
from tests.openai_stub import OpenAIStub

ACCESS = """
# who may open what
[users]
"Alice@Example.org" = ["acme-v-beta", "globex"]
"bob@example.org" = ["acme-v-beta"]
"""


@pytest.fixture
def root(tmp_path) -> SacConfig:
    access = tmp_path / "access.toml"
    access.write_text(ACCESS)
    return SacConfig(workspace=tmp_path / "workspace", access_file=access)


@pytest.fixture(scope="module")
def ndas() -> list[Document]:
    return list(load_benchmark(DEMO, datasets=["contractnli"])[0].documents[:2])


def test_the_access_file_says_who_opens_which_matter(root):
    rules = Access.load(root.access_file)
    assert rules.matters_of("alice@example.org") == ["acme-v-beta", "globex"]
    assert rules.matters_of("  BOB@example.org ") == ["acme-v-beta"]
    assert rules.matters_of("carol@example.org") == [] and rules.matters_of(None) == []
    alice = open_matter(root, "alice@example.org", "globex")
    assert alice.workspace == root.workspace / "matters" / "globex"
    assert open_matter(root, "bob@example.org", "acme-v-beta").workspace == root.workspace / "matters" / "acme-v-beta"


def test_a_matter_outside_the_access_file_is_refused_and_the_refusal_is_logged(root):
    with pytest.raises(AccessDenied, match="bob@example.org may not open the matter 'globex'"):
        open_matter(root, "bob@example.org", "globex")
    with pytest.raises(AccessDenied, match="Sign in"):
        open_matter(root, None, "acme-v-beta")
    with pytest.raises(ConfigError, match="Invalid matter name"):
        open_matter(root, "alice@example.org", "../globex")
    assert not (root.workspace / "matters" / "globex").exists()
    log = AuditLog(root.workspace).entries()
    assert [(e["action"], e["details"]["identity"], e["what"]) for e in log] == [
        ("access-denied", "bob@example.org", "matter 'globex'")]


@pytest.mark.parametrize("text, message", [
    ("[users\n", "not valid TOML"),
    ('[people]\n"a@b.c" = ["x"]\n', r"needs a \[users\] table"),
    ('[users]\n"a@b.c" = "acme"\n', "must map to a list"),
    ('[users]\n"a@b.c" = ["../etc"]\n', "Invalid matter name"),
])
def test_a_bad_access_file_gets_a_clear_error(tmp_path, text, message):
    path = tmp_path / "access.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message):
        Access.load(path)
    with pytest.raises(ConfigError, match="does not exist"):
        Access.load(tmp_path / "missing.toml")


@pytest.mark.slow
def test_a_matters_corpora_runs_and_indexes_are_not_seen_from_another(root, memo, ndas):
    acme = Workbench(open_matter(root, "alice@example.org", "acme-v-beta"), embedder=memo)
    globex = Workbench(open_matter(root, "alice@example.org", "globex"), embedder=memo)
    acme.workspace.add_documents("ndas", ndas)
    acme.build("ndas", ndas, parse_methods("baseline"))
    run = acme.workspace.new_run_dir("eval")
    (run / "config.json").write_text("{}")
    assert open_run(acme.workspace, run.name).saved
    assert globex.workspace.list_corpora() == [] and list_indexes(globex.client) == []
    assert [i.corpus for i in list_indexes(acme.client)] == ["ndas"]
    with pytest.raises(CorpusError, match="No corpus named 'ndas'"):
        globex.workspace.load_corpus("ndas")
    # A run id is one path component inside the matter's runs folder: another matter's run cannot be named.
    with pytest.raises(ConfigError, match="Invalid run id"):
        open_run(globex.workspace, f"../../acme-v-beta/runs/{run.name}")
    with pytest.raises(ConfigError, match="No saved run"):
        open_run(globex.workspace, run.name)


@pytest.mark.slow
def test_on_a_chroma_server_each_matter_has_its_own_database(tmp_path, chroma_server, memo, ndas):
    access = tmp_path / "access.toml"
    access.write_text(ACCESS)
    root = SacConfig(workspace=tmp_path / "workspace", access_file=access, chroma_url=chroma_server)
    acme_cfg = open_matter(root, "alice@example.org", "acme-v-beta")
    globex_cfg = open_matter(root, "alice@example.org", "globex")
    assert acme_cfg.chroma_database == "sac-acme-v-beta"
    acme = Workbench(acme_cfg, embedder=memo)
    acme.build("ndas", ndas, parse_methods("baseline"))
    # The same corpus name in the other matter is another collection in another database.
    assert list_indexes(make_client(globex_cfg)) == []
    assert [i.corpus for i in list_indexes(make_client(acme_cfg))] == ["ndas"]
    with pytest.raises(AccessDenied):
        remove_matter(root, "bob@example.org", "globex")
    done = remove_matter(root, "alice@example.org", "acme-v-beta")
    assert done["server_database_dropped"] is True
    assert list_indexes(make_client(acme_cfg)) == []  # opening it again makes a new, empty database
    assert not acme_cfg.workspace.exists()
    assert AuditLog(root.workspace).entries()[-1]["what"] == "matter 'acme-v-beta'"


def _open_at_once(config: SacConfig, user: str, matter: str, sessions: int) -> list[BaseException]:
    """``sessions`` threads open one matter's store at the same moment; the errors they met."""
    barrier = threading.Barrier(sessions)
    errors: list[BaseException] = []

    def open_it() -> None:
        barrier.wait()
        try:
            make_client(open_matter(config, user, matter))
        except BaseException as err:  # noqa: BLE001 - returned to the test
            errors.append(err)

    threads = [threading.Thread(target=open_it) for _ in range(sessions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return errors


@pytest.mark.slow
def test_sessions_opening_a_new_matter_on_the_server_at_once_all_open_it(tmp_path, chroma_server):
    """Opening a matter creates its server database unless it exists. Four sessions opening a new matter at once
    all found it missing, and all but one failed ("Database [...] already exists") in 8 of 20 such rounds."""
    names = [f"new-matter-{n}" for n in range(10)]
    access = tmp_path / "access.toml"
    access.write_text("[users]\n" + f'"alice@example.org" = [{", ".join(repr(name) for name in names)}]\n')
    root = SacConfig(workspace=tmp_path / "workspace", access_file=access, chroma_url=chroma_server)
    for name in names:
        assert _open_at_once(root, "alice@example.org", name, 4) == [], name
        assert list_indexes(make_client(open_matter(root, "alice@example.org", name))) == []


def test_removing_a_matter_removes_its_folder_and_is_logged_at_the_root(root, memo, ndas):
    acme_cfg = open_matter(root, "bob@example.org", "acme-v-beta")
    with acting_as("bob@example.org"):
        Workbench(acme_cfg, embedder=memo).workspace.add_documents("ndas", ndas)
        done = remove_matter(root, "bob@example.org", "acme-v-beta")
    assert done["files"] >= 2 and not acme_cfg.workspace.exists()
    entry = AuditLog(root.workspace).entries()[-1]
    assert (entry["who"], entry["action"], entry["what"]) == ("bob@example.org", "delete", "matter 'acme-v-beta'")


def test_the_command_line_removes_a_whole_matter(root, cli, monkeypatch, ndas):
    monkeypatch.setenv("SAC_WORKSPACE", str(root.workspace))
    monkeypatch.setenv("SAC_ACCESS_FILE", str(root.access_file))
    folder = open_matter(root, "bob@example.org", "acme-v-beta").workspace
    Workspace(folder).add_documents("ndas", ndas)
    code, out, _ = cli("remove", "--matter", "acme-v-beta")
    assert code == 0 and out.startswith("Removed matter 'acme-v-beta': ") and not folder.exists()
    assert Path(root.workspace / "matters").is_dir() and AuditLog(root.workspace).entries()[-1]["action"] == "delete"
    code, _, err = cli("remove", "--matter", "globex", "--corpus", "ndas")
    assert code != 0 and "give it alone" in err


# -- the audit trail ---------------------------------------------------------------------------
@pytest.mark.slow
def test_uploads_builds_edits_and_llm_requests_are_logged_with_who_and_never_the_text(tmp_path, memo, ndas):
    secret = uuid.uuid4().hex
    doc = Document("planted.txt", ndas[0].text + f"\nSecret clause {secret}.\n")
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    with acting_as("alice@example.org"):
        wb.workspace.add_documents("ndas", [doc, ndas[1]])
        wb.build("ndas", [doc, ndas[1]], parse_methods("baseline,sac-generic"))
        wb.build("ndas", [doc, ndas[1]], parse_methods("baseline"))  # nothing to do: not logged
        wb.summary_store.save_edit(doc, "generic", f"NDA with a hand-written summary {secret}")
        with OpenAIStub(default="NDA between two parties on confidential information.") as stub:
            llm = OpenAISummarizer("generic-llm", model="gpt-4o-mini", base_url=stub.base_url, api_key="test")
            wb.summaries([doc, ndas[1]], "generic-llm", summarizer=llm)
            wb.summaries([doc, ndas[1]], "generic-llm", summarizer=llm)  # cached: nothing sent, nothing logged
    entries = wb.audit.entries()
    assert [e["action"] for e in entries] == ["upload", "build", "summary-edit", "llm"]
    assert {e["who"] for e in entries} == {"alice@example.org"}
    upload, build, edit, llm_entry = entries
    assert upload["details"]["documents"] == {"count": 2, "ids": ["planted.txt", ndas[1].doc_id]}
    assert build["details"]["methods"] == ["baseline", "sac-generic"]
    assert build["details"]["indexes"]["baseline"]["added"] > 0
    assert edit["what"] == "document 'planted.txt'" and edit["details"]["version"] == 2  # over the generated one
    assert llm_entry["details"]["server"] == stub.base_url.rstrip("/")
    assert llm_entry["details"]["documents"]["count"] == 2 and llm_entry["details"]["model"] == "gpt-4o-mini"
    assert secret not in wb.audit.path.read_text()
    assert wb.audit.verify() is None


def test_the_log_is_a_chain_an_edited_or_dropped_line_breaks(tmp_path):
    log = AuditLog(tmp_path)
    for i in range(4):
        log.record("export", f"labels {i}")
    assert log.verify() is None
    lines = log.path.read_text().splitlines()
    edited = json.loads(lines[1])
    edited["who"] = "someone-else"
    log.path.write_text("\n".join([lines[0], json.dumps(edited, sort_keys=True), *lines[2:]]) + "\n")
    assert log.verify() == 3  # line 2 changed, so line 3 no longer follows it
    log.path.write_text("\n".join([lines[0], *lines[2:]]) + "\n")
    assert log.verify() == 2
    with pytest.raises(ValueError, match="Unknown audit action"):
        log.record("read", "x")


def test_concurrent_writers_keep_one_unbroken_chain(tmp_path):
    log = AuditLog(tmp_path)

    def write(who: str) -> None:
        with acting_as(who):
            for i in range(25):
                log.record("export", f"{who} {i}")

    threads = [threading.Thread(target=write, args=(f"user{n}",)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    entries = log.entries()
    assert len(entries) == 100 and log.verify() is None
    assert {e["who"] for e in entries} == {f"user{n}" for n in range(4)}
    assert entries_csv(entries).splitlines()[0] == "when,who,action,what,details"


@pytest.mark.slow
def test_a_background_build_acts_as_whoever_started_it(tmp_path, memo, ndas):
    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    assert current_actor().startswith("local:")
    with acting_as("bob@example.org"):
        job = BuildJob(wb, "ndas", [BuildStep("ndas", tuple(ndas), tuple(parse_methods("baseline")))]).start()
    assert job.wait(600)
    assert [(e["who"], e["action"]) for e in wb.audit.entries()] == [("bob@example.org", "build")]


def test_the_root_of_a_deployment_without_matters_is_one_workspace(tmp_path):
    cfg = SacConfig(workspace=tmp_path / "ws")
    with pytest.raises(ConfigError, match="Matters are off"):
        open_matter(cfg, "alice@example.org", "acme")
    assert not Path(tmp_path / "ws" / "matters").exists()
