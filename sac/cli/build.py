"""``sac ingest``, ``sac vectors`` and ``sac benchmark build``: make indexes, shipped vectors and benchmarks."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from sac.cli.common import ProgressBars, config_of, dataset_names, pool_paths, sources_dir, workbench_of
from sac.errors import ConfigError
from sac.methods import parse_methods
from sac.types import Document
from sac.usecases import corpus
from sac.usecases.benchmarks import build_benchmarks
from sac.usecases.build import parse_shard, require_server, shard_lines
from sac.usecases.vectors import record_vectors
from sac.wording import counted


def cmd_ingest(args: argparse.Namespace) -> int:
    """``sac ingest``: build or update the methods' indexes of a benchmark's datasets, a corpus, or added files.

    With ``--shard I/N`` only that shard of the documents is indexed, into a Chroma server that N processes fill.
    """
    shard = parse_shard(args.shard) if args.shard else None
    wb = workbench_of(args)
    if shard is not None:
        require_server(wb.config, shard)  # before any document is read
    methods = parse_methods(args.methods)
    targets: list[tuple[str, list[Document]]] = []
    if args.shipped_vectors and (args.docs or args.corpus):
        raise ConfigError("--shipped-vectors copies a benchmark folder's own vectors: use it with --benchmark, "
                          "not with --docs or --corpus")
    if args.docs:
        if not args.corpus:
            raise ConfigError("--docs needs --corpus NAME: the workspace corpus to add them to")
        docs, errors = corpus.read_documents([Path(p) for p in args.docs])
        for err in errors:
            print(f"skipped: {err}", file=sys.stderr)
        targets.append((args.corpus, corpus.add_documents(wb, args.corpus, docs)))
    elif args.corpus:
        targets.append((args.corpus, corpus.corpus_documents(wb, args.corpus)))
    else:
        folder = Path(args.benchmark)
        if args.shipped_vectors:
            wb.use_shipped_vectors(folder)
        for ds in corpus.benchmark_datasets(wb, folder, dataset_names(args), pool_paths(args)):
            targets.append(corpus.dataset_documents(folder, ds))
    for name, documents in targets:
        started = time.perf_counter()
        reports = wb.build(name, documents, methods, progress=ProgressBars(not args.quiet), shard=shard)
        if shard is None:
            for index_name, rep in reports.items():
                print(f"{name} / {index_name}: {rep.describe()}")
        else:
            print("\n".join(shard_lines(wb, name, documents, methods, reports, shard)))
        print(f"{name}: {counted(len(documents), 'document')} in {time.perf_counter() - started:.1f} s")
    return 0


def cmd_vectors(args: argparse.Namespace) -> int:
    """``sac vectors``: record every text a build of the benchmark's datasets embeds, with its vector, to ship."""
    if args.corpus or args.pool:
        raise ConfigError("vectors records what a build of the benchmark folder's own documents embeds: "
                          "it reads no --corpus or --pool")
    started = time.perf_counter()
    path, rows = record_vectors(config_of(args), Path(args.benchmark), dataset_names(args),
                                parse_methods(args.methods), progress=ProgressBars(not args.quiet),
                                part=args.part, float16=args.float16)
    print(f"{path}: {rows:,} vectors in {time.perf_counter() - started:.1f} s")
    return 0


def cmd_benchmark_build(args: argparse.Namespace) -> int:
    """Rebuild full-size LegalBench-RAG-style benchmarks from the source datasets (deterministic)."""
    reports = build_benchmarks(sources_dir(args), Path(args.out), args.dataset, args.titles,
                               limit=args.limit, keep_partial=args.keep_partial,
                               dev_benchmark=None if args.no_dev_documents else Path(args.dev_documents),
                               log=lambda line: print(line, file=sys.stderr))
    print(json.dumps(reports, indent=1, sort_keys=True))
    return 0
