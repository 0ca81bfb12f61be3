"""``python -m sac``: everything the app does, scriptable.

Examples:
  python -m sac eval --benchmark data/demo --methods baseline,sac-generic,sac-expert
  python -m sac eval --datasets contractnli --pool ../shared/data/sources/contractnli/test.json
  python -m sac eval --corpus mine        # the ground truth marked on the app's Review page for corpus "mine"
  python -m sac ingest --benchmark data/demo --methods baseline,sac-expert
  python -m sac ingest --docs contracts/ --corpus mine --methods baseline,sac-generic
  python -m sac ingest --datasets cuad --chroma-url http://127.0.0.1:8000 --shard 1/2   # 2/2 on another machine
  python -m sac summarize --datasets cuad,contractnli --strategy generic-llm,expert-llm --summarizer openai \\
      --model qwen2.5-coder-1.5b-instruct --base-url http://127.0.0.1:8089/v1 --concurrency 1 \\
      --context-chars 4000 --out 'data/demo/summaries/{strategy}.json'
  python -m sac query "What is the governing law?" --benchmark data/demo --dataset cuad --k 8
  python -m sac eval --datasets contractnli --embedder openai:text-embedding-3-small \\
      --embed-base-url http://127.0.0.1:8000/v1 --methods baseline
  python -m sac benchmark build all --out bench/.workspace/full --titles both
  python -m sac runs list
  python -m sac runs compare RUN_A RUN_B
  python -m sac runs mismatch RUN --k 8          # which documents take the wrong-document hits
  python -m sac remove --corpus mine contract-7.pdf      # --all: the whole corpus
  python -m sac remove --matter acme-v-beta              # a whole matter (SAC_WORKSPACE: the deployment's root)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.errors import ConfigError, SacError
from sac.ingest.catalog import DEMO_DIR, SOURCES_DIR
from sac.retrieval.methods import (
    BASE_METHODS,
    RECOMMENDED,
    Method,
    check_k,
    check_query,
    method_label,
    parse_method,
    parse_methods,
)
from sac.summaries.command import cmd_summarize
from sac.summaries.sets import import_summary_sets
from sac.types import Dataset, Document
from sac.wording import counted

if TYPE_CHECKING:
    from sac.evaluation.runs import RunFolder
    from sac.index.shards import Shard



class _Progress:
    """tqdm bars on stderr, one per stage."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        from tqdm import tqdm

        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = tqdm(total=total, desc=stage, unit="it", file=sys.stderr, leave=True)
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            del self._bars[stage]


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"Expected comma-separated whole numbers, got {text!r}") from None


def _config(args: argparse.Namespace) -> SacConfig:
    return SacConfig.from_env(
        workspace=Path(args.workspace) if args.workspace else None,
        chroma_url=args.chroma_url, chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap,
        chunking=args.chunking, summary_chars=args.summary_chars, embedder=args.embedder,
        embed_device=args.embed_device, embed_base_url=args.embed_base_url,
        llm_model=getattr(args, "model", None), llm_base_url=getattr(args, "base_url", None),
        llm_concurrency=getattr(args, "concurrency", None),
    )


def _workbench(args: argparse.Namespace) -> Any:
    from sac.workbench import Workbench

    return Workbench(_config(args))


def _datasets(wb: Any, args: argparse.Namespace) -> list[Dataset]:
    from sac.ingest.benchmark import load_benchmark
    from sac.ingest.pools import attach_pool

    names = [d.strip() for d in args.datasets.split(",")] if getattr(args, "datasets", None) else None
    datasets = load_benchmark(Path(args.benchmark), names)
    import_summary_sets(wb.summary_store, Path(args.benchmark))
    return attach_pool(datasets, [Path(p) for p in getattr(args, "pool", None) or ()])


def _corpus_documents(wb: Any, args: argparse.Namespace) -> tuple[str, list[Document]]:
    """The documents of ``--corpus NAME`` (workspace) or of one benchmark dataset."""
    if getattr(args, "corpus", None):
        return args.corpus, wb.workspace.load_corpus(args.corpus)
    datasets = _datasets(wb, args)
    if len(datasets) != 1:
        raise ConfigError(
            f"Name one dataset with --dataset (one of {[d.name for d in datasets]}) or a corpus with --corpus"
        )
    from sac.evaluation.runs import corpus_name

    return corpus_name(Path(args.benchmark).name, datasets[0]), list(datasets[0].all_documents)


