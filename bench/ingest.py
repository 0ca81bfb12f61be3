"""Indexing throughput: raw encode rate of each embedding backend, then real index builds.

In one process, for each backend (PyTorch ``minilm``, ``minilm-onnx``, ``minilm-onnx-int8``):

1. raw: the embedder encodes a sample of the exact texts the indexes embed (summary + chunk), in the
   same slices ``Index.sync`` uses; this is the ceiling for indexing. Backends take turns slice by
   slice, so a busy neighbour slows all of them alike and the speedups are paired ratios.
2. index: ``Workbench.build`` for each method into the backend's own workspace; chunks/s over the
   chunks it added, the ratio to the raw rate, and the share of the build spent inside the embedder
   (measured within the build, so it does not depend on how busy the machine was between phases).
3. memory: RSS sampled every 0.1 s per phase, and the kernel's ``ru_maxrss`` for the process.

A build reuses what its workspace already holds (indexing is incremental and idempotent), so a long
run that was stopped finishes when started again; only the chunks it adds are counted.

Examples:
  python bench/ingest.py --limit 8                       # 8 demo CUAD contracts, all three backends
  python bench/ingest.py                                 # the 29 demo CUAD contracts
  nice python bench/ingest.py --pool --backends minilm-onnx-int8   # + 480 pool contracts, resumable
"""

from __future__ import annotations

import argparse
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import common
from common import RssSampler, TimedEmbedder, log, median, table

from sac.config import SacConfig
from sac.embedding.models import make_embedder
from sac.index.records import embedding_text
from sac.index.store import ADD_BATCH
from sac.methods import parse_methods
from sac.usecases.workbench import Workbench


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    common.add_corpus_args(p)
    p.add_argument("--backends", default=",".join(common.BACKENDS), help="comma-separated embedder names")
    p.add_argument("--methods", default=common.METHODS)
    p.add_argument("--raw-sample", type=int, default=1024, help="texts per method for the raw rate (0: all)")
    p.add_argument("--batch-size", type=int, default=32, help="embedder batch size (SacConfig.embed_batch_size)")
    p.add_argument("--workspace", help="workspace root, one sub-folder per backend; kept, and reused next time "
                   "(default: a temporary folder, deleted; with --pool: bench/.workspace/pool)")
    p.add_argument("--fresh", action="store_true", help="drop this corpus's indexes in the workspace first")
    p.add_argument("--skip-raw", action="store_true", help="no raw-rate phase (long resumed runs)")
    p.add_argument("--out", help="JSON result file (default bench/results/ingest[-pool].json)")
    return p.parse_args(argv)


def _progress(label: str) -> Any:
    state = {"next": 0.0}

    def report(stage: str, done: int, total: int) -> None:
        if not stage.startswith("embedding") or total == 0:
            return
        if done == 0 or done >= total or done / total >= state["next"]:
            log(f"{label} {stage}: {done}/{total}")
            state["next"] = done / total + 0.1

    return report


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # `kill` (SIGTERM) stops a background run the way Ctrl-C does: partial figures are still written.
    signal.signal(signal.SIGTERM, _interrupt)
    backends = [b.strip() for b in args.backends.split(",") if b.strip()]
    methods = parse_methods(args.methods)
    ds = common.load_dataset(args.dataset, args.pool, args.limit)
    corpus = common.corpus_label(ds)
    documents = list(ds.all_documents)
    if args.workspace:
        root, temporary = Path(args.workspace), False
    elif args.pool:
        root, temporary = common.WORKSPACES / "pool", False
    else:
        root, temporary = Path(tempfile.mkdtemp(prefix="sac-bench-ingest-")), True
    sampler = RssSampler()
    result: dict[str, Any] = {
        "machine": common.machine(), "args": vars(args), "corpus": corpus,
        "documents": len(documents), "workspace": str(root), "chunking": SacConfig(workspace=root).chunking_key,
        "backends": {}, "builds": [],
    }
    log(f"corpus {corpus}: {len(documents)} documents; workspace {root}")
    try:
        result["rss_after_imports_mb"] = round(common.rss_mb(), 1)
        benches: dict[str, Workbench] = {}
        timed: dict[str, TimedEmbedder] = {}
        for backend in backends:
            info: dict[str, Any] = {}
            with sampler.phase(info):
                t0 = time.perf_counter()
                config = SacConfig(
                    workspace=common.prepare_workspace(root / backend), embedder=backend,
                    embed_batch_size=args.batch_size,
                )
                timed[backend] = TimedEmbedder(make_embedder(config))
                timed[backend].embed_documents(["warm-up text for the embedder"] * 4)
                info["load_s"] = round(time.perf_counter() - t0, 2)
            info["rss_load_delta_mb"] = round(info["rss_peak_mb"] - info["rss_start_mb"], 1)
            info["name"] = timed[backend].name
            result["backends"][backend] = info
            benches[backend] = Workbench(config, embedder=timed[backend])
            log(f"loaded {backend} ({info['name']}) in {info['load_s']} s, +{info['rss_load_delta_mb']} MB RSS")

        # Chunks and summaries once (the builtin summarizer, cached in each workspace's summary store).
        first = benches[backends[0]]
        t0 = time.perf_counter()
        chunks = [c for d in documents for c in first.chunks(d)]
        summaries: dict[str, dict[str, str | None]] = {}
        for m in methods:
            if m.strategy is None:
                summaries[m.index_name] = {}
            else:
                for wb in benches.values():  # fills each workspace's cache, so builds time indexing only
                    got = wb.summaries(documents, m.strategy)
                summaries[m.index_name] = {k: s.text for k, s in got.items()}
        result["chunks_per_method"] = len(chunks)
        result["whitespace_only_chunks"] = sum(1 for c in chunks if not c.text.strip())
        result["prepare_s"] = round(time.perf_counter() - t0, 2)
        log(f"{len(chunks)} chunks per method; summaries ready in {result['prepare_s']} s")

        if not args.skip_raw:
            result["raw"] = raw_rates(args, backends, timed, methods, chunks, summaries)
        if args.fresh:
            for wb in benches.values():
                for m in methods:
                    wb.index(corpus, m).drop()
        result["builds"] = build_all(corpus, documents, methods, backends, benches, timed, sampler, result)
        result["max_rss_mb"] = round(common.max_rss_mb(), 1)
        summarize(result, backends)
    finally:
        sampler.close()
        if temporary:
            shutil.rmtree(root, ignore_errors=True)
    out = Path(args.out) if args.out else common.RESULTS / f"ingest{common.pool_tag(args.pool)}.json"
    common.write_json(out, result)
    print_tables(result, backends)
    print(f"\nresults: {out}")
    return 0


