"""The lexical engine for +hybrid and document routing: rank-bm25 (before) against bm25s (sac.index.lexical).

Reads the embedded texts of built indexes (chunk texts + their summary, as BM25 sees them) from a workspace
without their vectors, then per engine: build time, on-disk size, load time in a fresh process and that
process's peak RSS (VmHWM: ``ru_maxrss`` would count the parent's pages at fork), and p50/p95 of one question's
scores for every row plus its top 100. tantivy is measured too when it imports (``pip install tantivy``; it is not
a dependency): it cannot give rank-bm25's scores (Lucene's idf, no epsilon floor, quantised lengths, top N only),
so it is timed over the same tokens for speed only. The uptime load is printed beside every timing.

    python bench/lexical.py --workspace bench/.workspace/selection --chunking paper \\
        --index full-cuad-test/sac-generic --index full-cuad-dev/baseline

Writes bench/results/lexical.json.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from common import DEMO, RESULTS, log, machine, percentile, table, write_json

from sac.config import SacConfig
from sac.index.lexical import Lexicon, embedded_texts, query_words, summary_of, tokenize
from sac.ingest.benchmark import load_benchmark
from sac.methods import parse_method
from sac.usecases.workbench import Workbench


def load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def read_texts(wb: Workbench, corpus: str, method_name: str) -> list[str]:
    """What each record of an index embedded (rows in store order), read without vectors."""
    method = parse_method(method_name)
    ids, metas, texts = wb.index(corpus, method).chunk_texts()
    per_doc: dict[str, list[int]] = {}
    for i, meta in enumerate(metas):
        per_doc.setdefault(str(meta["doc_id"]), []).append(i)
    out: list[str] = []
    for doc_id, rows in per_doc.items():
        rows.sort(key=lambda i: int(metas[i]["start"]))
        summary = summary_of(wb.summary_store, method.strategy, metas[rows[0]])
        out += embedded_texts(doc_id, [metas[i] for i in rows], [texts[i] for i in rows], summary,
                              sections=method.option("sections") is not None)[1]
    return out


def timed(fn: Any, queries: list[str]) -> dict[str, float]:
    for q in queries[:3]:
        fn(q)
    times = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)
        times.append((time.perf_counter() - t0) * 1000)
    return {"p50_ms": round(percentile(times, 50), 2), "p95_ms": round(percentile(times, 95), 2), "load": load()}


def top(scores: np.ndarray, n: int = 100) -> np.ndarray:
    part = np.argpartition(-scores, min(n, len(scores) - 1))[:n]
    return part[np.argsort(-scores[part], kind="stable")]


def folder_mb(path: Path) -> float:
    return round(sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 1e6, 1)


LOADER = """
import json, sys, time
import numpy as np
from sac.index.lexical import Lexicon
queries = json.load(open(sys.argv[2]))
t0 = time.perf_counter()
lex = Lexicon.load(__import__("pathlib").Path(sys.argv[1]))
load_s = time.perf_counter() - t0
for q in queries:
    s = lex.scores(q); np.argpartition(-s, 100)[:100]
