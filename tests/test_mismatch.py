"""Where wrong-document hits go: the tables of a real saved run on the demo NDAs sum back to its DRM, and each
figure matches a count made straight from retrieved.jsonl."""

from __future__ import annotations

import json
import re

import pytest

from sac.errors import ConfigError
from sac.evaluation.mismatch import every_mismatch_table, mismatch_tables
from sac.evaluation.runs import save_run
from sac.methods import parse_methods
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench

pytestmark = pytest.mark.slow  # every test reads the run the module fixture evaluates on the demo NDAs


@pytest.fixture(scope="module")
def run(tmp_path_factory, memo, demo_datasets):
    from sac.config import SacConfig

    wb = Workbench(SacConfig(workspace=tmp_path_factory.mktemp("mismatch") / "ws"), embedder=memo)
    result = evaluate(wb, [demo_datasets["contractnli"]], parse_methods("baseline,sac-generic"), [1, 8])
    return save_run(wb.workspace, result, wb.config, {"datasets": ["contractnli"]})


def _drm(run, method, k):
    metrics = run.metrics()
    row = metrics[(metrics["method"] == method) & (metrics["k"] == str(k)) & (metrics["dataset"] == "contractnli")]
    return float(row["drm"].iloc[0])


@pytest.mark.parametrize("method", ["baseline", "sac-generic"])
def test_the_tables_sum_back_to_the_run_and_match_its_hits(run, demo_datasets, method):
    gold = {q.text: {s.doc_id for s in q.gold} for q in demo_datasets["contractnli"].queries}
    rows = [json.loads(line) for line in (run.path / "retrieved.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["method"] == method]
    for k in (1, 8):
        takers, asked, _ = mismatch_tables(run, "contractnli", method, k)
        wrong = [(h["file_path"], r["query"]) for r in rows for h in r["retrieved"][:k]
                 if h["file_path"] not in gold[r["query"]]]
        assert takers["wrong hits"].sum() == len(wrong) > 0
        assert takers["share of wrong hits"].sum() == pytest.approx(1.0)
        top = takers.iloc[0]
        assert top["wrong hits"] == sum(d == top["document"] for d, _ in wrong) == takers["wrong hits"].max()
        assert top["questions"] == len({q for d, q in wrong if d == top["document"]})
        assert takers["first hits"].sum() == sum(r["retrieved"][0]["file_path"] not in gold[r["query"]] for r in rows)
        assert asked["questions"].sum() == 52 and asked["wrong hits"].sum() == len(wrong)
        assert asked["wrong hits"].sum() / asked["hits"].sum() == pytest.approx(_drm(run, method, k))
        assert asked["wrong first hit"].sum() == takers["first hits"].sum()
        assert list(asked["drm"]) == sorted(asked["drm"], reverse=True)
        assert set(asked["document"]) == {d for g in gold.values() for d in g}


@pytest.mark.parametrize("method", ["baseline", "sac-generic"])
def test_the_look_alike_pairs_split_each_document_s_wrong_hits_by_who_took_them(run, demo_datasets, method):
    gold = {q.text: "|".join(sorted({s.doc_id for s in q.gold})) for q in demo_datasets["contractnli"].queries}
    rows = [json.loads(line) for line in (run.path / "retrieved.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["method"] == method]
    for k in (1, 8):
        takers, asked, pairs = mismatch_tables(run, "contractnli", method, k)
        assert all(got.equals(want) for got, want in zip(every_mismatch_table(run, k)[("contractnli", method)],
                                                          (takers, asked, pairs)))
        assert pairs["wrong hits"].sum() == takers["wrong hits"].sum() > 0
        assert pairs["first hits"].sum() == takers["first hits"].sum()
        by_taker = pairs.groupby("took the hits")[["wrong hits", "first hits"]].sum()
        assert by_taker["wrong hits"].to_dict() == dict(zip(takers["document"], takers["wrong hits"]))
        by_asked = pairs.groupby("asked about")["wrong hits"].sum().to_dict()
        assert by_asked == {d: w for d, w in zip(asked["document"], asked["wrong hits"]) if w}
        assert not (pairs["asked about"] == pairs["took the hits"]).any()
        assert list(pairs["wrong hits"]) == sorted(pairs["wrong hits"], reverse=True)
        top = pairs.iloc[0]  # counted straight from the hits
        hits = [(r["query"], h["file_path"]) for r in rows for h in r["retrieved"][:k]
                if gold[r["query"]] == top["asked about"] and h["file_path"] == top["took the hits"]]
        assert top["wrong hits"] == len(hits) and top["questions"] == len({q for q, _ in hits})


def test_a_method_or_dataset_the_run_lacks_is_named(run):
    with pytest.raises(ConfigError, match="'sac-expert'"):
        mismatch_tables(run, "contractnli", "sac-expert", 8)
    with pytest.raises(ConfigError, match="'cuad'"):
        mismatch_tables(run, "cuad", "baseline", 8)
    with pytest.raises(ConfigError, match="k can be 1 to 8"):
        mismatch_tables(run, "contractnli", "baseline", 9)
    with pytest.raises(ConfigError, match="k can be 1 to 8"):
        mismatch_tables(run, "contractnli", "baseline", 0)


def _cli(run, *args: str, **kwargs):
    import subprocess
    import sys
    from pathlib import Path

    command = [sys.executable, "-m", "sac", "runs", "mismatch", run.run_id, *args, "--workspace", str(run.path.parents[1])]
    return subprocess.run(command, capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], **kwargs)


def test_the_command_line_prints_the_tables_per_method(run):
    out = _cli(run, "--k", "1", "--top", "2", check=True).stdout
    for method in ("baseline", "sac-generic"):
        takers = mismatch_tables(run, "contractnli", method, 1).takers
        drm = 100 * _drm(run, method, 1)
        assert f"contractnli / {method}, k=1: {takers['wrong hits'].sum()} wrong hits (DRM {drm:.1f} %)" in out
        for doc, share in zip(takers["document"][:2], takers["share of wrong hits"][:2]):  # the top rows, as computed
            assert re.search(rf"^ *{re.escape(doc)} .* {100 * share:.1f}$", out, re.MULTILINE)
    assert out.count("documents that took wrong hits:") == 2 and out.count("worst DRM first:") == 2
    assert out.count("look-alike pairs, the document asked about and the one that took its hits:") == 2
    assert "NaN" not in out


def test_the_command_line_refuses_what_it_cannot_show_and_stops_quietly_on_a_closed_pipe(run):
    import subprocess
    import sys
    from pathlib import Path

    for args, message in [(["--top", "0"], "--top must be 1 or more (rows per table), got 0"),
                          (["--k", "0"], "k=0 is outside this run"), ([], "")]:
        done = _cli(run, *args)
        assert (done.returncode, message in done.stderr) == ((1, True) if message else (0, True))
    # A reader that goes away at once (`| head -0`): no traceback, the exit code of a closed pipe.
    command = [sys.executable, "-m", "sac", "runs", "mismatch", run.run_id, "--workspace", str(run.path.parents[1])]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=Path(__file__).resolve().parents[1])
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    stderr = proc.stderr.read().decode()
    assert (proc.wait(timeout=120), stderr) == (141, "")