def raw_rates(
    args: argparse.Namespace, backends: list[str], timed: dict[str, TimedEmbedder], methods: Any,
    chunks: list[Any], summaries: dict[str, dict[str, str | None]],
) -> dict[str, Any]:
    """Encode the same slices of embedding texts with every backend in turn; rates and paired ratios."""
    import numpy as np

    rng = np.random.default_rng(0)
    slices: list[list[str]] = []
    for m in methods:
        texts = [embedding_text(c, summaries[m.index_name].get(c.doc_id)) for c in chunks]
        if args.raw_sample and args.raw_sample < len(texts):
            texts = [texts[i] for i in sorted(rng.choice(len(texts), args.raw_sample, replace=False))]
        slices += [texts[i : i + ADD_BATCH] for i in range(0, len(texts), ADD_BATCH)]
    seconds: dict[str, list[float]] = {b: [] for b in backends}
    first_vectors: dict[str, Any] = {}
    total = sum(len(s) for s in slices)
    log(f"raw encode: {total} texts in {len(slices)} slices x {len(backends)} backends")
    for i, texts in enumerate(slices):
        order = backends if i % 2 == 0 else backends[::-1]  # alternate who goes first
        for b in order:
            t0 = time.perf_counter()
            vectors = timed[b].inner.embed_documents(texts)
            seconds[b].append(time.perf_counter() - t0)
            if i == 0:
                first_vectors[b] = vectors
    out: dict[str, Any] = {"texts": total, "slices": len(slices), "rate": {}, "speedup_vs_minilm": {}, "cosine_vs_minilm": {}}
    for b in backends:
        out["rate"][b] = round(total / sum(seconds[b]), 2)
    if "minilm" in backends:
        for b in backends:
            if b == "minilm":
                continue
            ratios = [t / o for t, o in zip(seconds["minilm"], seconds[b])]
            cos = (first_vectors[b] * first_vectors["minilm"]).sum(axis=1)
            out["speedup_vs_minilm"][b] = {"median": round(median(ratios), 3), "min": round(min(ratios), 3),
                                           "max": round(max(ratios), 3)}
            out["cosine_vs_minilm"][b] = {"min": round(float(cos.min()), 5), "mean": round(float(cos.mean()), 5)}
    return out


