"""Summary strategies measured against each other: no summary, the built-in extractive summaries and the
LLM summaries shipped with the demo data.

    python bench/summary_strategies.py                 # the demo benchmark (cuad 29 + contractnli 5 documents)
    python bench/summary_strategies.py --nda-pool      # + contractnli against all 183 ContractNLI NDAs
    python bench/summary_strategies.py --cuad-pool     # + cuad against all 510 CUAD contracts (slow: ~100k chunks a method)
    # the 510-contract pool with the int8 indexes bench/ingest.py --pool built (only the two .mix indexes are new):
    python bench/summary_strategies.py --cuad-pool --pool-only --embedder minilm-onnx-int8 \
        --workspace bench/.workspace/pool/minilm-onnx-int8

Methods: ``baseline`` (no summary), ``sac-generic`` and ``sac-expert`` (built-in extractive summaries, made
here), ``sac-generic-llm`` and ``sac-expert-llm`` (the summary sets in data/demo/summaries, made by an LLM
with ``python -m sac summarize``; no LLM runs here).

Pools: LLM summaries exist only for the demo documents, and the distractors of a pool have none. In a pool
run the LLM methods are therefore *mixed*: a demo document keeps its LLM summary, a distractor gets the
built-in summary of the same family (generic or expert). They are reported as ``sac-generic-llm.mix`` and
``sac-expert-llm.mix`` and are not a pure LLM measurement: the queries' own documents and the distractors
are summarised in two different styles. The built-in methods are the clean pool comparison.

Writes bench/results/summary_strategies.json and .md: DRM, precision and recall (in %) as the mean over
k in {1, 2, 4, 8, 16, 32, 64} and at k = 1, 8, 64, per dataset.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

from common import DEMO, NDA_POOL, POOL_DIR, RESULTS, ROOT, WORKSPACES, log, machine, table, write_json

BUILTIN = ("generic", "expert")
LLM = ("generic-llm", "expert-llm")
MIX_SUFFIX = ".mix"  # an LLM strategy whose pool documents carry the built-in summary of the same family
SHOW_K = ("mean", 1, 8, 64)


def mixed_strategies(wb: Any, documents: list[Any], distractors: list[Any]) -> list[str]:
    """Store ``<llm>.mix`` summaries: the LLM summary of each demo document, the built-in one of each distractor."""
    from sac.summaries.builtin import BuiltinSummarizer

    names = []
    for llm in LLM:
        mixed = llm + MIX_SUFFIX
        own = wb.summaries(documents, llm)  # raises when a demo document has no shipped LLM summary
        builtin = BuiltinSummarizer(llm.removesuffix("-llm"), target_chars=wb.config.summary_chars)
        for doc in documents:
            wb.summary_store.put(dataclasses.replace(own[doc.doc_id], strategy=mixed))
        for doc in distractors:
            if wb.summary_store.current(doc, mixed) is None:
                wb.summary_store.put(dataclasses.replace(builtin.summarize(doc), strategy=mixed))
        names.append(mixed)
    return names


def run(wb: Any, datasets: list[Any], methods: str, label: str) -> list[dict[str, Any]]:
    from sac.methods import parse_methods
    from sac.usecases.evaluate import evaluate

    started = time.perf_counter()
    result = evaluate(wb, datasets, parse_methods(methods), benchmark="demo",
                      log=lambda line: log(f"{label}: {line}"))
    log(f"{label}: done in {time.perf_counter() - started:.0f} s; timings {result.timings}")
    rows = []
    for row in result.metrics:
        if row["k"] in SHOW_K:
            rows.append({"setting": label, **row, "corpus": result.corpora.get(row["dataset"], {}),
                         "embedder": wb.embedder_name})
    return rows


def pivot(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One line per (setting, dataset, method), figures in percent."""
    out: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in rows:
        key = (r["setting"], r["dataset"], r["method"])
        line = out.setdefault(key, {"setting": r["setting"], "dataset": r["dataset"], "method": r["method"],
                                    "embedder": r.get("embedder", "all-MiniLM-L6-v2")})
        for metric, short in (("drm", "DRM"), ("precision", "P"), ("recall", "R")):
            line[f"{short} {r['k']}" if r["k"] != "mean" else f"{short} mean"] = round(100 * r[metric], 1)
    return list(out.values())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="cuad,contractnli")
    parser.add_argument("--nda-pool", action="store_true", help="contractnli against all ContractNLI NDAs")
    parser.add_argument("--cuad-pool", action="store_true", help=f"cuad against all CUAD contracts ({POOL_DIR})")
    parser.add_argument("--pool-only", action="store_true", help="skip the demo run (keep its rows from the last results)")
    parser.add_argument("--embedder", default="minilm-onnx",
                        help="minilm-onnx: the packaged MiniLM's exact ONNX export (same vectors as minilm)")
    parser.add_argument("--workspace", default=str(WORKSPACES / "methods"),
                        help="persistent workspace; the default shares the built-in indexes with bench/methods.py")
    parser.add_argument("--out", default=str(RESULTS / "summary_strategies"), help="results path without extension")
    args = parser.parse_args(argv)

    from sac.config import SacConfig
    from sac.ingest.benchmark import load_benchmark
    from sac.ingest.pools import load_pool
    from sac.summaries.sets import import_summary_sets, load_summary_set
    from sac.types import Dataset
    from sac.usecases.workbench import Workbench

    wb = Workbench(SacConfig(workspace=Path(args.workspace), embedder=args.embedder))
    imported = import_summary_sets(wb.summary_store, DEMO)
    missing = [s for s in LLM if s not in imported]
    if missing:
        raise SystemExit(f"no shipped summary set for {missing} in {DEMO / 'summaries'}: run `python -m sac summarize` first")
    sets = {}
    for path in sorted((DEMO / "summaries").glob("*.json")):
        s = load_summary_set(path)
        sets[s.strategy] = {"file": str(path.relative_to(ROOT)), "model": s.model, "prompt_hash": s.prompt_hash,
                            "target_chars": s.target_chars, "created": s.created, "summaries": len(s.summaries),
                            "cut": sum(x.cut for x in s.summaries.values()),
                            "context_chars": s.meta.get("context_chars")}
    names = [n.strip() for n in args.datasets.split(",") if n.strip()]
    datasets = load_benchmark(DEMO, names)
    out = Path(args.out)
    previous: list[dict[str, Any]] = []
    if args.pool_only and out.with_suffix(".json").exists():
        previous = json.loads(out.with_suffix(".json").read_text(encoding="utf-8")).get("rows", [])
    rows = [r for r in previous if r["setting"] == "demo"]
    all_methods = "baseline," + ",".join(f"sac-{s}" for s in (*BUILTIN, *LLM))
    if not args.pool_only:
        rows = run(wb, datasets, all_methods, "demo")
    pools = []
    if args.nda_pool:
        pools.append(("contractnli", [Path(p) for p in NDA_POOL]))
    if args.cuad_pool:
        pools.append(("cuad", [POOL_DIR]))
    for name, sources in pools:
        ds = next(d for d in load_benchmark(DEMO, [name]))
        distractors = load_pool(sources, exclude=ds.documents)
        pooled = Dataset(ds.name, ds.documents, ds.queries, tuple(distractors))
        label = f"{name} + {len(distractors)} pool"
        log(f"{label}: {len(ds.documents) + len(distractors)} documents")
        mixed = mixed_strategies(wb, list(ds.documents), distractors)
        methods = "baseline," + ",".join(f"sac-{s}" for s in (*BUILTIN, *mixed))
        rows = [r for r in rows if r["setting"] != label] + run(wb, [pooled], methods, label)
    redone = {r["setting"] for r in rows}
    rows += [r for r in previous if r["setting"] not in redone]  # pool rows of an earlier run not redone here

    lines = pivot(rows)
    columns = ["setting", "dataset", "method", "embedder", *[f"{m} {k}" for m in ("DRM", "P", "R") for k in SHOW_K]]
    payload = {
        "script": "bench/summary_strategies.py", "argv": sys.argv[1:], "machine": machine(),
        "chunking": wb.config.chunking_key, "summary_chars": wb.config.summary_chars,
        "summary_sets": sets, "rows": rows, "table": lines,
    }
    write_json(out.with_suffix(".json"), payload)
    models = ", ".join(f"{k}: {v['model']} ({v['summaries']} summaries, {v['cut']} cut)" for k, v in sets.items())
    text = (
        "# Summary strategies compared\n\n"
        f"Embedder per row (all-MiniLM-L6-v2: the packaged model, here its exact ONNX export; -int8: its "
        f"int8 copy, used for the 510-contract pool), chunks {wb.config.chunking_key}, summaries about "
        f"{wb.config.summary_chars} characters. LLM summary sets: {models}. Built-in: offline extractive "
        "summarizer. Figures in %: mean over k in {1, 2, 4, 8, 16, 32, 64}, and at k = 1, 8, 64. DRM: share of "
        "retrieved chunks from a document that holds no answer (lower is better).\n\n"
        "`.mix` methods (pool runs only): the demo documents carry their LLM summary, the pool distractors the "
        "built-in summary of the same family; no LLM summaries exist for the pool.\n\n"
        + table(lines, columns) + "\n"
    )
    out.with_suffix(".md").write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
