"""Sharded ingestion: one ``python -m sac ingest`` process against N ``--shard i/N`` processes, one Chroma server.

Each trial starts a fresh ``chroma run`` server for each mode, then times, from the first process start to
the last process end (each process loads its own model, as each machine would):

- ``one``: ``python -m sac ingest --corpus bench`` in one process and one workspace;
- ``shards``: N processes ``... --shard i/N`` started together, each with its own workspace (N machines).

Trials alternate which mode goes first, so a neighbour's load falls on both. The load average (``uptime``)
is recorded before and after every timing. Afterwards the sharded index is checked against the single
process's, record by record (ids, metadata, texts; vectors by cosine), it must report complete, and an
unsharded ``ingest`` against it must embed nothing.

Examples:
  python bench/shards.py                           # ~1,200 chunks of demo CUAD contracts, 2 shards, 2 trials
  python bench/shards.py --chunks 3000 --shards 3 --trials 1 --embedder minilm-onnx
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import common
from common import log, median

from sac.config import SacConfig
from sac.index.client import make_client
from sac.index.shard_book import shard_of
from sac.index.store import Index, list_indexes
from sac.workspace import Workspace

CORPUS = "bench"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--dataset", default="cuad", help="demo dataset whose documents are indexed")
    p.add_argument("--chunks", type=int, default=1200, help="about this many chunks in all, split evenly over the "
                   "shards (default 1200)")
    p.add_argument("--shards", type=int, default=2, help="shard processes (default 2)")
    p.add_argument("--trials", type=int, default=2, help="trials, alternating which mode goes first")
    p.add_argument("--methods", default="baseline")
    p.add_argument("--embedder", default="minilm")
    p.add_argument("--out", help="JSON result file (default bench/results/shards.json)")
    return p.parse_args(argv)


def uptime() -> str:
    """``uptime`` as the shell prints it (the load averages are what matter here)."""
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


class Server:
    """A fresh ``chroma run`` on a free loopback port, its data in ``path``."""

    def __init__(self, path: Path) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
        path.mkdir(parents=True, exist_ok=True)
        self._log = open(path / "server.log", "w")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen([chroma, "run", "--path", str(path / "data"), "--host", "127.0.0.1",
                                      "--port", str(self.port)], stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/api/v2/heartbeat", timeout=2):
                    return
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise RuntimeError(f"chroma run did not start: {(path / 'server.log').read_text()}") from None
                time.sleep(0.3)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self._log.close()


def ingest(workspace: Path, url: str, args: argparse.Namespace, *extra: str) -> list[str]:
    return [sys.executable, "-m", "sac", "ingest", "--workspace", str(workspace), "--corpus", CORPUS,
            "--methods", args.methods, "--embedder", args.embedder, "--chroma-url", url, "-q", *extra]


def run_all(commands: list[list[str]]) -> tuple[float, list[str]]:
    """Start every command at once; seconds until the last one ends, and their outputs."""
    t0 = time.perf_counter()
    procs = [subprocess.Popen(c, cwd=common.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for c in commands]
    outs = [p.communicate() for p in procs]
    seconds = time.perf_counter() - t0
    for p, (_, err) in zip(procs, outs):
        if p.returncode != 0:
            raise RuntimeError(f"an ingest process failed ({p.returncode}): {err[-2000:]}")
    return seconds, [out for out, _ in outs]


def timed(mode: str, root: Path, documents: list[Any], args: argparse.Namespace, server: Server) -> dict[str, Any]:
    """One mode once, on a fresh server: wall seconds, and the load before and after."""
    count = 1 if mode == "one" else args.shards
    commands = []
    for n in range(1, count + 1):
        ws = common.prepare_workspace(root / f"{mode}-machine{n}")  # a shared ONNX export cache
        Workspace(ws).add_documents(CORPUS, documents)
        commands.append(ingest(ws, server.url, args, *([] if mode == "one" else ["--shard", f"{n}/{count}"])))
    row: dict[str, Any] = {"mode": mode, "processes": count, "uptime_before": uptime(), "load_before": load()}
    seconds, outs = run_all(commands)
    row.update({"seconds": round(seconds, 1), "uptime_after": uptime(), "load_after": load(),
                "lines": [line for out in outs for line in out.splitlines() if "/" in line]})
    log(f"{mode}: {count} process(es) in {seconds:.1f} s (load before {row['load_before']}, after {row['load_after']})")
    return row


def check(servers: dict[str, Server], root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The sharded index against the single process's: same records, complete, and nothing left to embed."""
    import numpy as np

    out: dict[str, Any] = {}
    indexes = {}
    for mode, server in servers.items():
        config = SacConfig(workspace=root / "reader", chroma_url=server.url)
        client = make_client(config)
        indexes[mode] = [(info, Index(client, info.key, config)) for info in list_indexes(client)]
    for (info_a, a), (info_b, b) in zip(indexes["one"], indexes["shards"], strict=True):
        ids_a, vec_a, meta_a, text_a = a.all_embeddings()
        ids_b, vec_b, meta_b, text_b = b.all_embeddings()
        order = {rid: i for i, rid in enumerate(ids_b)}
        same = sorted(ids_a) == sorted(ids_b) and len(ids_b) == len(set(ids_b))
        rows = [order[r] for r in ids_a] if same else []
        cos = (vec_a * vec_b[rows]).sum(axis=1) if same else np.zeros(1)
        out[info_a.method] = {
            "records": len(ids_a), "same_ids": same, "complete": info_b.complete,
            "same_metadata_and_text": same and all(meta_a[i] == meta_b[j] and text_a[i] == text_b[j]
                                                   for i, j in enumerate(rows)),
            "cosine_min": round(float(cos.min()), 6),
        }
    _, outs = run_all([ingest(root / "shards-machine1", servers["shards"].url, args)])
    out["unsharded_ingest_after"] = [line for line in outs[0].splitlines() if "chunks embedded" in line]
    return out


