"""How long a survey takes: one question searched inside every contract, on the 29-contract demo and a 500-contract pool.

Targets (the issue "A legal researcher's day in the app"): the demo in under 5 s, the pool in under 60 s. Timed, per
corpus, with the model already loaded (the app loads it when a page opens):

- survey, first: the first survey of the corpus in the process (reads the index whole once, names the contracts);
- survey, again: other questions afterwards, as a user asks them on the page (the index and the names are in memory);
- per-document query: the alternative, one filtered Chroma query per contract (``where={"doc_id": ...}``), for
  comparison with the matrix product over the index read whole;
- governing law (demo): per method, in how many contracts the best span holds the clause CUAD's annotators marked.

The indexes are built beforehand, not timed:

    sac ingest --benchmark data/demo --datasets cuad --methods baseline,sac-generic --embedder minilm-onnx \\
        --workspace bench/.workspace/survey-demo
    python bench/survey.py --build-pool   # the pool: CUAD's contracts as an uploaded folder, sac-generic, the
                                          # packaged model's vectors (copied from the selection workspace's CUAD
                                          # split indexes where they hold the same text, the rest embedded)

    python bench/survey.py            # both; writes bench/results/survey.json with the load average
    python bench/survey.py --only demo
    python bench/survey.py --only synthetic-pool   # the pool's records with random vectors: built in minutes
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import time
from pathlib import Path
from typing import Any

from common import DEMO, POOL_DIR, RESULTS, SOURCES_DIR, WORKSPACES, log, machine, write_json

from sac.config import SacConfig
from sac.methods import parse_methods
from sac.usecases import corpus as corpus_cases
from sac.usecases.survey import survey
from sac.usecases.workbench import Workbench

CLAUSES = SOURCES_DIR / "cuad_v1" / "master_clauses.csv"
QUALITY_METHODS = "baseline,baseline+hybrid0.75,baseline+hybrid0.5,baseline+hybrid0.25,sac-generic,sac-generic+hybrid0.5"
QUALITY_QUESTIONS = ("What is the governing law of this agreement?", "Which law governs this agreement?", "governing law")
QUESTIONS = ("Which law governs this agreement?", "How can the agreement be terminated for convenience?",
             "What are the payment terms?", "Who owns the intellectual property developed under the agreement?")


class SyntheticEmbedder:
    """Random unit vectors, the same for the same text: a pool of the real records (chunks, summaries, names) whose
    vectors cost nothing to make, to time the survey's reading and ranking where the real pool is not built yet. Its
    own index key (``synthetic-384``): never mixed with a real model's indexes."""

    name = "synthetic-384"
    dim = 384

    def embed_documents(self, texts: Any) -> Any:
        import hashlib

        import numpy as np

        out = np.empty((len(texts), self.dim), np.float32)
        for i, text in enumerate(texts):
            seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")
            row = np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            out[i] = row / np.linalg.norm(row)
        return out

    def embed_query(self, text: str) -> Any:
        return self.embed_documents([text])[0]


def build_synthetic_pool(workspace: Path) -> None:
    """The 500-contract pool (CUAD's full_contract_txt, default chunking, sac-generic) with synthetic vectors."""
    from sac.usecases import corpus as cases

    wb = Workbench(SacConfig.from_env(workspace=workspace), embedder=SyntheticEmbedder())
    if "cuad500" not in {e.name for e in cases.list_corpora(wb.workspace)}:
        documents, _ = cases.read_documents([POOL_DIR])
        cases.add_documents(wb, "cuad500", documents)
    started = time.perf_counter()
    wb.build("cuad500", cases.corpus_documents(wb, "cuad500"), parse_methods("sac-generic"))
    log(f"synthetic pool built in {time.perf_counter() - started:.0f} s")