def build_all(
    corpus: str, documents: list[Any], methods: Any, backends: list[str], benches: dict[str, Workbench],
    timed: dict[str, TimedEmbedder], sampler: RssSampler, result: dict[str, Any],
) -> list[dict[str, Any]]:
    """Method by method, every backend builds its index (interleaved, like the raw phase)."""
    rows = []
    for m in methods:
        for b in backends:
            wb, emb = benches[b], timed[b]
            emb.reset()
            row: dict[str, Any] = {"backend": b, "method": m.name}
            before = wb.index(corpus, m).count()
            with sampler.phase(row):
                t0 = time.perf_counter()
                try:
                    report = wb.build(corpus, documents, [m], progress=_progress(f"{b}"))[m.index_name]
                except KeyboardInterrupt:
                    # What was written stays; a rerun continues from it. Record how far this run got.
                    elapsed = time.perf_counter() - t0
                    count = wb.index(corpus, m).count()
                    row.update({"interrupted": True, "seconds": round(elapsed, 2), "index_count": count, "kept": before,
                                "added": count - before, "chunks_per_s": round((count - before) / elapsed, 2),
                                "embed_s": round(emb.seconds, 2), "embed_share": round(emb.seconds / elapsed, 3)})
                    rows.append(row)
                    result["interrupted"] = True
                    log(f"{b} {m.name}: interrupted after {elapsed:.0f} s; index holds {count} chunks (+{count - before})")
                    return rows
                elapsed = time.perf_counter() - t0
            embedded = report.embedded  # copies from another index (SyncReport.copied) are not embedding work
            row.update({
                "added": report.added, "copied": report.copied, "kept": report.kept, "deleted": report.deleted,
                "seconds": round(elapsed, 2), "embed_s": round(emb.seconds, 2),
                "chunks_per_s": round(embedded / elapsed, 2) if embedded and not report.copied else None,
                "embed_share": round(emb.seconds / elapsed, 3) if embedded and not report.copied else None,
                "in_build_encode_rate": round(embedded / emb.seconds, 2) if embedded else None,
                "index_count": wb.index(corpus, m).count(),
            })
            raw = result.get("raw", {}).get("rate", {}).get(b)
            if raw and row["chunks_per_s"]:
                row["ratio_to_raw"] = round(row["chunks_per_s"] / raw, 3)
            rows.append(row)
            log(f"{b} {m.name}: +{report.added} kept {report.kept} in {elapsed:.1f} s "
                f"({row['chunks_per_s']} chunks/s, embedder {row['embed_share']} of the time)")
    return rows


def summarize(result: dict[str, Any], backends: list[str]) -> None:
    """Per backend: overall indexing rate and peak memory; ONNX speedups paired per method."""
    by_backend: dict[str, dict[str, Any]] = {}
    for b in backends:
        rows = [r for r in result["builds"] if r["backend"] == b and r["added"]]
        added, seconds, embed = (sum(r[k] for r in rows) for k in ("added", "seconds", "embed_s"))
        entry: dict[str, Any] = {
            "added": added, "seconds": round(seconds, 2),
            "chunks_per_s": round(added / seconds, 2) if seconds else None,
            "embed_share": round(embed / seconds, 3) if seconds else None,
            "build_rss_peak_mb": max((r["rss_peak_mb"] for r in result["builds"] if r["backend"] == b), default=None),
        }
        raw = result.get("raw", {}).get("rate", {}).get(b)
        if raw and entry["chunks_per_s"]:
            entry["ratio_to_raw"] = round(entry["chunks_per_s"] / raw, 3)
        by_backend[b] = entry
    if "minilm" in backends:
        base = {r["method"]: r for r in result["builds"] if r["backend"] == "minilm" and r["chunks_per_s"]}
        for b in backends:
            pairs = [base[r["method"]]["seconds"] / r["seconds"] for r in result["builds"]
                     if r["backend"] == b and r["method"] in base and r["chunks_per_s"]
                     and r["added"] == base[r["method"]]["added"]]
            if b != "minilm" and pairs:
                by_backend[b]["index_speedup_vs_minilm"] = round(median(pairs), 3)
    result["summary"] = by_backend


def print_tables(result: dict[str, Any], backends: list[str]) -> None:
    m = result["machine"]
    print(f"\n{result['corpus']}: {result['documents']} documents, {result['chunks_per_method']} chunks per method "
          f"({result['whitespace_only_chunks']} whitespace-only); {m['cpu']}, {m['cores']} cores, load {m['loadavg']}")
    if "raw" in result:
        raw = result["raw"]
        rows = [{"backend": b, "raw texts/s": raw["rate"][b],
                 "speedup (median)": raw["speedup_vs_minilm"].get(b, {}).get("median"),
                 "cos min": raw["cosine_vs_minilm"].get(b, {}).get("min"),
                 "cos mean": raw["cosine_vs_minilm"].get(b, {}).get("mean")} for b in backends]
        print(f"\nraw encode ({raw['texts']} embedding texts, {raw['slices']} slices, backends interleaved)")
        print(table(rows, ["backend", "raw texts/s", "speedup (median)", "cos min", "cos mean"]))
    print("\nindex builds")
    print(table(result["builds"], ["backend", "method", "added", "kept", "seconds", "chunks_per_s", "ratio_to_raw",
                                   "embed_share", "in_build_encode_rate", "rss_peak_mb"]))
    rows = [{"backend": b, **result["summary"][b], **{k: result["backends"][b][k] for k in ("load_s", "rss_load_delta_mb")}}
            for b in backends]
    print("\nper backend")
    print(table(rows, ["backend", "chunks_per_s", "ratio_to_raw", "embed_share", "index_speedup_vs_minilm",
                       "load_s", "rss_load_delta_mb", "build_rss_peak_mb"]))
    print(f"process peak RSS (ru_maxrss): {result['max_rss_mb']} MB")


if __name__ == "__main__":
    raise SystemExit(main())