def pick(documents: list[Any], shards: int, target: int) -> tuple[list[Any], list[int]]:
    """Documents in order, skipping any whose shard already has its share (``target / shards`` chunks), so
    every shard gets about the same work. A corpus of thousands of documents balances by itself; the demo's
    29 CUAD contracts do not (2,400 and 1,189 chunks in shards 1/2 and 2/2)."""
    from sac.chunking.merge import index_chunks

    share = target / shards
    chosen, per_shard = [], [0] * shards
    for doc in documents:
        n = shard_of(doc.doc_id, shards) - 1
        size = len(index_chunks(doc))
        if per_shard[n] + size <= share * 1.1:
            chosen.append(doc)
            per_shard[n] += size
    return chosen, per_shard


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    documents, split = pick(list(common.load_dataset(args.dataset).all_documents), args.shards, args.chunks)
    result: dict[str, Any] = {"machine": common.machine(), "args": vars(args), "documents": len(documents),
                              "chunks_per_shard": split, "ideal_ratio": round(sum(split) / max(split), 3),
                              "trials": []}
    log(f"{len(documents)} documents of demo {args.dataset}, chunks per shard {split}; {args.trials} trial(s)")
    for trial in range(args.trials):
        root = Path(tempfile.mkdtemp(prefix="sac-bench-shards-"))
        servers: dict[str, Server] = {}
        try:
            order = ["one", "shards"] if trial % 2 == 0 else ["shards", "one"]
            rows = {}
            for mode in order:
                servers[mode] = Server(root / f"{mode}-server")
                rows[mode] = timed(mode, root, documents, args, servers[mode])
            entry: dict[str, Any] = {"order": order, **rows}
            entry["ratio_one_over_shards"] = round(rows["one"]["seconds"] / rows["shards"]["seconds"], 3)
            if trial == 0:
                entry["check"] = check(servers, root, args)
                log(f"check: {entry['check']}")
            result["trials"].append(entry)
            log(f"trial {trial + 1}: one {rows['one']['seconds']} s, shards {rows['shards']['seconds']} s, "
                f"ratio {entry['ratio_one_over_shards']}")
        finally:
            for server in servers.values():
                server.stop()
            shutil.rmtree(root, ignore_errors=True)
    result["ratio_median"] = round(median([t["ratio_one_over_shards"] for t in result["trials"]]), 3)
    chunks = re.findall(r": (\d+) chunks embedded", " ".join(result["trials"][0]["one"]["lines"]))
    result["chunks"] = sum(int(c) for c in chunks)
    out = Path(args.out) if args.out else common.RESULTS / "shards.json"
    common.write_json(out, result)
    print(f"\n{result['documents']} documents ({result['chunks']} chunks per method; per shard "
          f"{result['chunks_per_shard']}, so at best {result['ideal_ratio']}x); {result['machine']['cpu']}, "
          f"{result['machine']['cores']} cores")
    for i, t in enumerate(result["trials"], start=1):
        for mode in t["order"]:
            r = t[mode]
            print(f"trial {i} {mode:>6}: {r['processes']} process(es) {r['seconds']:>7.1f} s   "
                  f"before: {r['uptime_before']}\n{'':>33}after:  {r['uptime_after']}")
        print(f"trial {i} ratio (one / shards): {t['ratio_one_over_shards']}")
    print(f"median ratio: {result['ratio_median']}")
    if "check" in result["trials"][0]:
        print(f"check: {result['trials'][0]['check']}")
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
