"""What every command shares: progress bars, settings from flags, the workbench, number lists, data folders."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.types import Document
from sac.usecases import corpus
from sac.usecases.workbench import Workbench

# The checkout this command line runs from: the demo benchmark ships in it, the source datasets sit beside it.
CHECKOUT = Path(__file__).resolve().parents[2]
DEMO_BENCHMARK = CHECKOUT / "data" / "demo"


class ProgressBars:
    """tqdm bars on stderr, one per stage; ``enabled=False`` (``--quiet``) shows none."""

    def __init__(self, enabled: bool = True) -> None:
        self.enabled = enabled
        self._bars: dict[str, Any] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        """Show ``done`` of ``total`` on the bar of ``stage``; the bar closes when the stage is done."""
        if not self.enabled:
            return
        from tqdm import tqdm  # loaded with the first bar: `sac --help` stays quick

        bar = self._bars.get(stage)
        if bar is None:
            bar = self._bars[stage] = tqdm(total=total, desc=stage, unit="it", file=sys.stderr, leave=True)
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            del self._bars[stage]


def whole_numbers(text: str) -> list[int]:
    """``"1,2,4"`` -> ``[1, 2, 4]``, or a ConfigError."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"Expected comma-separated whole numbers, got {text!r}") from None


def config_of(args: argparse.Namespace) -> SacConfig:
    """The settings: ``SAC_*`` variables, then the flags given."""
    return SacConfig.from_env(
        workspace=Path(args.workspace) if args.workspace else None,
        chroma_url=args.chroma_url, chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap,
        chunking=args.chunking, summary_chars=args.summary_chars, embedder=args.embedder,
        embed_device=args.embed_device, embed_base_url=args.embed_base_url,
        llm_model=getattr(args, "model", None), llm_base_url=getattr(args, "base_url", None),
        llm_concurrency=getattr(args, "concurrency", None),
    )


def workbench_of(args: argparse.Namespace) -> Workbench:
    """The workbench of the settings the flags give (``config_of``)."""
    return Workbench(config_of(args))


def sources_dir(args: argparse.Namespace) -> Path:
    """The folder of the source datasets (CUAD, ContractNLI).

    ``--sources``, else SAC_SOURCES, else ``../shared/data/sources`` beside the checkout."""
    if getattr(args, "sources", None):
        return Path(args.sources)
    return SacConfig.from_env().sources or CHECKOUT.parent / "shared" / "data" / "sources"


def pool_paths(args: argparse.Namespace) -> list[Path]:
    """The distractor documents of ``--pool`` (folders or ContractNLI JSON files); none without it."""
    return [Path(p) for p in getattr(args, "pool", None) or ()]


def dataset_names(args: argparse.Namespace) -> list[str] | None:
    """The datasets ``--datasets`` names (comma-separated), or None for every dataset of the benchmark."""
    return [d.strip() for d in args.datasets.split(",") if d.strip()] if getattr(args, "datasets", None) else None


def one_corpus(wb: Workbench, args: argparse.Namespace) -> tuple[str, list[Document]]:
    """The corpus a command reads, by its index name, with its documents.

    ``--corpus``, or the one dataset of ``--benchmark`` that ``--dataset`` names (with ``--pool`` attached); a clear
    error when that is not one."""
    if args.corpus:
        return args.corpus, list(corpus.corpus_documents(wb, args.corpus))
    folder = Path(args.benchmark)
    datasets = corpus.benchmark_datasets(wb, folder, dataset_names(args), pool_paths(args))
    if len(datasets) != 1:
        raise ConfigError(
            f"Name one dataset with --dataset (one of {[d.name for d in datasets]}) or a corpus with --corpus")
    name, documents = corpus.dataset_documents(folder, datasets[0])
    return name, list(documents)