def _reviewed(wb: Any, args: argparse.Namespace) -> list[Dataset]:
    """``--corpus NAME``: the ground truth reviewers marked on that corpus (in the app's Review page), as one dataset
    searched in the corpus's own indexes (with any ``--pool``)."""
    from sac.evaluation.review import ReviewStore, reviewed_dataset
    from sac.ingest import catalog
    from sac.ingest.pools import attach_pool

    if getattr(args, "datasets", None):
        raise ConfigError("--corpus evaluates that corpus's reviewed ground truth: give it without --datasets")
    entry = catalog.find_corpus(catalog.list_corpora(wb.workspace), args.corpus)
    documents = (catalog.load_dataset(entry).documents if entry.kind == "benchmark"
                 else tuple(wb.workspace.load_corpus(args.corpus)))
    spans = ReviewStore(wb.workspace.reviews_dir).gold(corpus=args.corpus)
    return attach_pool([reviewed_dataset(args.corpus, documents, spans)], [Path(p) for p in args.pool or ()])


def _reference(written: str | None, methods: Sequence[str]) -> str | None:
    """The method to compare the others with, named as a run names it (``recommended`` -> what it stands for);
    without one, the baseline where it ran."""
    if written is None:
        return "baseline" if "baseline" in methods else None
    return parse_method(written).name


def cmd_eval(args: argparse.Namespace) -> int:
    from sac.evaluation.runs import evaluate, save_run, summary_table
    from sac.workspace import safe_name

    safe_name(args.label, "run label")  # a bad label fails now, not after the evaluation
    wb = _workbench(args)
    methods = parse_methods(args.methods)
    names = [m.name for m in methods]
    reference = _reference(args.reference, names)
    if reference is not None and reference not in names:
        raise ConfigError(f"--reference {reference!r} is not among the evaluated methods {names}")
    ks = _ints(args.k)
    started = time.perf_counter()
    datasets = _reviewed(wb, args) if args.corpus else _datasets(wb, args)
    corpora = {d.name: args.corpus for d in datasets} if args.corpus else None
    result = evaluate(
        wb, datasets, methods, ks, benchmark=Path(args.benchmark).name, progress=_Progress(not args.quiet),
        log=None if args.quiet else (lambda line: print(line, file=sys.stderr)), reopen_store=True, corpora=corpora,
    )
    result.timings["total"] = round(time.perf_counter() - started, 3)
    settings: dict[str, Any] = {
        "benchmark": str(args.benchmark), "datasets": [d.name for d in datasets], "methods": [m.name for m in methods],
        "k": ks, "pool": [str(p) for p in args.pool or []],
    }
    if args.corpus:
        from sac.evaluation.review import reviewed_settings

        settings.update(reviewed_settings(args.corpus, datasets[0]))
    run = save_run(wb.workspace, result, wb.config, settings, label=args.label)
    frame = result.frame()
    if args.out:
        frame.to_csv(args.out, index=False)
    show_ks = ["mean", *[k for k in (1, 8, 64) if k in ks]]
    print(summary_table(frame, show_ks).to_string())
    _print_uncertainty(run, reference, [m.name for m in methods], args.resample)
    print(f"\ntimings (s): {json.dumps(result.timings)}")
    print(f"run saved: {run.path}")
    return 0


def _print_uncertainty(run: RunFolder, reference: str | None, methods: Sequence[str], resample: str = "question") -> None:
    """Mean over k with 95 % bootstrap intervals (questions or documents resampled); with a reference, paired
    differences to it."""
    from sac.evaluation.uncertainty import compare_to_reference, few_units_note, format_interval, interval_table

    unit = "questions" if resample == "question" else "documents (each with all its questions)"
    print(f"\nmean over k, 95 % bootstrap interval, resampling {unit}:")
    per_query = run.per_query()
    if note := few_units_note(per_query, resample):
        print(f"rough: {note}")
    print(interval_table(run.intervals(resample), "mean").to_string())
    if reference and len(methods) > 1:
        diff = compare_to_reference(per_query, reference, resample=resample)
        diff["difference"] = [format_interval(r.estimate, r.low, r.high, difference=True) for r in diff.itertuples()]
        print(f"\npaired difference to {reference} (same questions; mean over k; resampling {resample}s):")
        print(diff[["dataset", "method_b", "metric", "difference", "verdict"]]
              .rename(columns={"method_b": "method"}).to_string(index=False))


