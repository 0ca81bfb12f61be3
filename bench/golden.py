"""Golden hit lists: every shipped method's hits for fixed questions, recorded so a restructuring of the search can
prove it changed nothing.

    python bench/golden.py demo --datasets contractnli --out tests/golden/demo-contractnli.jsonl.gz
    python bench/golden.py demo --datasets cuad --out bench/results/golden-demo-cuad.jsonl.gz
    python bench/golden.py full --split dev --max-questions 120 --out bench/results/golden-full-dev-restructure.jsonl.gz

``demo`` searches the bundled demo datasets (their benchmark questions and a few questions without a title, which
take the other routing branches); ``full`` one sample of dev questions per dataset and title style of the
full-size benchmarks (bench/selection.py's workspace, built if missing). Every line of the output is one
(block, method, question) with its top-k hits as ``[chunk_id, score]``, searched after the store is reopened (the
graphs as they lie on disk, as any later process reads them); tests/test_golden_hits.py searches again and
compares.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import common
from common import DEMO, log, machine

from sac.config import SacConfig
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_method, suggested_methods
from sac.summaries.sets import import_summary_sets
from sac.usecases.workbench import Workbench

K = 64
# Questions without a "Consider ...;" title: they take the routing branches no benchmark question takes (a name
# that routes, a capitalised rare word, a corpus-wide question that is not routed).
UNTITLED = {
    "contractnli": [
        "Which NDA lets the Receiving Party keep copies?",
        "What does VELCO's NDA say about the term?",
        "Who may receive CriticalEnergyInfrastructureInformation?",
        "Does the AGProjects agreement allow disclosure to affiliates?",
        "Which law governs the agreement?",
        "Can ResConnect terminate the agreement early?",
    ],
    "cuad": [
        "Does the Sponsor have exclusive rights?",
        "Which agreements can be terminated for convenience on notice?",
        "Which law governs the agreement between the parties?",
        "Can Glamis terminate the agreement on notice?",
        "What is the term of the BELLRINGBRANDS,INC supply agreement?",
        "Is there a non-compete in the Excite agreement?",
    ],
}
EXTRA_METHODS = [
    "sac-generic-llm", "sac-expert-llm", "sac-generic-llm+docs1+hybrid0.75+inner+names",
    "sac-expert+docs1+hybrid0.75+inner+names", "baseline+docs1+hybrid0.75+inner+names", "sac-generic+names",
    "sac-generic+docs2+names", "sac-generic+docs1+docw0.5+names", "sac-generic+docs1+inner+names",
    "sac-generic+hybrid0.5+names", "sac-generic+docs3+names", "sac-generic+docs1+names+rerank20",
    "sac-generic+hybrid0.75+rerank", "sac-expert+docs1+names",
]
FULL_METHODS = [
    "baseline", "sac-generic", "sac-expert", "recommended", "sac-generic+names", "sac-generic+docs1",
    "sac-generic+docs1+names", "sac-generic+docs2+names", "sac-generic+docs3+names", "sac-generic+hybrid0.5+names",
    "sac-generic+docs1+hybrid0.75+names", "sac-expert+docs1+names", "sac-generic+hybrid0.75",
    "baseline+docs1+hybrid0.75+inner+names", "sac-generic+docs1+names+rerank",
]


def demo_methods(llm: bool) -> list[str]:
    names = [*suggested_methods(), *EXTRA_METHODS]
    if not llm:
        names = [n for n in names if "-llm" not in n]
    return list(dict.fromkeys(parse_method(n).name for n in names))


def record(wb: Workbench, block: str, corpus: str, documents: Any, methods: list[str], questions: list[str],
           out: list[dict[str, Any]]) -> None:
    parsed = [parse_method(m) for m in methods]
    started = time.perf_counter()
    wb.build(corpus, documents, parsed)
    wb.close_store()  # search the graphs as they lie on disk, as every later process does, not the ones in memory
    log(f"{block}: built in {time.perf_counter() - started:.0f} s; searching {len(questions)} questions "
        f"x {len(parsed)} methods")
    for method in parsed:
        hits = wb.search(corpus, [method], questions, K)[method.name]
        for question, found in zip(questions, hits):
            out.append({"block": block, "method": method.name, "question": question,
                        "hits": [[h.chunk.chunk_id, round(float(h.score), 6)] for h in found]})


def demo_blocks(args: argparse.Namespace, wb: Workbench) -> list[dict[str, Any]]:
    from sac.ingest.catalog import corpus_name

    import_summary_sets(wb.summary_store, DEMO)
    out: list[dict[str, Any]] = []
    for ds in load_benchmark(DEMO, args.datasets.split(",")):
        questions = [q.text for q in ds.queries] + UNTITLED.get(ds.name, [])
        record(wb, f"demo/{ds.name}", corpus_name("demo", ds), list(ds.documents), demo_methods(True), questions, out)
    return out


def full_blocks(args: argparse.Namespace, wb: Workbench) -> list[dict[str, Any]]:
    import selection

    selection.ensure_benchmarks()
    out: list[dict[str, Any]] = []
    for dataset in args.datasets.split(","):
        for style, (ds, _tags) in selection.load_split(dataset, args.split).items():
            ds = selection.sample_questions(ds, args.max_questions)
            from sac.ingest.catalog import corpus_name

            record(wb, f"full/{ds.name}/{style}", corpus_name("full", ds), list(ds.documents), FULL_METHODS,
                   [q.text for q in ds.queries], out)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["demo", "full"])
    parser.add_argument("--datasets", default="contractnli,cuad")
    parser.add_argument("--split", default="dev", choices=["dev"])
    parser.add_argument("--max-questions", type=int, default=120)
    parser.add_argument("--embedder", default=None, help="default: minilm (demo), minilm-onnx (full)")
    parser.add_argument("--chunking", default=None, help="default: merged (demo, the app's), paper (full, the bench's)")
    parser.add_argument("--workspace", help="default bench/.workspace/golden-<what>")
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    os.environ["SAC_RERANKER"] = "lexical"
    demo = args.what == "demo"
    workspace = Path(args.workspace or common.WORKSPACES / f"golden-{args.what}")
    cfg = SacConfig.from_env(workspace=common.prepare_workspace(workspace),
                             embedder=args.embedder or ("minilm" if demo else "minilm-onnx"),
                             chunking=args.chunking or ("merged" if demo else "paper"))
    wb = Workbench(cfg)
    rows = demo_blocks(args, wb) if demo else full_blocks(args, wb)
    header = {"header": True, "embedder": cfg.embedder, "chunking": cfg.chunking_key, "k": K, "reranker": "lexical",
              "machine": machine(), "command": common.command_line("golden.py", argv)}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.out, "wt", encoding="utf-8", compresslevel=9) as f:
        for row in [header, *rows]:
            f.write(json.dumps(row, sort_keys=True) + "\n")
    log(f"{args.out}: {len(rows)} hit lists")
    return 0


if __name__ == "__main__":
    sys.exit(main())
