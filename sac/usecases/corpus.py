"""Build a corpus: read documents and benchmarks, keep them in the workspace, list what can be searched."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from sac.errors import ConfigError, NotABenchmarkError, SacError
from sac.evaluation.review import ReviewStore, reviewed_dataset
from sac.index.store import IndexInfo
from sac.index.store import list_indexes as store_indexes
from sac.ingest import catalog
from sac.ingest.archives import read_zip
from sac.ingest.benchmark import load_benchmark, load_benchmark_zip
from sac.ingest.catalog import DEMO_DIR, DEMO_NAME, CorpusEntry, dataset_corpus
from sac.ingest.pools import attach_pool
from sac.ingest.readers import read_document_bytes, read_folder, read_path
from sac.methods import BASE_METHODS, parse_methods
from sac.progress import Progress
from sac.summaries.sets import import_summary_sets
from sac.types import Dataset, Document
from sac.usecases.jobs import BuildStep
from sac.usecases.workbench import Workbench
from sac.workspace import Workspace

# What the app reads of the catalog: where the demo and the source datasets lie, a corpus's entry, an index's row.
__all__ = [
    "DEMO_DIR", "DEMO_NAME", "CorpusEntry", "IndexInfo", "Uploads", "add_documents", "benchmark_datasets",
    "benchmark_dataset_names", "benchmark_name", "corpus_documents", "dataset_corpus", "dataset_documents",
    "demo_steps", "keep_benchmark", "list_benchmarks", "list_corpora", "list_indexes", "load_dataset", "read_documents",
    "read_uploads", "reviewed_datasets",
]

DEMO_LLM_METHODS = ("sac-generic-llm", "sac-expert-llm")  # built from the summary sets the demo ships


def benchmark_datasets(wb: Workbench, benchmark: Path, names: Sequence[str] | None = None,
                       pool: Sequence[Path] = ()) -> list[Dataset]:
    """A LegalBench-RAG folder's datasets (all, or those named), its shipped summary sets imported into the
    workspace, each dataset with the distractor ``pool`` added to its corpus."""
    datasets = load_benchmark(benchmark, list(names) if names else None)
    import_summary_sets(wb.summary_store, benchmark)
    return attach_pool(datasets, list(pool))


def reviewed_datasets(wb: Workbench, corpus: str, pool: Sequence[Path] = ()) -> list[Dataset]:
    """The ground truth reviewers marked on ``corpus`` (the app's Review page) as one dataset, searched in the
    corpus's own indexes (with any distractor ``pool``)."""
    entry = catalog.find_corpus(catalog.list_corpora(wb.workspace), corpus)
    documents = (catalog.load_dataset(entry).documents if entry.kind == "benchmark"
                 else tuple(wb.workspace.load_corpus(corpus)))
    spans = ReviewStore(wb.workspace.reviews_dir).gold(corpus=corpus)
    return attach_pool([reviewed_dataset(corpus, documents, spans)], list(pool))


def dataset_documents(benchmark: Path, dataset: Dataset) -> tuple[str, list[Document]]:
    """The corpus name a benchmark dataset is indexed under, and every document of its corpus (pool included)."""
    return catalog.corpus_name(benchmark.name, dataset), list(dataset.all_documents)


def read_documents(paths: Sequence[Path]) -> tuple[list[Document], list[str]]:
    """The documents of files and folders (every supported file of a folder), and one line per file of a folder
    that could not be read; an unreadable file named on its own raises CorpusError."""
    documents: list[Document] = []
    errors: list[str] = []
    for path in paths:
        if path.is_dir():
            got, failed = read_folder(path)
            documents.extend(got)
            errors.extend(str(e) for e in failed)
        else:
            documents.append(read_path(path))
    return documents, errors


def add_documents(wb: Workbench, corpus: str, documents: Sequence[Document]) -> list[Document]:
    """Add documents to a workspace corpus (creating it); returns the whole corpus."""
    if not corpus:
        raise ConfigError("Name the workspace corpus to add the documents to")
    return wb.workspace.add_documents(corpus, documents)


def corpus_documents(wb: Workbench, corpus: str) -> list[Document]:
    """The documents of an uploaded workspace corpus."""
    return wb.workspace.load_corpus(corpus)


def list_corpora(workspace: Workspace) -> list[CorpusEntry]:
    """Every corpus of the workspace: benchmark datasets (the demo's first), then uploaded document sets."""
    return catalog.list_corpora(workspace)


def load_dataset(entry: CorpusEntry) -> Dataset:
    """The documents and questions of a corpus (an uploaded corpus has no questions)."""
    return catalog.load_dataset(entry)


def list_benchmarks(workspace: Workspace) -> dict[str, Path]:
    """Benchmark name -> folder: the demo first, then the benchmarks uploaded to the workspace."""
    return catalog.list_benchmarks(workspace)


def benchmark_dataset_names(folder: Path) -> list[str]:
    """The dataset names of a benchmark folder, without reading its documents."""
    return catalog.benchmark_datasets(folder)


def list_indexes(wb: Workbench) -> list[IndexInfo]:
    """Every index in the workbench's store: corpus, method, embedder, chunking, chunk count, complete or not."""
    return store_indexes(wb.client)


def demo_steps(wb: Workbench, datasets: Sequence[str] | None = None, *, llm: bool = False) -> list[BuildStep]:
    """The background build that loads the demo: the three paper methods of every dataset first (the methods Compare
    opens with; each index can be searched as soon as it is complete), then, with ``llm``, the two built from the
    demo's shipped LLM summary sets (imported into the workspace here) as background steps: a user's own build
    started meanwhile goes before them."""
    import_summary_sets(wb.summary_store, DEMO_DIR)
    loaded = load_benchmark(DEMO_DIR, list(datasets) if datasets else None)
    rounds = [BASE_METHODS, *([DEMO_LLM_METHODS] if llm else [])]
    return [BuildStep(catalog.corpus_name(DEMO_NAME, ds), ds.documents, tuple(parse_methods(",".join(names))),
                      label=ds.name, background=names != BASE_METHODS)
            for names in rounds for ds in loaded]


@dataclass
class Uploads:
    """What a batch of uploaded files holds: documents, LegalBench-RAG benchmarks (by file name), and one line per
    file (or file inside a zip) that could not be read."""

    documents: list[Document] = field(default_factory=list)
    benchmarks: dict[str, list[Dataset]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def read_uploads(files: Sequence[tuple[str, bytes]], progress: Progress | None = None) -> Uploads:
    """Read uploaded files (name, bytes): a LegalBench-RAG zip becomes a benchmark, any other zip its documents.
    A file that cannot be read is a line in ``problems``; the others are still read."""
    found = Uploads()
    for i, (name, data) in enumerate(files, start=1):
        try:
            if name.lower().endswith(".zip"):
                try:
                    found.benchmarks[name] = load_benchmark_zip(data, name)
                except NotABenchmarkError:
                    docs, errors = read_zip(data, name)
                    found.documents.extend(docs)
                    found.problems.extend(str(error) for error in errors)
            else:
                found.documents.append(read_document_bytes(name, data))
        except SacError as err:
            found.problems.append(str(err))
        if progress:
            progress("reading files", i, len(files))
    return found


def benchmark_name(file_name: str) -> str:
    """The name an uploaded benchmark zip is kept under: its file name's stem, in letters, digits, '.', '_', '-'."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", PurePosixPath(file_name).stem).strip("-._")
    return (stem or "benchmark")[:60]


def keep_benchmark(wb: Workbench, name: str, datasets: list[Dataset]) -> dict[str, Dataset]:
    """Save an uploaded benchmark's datasets under the workspace (listed with the demo from now on); returns each
    dataset by the corpus it is indexed as."""
    catalog.save_benchmark(wb.workspace, name, datasets)
    return {catalog.corpus_name(name, ds): ds for ds in datasets}
