"""Every shipped method returns the hit lists bench/golden.py recorded: a change of the code that must not move a hit
(a restructuring) is checked against them, and a change that means to move hits records them again and says how
many moved (target resolution: 35 of 11,352 demo lists, all +names with +docs<N>; built-in summaries without the
governing law and the term: 2,098 of the 2,552 NDA lists, every one that moved of a method on a built-in summary's
index, none of the baseline's or the LLM summaries'; of the large file's 11,352, 8,763, and 21 of the baseline's and
LLM summaries' 1,806 at ranks 10-64 between near-equal scores, the CUAD demo's graphs being built anew).

The fast test builds the demo's five NDAs anew and checks every method whose index is one of the paper's three
(baseline, sac-generic, sac-expert: every search option runs on them) against tests/golden/. The large test checks
every shipped method on both demo datasets against bench/results/golden-demo.jsonl.gz, searching the workspace
bench/golden.py built (HNSW graphs built anew may order near-ties their own way; a search of the same graph may
not). The full-size proof of the restructuring (7,200 dev hit lists, every one identical at its commit d2814b7) is
bench/results/golden-full-dev-restructure.jsonl.gz: recorded by the code before it, it no longer matches +names.
"""

from __future__ import annotations

import gzip
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from sac.config import SacConfig
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import corpus_name
from sac.methods import parse_method
from sac.summaries.sets import import_summary_sets
from sac.usecases.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
GOLDEN = ROOT / "tests" / "golden" / "demo-contractnli.jsonl.gz"
TIE = 1e-5  # scores this close may come in either order (float noise across machines)


def read_golden(path: Path) -> tuple[dict[str, Any], dict[tuple[str, str], list[tuple[str, list[Any]]]]]:
    """The header, and per (block, method) the recorded (question, hits) in order."""
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    header = rows[0]
    assert header.get("header"), path
    blocks: dict[tuple[str, str], list[tuple[str, list[Any]]]] = defaultdict(list)
    for row in rows[1:]:
        blocks[row["block"], row["method"]].append((row["question"], row["hits"]))
    return header, blocks


def differences(expected: list[list[Any]], got: list[tuple[str, float]]) -> str:
    """"" when ``got`` is the recorded hit list: the same chunks in the same order with the same scores, where chunks
    whose scores are within TIE of each other may come in either order."""
    if len(expected) != len(got):
        return f"{len(got)} hits, recorded {len(expected)}"
    for rank, ((_, want), (_, have)) in enumerate(zip(expected, got), start=1):
        if abs(want - have) > TIE:
            return f"rank {rank}: score {have:.6f}, recorded {want:.6f}"
    start = 0
    while start < len(expected):  # runs of near-equal scores compare as sets
        end = start + 1
        while end < len(expected) and abs(expected[end][1] - expected[end - 1][1]) <= TIE:
            end += 1
        want_ids = sorted(cid for cid, _ in expected[start:end])
        have_ids = sorted(cid for cid, _ in got[start:end])
        if want_ids != have_ids:
            return f"ranks {start + 1}-{end}: {have_ids[:3]}..., recorded {want_ids[:3]}..."
        start = end
    return ""


def check_block(wb: Workbench, corpus: str, block: str, blocks: dict, methods: list[str], k: int) -> None:
    failures = []
    for method in methods:
        recorded = blocks[block, method]
        questions = [q for q, _ in recorded]
        spec = parse_method(method)
        found = wb.search(corpus, [spec], questions, k)[spec.name]
        for (question, want), hits in zip(recorded, found):
            diff = differences(want, [(h.chunk.chunk_id, h.score) for h in hits])
            if diff:
                failures.append(f"{block} / {method} / {question[:60]!r}: {diff}")
    assert not failures, f"{len(failures)} hit lists differ, e.g.\n" + "\n".join(failures[:10])


