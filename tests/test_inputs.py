"""Hostile and out-of-range user input: queries, k and names, through the library and the CLI.

One index (the demo ContractNLI corpus, baseline, the real model, an embedded chromadb) is built once for
the module; every test reads it. CLI runs go through ``sac.cli.main`` in this process with the session's
model (conftest's ``cli`` and ``memo``), except one real ``python -m sac`` run that proves the exit code and
the absence of a traceback.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sac.chunking.merge import index_chunks
from sac.config import SacConfig
from sac.errors import ConfigError, QueryError
from sac.evaluation.runs import open_run
from sac.ingest.catalog import corpus_name
from sac.methods import parse_methods
from sac.retrieval.targets import CONFIDENT
from sac.types import MAX_K, MAX_QUERY_CHARS, Document
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace

ROOT = Path(__file__).resolve().parents[1]
BASELINE = parse_methods("baseline")
CORPUS = "demo-contractnli"  # what `--datasets contractnli` indexes as (benchmark folder "demo")

EMPTY = "The query is empty: type a question about the documents."
NO_WORDS = "The query has no letters or digits: it cannot match anything meaningful."
TOO_LONG = "The query has 20,000 characters; the limit is 8,000. Ask a question rather than pasting a document."
BAD_QUERIES = [
    pytest.param("", EMPTY, id="empty"),
    pytest.param(" \n\t  ", EMPTY, id="whitespace"),
    pytest.param("x" * 20_000, TOO_LONG, id="20000-chars"),
    pytest.param("?!... -- ;;; ()[]{} ¿¡ …", NO_WORDS, id="punctuation"),
]


class CountingEmbedder:
    """The real model, counting how many texts it was asked to embed."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.texts = 0

    def embed_documents(self, texts):
        self.texts += len(texts)
        return self.inner.embed_documents(texts)

    def embed_query(self, text):
        self.texts += 1
        return self.inner.embed_query(text)


@pytest.fixture(scope="module")
def built(tmp_path_factory, memo, demo_datasets):
    """A workspace holding the baseline index of the demo ContractNLI corpus (embedded through the session's
    ``memo``: the real model's vectors, each text embedded once per session)."""
    workspace = tmp_path_factory.mktemp("inputs") / "workspace"
    wb = Workbench(SacConfig(workspace=workspace), embedder=memo)
    docs = list(demo_datasets["contractnli"].documents)
    assert corpus_name("demo", demo_datasets["contractnli"]) == CORPUS
    report = wb.build(CORPUS, docs, BASELINE)["baseline"]
    chunks = [c for d in docs for c in index_chunks(d)]
    assert report.added == len(chunks) == 148  # the demo NDAs: 156 pieces, 8 of them joined to a neighbour
    return workspace, docs, chunks


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


# ---------------------------------------------------------------- queries


@pytest.mark.parametrize("text, message", BAD_QUERIES)
def test_bad_query_is_refused_before_the_model_runs(built, embedder, text, message):
    workspace, _, _ = built
    counting = CountingEmbedder(embedder)
    wb = Workbench(SacConfig(workspace=workspace), embedder=counting)
    with pytest.raises(QueryError) as info:
        wb.search(CORPUS, BASELINE, ["termination of the agreement", text], 8)
    assert str(info.value) == message
    assert counting.texts == 0


def test_query_at_the_length_limit_is_searched(built, memo):
    workspace, _, chunks = built
    wb = Workbench(SacConfig(workspace=workspace), embedder=memo)
    words = ("confidential information shall not be disclosed " * 200)[:MAX_QUERY_CHARS]
    assert len(words.strip()) == MAX_QUERY_CHARS
    hits = wb.search(CORPUS, BASELINE, [words], 8)["baseline"][0]
    assert len(hits) == 8 and {h.chunk.chunk_id for h in hits} <= {c.chunk_id for c in chunks}
    with pytest.raises(QueryError, match="8,001 characters; the limit is 8,000"):
        wb.search(CORPUS, BASELINE, [words + "x"], 8)


@pytest.mark.parametrize("text, message", BAD_QUERIES)
def test_cli_query_reports_a_bad_query_in_one_line(built, cli, text, message):
    workspace, _, _ = built
    code, out, err = cli("query", text, "--workspace", str(workspace), "--datasets", "contractnli",
                         "--methods", "baseline", "-q")
    assert (code, out, err) == (1, "", f"error: {message}\n")


