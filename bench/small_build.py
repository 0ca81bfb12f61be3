"""Building a small corpus: how much of the build is settling the HNSW graphs (``Workbench._settle``).

A user's first upload is often one contract or a handful. Settling flushes a collection's graph by writing
records back until the write-ahead log reaches Chroma's flush point (1,000 writes), one id at most once per
upsert call, so a collection of n records takes about 1000 / n calls: 999 for a one-document corpus's document
collection. The document collection (``+docs``), read whole by every search, is left unsettled while its graph
is too small for hnswlib to prune a link (``sac.index.compaction``, 4).

This script builds corpora of 1, 5 and 29 demo contracts (baseline, sac-generic, sac-expert, built-in summaries)
into a fresh temporary workspace each, in two modes taking turns: ``every`` settles every collection (as before
the document collection was exempted), ``now`` is the code as it is. It prints each build's wall time, the time
spent settling and the records written back (``records``: the chunk records the three indexes added), the
median per (size, mode), the ratio of the medians, and the load average before and after.

    python bench/small_build.py                  # 3 rounds of the 1- and 5-document corpora, 1 of the 29
    python bench/small_build.py --rounds 1       # writes bench/results/small_build.json and .md
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

import common
from common import log, machine, median, table, write_results

import sac.usecases.workbench as workbench_module
from sac.config import SacConfig
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_methods
from sac.usecases.workbench import Workbench

SIZES = ((1, "contractnli"), (5, "contractnli"), (29, "cuad"))
MODES = ("every", "now")


def build_once(documents: list[Any], embedder: str, mode: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="sac-small-build-") as tmp:
        wb = Workbench(SacConfig(workspace=Path(tmp), embedder=embedder))
        wb.embedder.embed_query("warm up")  # the model load is not the build's
        spent = [0.0]
        settle = wb._settle

        def timed_settle(index: Any) -> int:
            start = time.perf_counter()
            try:
                return settle(index)
            finally:
                spent[0] += time.perf_counter() - start

        wb._settle = timed_settle  # type: ignore[method-assign]
        original = workbench_module.settle_collection
        if mode == "every":
            workbench_module.settle_collection = lambda *a, read_whole=False, **kw: original(*a, **kw)  # type: ignore[assignment]
        try:
            start = time.perf_counter()
            reports = wb.build("small", documents, parse_methods(common.METHODS))
            total = time.perf_counter() - start
        finally:
            workbench_module.settle_collection = original  # type: ignore[assignment]
        return {"documents": len(documents), "mode": mode, "records": sum(r.added for r in reports.values()),
                "build_s": round(total, 2), "settle_s": round(spent[0], 2),
                "settled_records": sum(r.settled for r in reports.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--embedder", default="minilm-onnx")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of the 1- and 5-document corpora (29: one)")
    parser.add_argument("--out", default="small_build")
    args = parser.parse_args()
    before = machine()
    datasets = {d.name: d for d in load_benchmark(common.DEMO)}
    runs = []
    for size, name in SIZES:
        docs = sorted(datasets[name].documents, key=lambda d: d.doc_id)[:size]
        for _ in range(args.rounds if size < 29 else 1):
            for mode in MODES:
                run = {"dataset": name, **build_once(docs, args.embedder, mode)}
                log(str(run))
                runs.append(run)
    after = machine()
    rows = []
    for size, name in SIZES:
        medians = {}
        for mode in MODES:
            mine = [r for r in runs if r["documents"] == size and r["mode"] == mode]
            medians[mode] = median([r["build_s"] for r in mine])
            rows.append({"dataset": name, "documents": size, "mode": mode, "builds": len(mine),
                         "records": mine[0]["records"], "build_s (median)": medians[mode],
                         "settle_s (median)": median([r["settle_s"] for r in mine]),
                         "settled_records": mine[0]["settled_records"], "every / now": ""})
        rows[-1]["every / now"] = f"{medians['every'] / medians['now']:.2f}x"
    columns = ["dataset", "documents", "mode", "builds", "records", "build_s (median)", "settle_s (median)",
               "settled_records", "every / now"]
    text = (f"# Small builds ({common.METHODS}, {args.embedder}); load before {before['loadavg']}, after "
            f"{after['loadavg']}\n\n" + table(rows, columns))
    write_results(args.out, {"machine": before, "machine_after": after, "runs": runs, "rows": rows}, text)


if __name__ == "__main__":
    main()
