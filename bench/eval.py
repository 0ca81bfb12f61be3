"""Wall time of a full evaluation: every query, three methods, seven k (``sac.usecases.evaluate.evaluate``).

Runs the evaluation twice in one process: the first builds whatever indexes the workspace lacks
(resumable), the second finds them built and measures the evaluation alone. Each run is split into
index, query embedding, search and scoring (``EvalResult.timings``).

Examples:
  python bench/eval.py                                    # demo: CUAD (29 contracts) and ContractNLI (5 NDAs)
  python bench/eval.py --pool --embedder minilm-onnx-int8  # CUAD queries against CUAD + 480 pool contracts
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import common
from common import log, table

from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.evaluation.runs import summary_table
from sac.methods import parse_methods
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--pool", nargs="?", const=str(common.POOL_DIR), default=None, metavar="DIR|nda",
                   help=common.POOL_HELP + "; only the pool's dataset is evaluated")
    p.add_argument("--limit", type=int, help="first N pool documents only")
    p.add_argument("--datasets", default=None, help="demo datasets (default cuad,contractnli; cuad with --pool)")
    p.add_argument("--embedder", default="minilm-onnx")
    p.add_argument("--methods", default=common.METHODS)
    p.add_argument("--runs", type=int, default=2, help="evaluations in a row (the first may build indexes)")
    p.add_argument("--workspace", help="workspace (default bench/.workspace/{demo,pool}/<embedder>, reused)")
    p.add_argument("--out", help="JSON result file (default bench/results/eval[-pool].json)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    default = "contractnli" if args.pool == "nda" else "cuad" if args.pool else "cuad,contractnli"
    names = (args.datasets or default).split(",")
    datasets = [common.load_dataset(n.strip(), args.pool, args.limit) for n in names]
    methods = parse_methods(args.methods)
    root = Path(args.workspace) if args.workspace else common.WORKSPACES / ("pool" if args.pool else "demo") / args.embedder
    wb = Workbench(SacConfig(workspace=common.prepare_workspace(root), embedder=args.embedder))
    t0 = time.perf_counter()
    wb.embedder.embed_query("warm-up")
    result: dict[str, Any] = {
        "machine": common.machine(), "args": vars(args), "workspace": str(root),
        "chunking": wb.config.chunking_key, "embedder_load_s": round(time.perf_counter() - t0, 2),
        "datasets": {d.name: {"corpus": common.corpus_label(d), "documents": len(d.all_documents),
                              "queries": len(d.queries)} for d in datasets},
        "runs": [],
    }
    for i in range(args.runs):
        t0 = time.perf_counter()
        res = evaluate(wb, datasets, methods, DEFAULT_K_VALUES, benchmark="demo")
        wall = time.perf_counter() - t0
        row = {"run": i + 1, "wall_s": round(wall, 2), **res.timings,
               "other_s": round(wall - sum(res.timings.values()), 3), "corpora": res.corpora}
        result["runs"].append(row)
        log(f"run {i + 1}: {wall:.1f} s {res.timings}")
    result["metrics"] = summary_table(res.frame(), ["mean", 1, 8, 64]).reset_index().to_dict(orient="records")
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    out = Path(args.out) if args.out else common.RESULTS / f"eval{common.pool_tag(args.pool)}.json"
    common.write_json(out, result)
    queries = sum(d["queries"] for d in result["datasets"].values())
    described = ", ".join(f"{n}: {d['documents']} documents, {d['queries']} queries" for n, d in result["datasets"].items())
    print(f"\n{described}; {len(methods)} methods x {len(DEFAULT_K_VALUES)} k; {args.embedder}; "
          f"load {result['machine']['loadavg']}")
    print(table(result["runs"], ["run", "wall_s", "index", "query_embedding", "search", "scoring", "other_s"]))
    print(f"({queries} queries)\n")
    print(summary_table(res.frame(), ["mean", 1, 8, 64]).to_string())
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
