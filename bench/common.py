"""Shared helpers of the benchmark scripts: corpora, timing, memory, tables and result files.

The scripts run from the repository root (``python bench/ingest.py``); this module puts the root on
``sys.path`` so they import ``sac`` from the working tree.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from sac.types import Dataset  # noqa: E402

DEMO = ROOT / "data" / "demo"
# The source datasets: SAC_SOURCES, else ../shared/data/sources beside the checkout.
SOURCES_DIR = Path(os.environ.get("SAC_SOURCES") or ROOT.parent / "shared" / "data" / "sources")
POOL_DIR = SOURCES_DIR / "cuad_v1" / "full_contract_txt"
RESULTS = Path(__file__).resolve().parent / "results"
WORKSPACES = Path(__file__).resolve().parent / ".workspace"
BACKENDS = ("minilm", "minilm-onnx", "minilm-onnx-int8")
METHODS = "baseline,sac-generic,sac-expert"


NDA_POOL = (SOURCES_DIR / "contractnli" / "test.json",
            SOURCES_DIR / "contractnli" / "dev.json")
POOL_HELP = (f"add a pool of distractors: a folder (default the CUAD contracts, {POOL_DIR}), or `nda` for the other "
             "178 ContractNLI NDAs (with --dataset contractnli)")


def pool_sources(pool: str) -> list[Path]:
    """The files or folder a ``--pool`` value names; ``nda`` is the ContractNLI NDA pool."""
    return list(NDA_POOL) if pool == "nda" else [Path(pool)]


def pool_tag(pool: str | None) -> str:
    """Suffix of a result file: ``""`` (no pool), ``"-pool"`` (CUAD) or ``"-nda-pool"``."""
    return "" if not pool else "-nda-pool" if pool == "nda" else "-pool"


def add_corpus_args(parser: Any) -> None:
    parser.add_argument("--pool", nargs="?", const=str(POOL_DIR), default=None, metavar="DIR|nda", help=POOL_HELP)
    parser.add_argument("--limit", type=int, help="use only the first N pool documents (by doc id)")
    parser.add_argument("--dataset", default="cuad", help="demo dataset whose corpus and queries are used")


def load_dataset(name: str = "cuad", pool: str | None = None, limit: int | None = None) -> Dataset:
    """A demo dataset, with the CUAD pool (or its first ``limit`` documents) as distractors.

    Without ``pool``, ``limit`` keeps the first N documents of the dataset itself (and only their queries).
    """
    from sac.ingest.benchmark import load_benchmark
    from sac.ingest.pools import load_pool

    ds = load_benchmark(DEMO, [name])[0]
    if pool:
        distractors = load_pool(pool_sources(pool), exclude=ds.documents)
        if limit is not None:
            distractors = distractors[:limit]
        return Dataset(ds.name, ds.documents, ds.queries, tuple(distractors))
    if limit is not None:
        docs = ds.documents[:limit]
        keep = {d.doc_id for d in docs}
        queries = tuple(q for q in ds.queries if q.gold_doc_ids <= keep)
        return Dataset(ds.name, docs, queries)
    return ds


def corpus_label(ds: Dataset) -> str:
    from sac.ingest.catalog import corpus_name

    return corpus_name("demo", ds)


def prepare_workspace(root: Path) -> Path:
    """Create ``root`` with ``models/`` linked to one shared cache, so each bench workspace does not
    export the ONNX model again (the export is a one-off cost, not part of any figure here)."""
    root.mkdir(parents=True, exist_ok=True)
    shared = WORKSPACES / "models"
    shared.mkdir(parents=True, exist_ok=True)
    link = root / "models"
    if not link.exists() and not link.is_symlink():
        link.symlink_to(shared, target_is_directory=True)
    return root


def machine() -> dict[str, Any]:
    """What the figures were measured on; the load average says how busy the shared cores were."""
    model = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "cpu": model, "cores": len(os.sched_getaffinity(0)), "python": platform.python_version(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def rss_mb() -> float:
    """Resident set size now, from /proc (no extra dependency)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def max_rss_mb() -> float:
    """Peak RSS of this process so far (``ru_maxrss`` is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class RssSampler:
    """Samples RSS in a thread; ``phase()`` gives the peak within a block (``ru_maxrss`` never resets)."""

    def __init__(self, interval_s: float = 0.1) -> None:
        self.interval_s = interval_s
        self._peak = rss_mb()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._peak = max(self._peak, rss_mb())

    @contextmanager
    def phase(self, out: dict[str, Any]) -> Iterator[None]:
        """Record ``rss_start_mb``, ``rss_peak_mb`` (sampled) and ``max_rss_mb`` (kernel) into ``out``."""
        self._peak = start = rss_mb()
        try:
            yield
        finally:
            out["rss_start_mb"] = round(start, 1)
            out["rss_peak_mb"] = round(max(self._peak, rss_mb()), 1)
            out["max_rss_mb"] = round(max_rss_mb(), 1)

    def close(self) -> None:
        self._stop.set()
        self._thread.join()


@dataclass
class TimedEmbedder:
    """Wraps an embedder and adds up the time spent inside it, so a build's embedding share is
    measured within the build itself (robust to other jobs slowing the machine down)."""

    inner: Any
    seconds: float = 0.0
    texts: int = 0

    @property
    def name(self) -> str:
        return str(self.inner.name)

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        t0 = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        return self.embed_documents([text])[0]

    def reset(self) -> None:
        self.seconds, self.texts = 0.0, 0


def percentile(values: Sequence[float], q: float) -> float:
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else float("nan")


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values)) if values else float("nan")


def table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    """A plain fixed-width table (markdown-compatible) of ``rows`` restricted to ``columns``."""
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3f}" if abs(v) < 10 else f"{v:.1f}"
        return "" if v is None else str(v)

    cells = [[cell(r.get(c)) for c in columns] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(columns)]
    lines = ["| " + " | ".join(c.ljust(w) for c, w in zip(columns, widths)) + " |",
             "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    lines += ["| " + " | ".join(v.ljust(w) for v, w in zip(row, widths)) + " |" for row in cells]
    return "\n".join(lines)


METHOD_FLAGS = ("--methods", "--method", "--after-method")


def command_line(script: str, argv: Sequence[str] | None = None) -> str:
    """How a run was asked for, as stored with its results: ``python bench/<script> <args>``, with every method alias
    resolved ("recommended" -> the method it names now), so the stored command reruns the same methods after the
    alias has moved on."""
    from sac.methods import ALIASES

    def resolved(value: str) -> str:
        return ",".join(ALIASES.get(part.strip(), part) for part in value.split(","))

    args = list(sys.argv[1:] if argv is None else argv)
    for i, arg in enumerate(args):
        flag, eq, value = arg.partition("=")
        if eq and flag in METHOD_FLAGS:
            args[i] = f"{flag}={resolved(value)}"
        elif i and args[i - 1] in METHOD_FLAGS:
            args[i] = resolved(arg)
    return " ".join(["python", f"bench/{script}", *args])


def write_json(path: Path, payload: dict[str, Any]) -> None:
    """Write atomically (a temporary file, then rename) so an interrupted run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def write_results(name: str, payload: dict[str, Any], text: str) -> None:
    """A run's results: bench/results/<name>.json (``write_json``) and <name>.md, whose text is printed too."""
    write_json(RESULTS / f"{name}.json", payload)
    (RESULTS / f"{name}.md").write_text(text, encoding="utf-8")
    print(text)


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)