def build_pool(workspace: Path) -> None:
    """The 500-contract pool (CUAD's full_contract_txt as an uploaded folder, the default chunking, sac-generic) with
    the packaged model's vectors. Embedding it takes over half an hour on 2 cores; most of its texts are already
    embedded in the selection workspace's CUAD split indexes (bench/selection.py: the same contracts, the same
    summaries, the paper's chunking), so the build copies those vectors where a text is exactly the same
    (``split_seed``) and embeds the rest (chunks the merged chunking joins, contracts in no split)."""
    import selection

    from sac.embedding.seeds import SeededEmbedder
    from sac.usecases import corpus as cases

    methods = parse_methods("sac-generic")
    source = Workbench(SacConfig(workspace=selection.WORKSPACE, embedder="minilm-onnx", chunking="paper"))
    seeds = []
    for split in ("dev", "test"):
        for ds, _tags in selection.load_split("cuad", split, styles=("firstpage",)).values():
            seed = selection.split_seed(source, ds, methods)
            if seed is not None:
                seeds.append(seed)
    log(f"seeds: {sum(len(s.digests) for s in seeds):,} vectors from {len(seeds)} split index(es)")
    config = SacConfig.from_env(workspace=workspace, embedder="minilm-onnx")
    embedder = SeededEmbedder(seeds, lambda: source.embedder, source.embedder_name)
    wb = Workbench(config, embedder=embedder)
    if "cuad500" not in {e.name for e in cases.list_corpora(wb.workspace)}:
        documents, _ = cases.read_documents([POOL_DIR])
        cases.add_documents(wb, "cuad500", documents)
    started = time.perf_counter()
    wb.build("cuad500", cases.corpus_documents(wb, "cuad500"), methods)
    log(f"pool built in {time.perf_counter() - started:.0f} s: {embedder.shipped:,} vectors copied, "
        f"{embedder.embedded:,} embedded")


def _documents(wb: Workbench, which: str) -> tuple[str, list[Any]]:
    if which == "demo":
        [dataset] = corpus_cases.benchmark_datasets(wb, DEMO, ["cuad"], [])
        return corpus_cases.dataset_documents(DEMO, dataset)
    return "cuad500", corpus_cases.corpus_documents(wb, "cuad500")


def _per_document_queries(wb: Workbench, corpus: str, method: str, question: str, doc_ids: list[str]) -> float:
    """The alternative: one Chroma query per contract, filtered to it."""
    index = wb.index(corpus, parse_methods(method)[0])
    vector = wb.embed_queries([question])
    started = time.perf_counter()
    for doc_id in doc_ids:
        index.search(vector, 1, where={"doc_id": doc_id})
    return time.perf_counter() - started


def measure(which: str, workspace: Path, method: str, filtered: bool, synthetic: bool = False) -> dict[str, Any]:
    config = SacConfig.from_env(workspace=workspace, embedder="minilm-onnx")
    wb = Workbench(config, embedder=SyntheticEmbedder()) if synthetic else Workbench(config)
    corpus, documents = _documents(wb, which)
    methods = parse_methods(method)
    index = wb.index(corpus, methods[0])
    index.require_complete()
    wb.embed_queries(["warm the model up"])  # loaded before the timing, as the app has it when a page opens
    stages: dict[str, float] = {}
    last = [time.perf_counter()]

    def progress(stage: str, done: int, total: int) -> None:
        if done >= total:
            now = time.perf_counter()
            stages[stage] = round(now - last[0], 3)
            last[0] = now

    started = time.perf_counter()
    first = survey(wb, corpus, methods, QUESTIONS[0], documents=documents, progress=progress)
    cold = time.perf_counter() - started
    log(f"{which}: first survey of {len(first.rows)} contracts in {cold:.2f} s ({stages})")
    again = []
    for question in QUESTIONS[1:]:
        started = time.perf_counter()
        survey(wb, corpus, methods, question, documents=documents)
        again.append(time.perf_counter() - started)
    log(f"{which}: again, median {statistics.median(again):.2f} s over {len(again)} questions")
    out: dict[str, Any] = {
        "corpus": corpus, "contracts": len(documents), "chunks": index.count(), "method": method,
        "first_s": round(cold, 3), "first_stages_s": stages, "again_s": [round(s, 3) for s in again],
        "again_median_s": round(statistics.median(again), 3),
    }
    if filtered:
        seconds = _per_document_queries(wb, corpus, method, QUESTIONS[0], [d.doc_id for d in documents])
        out["per_document_query_s"] = round(seconds, 3)
        log(f"{which}: one filtered Chroma query per contract: {seconds:.2f} s")
    return out