def cmd_benchmark_build(args: argparse.Namespace) -> int:
    """Rebuild full-size LegalBench-RAG-style benchmarks from the source datasets (deterministic)."""
    from sac.ingest.builders import BUILDERS, TITLE_STYLES

    names = list(BUILDERS) if args.dataset == "all" else [args.dataset]
    styles = list(TITLE_STYLES) if args.titles == "both" else [args.titles]
    out = Path(args.out)
    reports = {}
    for style in styles:
        target = out / style if len(styles) > 1 else out
        for name in names:
            options: dict[str, Any] = {"titles": style, "limit": args.limit}
            if name == "cuad":
                options["keep_partial"] = args.keep_partial
            report = BUILDERS[name](Path(args.sources), target, **options)
            reports[f"{style}/{name}"] = report.as_dict()
            print(f"{target}: {name}-dev {report.questions['dev']} questions on {report.documents['dev']} documents, "
                  f"{name}-test {report.questions['test']} on {report.documents['test']}", file=sys.stderr)
    print(json.dumps(reports, indent=1, sort_keys=True))
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    from sac.index.shards import parse_shard, require_server

    shard = parse_shard(args.shard) if args.shard else None
    wb = _workbench(args)
    if shard is not None:
        require_server(wb.config, shard)  # before any document is read
    methods = parse_methods(args.methods)
    targets: list[tuple[str, list[Document]]] = []
    if args.docs:
        from sac.ingest.readers import read_folder, read_path

        docs: list[Document] = []
        for raw in args.docs:
            path = Path(raw)
            if path.is_dir():
                got, errors = read_folder(path)
                docs.extend(got)
                for err in errors:
                    print(f"skipped: {err}", file=sys.stderr)
            else:
                docs.append(read_path(path))
        if not args.corpus:
            raise ConfigError("--docs needs --corpus NAME: the workspace corpus to add them to")
        targets.append((args.corpus, wb.workspace.add_documents(args.corpus, docs)))
    elif args.corpus:
        targets.append((args.corpus, wb.workspace.load_corpus(args.corpus)))
    else:
        from sac.evaluation.runs import corpus_name

        for ds in _datasets(wb, args):
            targets.append((corpus_name(Path(args.benchmark).name, ds), list(ds.all_documents)))
    for corpus, documents in targets:
        started = time.perf_counter()
        reports = wb.build(corpus, documents, methods, progress=_Progress(not args.quiet), shard=shard)
        if shard is None:
            for name, rep in reports.items():
                print(f"{corpus} / {name}: {rep.describe()}")
        else:
            _print_shard(wb, corpus, documents, methods, reports, shard)
        print(f"{corpus}: {counted(len(documents), 'document')} in {time.perf_counter() - started:.1f} s")
    return 0


def cmd_vectors(args: argparse.Namespace) -> int:
    from sac.embedding.seeds import record_vectors

    if args.corpus or args.pool:
        raise ConfigError("vectors records what a build of the benchmark folder's own documents embeds: "
                          "it reads no --corpus or --pool")
    names = [d.strip() for d in args.datasets.split(",")] if args.datasets else None
    started = time.perf_counter()
    path, rows = record_vectors(_config(args), Path(args.benchmark), names, parse_methods(args.methods),
                                progress=_Progress(not args.quiet))
    print(f"{path}: {rows:,} vectors in {time.perf_counter() - started:.1f} s")
    return 0


def _print_shard(wb: Any, corpus: str, documents: Sequence[Document], methods: Sequence[Method],
                 reports: dict[str, Any], shard: Shard) -> None:
    """What one shard did to each index, and whether the index is complete now."""
    own = sum(shard.owns(d.doc_id) for d in documents)
    by_index = {m.index_name: m for m in methods}
    for name, rep in reports.items():
        print(f"{corpus} / {name} (shard {shard.label}, {own} of {len(documents)} documents): {rep.describe()}")
        index = wb.index(corpus, by_index[name])
        status = index.shard_status()
        if not index.is_complete():
            print(f"{corpus} / {name}: index incomplete: {status.describe()}")
        else:
            how = f"all {shard.count} shards done" if status.all_done else "its last build ran to the end"
            print(f"{corpus} / {name}: index complete: {how}")


