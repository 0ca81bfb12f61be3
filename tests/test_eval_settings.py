"""`sac eval` and the Evaluate page make the same request for the same choices (sac.usecases.evaluate's
``EvaluationRequest`` and ``evaluate_and_save``), so the runs they save record the same settings; and a distractor
pool's suffix is added to a dataset's corpus once."""

from __future__ import annotations

import shutil

import pytest
from streamlit.testing.v1 import AppTest

from sac.evaluation.review import ReviewStore, make_gold_span
from sac.evaluation.runs import list_runs
from sac.ingest.catalog import corpus_name
from sac.types import Dataset, Document
from sac.usecases.evaluate import EvaluationRequest
from sac.workspace import Workspace
from tests.conftest import APP

CORPUS = "demo-contractnli"


@pytest.fixture
def workspace(demo_workspace, monkeypatch, tmp_path, app_memo):
    """A private copy of the demo workspace (ContractNLI indexed), the app and the CLI on the session's model."""
    path = tmp_path / "copy"
    shutil.copytree(demo_workspace, path)
    monkeypatch.setenv("SAC_WORKSPACE", str(path))
    return path


def _page_run(benchmark: str, label: str) -> None:
    """Evaluate baseline and sac-generic at k = 1 and 8 on ``benchmark``'s first dataset from the Evaluate page."""
    at = AppTest.from_file(APP, default_timeout=600).switch_page("pages/4_Evaluate.py").run()
    at.selectbox(key="eval_benchmark").set_value(benchmark).run()
    if benchmark == "demo":
        at.multiselect(key="eval_datasets_demo").set_value(["contractnli"])
    at.multiselect(key="eval_methods").set_value(["baseline", "sac-generic"])
    at.multiselect(key="eval_ks").set_value([1, 8])
    at.text_input(key="eval_label").set_value(label)
    [submit] = [b for b in at.button if b.label == "Run the evaluation"]
    submit.click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    assert any("Run saved as" in s.value for s in at.success)


def _settings(path, label: str) -> dict:
    [run] = [r for r in list_runs(Workspace(path)) if r.run_id.endswith(f"-{label}")]  # <UTC time>-<label>
    return run.settings


@pytest.mark.slow
def test_sac_eval_and_the_evaluate_page_save_the_same_settings(workspace, cli, demo_datasets):
    _page_run("demo", "page")
    code, _, err = cli("eval", "--datasets", "contractnli", "--methods", "baseline,sac-generic", "--k", "1,8",
                       "--label", "cli", "-q")
    assert code == 0, err
    page, command = _settings(workspace, "page"), _settings(workspace, "cli")
    assert page == command
    assert page["datasets"] == ["contractnli"] and page["corpora"] == {"contractnli": CORPUS}
    assert page["methods"] == ["baseline", "sac-generic"] and page["k"] == [1, 8] and "source" not in page

    # The same for the ground truth marked on Review: the page's "Reviewed ground truth of ..." and `--corpus`.
    ndas = demo_datasets["contractnli"]
    question = ndas.queries[0]
    gold = question.gold[0]
    text = next(d.text for d in ndas.documents if d.doc_id == gold.doc_id)
    ReviewStore(Workspace(workspace).reviews_dir).add_gold(make_gold_span(
        corpus=CORPUS, query_id=question.query_id, query=question.text, doc_id=gold.doc_id, doc_text=text,
        start=gold.start, end=gold.end, reviewer="alice"))
    _page_run(f"reviewed:{CORPUS}", "pagereviewed")
    code, _, err = cli("eval", "--corpus", CORPUS, "--methods", "baseline,sac-generic", "--k", "1,8",
                       "--label", "clireviewed", "-q")
    assert code == 0, err
    page, command = _settings(workspace, "pagereviewed"), _settings(workspace, "clireviewed")
    assert page == command
    assert page["reviewed"] == {"corpus": CORPUS, "questions": 1, "spans": 1} and page["corpora"] == {CORPUS: CORPUS}


def test_a_pool_suffix_is_added_to_the_corpus_once():
    ds = Dataset("contractnli", (Document("a.txt", "one NDA"),), (), distractors=(Document("b.txt", "another NDA"),))
    request = EvaluationRequest((ds,), (), (1,), benchmark="demo")
    assert request.corpora == {"contractnli": CORPUS}  # as RunFolder.corpus_of reads it: no pool suffix
    searched = corpus_name("demo", ds, request.corpora["contractnli"])  # what evaluate() searches
    assert searched == corpus_name("demo", ds) and searched.count("+pool") == 1