@pytest.mark.slow
def test_cli_query_in_a_real_process_exits_1_without_traceback(built):
    workspace, _, _ = built
    proc = subprocess.run(
        [sys.executable, "-m", "sac", "query", "?!?", "--workspace", str(workspace), "--datasets", "contractnli",
         "--methods", "baseline", "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
        env={**os.environ, "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"},
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == f"error: {NO_WORDS}"


def test_cli_query_says_what_a_routed_method_read_in_the_title(built, cli):
    """``sac query`` prints, under a +names / +docs<N> method, what Compare shows: the question as searched, which
    contract it names (by its parties), how sure and why, and the documents searched inside; the hits then come from
    that document only."""
    workspace, docs, _ = built
    ag = next(d.doc_id for d in docs if "AGProjects" in d.doc_id)
    code, out, _ = cli("query", "Consider the Non-Disclosure Agreement of AGPROJECTS; Who may receive it?",
                       "--workspace", str(workspace), "--datasets", "contractnli", "--methods", "baseline,baseline+docs1+names",
                       "--k", "3", "--target-doc", ag, "-q")
    assert code == 0
    plain, routed = out.split("== baseline+docs1+names\n")
    assert "Named:" not in plain
    lines = routed.splitlines()
    named = "AG Projects · Non-Disclosure Agreement — AGProjects-NDA"  # its parties and type, the file title beside
    sure = re.fullmatch(rf"   Named: {re.escape(named)} \((\d+)% sure\): its text writes the company name “agprojects” "
                        r"\(letters and digits compared\) \(no other document writes it\)\.", lines[1])
    assert sure and int(sure.group(1)) >= 100 * CONFIDENT  # the model's probability, at least the sure threshold
    assert [lines[0], lines[2]] == [
        "   Searched as: Consider the Non-Disclosure Agreement of AG Projects; Who may receive it?",
        f"   Searched inside: {named}",
    ]
    assert len(lines) == 6 and all(f" {ag} [" in line and "WRONG-DOC" not in line for line in lines[3:])


# ---------------------------------------------------------------- k


@pytest.mark.parametrize("k", [0, -1, -1000, True, 2.0, MAX_K + 1])
def test_bad_k_is_a_query_error(built, embedder, k):
    workspace, _, _ = built
    counting = CountingEmbedder(embedder)
    wb = Workbench(SacConfig(workspace=workspace), embedder=counting)
    expected = f"k must be at most {MAX_K}, got {k}" if k == MAX_K + 1 else f"k must be a whole number >= 1, got {k!r}"
    with pytest.raises(QueryError) as info:
        wb.search(CORPUS, BASELINE, ["governing law"], k)
    assert str(info.value) == expected
    assert counting.texts == 0


@pytest.mark.parametrize("k", [157, 500, MAX_K])
def test_k_above_the_number_of_chunks_returns_every_chunk_once(built, memo, k):
    workspace, docs, chunks = built
    texts = {d.doc_id: d.text for d in docs}
    wb = Workbench(SacConfig(workspace=workspace), embedder=memo)
    hits = wb.search(CORPUS, BASELINE, ["governing law", "return of confidential materials"], k)["baseline"]
    for query_hits in hits:
        assert sorted(h.chunk.chunk_id for h in query_hits) == sorted(c.chunk_id for c in chunks)
        assert [h.rank for h in query_hits] == list(range(1, len(chunks) + 1))
        scores = [h.score for h in query_hits]
        assert scores == sorted(scores, reverse=True)
        assert all(texts[h.span.doc_id][h.span.start : h.span.end] == h.chunk.text for h in query_hits)


@pytest.mark.parametrize("k", ["0", "-1"])
def test_cli_query_reports_bad_k_in_one_line(built, cli, k):
    workspace, _, _ = built
    code, out, err = cli("query", "governing law", "--workspace", str(workspace), "--datasets", "contractnli",
                         "--methods", "baseline", "--k", k, "-q")
    assert (code, out, err) == (1, "", f"error: k must be a whole number >= 1, got {int(k)}\n")


@pytest.mark.parametrize("args", [("   ", "--k", "8"), ("governing law", "--k", "0")])
def test_cli_query_refuses_bad_input_before_building_anything(tmp_path, cli, args):
    workspace = tmp_path / "fresh"
    code, out, _ = cli("query", args[0], *args[1:], "--workspace", str(workspace), "--datasets", "contractnli",
                       "--methods", "baseline", "-q")
    assert (code, out) == (1, "") and not workspace.exists()  # no index was built for a query that cannot run


@pytest.mark.parametrize("ks, message", [
    ("0", "error: k values must be whole numbers from 1 to 1000, got [0]\n"),
    ("8,-2", "error: k values must be whole numbers from 1 to 1000, got [8, -2]\n"),
    ("8,1001", "error: k values must be whole numbers from 1 to 1000, got [8, 1001]\n"),
    ("1,x", "error: Expected comma-separated whole numbers, got '1,x'\n"),
])
def test_cli_eval_reports_bad_k_in_one_line(built, cli, ks, message):
    workspace, _, _ = built
    before = _files(workspace)
    code, out, err = cli("eval", "--workspace", str(workspace), "--datasets", "contractnli", "--methods", "baseline",
                         "--k", ks, "-q")
    assert (code, out, err) == (1, "", message)
    assert not (workspace / "runs").exists() or _files(workspace / "runs") <= before


def test_cli_eval_with_k_above_the_number_of_chunks_scores_every_chunk(built, cli, tmp_path):
    workspace, _, chunks = built
    out_csv = tmp_path / "metrics.csv"
    code, out, err = cli("eval", "--workspace", str(workspace), "--datasets", "contractnli", "--methods", "baseline",
                         "--k", "1,500", "--out", str(out_csv), "-q")
    assert code == 0, err
    frame = pd.read_csv(out_csv, dtype={"k": str})
    at_500 = frame[frame["k"] == "500"].iloc[0]
    # Retrieving every chunk covers every gold character: recall is exactly 1.
    assert at_500["recall"] == 1.0 and at_500["queries"] == 52
    run_dir = Path(out.strip().splitlines()[-1].removeprefix("run saved: "))
    rows = [json.loads(line) for line in (run_dir / "retrieved.jsonl").read_text().splitlines()]
    assert len(rows) == 52 and all(len(r["retrieved"]) == len(chunks) for r in rows)


# ---------------------------------------------------------------- names


BAD_NAMES = ["../x", "/etc", "a/b", "..", "x\n", "", "-rf", "a\\b", "x" * 81]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_config_errors_and_create_nothing(tmp_path, name):
    workspace = Workspace(tmp_path / "workspace")
    calls = [
        lambda: workspace.corpus_path(name),
        lambda: workspace.save_corpus(name, [Document("a.txt", "text")]),
        lambda: workspace.add_documents(name, [Document("a.txt", "text")]),
        lambda: workspace.load_corpus(name),
        lambda: workspace.remove_documents(name, ["a.txt"]),
        lambda: workspace.new_run_dir(name),
        lambda: open_run(workspace, name),
    ]
    for call in calls:
        with pytest.raises(ConfigError, match=r"^Invalid (corpus name|run label|run id) "):
            call()
    assert _files(tmp_path) == set()
    assert not Path("/etc.jsonl").exists() and not Path("/x.jsonl").exists()


@pytest.mark.parametrize("args, message", [
    (["ingest", "--corpus", "../x"], "Invalid corpus name '../x'"),
    (["ingest", "--corpus", "/etc"], "Invalid corpus name '/etc'"),
    (["query", "governing law", "--corpus", "a/b"], "Invalid corpus name 'a/b'"),
    (["summarize", "--strategy", "generic", "--corpus", "../x"], "Invalid corpus name '../x'"),
    (["runs", "show", "../x"], "Invalid run id '../x'"),
    (["runs", "compare", "/etc", "a/b"], "Invalid run id '/etc'"),
])
def test_cli_refuses_bad_names_in_one_line(tmp_path, cli, args, message):
    workspace = tmp_path / "workspace"
    code, out, err = cli(*args, "--workspace", str(workspace), "-q")
    assert code == 1 and out == ""
    assert err.startswith(f"error: {message}: use 1-80 letters") and err.count("\n") == 1
    assert _files(tmp_path) == set()
    assert not Path("/etc.jsonl").exists()


def test_cli_ingest_docs_into_a_bad_corpus_name_writes_nothing(tmp_path, cli):
    doc = tmp_path / "docs" / "nda.txt"
    doc.parent.mkdir()
    doc.write_text("This Non-Disclosure Agreement is made between A and B.", encoding="utf-8")
    workspace = tmp_path / "workspace"
    code, _, err = cli("ingest", "--docs", str(doc), "--corpus", "../escaped", "--workspace", str(workspace), "-q")
    assert code == 1 and err.startswith("error: Invalid corpus name '../escaped'")
    assert _files(tmp_path) == {doc}


def test_cli_eval_with_a_bad_run_label_saves_nothing(built, cli):
    workspace, _, _ = built
    runs_before = _files(workspace / "runs") if (workspace / "runs").exists() else set()
    code, out, err = cli("eval", "--workspace", str(workspace), "--datasets", "contractnli", "--methods", "baseline",
                         "--k", "1", "--label", "../../escaped", "-q")
    assert code == 1 and err.startswith("error: Invalid run label '../../escaped'") and err.count("\n") == 1
    runs_after = _files(workspace / "runs") if (workspace / "runs").exists() else set()
    assert runs_after == runs_before
    assert not list(workspace.parent.parent.rglob("escaped*"))