def cmd_query(args: argparse.Namespace) -> int:
    text, k = check_query(args.text), check_k(args.k)  # before any index is built
    wb = _workbench(args)
    methods = parse_methods(args.methods)
    corpus, documents = _corpus_documents(wb, args)
    wb.build(corpus, documents, methods, progress=_Progress(not args.quiet))
    hits = wb.search(corpus, methods, [text], k)
    from sac.evaluation.compare import routing_notes
    from sac.retrieval.options import explain
    for method in methods:
        print(f"== {method_label(method.name)}")
        routing = explain(wb, corpus, method, text)  # +names / +docs<N>: what the title named, where it searched
        for label, note in routing_notes(routing, text, frozenset([args.target_doc] if args.target_doc else [])) if routing else []:
            print(f"   {label} {note}")
        for hit in hits[method.name][0]:
            flag = ""
            if args.target_doc:
                flag = "  " if hit.span.doc_id == args.target_doc else "WRONG-DOC "
            chunk = " ".join(hit.chunk.text.split())
            print(f"{flag}{hit.rank:>3} {hit.score:.3f} {hit.span.doc_id} [{hit.span.start}, {hit.span.end}) {chunk[:100]}")
    return 0


def _print_mismatch(run: RunFolder, k: int, top: int) -> None:
    """Per dataset and method of a run: the documents that took the most wrong hits at k, the pairs (document
    asked about, document that took its hits) with the most, and the documents asked about with the worst DRM
    (sac.evaluation.mismatch)."""
    from sac.evaluation.mismatch import every_mismatch_table

    for (dataset, method), (takers, asked, pairs) in every_mismatch_table(run, k).items():
        print(f"\n{dataset} / {method}, k={k}: {int(takers['wrong hits'].sum())} wrong hits"
              f" (DRM {100 * asked['wrong hits'].sum() / max(1, asked['hits'].sum()):.1f} %)")
        if len(takers):
            shown = takers.head(top)
            shown = shown.assign(**{"share of wrong hits": (100 * shown["share of wrong hits"]).round(1)})
            print("documents that took wrong hits:\n" + shown.to_string(index=False))
            print("look-alike pairs, the document asked about and the one that took its hits:\n"
                  + pairs.head(top).to_string(index=False))
        worst = asked.head(top)
        print("documents asked about, worst DRM first:\n"
              + worst.assign(drm=(100 * worst["drm"]).round(1)).to_string(index=False))


def cmd_runs(args: argparse.Namespace) -> int:
    from sac.evaluation.runs import compare_runs, list_runs, open_run, summary_table
    from sac.workspace import Workspace

    ws = Workspace(_config(args).workspace)
    if args.action == "list":
        for run in list_runs(ws):
            s = run.settings
            print(f"{run.run_id}\t{run.created}\t{','.join(s.get('datasets', []))}\t"
                  f"{','.join(s.get('methods', []))}\tpool={len(s.get('pool', []))}")
        return 0
    if args.action == "show":
        if len(args.run_ids) != 1:
            raise ConfigError("`runs show` takes one run id")
        run = open_run(ws, args.run_ids[0])
        metrics = run.metrics()
        print(summary_table(metrics).to_string())
        methods = list(dict.fromkeys(metrics["method"]))
        _print_uncertainty(run, _reference(args.reference, methods), methods, args.resample)
        return 0
    if args.action == "mismatch":
        if len(args.run_ids) != 1:
            raise ConfigError("`runs mismatch` takes one run id")
        if args.top < 1:
            raise ConfigError(f"--top must be 1 or more (rows per table), got {args.top}")
        _print_mismatch(open_run(ws, args.run_ids[0]), 8 if args.k is None else args.k, args.top)
        return 0
    if len(args.run_ids) != 2:
        raise ConfigError("`runs compare` takes two run ids")
    a, b = (open_run(ws, r) for r in args.run_ids)
    print(compare_runs(a, b).to_string())
    return 0


