"""Search latency and memory of +docs1 / +hybrid on a large built pool, and how the hits compare with another run.

Asks the questions of a split one at a time (as the Compare page does) through ``Workbench.search`` against an
index that ``bench/selection.py`` built (default: the 262-contract CUAD test pool, 48,165 chunks, paper chunking,
``minilm-onnx``): per method p50 / p95 at k = 8, the top 64 per question, and, in a fresh process per method, the
time of the first search (it opens what the method reads) and the peak RSS (VmHWM) after the same questions.
With ``--compare-to`` an earlier result file (e.g. the same script run on an older commit) it counts identical
top 64 / top 8, questions routed to another document, and how often the first hit is in the right document in
each run.

    python bench/routing.py --questions 120 --out routing-after
    python bench/routing.py --questions 120 --out routing-before     # on the older commit
    python bench/routing.py --questions 120 --compare-to bench/results/routing-before.json --out routing-after

Writes bench/results/<out>.json (timings, memory, comparison counts) and each question's hits, which
``--compare-to`` reads, to bench/.workspace/routing/<out>.json (megabytes for thousands of questions: kept out
of the repository).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import common
import selection
from common import RESULTS, WORKSPACES, log, machine, percentile, write_json

from sac.config import SacConfig
from sac.methods import parse_methods
from sac.usecases.workbench import Workbench


def hwm_mb() -> float:
    return [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")][0] / 1024


def questions(dataset: str, split: str, n: int) -> list[tuple[str, str, list[str]]]:
    """(style/query id, text, gold documents): the first n/2 questions (by id) of each title style (for the
    ``all`` pool, the test split's questions: its documents are in the pool with the dev split's)."""
    out = []
    for style, (ds, _) in selection.load_split(dataset, "test" if split == "all" else split).items():
        for q in sorted(ds.queries, key=lambda q: q.query_id)[: n // 2]:
            out.append((f"{style}/{q.query_id}", q.text, sorted(q.gold_doc_ids)))
    return out


def pool_documents(dataset: str, split: str) -> list[Any]:
    """The documents of a split, or of both (``all``: every contract of the dataset, e.g. CUAD's 510)."""
    docs: dict[str, Any] = {}
    for part in (("dev", "test") if split == "all" else (split,)):
        ds, _ = next(iter(selection.load_split(dataset, part).values()))
        docs.update({d.doc_id: d for d in ds.documents})
    return sorted(docs.values(), key=lambda d: d.doc_id)


def build(args: argparse.Namespace) -> dict[str, Any]:
    """Build (or finish) the pool's index of every base strategy the methods use; returns what each sync did."""
    wb = Workbench(SacConfig(workspace=Path(args.workspace), embedder=args.embedder, chunking=args.chunking))
    docs = pool_documents(args.dataset, args.split)
    bases = parse_methods(",".join(dict.fromkeys(m.split("+")[0] for m in args.methods.split(","))))
    t0 = time.perf_counter()
    reports = wb.build(f"full-{args.dataset}-{args.split}", docs, bases,
                       progress=lambda stage, done, total: done % 5120 == 0 and log(f"{stage}: {done}/{total}"))
    return {"documents": len(docs), "seconds": round(time.perf_counter() - t0), "load": os.getloadavg(),
            "reports": {k: r.describe() for k, r in reports.items()}}


def run_method(args: argparse.Namespace, method_name: str) -> dict[str, Any]:
    if args.route_chunks:
        from sac.retrieval import document_ranking

        document_ranking.NEAREST_CHUNKS = args.route_chunks
    wb = Workbench(SacConfig(workspace=Path(args.workspace), embedder=args.embedder, chunking=args.chunking))
    asked = questions(args.dataset, args.split, args.questions)
    vectors = wb.embed_queries([t for _, t, _ in asked])
    ready = hwm_mb()
    [method] = parse_methods(method_name)
    corpus = f"full-{args.dataset}-{args.split}"
    t0 = time.perf_counter()
    wb.search(corpus, [method], [asked[0][1]], 8, query_vectors=vectors[:1])  # opens (and refreshes) what it reads
    first = (time.perf_counter() - t0) * 1000
    times, tops = [], {}
    for i, (key, text, _) in enumerate(asked):
        t0 = time.perf_counter()
        wb.search(corpus, [method], [text], 8, query_vectors=vectors[i:i + 1])
        times.append((time.perf_counter() - t0) * 1000)
        tops[key] = hits_key([h.chunk.chunk_id for h in wb.search(corpus, [method], [text], 64,
                                                                     query_vectors=vectors[i:i + 1])[method.name][0]])
    return {"first_ms": round(first), "p50_ms": round(percentile(times, 50), 1), "p95_ms": round(percentile(times, 95), 1),
            "load": [round(x, 2) for x in os.getloadavg()], "hwm_before_search_mb": round(ready),
            "peak_rss_mb": round(hwm_mb()), "hits": tops, "gold": {k: g for k, _, g in asked}}


def hits_key(ids: list[str]) -> dict[str, Any]:
    """What the comparison needs of a top 64, small enough to commit: its first hit's document, short hashes of
    the top 8 ids and one hash of the whole top 64."""
    def short(text: str) -> str:
        return hashlib.sha256(text.encode()).hexdigest()[:12]

    return {"first_doc": ids[0].rsplit("@", 1)[0] if ids else "", "top8": [short(c) for c in ids[:8]],
            "top64": short("\n".join(ids))}


def compare(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    def right(hits: dict[str, Any], gold: list[str]) -> bool:
        return bool(hits["first_doc"]) and any(hits["first_doc"].endswith(g) or g.endswith(hits["first_doc"]) for g in gold)

    a, b, gold = before["hits"], after["hits"], after["gold"]
    keys = [k for k in b if k in a]
    return {"questions": len(keys), "identical_top64": sum(a[k]["top64"] == b[k]["top64"] for k in keys),
            "identical_top8": sum(a[k]["top8"] == b[k]["top8"] for k in keys),
            "other_first_document": sum(a[k]["first_doc"] != b[k]["first_doc"] for k in keys),
            "right_first_document_before": sum(right(a[k], gold[k]) for k in keys),
            "right_first_document_after": sum(right(b[k], gold[k]) for k in keys)}


def hits_file(out: str) -> Path:
    return WORKSPACES / "routing" / f"{out}.json"


def earlier_hits(result_file: str) -> dict[str, Any]:
    """Each method's per-question hits and gold of an earlier run: inside its result file (older runs kept
    them there) or beside it in the workspace."""
    earlier = json.loads(Path(result_file).read_text())
    if all("hits" in m for m in earlier["methods"].values()):
        return earlier["methods"]
    path = hits_file(Path(result_file).stem)
    if not path.exists():
        raise SystemExit(f"{result_file} keeps no per-question hits and {path} is missing: rerun that run here")
    return json.loads(path.read_text())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", default=str(common.WORKSPACES / "selection"))
    p.add_argument("--full", default=str(selection.FULL), help="the full-size benchmarks (bench/selection.py)")
    p.add_argument("--dataset", default="cuad")
    p.add_argument("--split", default="test", help="dev, test, or all (both: the dataset's every contract; "
                   "the test split's questions)")
    p.add_argument("--build", action="store_true", help="build (or finish) the pool's indexes first")
    p.add_argument("--embedder", default="minilm-onnx")
    p.add_argument("--chunking", default="paper")
    p.add_argument("--methods", default="sac-generic,sac-generic+docs1,sac-generic+hybrid0.75,sac-generic+docs1+names")
    p.add_argument("--questions", type=int, default=120)
    p.add_argument("--route-chunks", type=int, help="nearest chunks read to route a question (sac.retrieval.document_ranking)")
    p.add_argument("--compare-to", help="an earlier result file of this script")
    p.add_argument("--out", default="routing")
    p.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one method in this process, print JSON
    args = p.parse_args(argv)
    selection.FULL = Path(args.full)
    if args.one:
        print(json.dumps(run_method(args, args.one)))
        return 0
    result: dict[str, Any] = {"machine": machine(), "args": vars(args), "methods": {}}
    if args.build:
        result["build"] = build(args)
        log(f"built: {result['build']}")
    earlier = earlier_hits(args.compare_to) if args.compare_to else None
    hits: dict[str, Any] = {}
    for name in args.methods.split(","):
        cmd = [sys.executable, __file__, *[a for a in (argv if argv is not None else sys.argv[1:]) if a != "--build"],
               "--one", name]
        got = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()[-1])
        if earlier and name in earlier:
            got["compared"] = compare(earlier[name], got)
        hits[name] = {"hits": got.pop("hits"), "gold": got.pop("gold")}
        result["methods"][name] = got
        log(f"{name}: first search {got['first_ms']} ms, p50 {got['p50_ms']} ms, p95 {got['p95_ms']} ms, peak RSS {got['peak_rss_mb']} MB "
            f"(before searching {got['hwm_before_search_mb']}), load {got['load']} {got.get('compared', '')}")
    write_json(hits_file(args.out), hits)
    write_json(RESULTS / f"{args.out}.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