def quality(workspace: Path) -> dict[str, Any]:
    """Per method and question, on the demo: in how many contracts the best span (and the best two) overlaps the words
    CUAD's annotators marked as its "Governing Law" clause (master_clauses.csv), of those with one."""
    import pandas as pd

    wb = Workbench(SacConfig.from_env(workspace=workspace, embedder="minilm-onnx"))
    corpus, documents = _documents(wb, "demo")
    clauses = pd.read_csv(CLAUSES)
    annotated = {Path(f).stem: ast.literal_eval(q) for f, q in zip(clauses["Filename"], clauses["Governing Law"])}
    gold: dict[str, list[tuple[int, int]]] = {}
    for doc in documents:
        for quote in annotated.get(Path(doc.doc_id).stem, []):
            found = re.search(r"\s+".join(re.escape(w) for w in quote.split()), doc.text)
            if found:
                gold.setdefault(doc.doc_id, []).append((found.start(), found.end()))
    out: dict[str, Any] = {"contracts_annotated": len(gold), "questions": {}}
    for question in QUALITY_QUESTIONS:
        table = survey(wb, corpus, parse_methods(QUALITY_METHODS), question, documents=documents, per_document=2)
        figures = {}
        for method in table.methods:
            figures[method] = [sum(any(h.span.start < end and start < h.span.end for h in row.hits[method][:k]
                                       for start, end in gold[row.doc_id]) for row in table.rows if row.doc_id in gold)
                               for k in (1, 2)]
        out["questions"][question] = figures
        log(f"quality {question!r}: " + ", ".join(f"{m} {a}/{b}" for m, (a, b) in figures.items()))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", choices=["demo", "pool", "synthetic-pool"])
    parser.add_argument("--method", default="sac-generic")
    parser.add_argument("--demo-workspace", default=str(WORKSPACES / "survey-demo"))
    parser.add_argument("--pool-workspace", default=str(WORKSPACES / "survey"))
    parser.add_argument("--no-filtered", action="store_true", help="skip the per-document Chroma queries")
    parser.add_argument("--synthetic-workspace", default=str(WORKSPACES / "survey-synthetic"))
    parser.add_argument("--no-quality", action="store_true", help="skip the governing-law check per method (demo)")
    parser.add_argument("--build-pool", action="store_true", help="build the pool's index (not timed) and stop")
    args = parser.parse_args()
    if args.build_pool:
        build_pool(Path(args.pool_workspace))
        return 0
    path = RESULTS / "survey.json"
    results: dict[str, Any] = json.loads(path.read_text("utf-8")) if path.is_file() else {}  # --only keeps the other
    results["targets_s"] = {"demo": 5, "pool": 60, "synthetic-pool": 60}
    if args.only == "synthetic-pool":
        build_synthetic_pool(Path(args.synthetic_workspace))
    for which, folder in (("demo", args.demo_workspace), ("pool", args.pool_workspace),
                          ("synthetic-pool", args.synthetic_workspace)):
        if args.only == which or (args.only is None and which != "synthetic-pool"):
            before = machine()
            results[which] = measure(which.removeprefix("synthetic-"), Path(folder), args.method, not args.no_filtered,
                                     synthetic=which == "synthetic-pool")
            results[which]["machine_before"], results[which]["machine_after"] = before, machine()
    if args.only in (None, "demo") and not args.no_quality and CLAUSES.is_file():
        results["governing_law"] = quality(Path(args.demo_workspace))
    write_json(path, results)
    for which in ("demo", "pool", "synthetic-pool"):
        if which in results:
            r = results[which]
            print(f"{which}: {r['contracts']} contracts, {r['chunks']:,} chunks: first survey {r['first_s']:.2f} s, "
                  f"again {r['again_median_s']:.2f} s (target {results['targets_s'][which]} s)"
                  + (f"; per-document queries {r['per_document_query_s']:.2f} s" if "per_document_query_s" in r else "")
                  + f"; load average {r['machine_before']['loadavg']} before, {r['machine_after']['loadavg']} after")
    if "governing_law" in results:
        law = results["governing_law"]
        print(f"governing law, best span (best two) holds CUAD's annotated clause, of {law['contracts_annotated']} "
              "demo contracts:")
        for question, figures in law["questions"].items():
            print(f"  {question!r}: " + ", ".join(f"{m} {a} ({b})" for m, (a, b) in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