def cmd_remove(args: argparse.Namespace) -> int:
    from sac.removal import remove_corpus, remove_documents

    if args.matter:
        if args.corpus or args.doc_ids or args.all:
            raise ConfigError("--matter removes a whole matter: give it alone, without --corpus, DOC_ID or --all")
        from sac.matters import erase_matter

        done = erase_matter(_config(args), args.matter)
        print(f"Removed matter {args.matter!r}: {done['files']:,} files"
              + (", and its database on the Chroma server" if done["server_database_dropped"] else "") + ".")
        return 0
    if not args.corpus:
        raise ConfigError("Name the corpus (--corpus NAME), or a whole matter (--matter NAME)")
    if args.all == bool(args.doc_ids):
        raise ConfigError("Name the documents to remove (DOC_ID ...) or give --all for the whole corpus, not both")
    wb = _workbench(args)
    report = remove_corpus(wb, args.corpus) if args.all else remove_documents(wb, args.corpus, args.doc_ids)
    print(report.message())
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The whole command line in one place. Long because it is a declaration (one line per option), which
    reads best as one table."""
    parser = argparse.ArgumentParser(
        prog="python -m sac", description="Summary-Augmented Chunking workbench.", epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", help="workspace folder (default ./workspace, or SAC_WORKSPACE)")
    common.add_argument("--chroma-url", help="Chroma server, e.g. http://127.0.0.1:8000 (or SAC_CHROMA_URL)")
    common.add_argument("--chunk-size", type=int)
    common.add_argument("--chunk-overlap", type=int, help="needs --chunking paper")
    common.add_argument("--chunking", choices=["merged", "paper"],
                        help="merged (default): pieces with fewer than 25 non-space characters join a neighbour; "
                        "paper: the paper's splitter exactly, to reproduce its tables (or SAC_CHUNKING)")
    common.add_argument("--summary-chars", type=int, help="target summary length (default 150)")
    common.add_argument("--embedder", help="minilm (default), minilm-onnx, a sentence-transformers name, openai:<model>")
    common.add_argument("--embed-device", help="where a local embedder runs: auto (default: cuda, else mps, else cpu), "
                        "cpu, cuda, cuda:N, mps (or SAC_EMBED_DEVICE)")
    common.add_argument("--embed-base-url", help="OpenAI-compatible embeddings server for openai:<model>, e.g. "
                        "http://127.0.0.1:8000/v1 (or SAC_EMBED_BASE_URL); its key from SAC_EMBED_API_KEY")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    source = argparse.ArgumentParser(add_help=False)
    source.add_argument("--benchmark", default=str(DEMO_DIR), help="LegalBench-RAG folder (default data/demo)")
    source.add_argument("--datasets", "--dataset", dest="datasets", help="comma-separated, e.g. cuad,contractnli")
    source.add_argument("--pool", nargs="+", help="distractor documents: folders or ContractNLI JSON files")
    source.add_argument("--corpus", help="a workspace corpus instead of a benchmark dataset (eval: scored on the ground "
                        "truth marked for it on the app's Review page)")
    methods_help = (f"comma-separated; e.g. {','.join(BASE_METHODS)},recommended (= {RECOMMENDED}); options after a +: "
                    "sac-expert+docs3, sac-generic+hybrid0.75")

    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("eval", parents=[common, source], help="evaluate methods on a benchmark",
                       description="Retrieve top max(k) once per query and method; print and save DRM, precision, recall.")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--k", default=",".join(map(str, DEFAULT_K_VALUES)))
    p.add_argument("--label", default="eval", help="name part of the run folder")
    p.add_argument("--out", help="also write metrics.csv here")
    p.add_argument("--reference", help="print each method's paired difference to this method, with its 95 %% "
                   "interval (default: baseline, when evaluated)")
    p.add_argument("--resample", choices=["question", "document"], default="question",
                   help="what the bootstrap draws: questions (default), or documents with all their questions, "
                   "the honest unit when questions about one contract succeed or fail together")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("benchmark", help="build full-size benchmarks from the source datasets")
    bench_sub = p.add_subparsers(dest="benchmark_command", required=True)
    p = bench_sub.add_parser(
        "build", help="cuad-full / contractnli-full with dev and test splits, LegalBench-RAG's construction",
        description="Write OUT/corpus/<dataset>-{dev,test}/ and OUT/benchmarks/<dataset>-{dev,test}.json: one "
        "question per (contract, answered CUAD clause category) or (NDA, ContractNLI hypothesis with evidence); "
        "documents split in halves by a hash of their text. With --titles both, OUT/firstpage and OUT/filename.",
    )
    p.add_argument("dataset", choices=["cuad", "contractnli", "all"])
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--sources", default=str(SOURCES_DIR), help="the source datasets (default ../shared/data/sources)")
    p.add_argument("--titles", choices=["firstpage", "filename", "both"], default="both",
                   help="how a question names its document: as its first page does, or as its file name does")
    p.add_argument("--limit", type=int, help="only the first N documents (by text hash): a small subset")
    p.add_argument("--keep-partial", action="store_true",
                   help="cuad: keep a question when some of its quotes are missing or repeated (LegalBench-RAG drops it)")
    p.set_defaults(func=cmd_benchmark_build)

    p = sub.add_parser("ingest", parents=[common, source], help="build or update indexes")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--docs", nargs="+", help="files or folders to add to --corpus")
    p.add_argument("--shard", metavar="I/N",
                   help="index only shard I of N (1-based; a document's shard is a hash of its id), so N processes "
                   "on N machines fill one Chroma server (--chroma-url); the index is complete when all N are")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "vectors", parents=[common, source], help="record the vectors of a benchmark's texts, to ship with it",
        description="Build the methods' indexes of the benchmark's datasets in a temporary workspace with the packaged "
        "model, and write every text embedded, with its vector, to BENCHMARK/vectors/<model>.npz. A workbench told to "
        "use them (the app's, for the demo) copies those vectors for the texts they hold instead of embedding them "
        "again; any other text is embedded as before.",
    )
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.set_defaults(func=cmd_vectors)

    p = sub.add_parser(
        "summarize", parents=[common, source], help="generate summaries for one or more strategies",
        description="Summarize every document of the named datasets (all by default) or of --corpus. Finished "
        "summaries are stored at once: after Ctrl-C or a failure, the same command continues where it stopped.",
        epilog="example (a local llama.cpp server, both LLM strategies, one set file per strategy):\n"
        "  python -m sac summarize --datasets cuad,contractnli --strategy generic-llm,expert-llm \\\n"
        "      --summarizer openai --model qwen2.5-coder-1.5b-instruct --base-url http://127.0.0.1:8089/v1 \\\n"
        "      --concurrency 1 --context-chars 5000 --out 'data/demo/summaries/{strategy}.json'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--strategy", required=True,
                   help="comma-separated: generic, expert, generic-llm, expert-llm, or your own names")
    p.add_argument("--summarizer", default="builtin", help="builtin (offline) or openai (any OpenAI-compatible server)")
    p.add_argument("--model", help="LLM model name (SAC_LLM_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible base URL (SAC_LLM_BASE_URL); key from OPENAI_API_KEY")
    p.add_argument("--prompt-file", help="use this prompt template instead of the built-in one (one strategy)")
    p.add_argument("--concurrency", type=int,
                   help="parallel LLM requests (default 4); 1 suits a local server that answers one at a time")
    p.add_argument("--timeout", type=float,
                   help="seconds to wait for one answer (default 120; at least 900 for a local server)")
    p.add_argument("--context-chars", type=int,
                   help="longest document text sent; longer ones are sent as head and tail (default 24000)")
    p.add_argument("--max-attempts", type=int, help="requests per summary before a too-long reply is cut (default 3)")
    p.add_argument("--out", help="write a summary set JSON file; with several strategies 'DIR/{strategy}.json' or DIR")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="provenance to record in the set (repeatable)")
    p.add_argument("-y", "--yes", action="store_true",
                   help="do not ask before sending requests to a remote API (never asked without a terminal)")
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("query", parents=[common, source], help="run one query against every method")
    p.add_argument("text")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--target-doc", help="document id the question is about: flags hits from other documents")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser("runs", parents=[common], help="list, show or compare saved runs")
    p.add_argument("action", choices=["list", "show", "compare", "mismatch"],
                   help="mismatch: where a run's wrong-document hits go, per dataset and method")
    p.add_argument("run_ids", nargs="*")
    p.add_argument("--k", type=int, help="mismatch: at this k (default 8)")
    p.add_argument("--top", type=int, default=10, help="mismatch: rows per table (default 10)")
    p.add_argument("--reference", help="show: each method's paired difference to this one (default: baseline, if run)")
    p.add_argument("--resample", choices=["question", "document"], default="question",
                   help="show: what the bootstrap draws (as for eval)")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser(
        "remove", parents=[common], help="remove documents or a whole corpus, leaving none of their text on disk",
        description="Remove documents of an uploaded corpus (or a whole corpus, --all) with their index records, "
        "summaries, review labels and spans, and the saved runs that hold them; then compact the Chroma store.",
    )
    p.add_argument("--corpus", help="the corpus name (as the Corpus page lists it)")
    p.add_argument("--matter", help="remove this whole matter (its folder under <workspace>/matters/, and its database "
                   "on a Chroma server); --workspace is the deployment's root")
    p.add_argument("doc_ids", nargs="*", metavar="DOC_ID", help="documents to remove")
    p.add_argument("--all", action="store_true", help="remove the whole corpus")
    p.set_defaults(func=cmd_remove)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, where a closed pipe is caught below, not at exit
        return code
    except SacError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; run the same command again to continue", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes at exit
        return 141

