"""Query latency of a three-method comparison: one query embedding, then top-k from each method's index.

This is what the Compare page does per question (``Workbench.search``). After a warm-up, every query
of the dataset runs once per k; the table gives p50 and p95 of the embedding, the search (all methods
together) and the total. The same searches also run against ``Index`` objects opened once, to show what
reopening the collections on every call costs.

Indexes are built first if the workspace lacks them (timed separately; resumable), so the first run on
a pool takes long and later runs reuse them. ``bench/ingest.py --pool`` builds the same indexes.

Examples:
  python bench/query.py                                   # demo CUAD, 29 contracts
  python bench/query.py --pool --embedder minilm-onnx-int8  # demo CUAD + 480 pool contracts
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

import common
from common import log, percentile, table

from sac.config import SacConfig
from sac.methods import parse_methods
from sac.usecases.workbench import Workbench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_corpus_args(p)
    p.add_argument("--embedder", default="minilm-onnx")
    p.add_argument("--methods", default=common.METHODS)
    p.add_argument("--k", default="8,64", help="comma-separated k values")
    p.add_argument("--queries", type=int, help="use the first N queries (default all)")
    p.add_argument("--warmup", type=int, default=5, help="untimed queries first")
    p.add_argument("--workspace", help="workspace (default bench/.workspace/{demo,pool}/<embedder>, reused)")
    p.add_argument("--out", help="JSON result file (default bench/results/query[-pool].json)")
    return p.parse_args(argv)


def stats(values: list[float]) -> dict[str, float]:
    ms = [v * 1000 for v in values]
    return {"p50_ms": round(percentile(ms, 50), 2), "p95_ms": round(percentile(ms, 95), 2),
            "max_ms": round(max(ms), 2)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ds = common.load_dataset(args.dataset, args.pool, args.limit)
    corpus = common.corpus_label(ds)
    methods = parse_methods(args.methods)
    ks = [int(k) for k in args.k.split(",")]
    root = Path(args.workspace) if args.workspace else common.WORKSPACES / ("pool" if args.pool else "demo") / args.embedder
    wb = Workbench(SacConfig(workspace=common.prepare_workspace(root), embedder=args.embedder))
    result: dict[str, Any] = {"machine": common.machine(), "args": vars(args), "corpus": corpus,
                              "documents": len(ds.all_documents), "workspace": str(root),
                              "chunking": wb.config.chunking_key}
    t0 = time.perf_counter()
    wb.embedder.embed_query("warm-up")
    result["embedder_load_s"] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    reports = wb.build(corpus, list(ds.all_documents), methods)
    result["build_s"] = round(time.perf_counter() - t0, 2)
    result["build_added"] = {k: r.added for k, r in reports.items()}
    result["index_chunks"] = {m.name: wb.index(corpus, m).count() for m in methods}
    log(f"{corpus}: indexes ready ({result['index_chunks']}; built {result['build_added']} in {result['build_s']} s)")

    queries = [q.text for q in ds.queries][: args.queries]
    for q in queries[: args.warmup]:
        for k in ks:
            wb.search(corpus, methods, [q], k)
    opened = {m.name: wb.index(corpus, m) for m in methods}  # collections opened once
    rows = []
    for k in ks:
        embed_s, search_s, total_s, reuse_s = [], [], [], []
        for q in queries:
            t0 = time.perf_counter()
            vector = wb.embed_queries([q])
            t1 = time.perf_counter()
            wb.search(corpus, methods, [q], k, query_vectors=vector)
            t2 = time.perf_counter()
            for m in methods:
                opened[m.name].search(vector, k)
            t3 = time.perf_counter()
            embed_s.append(t1 - t0)
            search_s.append(t2 - t1)
            total_s.append(t2 - t0)
            reuse_s.append(t3 - t2)
        row = {"k": k, "queries": len(queries), **{f"total_{n}": v for n, v in stats(total_s).items()},
               **{f"embed_{n}": v for n, v in stats(embed_s).items()},
               **{f"search_{n}": v for n, v in stats(search_s).items()},
               **{f"search_opened_{n}": v for n, v in stats(reuse_s).items()}}
        rows.append(row)
        log(f"k={k}: p50 {row['total_p50_ms']} ms, p95 {row['total_p95_ms']} ms")
    result["latency"] = rows
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    out = Path(args.out) if args.out else common.RESULTS / f"query{common.pool_tag(args.pool)}.json"
    common.write_json(out, result)
    print(f"\n{corpus}: {result['documents']} documents, {result['index_chunks']} chunks per index; "
          f"{args.embedder}; {len(methods)} methods; {result['machine']['cpu']}, load {result['machine']['loadavg']}")
    print(table(rows, ["k", "queries", "total_p50_ms", "total_p95_ms", "embed_p50_ms", "embed_p95_ms",
                       "search_p50_ms", "search_p95_ms", "search_opened_p50_ms", "search_opened_p95_ms"]))
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
