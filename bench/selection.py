"""Method selection on the full-size benchmarks: choose on dev, report test.

    python bench/selection.py --split dev                       # the sweep; every knob is chosen here
    python bench/selection.py --split test --methods baseline,sac-generic,sac-expert,recommended
    python bench/selection.py --split dev --datasets contractnli --methods sac-generic+docs1,sac-generic+docs1+names

The benchmarks are ``python -m sac benchmark build all --titles both`` (cuad-full: every distinct CUAD contract,
one question per answered clause category; contractnli-full: all 183 NDAs, one question per hypothesis with
evidence), built into bench/.workspace/full if missing. Each split is searched against all of its documents
(its pool); both title styles ask about the same documents, so they share one index per method, as does a third,
``--titles legalbench``: LegalBench-RAG's own questions of the bundled mini benchmark (bench/legalbench_titles.py).

Every row names the split, the pool (documents), the title style, the question subset (all; the
``identifiable`` questions whose title names something found in its document and in at most 3 others; the
``unidentifiable`` rest; ``named alone``: a name of its title that its own contract writes and no other contract of
the pool it is searched in) and the embedder. Methods with target resolution add coverage, DRM@1 on the covered
questions and AUROC (sac.evaluation.selective) per block. Figures are the mean over k in {1, 2, 4, 8, 16, 32, 64} with 95 %
bootstrap intervals over questions (sac.evaluation.uncertainty), DRM@1, and each method's paired DRM difference
to ``sac-generic``.

Writes bench/results/selection-<split>.json and .md (``--out`` names them); with ``--questions`` also every
question's figures, for paired comparisons of two runs (bench/paired.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any

import common
import legalbench_titles
import numpy as np
import pandas as pd
from common import RESULTS, SOURCES_DIR, log, machine, write_json, write_results

from sac.chunking.recipe import index_inputs
from sac.config import SacConfig
from sac.embedding.seeds import SeededEmbedder, VectorSeed, text_digest
from sac.evaluation.selective import selective_figures
from sac.evaluation.uncertainty import bootstrap_intervals, format_interval, paired_difference
from sac.index.records import embedding_text
from sac.ingest.benchmark import load_benchmark
from sac.ingest.builders import BUILDERS, MANIFEST_VERSION, TITLE_STYLES, contractnli_filename_title, cuad_filename_title
from sac.ingest.catalog import corpus_name
from sac.ingest.identifiable import as_text, identifiable
from sac.methods import MethodSpec, parse_methods
from sac.types import Dataset
from sac.usecases.benchmarks import dev_documents
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench

FULL = common.WORKSPACES / "full"
WORKSPACE = common.WORKSPACES / "selection"
REFERENCE = "sac-generic"
QUESTION_COLUMNS = [
    "dataset", "titles", "query_id", "identifiable", "named", "method", "k", "precision", "recall", "drm", "wrong",
    "retrieved", "document",
]
TARGET_COLUMNS = ["confidence", "sure", "target"]  # the methods with target resolution (sac.evaluation.selective)
SWEEP = ",".join([
    "baseline", "sac-generic", "sac-expert",
    "sac-generic+names", "sac-generic+docs1", "sac-generic+docs1+names", "sac-generic+docs2+names",
    "sac-generic+docs3+names", "sac-generic+hybrid0.5+names", "sac-generic+docs1+hybrid0.75+names",
    "sac-expert+docs1+names",
])


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "test"], required=True)
    parser.add_argument("--datasets", default="cuad,contractnli")
    parser.add_argument("--methods", default=SWEEP)
    parser.add_argument("--embedder", default="minilm-onnx", help="minilm-onnx: the packaged MiniLM, exact ONNX export")
    parser.add_argument("--chunking", choices=["paper", "merged"], default="paper",
                        help="paper (the tables in bench/README were measured with it) or merged (the app's default)")
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--pool-limit", type=int,
                        help="a sub-pool: the first N documents of the split by text hash, and only their questions "
                        "(its own indexes, named <dataset>-<split>-poolN)")
    parser.add_argument("--pools-of", type=int,
                        help="small corpora: the split's documents in consecutive pools of N by text hash (a remainder "
                        "of fewer than N left out), each question searched in its own pool's indexes; one block per "
                        "title style over all pools (datasets <dataset>-<split>-of<N>-<i>)")
    parser.add_argument("--same-type-pools", type=int,
                        help="small corpora of one kind: the split's documents in pools of N of one contract type "
                        "(same_type_pools), each question searched in its own pool's indexes; one block per title "
                        "style over all pools (datasets <dataset>-<split>-<type><N>-<i>)")
    parser.add_argument("--named-pool", action="store_true",
                        help="ContractNLI as LegalBench-RAG selects it: only the NDAs whose file name names a party "
                        "(its generator drops the others, titled 'Arbitrary Non-Disclosure Agreement'), with their "
                        "questions (its own indexes, named <dataset>-<split>-named)")
    parser.add_argument("--max-questions", type=int,
                        help="a fixed sample of at most N questions per dataset (the same in both title styles)")
    parser.add_argument("--workspace", default=str(WORKSPACE),
                        help="where the indexes live (default bench/.workspace/selection); another one lets a second "
                        "method build while this one is searched, at the cost of the paired differences to it")
    parser.add_argument("--seed-workspace", metavar="DIR",
                        help="copy the vectors this other workspace's split indexes (of --seed-methods) hold for the "
                        "same texts instead of embedding them (split_seed): a method whose texts are mostly another's "
                        "(sac-generic after a summary change that moved a few documents) embeds only what differs")
    parser.add_argument("--seed-methods", help="the methods whose indexes --seed-workspace copies from (default --methods)")
    parser.add_argument("--titles", default=",".join(TITLE_STYLES),
                        help="title styles, comma-separated: firstpage, filename (the built benchmarks) and legalbench "
                        "(LegalBench-RAG's own questions of the bundled mini benchmark, on the same splits and indexes: "
                        "bench/legalbench_titles.py)")
    parser.add_argument("--out", help="results name (default selection-<split>)")
    parser.add_argument("--questions", action="store_true",
                        help="also write every question's figures at each k (<out>.questions.csv.gz), which "
                        "bench/paired.py compares between two runs on the same questions")
    return parser.parse_args(argv)


def ensure_benchmarks(styles: tuple[str, ...] = TITLE_STYLES) -> None:
    """Build the full-size benchmarks into FULL where missing or built by an older builder (the demo's documents in
    dev: sac.ingest.builders.split_of)."""
    keep_in_dev = dev_documents(common.DEMO)
    for style in TITLE_STYLES:
        manifest = FULL / style / "manifest.json"
        current = manifest.is_file() and json.loads(manifest.read_text("utf-8")).get("version") == MANIFEST_VERSION
        for name, build in BUILDERS.items():
            if not current or not (FULL / style / "benchmarks" / f"{name}-test.json").is_file():
                log(f"building {style}/{name} into {FULL / style}")
                build(SOURCES_DIR, FULL / style, titles=style, dev_documents=keep_in_dev)
    if legalbench_titles.STYLE in styles:  # a few seconds; written anew so it always matches the built splits
        legalbench_titles.build(full=FULL)


def load_split(dataset: str, split: str, root: Path = FULL,
               styles: tuple[str, ...] = TITLE_STYLES) -> dict[str, tuple[Dataset, dict[str, list[str]]]]:
    """Per title style: the split's dataset and each question's tags (same documents in every style), from the
    benchmarks built into ``root``."""
    name = f"{dataset}-{split}"
    out = {}
    for style in styles:
        [ds] = load_benchmark(root / style, [name])
        tests = json.loads((root / style / "benchmarks" / f"{name}.json").read_text(encoding="utf-8"))["tests"]
        tags = {q.query_id: list(t.get("tags", [])) for q, t in zip(ds.queries, tests)}
        out[style] = (_file_ids(ds, f"{name}/"), tags)
    return out


def title_names(dataset: str, split: str, style: str, root: Path = FULL) -> dict[str, list[str]]:
    """Per question id, the names its title gives (the parties, or the file name's company), as the builder kept
    them; empty for a style whose benchmark does not keep them."""
    name = f"{dataset}-{split}"
    path = root / style / "benchmarks" / f"{name}.json"
    if not path.is_file():
        return {}
    [ds] = load_benchmark(root / style, [name])
    tests = json.loads(path.read_text(encoding="utf-8"))["tests"]
    return {q.query_id: list(t.get("names", [])) for q, t in zip(ds.queries, tests)}


def named_alone(pools: list[Dataset], names: dict[str, list[str]]) -> dict[str, bool]:
    """Per question id: whether a name of its title is written in its own contract and in no other of the pool it
    is searched in (sac.ingest.identifiable with at most 1 document), the questions a right target resolution
    must answer from their contract alone."""
    out = {}
    for pool in pools:
        texts = {d.doc_id: as_text(d.text) for d in pool.documents}
        cache: dict[str, int] = {}
        for q in pool.queries:
            [doc] = sorted(q.gold_doc_ids)[:1] or [""]
            out[q.query_id] = bool(doc in texts and identifiable(names.get(q.query_id, []), texts[doc],
                                                                 list(texts.values()), cache, max_docs=1))
    return out


def with_documents(questions: pd.DataFrame) -> pd.DataFrame:
    """A per-question frame of this script's with each question's ``document`` (its gold files, "|"-joined), read
    from the benchmark where the run did not record it (runs before the column was kept)."""
    if "document" in questions.columns:
        return questions
    found = {}
    for name in pd.unique(questions["dataset"]):
        dataset, split = str(name).split("-pool")[0].rsplit("-", 1)
        for style, (ds, _) in load_split(dataset, split).items():
            found.update({(name, style, q.query_id): "|".join(sorted(q.gold_doc_ids)) for q in ds.queries})
    keys = zip(questions["dataset"], questions["titles"], questions["query_id"])
    return questions.assign(document=[found[key] for key in keys])


def _file_ids(ds: Dataset, prefix: str) -> Dataset:
    """Document ids as file names (``<file>.txt``, as ``read_folder`` of the split's corpus folder gives them),
    so this script's indexes are the ones ``sac ingest --docs`` would build for the same files."""
    def strip(doc_id: str) -> str:
        return doc_id.removeprefix(prefix)

    documents = tuple(dataclasses.replace(d, doc_id=strip(d.doc_id)) for d in ds.documents)
    queries = tuple(dataclasses.replace(q, gold=tuple(dataclasses.replace(s, doc_id=strip(s.doc_id)) for s in q.gold))
                    for q in ds.queries)
    return dataclasses.replace(ds, documents=documents, queries=queries)


def sub_pool(ds: Dataset, n: int) -> Dataset:
    """The n documents whose texts hash lowest, and the questions whose answers lie only in them."""
    kept = sorted(ds.documents, key=lambda d: d.content_hash)[:n]
    ids = {d.doc_id for d in kept}
    queries = tuple(q for q in ds.queries if q.gold_doc_ids <= ids)
    return dataclasses.replace(ds, name=f"{ds.name}-pool{n}", documents=tuple(sorted(kept, key=lambda d: d.doc_id)),
                               queries=queries)


def named_pool(ds: Dataset) -> Dataset:
    """The documents whose file name names a party (``contractnli_filename_title``), and their questions: the NDAs
    LegalBench-RAG keeps. Its generator titles each NDA from its file name alone and drops, with their questions,
    those it can name no party of ("Arbitrary Non-Disclosure Agreement"): "NDA_ResConnect.txt" stays, "NDA V3.txt"
    and EDGAR numbers go."""
    kept = tuple(d for d in ds.documents if contractnli_filename_title(d.doc_id).names)
    ids = {d.doc_id for d in kept}
    return dataclasses.replace(ds, name=f"{ds.name}-named", documents=kept,
                               queries=tuple(q for q in ds.queries if q.gold_doc_ids <= ids))


def small_pools(ds: Dataset, n: int) -> list[Dataset]:
    """The split's documents in consecutive pools of n by text hash (the last, shorter one dropped), each with the
    questions whose answers lie only in it."""
    ordered = sorted(ds.documents, key=lambda d: d.content_hash)
    pools = []
    for i in range(len(ordered) // n):
        ids = {d.doc_id for d in ordered[i * n : (i + 1) * n]}
        pools.append(dataclasses.replace(ds, name=f"{ds.name}-of{n}-{i + 1:02d}",
                                         documents=tuple(d for d in ds.documents if d.doc_id in ids),
                                         queries=tuple(q for q in ds.queries if q.gold_doc_ids <= ids)))
    return pools


# CUAD's contract types (CUAD_v1_README.txt); a contract's is the first whose words its file name's type holds.
CUAD_TYPES = ("affiliate", "agency", "co-branding", "collaboration", "consulting", "development", "distributor",
              "endorsement", "franchise", "hosting", "ip", "joint venture", "license", "maintenance", "manufacturing",
              "marketing", "non-compete", "outsourcing", "promotion", "reseller", "service", "sponsorship", "supply",
              "strategic alliance", "transportation")


def contract_type(doc_id: str) -> str:
    """A CUAD contract's type from its file name ("...-EX-10.31-DISTRIBUTOR AGREEMENT.txt" -> "distributor"); "other"
    where no type word is found."""
    kind = cuad_filename_title(doc_id).text.lower()
    words = set(re.findall(r"[a-z-]+", kind))
    for name in CUAD_TYPES:
        if all(w in words or w + "s" in words for w in name.split()) or (name == "service" and "services" in words):
            return name
    return "other"


def same_type_pools(ds: Dataset, n: int) -> list[Dataset]:
    """The split's documents in pools of n of one contract type (``contract_type``), consecutive by text hash within
    each type (a type's remainder of fewer than n left out), each with the questions whose answers lie only in it."""
    by_type: dict[str, list[Any]] = {}
    nda = ds.name.startswith("contractnli")
    for doc in sorted(ds.documents, key=lambda d: d.content_hash):
        by_type.setdefault("nda" if nda else contract_type(doc.doc_id), []).append(doc)
    pools = []
    for kind in sorted(k for k in by_type if k != "other"):  # "other" holds many types
        ordered = by_type[kind]
        for i in range(len(ordered) // n):
            ids = {d.doc_id for d in ordered[i * n : (i + 1) * n]}
            pools.append(dataclasses.replace(ds, name=f"{ds.name}-{kind.replace(' ', '')}{n}-{i + 1:02d}",
                                             documents=tuple(d for d in ds.documents if d.doc_id in ids),
                                             queries=tuple(q for q in ds.queries if q.gold_doc_ids <= ids)))
    return pools


def split_seed(wb: Workbench, ds: Dataset, methods: list[MethodSpec]) -> VectorSeed | None:
    """The vectors the split's own indexes hold, keyed by the text each one embeds (sac.embedding.seeds).

    A pool of the split's documents is a corpus of its own, and a build copies vectors only within one corpus: with
    this seed its build copies what the split's index already embedded instead of running the model on the same
    texts again (the same vectors: the seed answers only for exactly the text embedded). None when no index of
    ``methods`` is built for the split."""
    corpus = corpus_name("full", ds)
    digests: list[np.ndarray] = []
    vectors: list[np.ndarray] = []
    for method in {m.index_name: m for m in methods}.values():
        index = wb.index(corpus, method)
        if not index.exists():
            continue
        chunks, prefixes = index_inputs(method.index, ds.documents, wb.chunks, wb.config.chunk_size)
        summaries = ({k: v.text for k, v in wb.summaries(ds.documents, method.strategy).items()}
                     if method.strategy is not None else {})
        texts = {c.chunk_id: embedding_text(c, summaries.get(c.doc_id), prefixes.get(c.chunk_id)) for c in chunks}
        collection = wb.client.get_collection(index.key.collection_name, embedding_function=None)
        ids = list(texts)
        for i in range(0, len(ids), 2048):
            got = collection.get(ids=ids[i : i + 2048], include=["embeddings"])
            for rid, vector in zip(got["ids"], got["embeddings"], strict=True):
                digests.append(np.frombuffer(text_digest(texts[rid]), dtype=np.uint8))
                vectors.append(np.asarray(vector, dtype=np.float32))
    if not vectors:
        return None
    return VectorSeed(wb.embedder_name, "", np.stack(digests), np.stack(vectors))


def sample_questions(ds: Dataset, n: int) -> Dataset:
    """The n questions whose ids hash lowest: a fixed sample, the same ids in every title style."""
    chosen = sorted(ds.queries, key=lambda q: hashlib.sha256(q.query_id.encode()).hexdigest())[:n]
    keep = {q.query_id for q in chosen}
    return dataclasses.replace(ds, queries=tuple(q for q in ds.queries if q.query_id in keep))


def summarize(per_query: pd.DataFrame, methods: list[str], resamples: int) -> list[dict[str, Any]]:
    """Rows per (subset, method): mean over k with intervals, DRM@1, paired DRM and recall differences to the
    reference; where the rows name each question's document, DRM's interval and both differences also with
    documents resampled (``drm_by_document``, ``drm_vs_reference_by_document``, ``recall_vs_reference_by_document``)."""
    rows = []
    subsets = [("all", per_query), ("identifiable", per_query[per_query["identifiable"]]),
               ("unidentifiable", per_query[~per_query["identifiable"]])]
    if "named" in per_query.columns:
        subsets.append(("named alone", per_query[per_query["named"].astype(bool)]))
    for subset, frame in subsets:
        if frame.empty:
            continue
        frame = frame.drop(columns=[c for c in ("identifiable", "named", *TARGET_COLUMNS) if c in frame.columns])
        units = ("question", "document") if "document" in frame.columns else ("question",)
        ci = {unit: bootstrap_intervals(frame, n_resamples=resamples, resample=unit) for unit in units}
        diffs: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        if REFERENCE in methods:
            for method in methods:
                for unit in units if method != REFERENCE else ():
                    got = paired_difference(frame, REFERENCE, method, metric=["drm", "recall"], n_resamples=resamples,
                                            resample=unit)
                    for d in got.to_dict("records"):
                        diffs[method, d["metric"], unit] = (d["estimate"], d["low"], d["high"], d["verdict"])
        for method in methods:
            get = {unit: c[(c["method"] == method) & (c["dataset"] != "overall")].set_index(["k", "metric"])
                   for unit, c in ci.items()}
            q = get["question"]
            row: dict[str, Any] = {"subset": subset, "method": method, "questions": int(q.loc[("mean", "drm"), "queries"]),
                                   "documents": int(frame["document"].nunique()) if "document" in frame.columns else None}
            for metric in ("drm", "precision", "recall"):
                est, low, high = q.loc[("mean", metric), ["estimate", "low", "high"]]
                row[metric] = [round(100 * est, 2), round(100 * low, 2), round(100 * high, 2)]
            if "document" in get:
                est, low, high = get["document"].loc[("mean", "drm"), ["estimate", "low", "high"]]
                row["drm_by_document"] = [round(100 * est, 2), round(100 * low, 2), round(100 * high, 2)]
            row["drm@1"] = round(100 * float(q.loc[(1, "drm"), "estimate"]), 2)
            if (8, "drm") in q.index:
                row["drm@8"] = round(100 * float(q.loc[(8, "drm"), "estimate"]), 2)
            for metric in ("drm", "recall"):
                for unit, suffix in (("question", ""), ("document", "_by_document")):
                    if (method, metric, unit) in diffs:
                        est, low, high, verdict = diffs[method, metric, unit]
                        row[f"{metric}_vs_reference{suffix}"] = [round(100 * est, 2), round(100 * low, 2),
                                                                  round(100 * high, 2), verdict]
            rows.append(row)
    return rows


def markdown(result: dict[str, Any]) -> str:
    by_document = any("drm_by_document" in r for b in result["blocks"] for r in b["rows"])
    lines = [f"# Method selection, {result['split']} split", "",
             f"Command: `{result['command']}` · embedder {result['embedder']} · built-in summaries · "
             f"{result['machine']['date']} · load {result['machine']['loadavg']}", "",
             "DRM, precision and recall in %, mean over k = 1…64, with 95 % bootstrap intervals over questions; "
             f"Δ DRM, Δ recall = paired differences to {REFERENCE} on the same questions (for DRM negative is "
             "better, for recall positive)."
             + (" The columns marked *documents* resample the split's documents instead, each with all its "
                "questions (sac.evaluation.uncertainty): the intervals to trust for new contracts." if by_document
                else ""), ""]
    for block in result["blocks"]:
        recall = any("recall_vs_reference" in r for r in block["rows"])  # runs stored before it was computed lack it
        extra = ("| DRM, *documents* | Δ DRM, *documents* " if by_document else "")
        extra += ("| Δ recall vs " + REFERENCE + " " if recall else "")
        extra += ("| Δ recall, *documents* " if recall and by_document else "")
        pool = (f"pools of {block['pools_of']} ({block['documents']} documents)" if block.get("pools_of")
                else f"pool {block['documents']} documents")
        lines += [f"## {block['dataset']} · {block['split']} split · {pool} · "
                  f"{block['titles']} titles", "",
                  "| subset | method | questions | DRM | DRM@1 | DRM@8 | precision | recall | Δ DRM vs " + REFERENCE + " "
                  + extra + "|", "|---" * (9 + 2 * by_document + recall + (recall and by_document)) + "|"]
        for r in block["rows"]:
            cells = [str(r["subset"]), str(r["method"]), str(r["questions"]),
                     format_interval(*(x / 100 for x in r["drm"])), f"{r['drm@1']:.1f}",
                     f"{r['drm@8']:.1f}" if "drm@8" in r else "—",
                     format_interval(*(x / 100 for x in r["precision"])),
                     format_interval(*(x / 100 for x in r["recall"])), _delta(r.get("drm_vs_reference"))]
            if by_document:
                ci = r.get("drm_by_document")
                cells += [format_interval(*(x / 100 for x in ci)) if ci else "—",
                          _delta(r.get("drm_vs_reference_by_document"))]
            if recall:
                cells.append(_delta(r.get("recall_vs_reference")))
                if by_document:
                    cells.append(_delta(r.get("recall_vs_reference_by_document")))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        if block.get("selective"):
            lines += ["Target resolution (sac.evaluation.selective), 95 % intervals with documents resampled: coverage "
                      "= questions routed with confidence, DRM@1 on those, AUROC of the top probability for \"the "
                      "top document is right\".", "",
                      "| method | questions | coverage % | DRM@1 covered % | AUROC |", "|---|---|---|---|---|"]
            for r in block["selective"]:
                cells = [str(r["method"]), str(r["questions"])]
                for metric, digits in (("coverage", 1), ("drm@1 covered", 1), ("auroc", 3)):
                    est, low, high = r.get(metric, [float("nan")] * 3)
                    cells.append(f"{est:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]")
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    return "\n".join(lines)


def _selective_rows(figures: pd.DataFrame) -> list[dict[str, Any]]:
    """Per method with target resolution: coverage, DRM@1 on the covered questions and AUROC in one row, each
    [estimate, low, high] (percent; AUROC as is) with documents resampled, over the block's pools together."""
    rows = []
    for method, frame in figures.groupby("method", sort=False):
        row: dict[str, Any] = {"method": method, "questions": int(frame["questions"].iloc[0]),
                               "documents": int(frame["documents"].iloc[0])}
        for metric, part in frame.groupby("metric", sort=False):
            scale = 1 if metric == "auroc" else 100
            row[str(metric)] = [round(scale * float(part[c].iloc[0]), 3) for c in ("estimate", "low", "high")]
        rows.append(row)
    return rows


def _delta(diff: list[Any] | None) -> str:
    return f"{format_interval(*(x / 100 for x in diff[:3]), difference=True)} {diff[3]}" if diff else "—"


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    styles = tuple(args.titles.split(","))
    unknown = [s for s in styles if s not in (*TITLE_STYLES, legalbench_titles.STYLE)]
    if unknown:
        raise SystemExit(f"unknown title style(s): {', '.join(unknown)}")
    if args.named_pool and args.datasets != "contractnli":
        raise SystemExit("--named-pool is LegalBench-RAG's ContractNLI selection: --datasets contractnli")
    ensure_benchmarks(styles)
    methods = parse_methods(args.methods)
    names = [m.name for m in methods]
    wb = Workbench(SacConfig(workspace=common.prepare_workspace(Path(args.workspace)), embedder=args.embedder, chunking=args.chunking))
    result: dict[str, Any] = {"split": args.split, "benchmark_version": MANIFEST_VERSION,
                              "embedder": args.embedder, "chunking": wb.config.chunking_key,
                              "methods": names,
                              "requested": args.methods, "machine": machine(), "blocks": [],
                              "command": common.command_line("selection.py", argv)}
    out = args.out or f"selection-{args.split}"
    started = time.perf_counter()
    questions: list[pd.DataFrame] = []
    for dataset in args.datasets.split(","):
        for style, (ds, tags) in load_split(dataset, args.split, styles=styles).items():
            whole = ds
            if args.named_pool:
                ds = named_pool(ds)
            if args.pool_limit and len(ds.documents) > args.pool_limit:
                ds = sub_pool(ds, args.pool_limit)
            if args.max_questions and len(ds.queries) > args.max_questions:
                ds = sample_questions(ds, args.max_questions)
            pools = (small_pools(ds, args.pools_of) if args.pools_of
                     else same_type_pools(ds, args.same_type_pools) if args.same_type_pools else [ds])
            if args.pools_of or args.same_type_pools:
                ds = dataclasses.replace(ds, documents=tuple(d for p in pools for d in p.documents),
                                         queries=tuple(q for p in pools for q in p.queries))
            log(f"{ds.name} ({style} titles): {len(ds.documents)} documents in {len(pools)} pool(s), "
                f"{len(ds.queries)} questions")
            searcher = wb
            seeds: list[VectorSeed | None] = []
            if len(pools) > 1:  # the pools' builds copy the split index's vectors of the same texts
                wb.close_store()  # a fresh client: an earlier block's evaluation closed the shared store
                seeds.append(split_seed(wb, whole, methods))
            if args.seed_workspace:
                other = Workbench(SacConfig(workspace=Path(args.seed_workspace), embedder=args.embedder,
                                            chunking=args.chunking))
                seeds.append(split_seed(other, whole, parse_methods(args.seed_methods or args.methods)))
                other.close_store()
            if any(seed is not None for seed in seeds):
                searcher = Workbench(wb.config, embedder=SeededEmbedder([s for s in seeds if s is not None],
                                                                        lambda: wb.embedder, wb.embedder_name))
            # reopen_store: the searches read the graphs as they lie on disk, so a first run gives what reruns give
            run = evaluate(searcher, pools, methods, benchmark="full", progress=None,
                           log=lambda line: log("  " + line), reopen_store=True)
            per_query = pd.DataFrame(run.per_query).assign(dataset=ds.name)  # small pools: one block over them all
            per_query["identifiable"] = [("identifiable" in tags[q]) for q in per_query["query_id"]]
            alone = named_alone(pools, title_names(dataset, args.split, style))
            per_query["named"] = [alone.get(q, False) for q in per_query["query_id"]]
            selective = selective_figures(per_query, n_resamples=args.resamples)
            columns = QUESTION_COLUMNS + [c for c in TARGET_COLUMNS if c in per_query.columns]
            questions.append(per_query.assign(titles=style)[columns])
            result["blocks"].append({"dataset": ds.name.removesuffix(f"-{args.split}"), "split": args.split,
                                     "titles": style,
                                     "documents": len(ds.documents), "questions": len(ds.queries),
                                     "pools_of": args.pools_of or args.same_type_pools,
                                     "same_type": bool(args.same_type_pools),
                                     "sampled": bool(args.max_questions),
                                     "timings_s": run.timings, "rows": summarize(per_query, names, args.resamples),
                                     "selective": _selective_rows(selective)})
            write_json(RESULTS / f"{out}.json", result)  # each block as it is done
    result["seconds"] = round(time.perf_counter() - started, 1)
    if args.questions:
        pd.concat(questions).round(6).to_csv(RESULTS / f"{out}.questions.csv.gz", index=False)
    write_results(out, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