@pytest.mark.slow
def test_every_search_option_on_the_papers_indexes_finds_the_recorded_hits(tmp_path, embedder, monkeypatch):
    """The demo's five NDAs indexed anew (baseline, sac-generic, sac-expert): 58 questions (52 benchmark ones, 6
    without a title) under every shipped method whose index is one of those three, at k = 64."""
    monkeypatch.setenv("SAC_RERANKER", "lexical")
    header, blocks = read_golden(GOLDEN)
    cfg = SacConfig.from_env(workspace=tmp_path / "ws", embedder=header["embedder"])
    assert cfg.chunking_key == header["chunking"]
    wb = Workbench(cfg, embedder=embedder)
    import_summary_sets(wb.summary_store, DEMO)
    [ds] = load_benchmark(DEMO, ["contractnli"])
    methods = sorted({m for b, m in blocks if b == "demo/contractnli"
                      and parse_method(m).index_name in ("baseline", "sac-generic", "sac-expert")})
    assert len(methods) == 28 and any("rerank" in m for m in methods) and "sac-generic+docs1+hybrid0.75+inner+names" in methods
    corpus = corpus_name("demo", ds)
    wb.build(corpus, ds.documents, [parse_method(m) for m in methods])
    check_block(wb, corpus, "demo/contractnli", blocks, methods, header["k"])


def test_a_changed_hit_list_is_caught():
    recorded = [["a@0-5", 0.9], ["a@5-9", 0.8], ["b@0-4", 0.8], ["c@0-3", 0.1]]
    assert differences(recorded, [("a@0-5", 0.9), ("b@0-4", 0.8), ("a@5-9", 0.8), ("c@0-3", 0.1)]) == ""  # a tie
    assert "rank 2" in differences(recorded, [("a@0-5", 0.9), ("a@5-9", 0.7), ("b@0-4", 0.8), ("c@0-3", 0.1)])
    assert "ranks 4-4" in differences(recorded, [("a@0-5", 0.9), ("a@5-9", 0.8), ("b@0-4", 0.8), ("d@0-3", 0.1)])
    assert "3 hits" in differences(recorded, [("a@0-5", 0.9), ("a@5-9", 0.8), ("b@0-4", 0.8)])


@pytest.mark.large
@pytest.mark.slow
@pytest.mark.parametrize("name", ["golden-demo"])
def test_every_shipped_method_finds_the_recorded_hits_in_the_recorded_workspaces(name, monkeypatch):
    """Every method bench/golden.py recorded, searched in the workspace it recorded from (bench/.workspace)."""
    monkeypatch.setenv("SAC_RERANKER", "lexical")
    path = ROOT / "bench" / "results" / f"{name}.jsonl.gz"
    header, blocks = read_golden(path)
    what = "demo" if "demo" in name else "full"
    workspace = ROOT / "bench" / ".workspace" / f"golden-{what}"
    if not workspace.is_dir():
        pytest.fail(f"{workspace} is missing: run `{header['command']}` first (it builds the indexes)")
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import selection  # bench/ is not a package
    finally:
        sys.path.remove(str(ROOT / "bench"))
    chunking = "merged" if header["chunking"].endswith("m25") else "paper"
    cfg = SacConfig.from_env(workspace=workspace, embedder=header["embedder"], chunking=chunking)
    wb = Workbench(cfg)
    by_block: dict[str, list[str]] = defaultdict(list)
    for block, method in blocks:
        by_block[block].append(method)
    for block, methods in by_block.items():
        if block.startswith("demo/"):
            [ds] = load_benchmark(DEMO, [block.split("/")[1]])
            corpus = corpus_name("demo", ds)
        else:
            _, dataset, style = block.split("/")
            ds = selection.load_split(dataset.rsplit("-", 1)[0], dataset.rsplit("-", 1)[1])[style][0]
            corpus = corpus_name("full", ds)
        check_block(wb, corpus, block, blocks, methods, header["k"])