hwm = [int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")][0]
print(json.dumps({"load_s": round(load_s, 3), "peak_rss_mb": round(hwm / 1024, 1)}))
"""
BASE = ("import json; import numpy, bm25s, sac.index.lexical; "
        "print(json.dumps({'peak_rss_mb': round([int(l.split()[1]) for l in open('/proc/self/status') "
        "if l.startswith('VmHWM')][0] / 1024, 1)}))")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workspace", required=True, help="a workspace with built indexes (only read)")
    p.add_argument("--index", action="append", required=True, help="corpus/method; several are concatenated")
    p.add_argument("--chunking", default="merged")
    p.add_argument("--embedder", default="minilm-onnx")
    p.add_argument("--queries", type=int, default=194, help="demo CUAD questions to ask")
    p.add_argument("--out", default=str(RESULTS / "lexical.json"))
    args = p.parse_args(argv)

    wb = Workbench(SacConfig(workspace=Path(args.workspace), embedder=args.embedder, chunking=args.chunking))
    texts: list[str] = []
    for spec in args.index:
        corpus, method = spec.split("/", 1)
        texts += read_texts(wb, corpus, method)
    queries = [q.text for ds in load_benchmark(DEMO) if ds.name == "cuad" for q in ds.queries][: args.queries]
    result: dict[str, Any] = {"machine": machine(), "indexes": args.index, "rows": len(texts), "queries": len(queries)}
    log(f"{len(texts):,} rows, {len(queries)} questions, load {load()}")

    t0 = time.perf_counter()
    tokens = [tokenize(t) for t in texts]
    result["tokenize_s"] = round(time.perf_counter() - t0, 2)
    result["tokens_per_row"] = round(sum(map(len, tokens)) / max(1, len(tokens)), 1)
    log(f"tokenize {result['tokenize_s']} s (load {load()})")
    rows = []

    from rank_bm25 import BM25Okapi

    t0 = time.perf_counter()
    okapi = BM25Okapi(tokens)
    build = time.perf_counter() - t0
    rank_q = timed(lambda q: top(np.asarray(okapi.get_scores(query_words(q)))), queries[:40])
    rows.append({"engine": "rank-bm25 0.2.2 (before)", "build_s": round(build, 2), "build_load": load(),
                 "disk_mb": f"none (pickle {len(pickle.dumps(okapi)) / 1e6:.0f} MB)", **rank_q,
                 "fresh_load_s": "rebuilt per process", "same_scores": "reference"})
    log(f"rank-bm25: {rows[-1]}")

    t0 = time.perf_counter()
    lex = Lexicon.from_tokens(tokens)
    build = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "lexicon"
        lex.save(folder)
        qfile = Path(tmp) / "queries.json"
        qfile.write_text(json.dumps(queries))
        fresh = json.loads(subprocess.run([sys.executable, "-c", LOADER, str(folder), str(qfile)], check=True,
                                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": "."}).stdout)
        base = json.loads(subprocess.run([sys.executable, "-c", BASE], check=True, capture_output=True, text=True,
                                         env={**os.environ, "PYTHONPATH": "."}).stdout)
        reference = BM25Okapi(tokens[: min(len(tokens), 20000)])  # the equality check on a slice (memory)
        sub = Lexicon.from_tokens(tokens[: min(len(tokens), 20000)])
        worst = max(float(np.abs(sub.scores(q) - reference.get_scores(query_words(q))).max()
                          / max(1.0, float(np.max(reference.get_scores(query_words(q)))))) for q in queries[:20])
        rows.append({"engine": "bm25s 0.3.16 (sac.index.lexical)", "build_s": round(build, 2), "build_load": load(),
                     "disk_mb": folder_mb(folder), **timed(lambda q: top(lex.scores(q)), queries),
                     "fresh_load_s": fresh["load_s"],
                     "peak_rss_mb": f"{fresh['peak_rss_mb']} (imports alone {base['peak_rss_mb']})",
                     "same_scores": f"max relative difference {worst:.1e} (first 20,000 rows, 20 questions)"})
    log(f"bm25s: {rows[-1]}")

    try:
        import tantivy
    except ImportError:
        log("tantivy not installed: skipped")
    else:
        rows.append(measure_tantivy(tantivy, tokens, queries))
        log(f"tantivy: {rows[-1]}")
    result["engines"] = rows
    result["machine"]["loadavg_end"] = [round(x, 2) for x in os.getloadavg()]
    write_json(Path(args.out), result)
    print(f"\n{len(texts):,} rows ({', '.join(args.index)}), {len(queries)} questions, tokenize {result['tokenize_s']} s; "
          f"{result['machine']['cpu']}")
    print(table(rows, ["engine", "build_s", "build_load", "disk_mb", "p50_ms", "p95_ms", "load", "fresh_load_s",
                       "peak_rss_mb", "same_scores"]))
    return 0


def measure_tantivy(tantivy: Any, tokens: list[list[str]], queries: list[str]) -> dict[str, Any]:
    """tantivy over the same tokens (joined by spaces, its whitespace tokenizer): speed and size only."""
    with tempfile.TemporaryDirectory() as tmp:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="whitespace")
        builder.add_unsigned_field("row", stored=True, indexed=False)
        schema = builder.build()
        index = tantivy.Index(schema, path=tmp)
        t0 = time.perf_counter()
        writer = index.writer(heap_size=200_000_000, num_threads=1)
        for i, row in enumerate(tokens):
            writer.add_document(tantivy.Document(body=" ".join(row), row=i))
        writer.commit()
        writer.wait_merging_threads()
        index.reload()
        build = time.perf_counter() - t0
        searcher = index.searcher()

        def ask(q: str) -> Any:
            words = [w for w in query_words(q) if w.isalnum()]
            if not words:
                return []
            return searcher.search(index.parse_query(" OR ".join(words), ["body"]), 100).hits

        return {"engine": f"tantivy {getattr(tantivy, '__version__', '0.27')} (speed only)", "build_s": round(build, 2),
                "build_load": load(), "disk_mb": folder_mb(Path(tmp)), **timed(ask, queries),
                "fresh_load_s": "-", "same_scores": "no: Lucene idf, quantised lengths; top 100 only"}


if __name__ == "__main__":
    raise SystemExit(main())
