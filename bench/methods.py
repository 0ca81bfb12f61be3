"""Methods beyond the paper, measured against generic SAC: hybrid dense + BM25 (the paper's sweep of the
dense share), document-first retrieval, section context, small-chunk merging, reranking, and combinations.

    python bench/methods.py                                  # demo ContractNLI (5 NDAs, 52 questions)
    python bench/methods.py --settings demo-nli,nli-pool     # + the same questions against all 183 NDAs
    python bench/methods.py --settings demo-cuad             # demo CUAD (29 contracts, 194 questions)
    python bench/methods.py --settings cuad-pool --limit-pool 100   # demo CUAD + the first 100 pool contracts

Settings: ``demo-nli``, ``demo-cuad``; ``nli-pool`` (the demo NDAs plus the other 178 ContractNLI NDAs of
test.json and dev.json as distractors); ``cuad-pool`` (the demo CUAD contracts plus the other CUAD contracts
of full_contract_txt, all 481 or the first ``--limit-pool N``). Every setting uses the demo questions and
ground truth. Indexes go to one persistent workspace and are reused: a stopped run picks up where it was.

Per method and setting: DRM, precision and recall (in %) as the mean over k in {1, 2, 4, 8, 16, 32, 64} and
at k = 1, 8, 64; the share of top-8 hits under 25 characters (or whitespace only); hits returned per
question at k = 64 (document-first returns fewer when the chosen documents hold fewer chunks); search
seconds. ``+rerank`` rows use the built-in ``lexical`` reranker (no cross-encoder ships offline).

Writes bench/results/methods.json and methods.md. The claim checked: the ``--winner`` combination cuts
generic SAC's DRM (mean over k) by at least a third with recall (mean over k) no lower.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import common
from common import DEMO, RESULTS, log, machine, table, write_json

from sac.chunking.merge import is_small
from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.evaluation.runs import EvalResult, score_method
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import corpus_name
from sac.ingest.pools import load_pool
from sac.methods import parse_methods
from sac.types import Dataset
from sac.usecases.workbench import Workbench

NLI_POOL = common.NDA_POOL
CUAD_POOL = common.POOL_DIR
WORKSPACE = common.WORKSPACES / "methods"
WINNER = "sac-generic+docs1"
SWEEP = "sac-generic+hybrid0.75,sac-generic+hybrid0.5,sac-generic+hybrid0.25"
METHODS = ",".join([
    "baseline", "sac-generic", "sac-expert", "baseline+hybrid0.5", SWEEP,
    "sac-generic+docs1", "sac-generic+docs3", "sac-generic+sections", "sac-generic+merge25", "sac-generic+rerank",
    "sac-generic+hybrid0.5+rerank", "sac-generic+docs1+hybrid0.75", "sac-generic+docs1+hybrid0.5",
    "sac-generic+docs1+sections", "sac-generic+docs2+merge25", "sac-generic+docs1+hybrid0.75+merge25",
    "sac-expert+docs1", "baseline+docs1", WINNER,
])
SETTINGS = ("demo-nli", "nli-pool", "demo-cuad", "cuad-pool")
SHORT = 25


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--settings", default="demo-nli", help=f"comma-separated, of {', '.join(SETTINGS)}")
    p.add_argument("--methods", default=METHODS, help="comma-separated method names (generic SAC is always added)")
    p.add_argument("--winner", default=WINNER, help="the combination whose claim is checked")
    p.add_argument("--limit-pool", type=int, help="cuad-pool: only the first N pool contracts (by doc id)")
    p.add_argument("--workspace", default=str(WORKSPACE), help="persistent workspace, reused between runs")
    p.add_argument("--embedder", default="minilm-onnx", help="minilm-onnx: the packaged MiniLM's exact ONNX export")
    p.add_argument("--reranker", default="lexical", help="for +rerank rows (SAC_RERANKER)")
    p.add_argument("--out", default=str(RESULTS / "methods.json"))
    return p.parse_args(argv)


def load_setting(name: str, limit: int | None) -> tuple[Dataset, str]:
    """The dataset of a setting and a label saying what it is."""
    if name in ("demo-nli", "nli-pool"):
        ds = load_benchmark(DEMO, ["contractnli"])[0]
        if name == "nli-pool":
            pool = load_pool(list(NLI_POOL), exclude=ds.documents)
            ds = Dataset(ds.name, ds.documents, ds.queries, tuple(pool))
    elif name in ("demo-cuad", "cuad-pool"):
        ds = load_benchmark(DEMO, ["cuad"])[0]
        if name == "cuad-pool":
            pool = load_pool([CUAD_POOL], exclude=ds.documents)
            if limit is not None:
                pool = pool[:limit]
            ds = Dataset(ds.name, ds.documents, ds.queries, tuple(pool))
    else:
        raise SystemExit(f"Unknown setting {name!r}. Choices are: {', '.join(SETTINGS)}")
    label = f"{ds.name}: {len(ds.documents)} documents + {len(ds.distractors)} distractors, {len(ds.queries)} questions"
    if name == "cuad-pool" and limit is not None:
        label += f" (pool limited to the first {limit} contracts)"
    return ds, label


def run_setting(wb: Workbench, name: str, ds: Dataset, methods: list[Any]) -> dict[str, Any]:
    corpus = corpus_name("demo", ds)
    ks = list(DEFAULT_K_VALUES)
    t0 = time.perf_counter()
    step = {"next": 0.0}

    def progress(stage: str, done: int, total: int) -> None:
        if stage.startswith("embedding") and total and (done >= total or done / total >= step["next"]):
            log(f"{name} {stage}: {done}/{total}")
            step["next"] = 0.0 if done >= total else done / total + 0.2

    reports = wb.build(corpus, ds.all_documents, methods, progress=progress)
    build_s = time.perf_counter() - t0
    log(f"{name}: indexes ready in {build_s:.0f} s ({', '.join(f'{k} +{r.added}' for k, r in reports.items())})")
    texts = {d.doc_id: d.text for d in ds.all_documents}
    vectors = wb.embed_queries([q.text for q in ds.queries])
    rows = []
    for method in methods:
        t1 = time.perf_counter()
        hits = wb.search(corpus, [method], [q.text for q in ds.queries], max(ks), query_vectors=vectors)[method.name]
        search_s = time.perf_counter() - t1
        result = EvalResult([], [], [])
        score_method(result, ds, method.name, hits, ks)
        by_k = {r["k"]: r for r in result.metrics}
        top8 = [h for per_query in hits for h in per_query[:8]]
        short = sum(is_small(texts[h.span.doc_id][h.span.start:h.span.end], SHORT) for h in top8)
        row = {"method": method.name}
        for metric in ("drm", "precision", "recall"):
            for k in ("mean", 1, 8, 64):
                row[f"{metric}@{k}"] = round(100 * by_k[k][metric], 2)
        row["short@8"] = round(100 * short / len(top8), 2) if top8 else 0.0
        row["hits@64"] = round(sum(len(h) for h in hits) / len(hits), 1)
        row["search_s"] = round(search_s, 2)
        rows.append(row)
        log(f"{name} {method.name}: DRM {row['drm@mean']:.1f} P {row['precision@mean']:.1f} R {row['recall@mean']:.1f}")
    return {"label": "", "corpus": corpus, "chunks": {k: r.added + r.kept for k, r in reports.items()},
            "build_s": round(build_s, 1), "rows": rows}


def verdict(rows: list[dict[str, Any]], winner: str) -> dict[str, Any]:
    by = {r["method"]: r for r in rows}
    if winner not in by or "sac-generic" not in by:
        return {}
    sac, win = by["sac-generic"], by[winner]
    cut = 1 - win["drm@mean"] / sac["drm@mean"] if sac["drm@mean"] else 0.0
    return {"winner": winner, "sac_drm": sac["drm@mean"], "winner_drm": win["drm@mean"], "drm_cut": round(cut, 3),
            "sac_recall": sac["recall@mean"], "winner_recall": win["recall@mean"],
            "met": bool(cut >= 1 / 3 and win["recall@mean"] >= sac["recall@mean"])}


COLUMNS = ["method", "drm@mean", "drm@1", "drm@8", "drm@64", "precision@mean", "recall@mean", "recall@64",
           "short@8", "hits@64", "search_s"]


def markdown(payload: dict[str, Any]) -> str:
    lines = ["# Methods beyond the paper", "",
             f"Embedder {payload['embedder']}, chunks 500 / no overlap, built-in extractive summaries (150 chars), "
             f"+rerank = the built-in lexical reranker. DRM, precision (P), recall (R) in %, mean over k in "
             f"{{1, 2, 4, 8, 16, 32, 64}} and at single k; short@8 = % of top-8 hits under {SHORT} characters; "
             "hits@64 = hits per question at k = 64.", ""]
    for name, setting in payload["settings"].items():
        lines += [f"## {name}: {setting['label']}", "", table(setting["rows"], COLUMNS), ""]
        v = setting.get("verdict") or {}
        if v:
            lines.append(f"Claim ({v['winner']} vs sac-generic): DRM {v['sac_drm']:.1f} -> {v['winner_drm']:.1f} "
                         f"({100 * v['drm_cut']:.0f} % cut), recall {v['sac_recall']:.1f} -> {v['winner_recall']:.1f}: "
                         f"{'met' if v['met'] else 'NOT met'}.")
            lines.append("")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    names = [s.strip() for s in args.settings.split(",") if s.strip()]
    methods = parse_methods(f"sac-generic,{args.methods},{args.winner}")
    config = SacConfig(workspace=Path(args.workspace), embedder=args.embedder, reranker=args.reranker)
    wb = Workbench(config)
    out = Path(args.out)
    payload: dict[str, Any] = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {}
    payload.update({"machine": machine(), "embedder": args.embedder, "reranker": args.reranker, "winner": args.winner})
    payload.setdefault("settings", {})
    for name in names:
        ds, label = load_setting(name, args.limit_pool)
        log(f"{name}: {label}")
        setting = run_setting(wb, name, ds, methods)
        setting["label"] = label
        setting["verdict"] = verdict(setting["rows"], args.winner)
        payload["settings"][name] = setting
        write_json(out, payload)  # after every setting: a stopped run keeps what it finished
        (out.with_suffix(".md")).write_text(markdown(payload) + "\n", encoding="utf-8")
        print(f"\n## {name}: {label}\n{table(setting['rows'], COLUMNS)}\n{setting['verdict']}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
