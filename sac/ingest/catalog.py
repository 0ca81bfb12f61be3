"""Which corpora the app can work on, and where their documents and queries come from.

- the bundled demo benchmark (``data/demo``): one corpus per dataset, named like the CLI names it
  (``sac.ingest.catalog.corpus_name("demo", dataset)``: ``demo-cuad``, ``demo-contractnli``), so the app and
  ``python -m sac`` share indexes;
- LegalBench-RAG benchmarks uploaded as zips, saved as folders ``<workspace>/benchmarks/<name>/``
  (``corpus/<dataset>/...`` and ``benchmarks/<dataset>.json``), corpus names ``<name>-<dataset>``;
- uploaded corpora (``<workspace>/corpora/<name>.jsonl``), without queries.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from sac.errors import ConfigError, CorpusError
from sac.files import atomic_write_text, safe_name
from sac.ingest.benchmark import load_benchmark
from sac.types import Dataset, text_hash
from sac.workspace import Workspace


def dataset_corpus(benchmark: str, dataset: str) -> str:
    """The corpus (index) name of a benchmark's dataset: ``<benchmark folder name>-<dataset>``."""
    return f"{benchmark}-{dataset}"


def corpus_name(benchmark: str, dataset: Dataset, base: str | None = None) -> str:
    """Index name of a dataset's corpus (``base``, by default ``<benchmark>-<dataset>``).

    A distractor pool gets its own indexes, keyed by its content."""
    base = base or dataset_corpus(benchmark, dataset.name)
    if not dataset.distractors:
        return base
    digest = text_hash("\n".join(sorted(d.doc_id + ":" + d.content_hash for d in dataset.distractors)))
    return f"{base}+pool{len(dataset.distractors)}-{digest[:8]}"


DEMO_DIR = Path(__file__).resolve().parents[2] / "data" / "demo"
DEMO_NAME = "demo"


@dataclass(frozen=True, slots=True)
class CorpusEntry:
    """One corpus the app can index and search."""

    name: str  # the index name: "demo-cuad", "<benchmark>-<dataset>", or an uploaded corpus name
    kind: str  # "benchmark" or "upload"
    benchmark: str | None = None  # benchmark name ("demo", or the uploaded benchmark's name)
    benchmark_dir: Path | None = None
    dataset: str | None = None

    @property
    def label(self) -> str:
        """How a corpus picker shows the entry: "demo-cuad (benchmark demo, dataset cuad)"."""
        if self.kind == "upload":
            return f"{self.name} (uploaded documents)"
        return f"{self.name} (benchmark {self.benchmark}, dataset {self.dataset})"



def benchmarks_dir(workspace: Workspace) -> Path:
    """Where uploaded benchmarks live in a workspace."""
    return workspace.root / "benchmarks"


def list_benchmarks(workspace: Workspace, demo_dir: Path = DEMO_DIR) -> dict[str, Path]:
    """Benchmark name -> folder: the demo first, then uploaded benchmarks by name."""
    found: dict[str, Path] = {}
    if (demo_dir / "benchmarks").is_dir():
        found[DEMO_NAME] = demo_dir
    root = benchmarks_dir(workspace)
    if root.is_dir():
        for path in sorted(root.iterdir()):
            if path.is_dir() and (path / "benchmarks").is_dir() and path.name != DEMO_NAME:
                found[path.name] = path
    return found


def benchmark_datasets(folder: Path) -> list[str]:
    """Dataset names of a benchmark folder, without reading the corpus."""
    return sorted(p.stem for p in (folder / "benchmarks").glob("*.json") if p.is_file())


def list_corpora(workspace: Workspace, demo_dir: Path = DEMO_DIR) -> list[CorpusEntry]:
    """Every corpus: benchmark datasets first (demo, then uploads), then uploaded document corpora."""
    entries = []
    for bench, folder in list_benchmarks(workspace, demo_dir).items():
        for dataset in benchmark_datasets(folder):
            entries.append(CorpusEntry(dataset_corpus(bench, dataset), "benchmark", bench, folder, dataset))
    taken = {e.name for e in entries}
    for name in workspace.list_corpora():
        if name not in taken:
            entries.append(CorpusEntry(name, "upload"))
    return entries


def find_corpus(entries: list[CorpusEntry], name: str) -> CorpusEntry:
    """The entry named ``name``; a ConfigError listing the known names when there is none."""
    for entry in entries:
        if entry.name == name:
            return entry
    raise ConfigError(f"No corpus named {name!r}. Known: {[e.name for e in entries]}")


def load_dataset(entry: CorpusEntry) -> Dataset:
    """The documents and queries of a corpus (an uploaded corpus has no queries)."""
    if entry.kind == "benchmark":
        if entry.benchmark_dir is None or entry.dataset is None:
            raise ConfigError(f"Corpus {entry.name!r} names no benchmark folder")
        return load_benchmark(entry.benchmark_dir, [entry.dataset])[0]
    raise ConfigError(f"Corpus {entry.name!r} is an uploaded corpus: load it from the workspace")



def save_benchmark(workspace: Workspace, name: str, datasets: list[Dataset]) -> Path:
    """Write datasets (e.g. from ``load_benchmark_zip``) as a LegalBench-RAG folder under the workspace.

    The folder reads back with ``load_benchmark`` to the same documents and queries (query ids included).
    A benchmark of the same name is replaced dataset by dataset.
    """
    safe_name(name, "benchmark name")
    if name == DEMO_NAME:
        raise ConfigError(f"The name {DEMO_NAME!r} belongs to the bundled demo benchmark: choose another")
    if not datasets:
        raise CorpusError(f"Benchmark {name!r} has no datasets")
    root = benchmarks_dir(workspace) / name
    for ds in datasets:
        safe_name(ds.name, "dataset name")
        corpus_dir = (root / "corpus" / ds.name).resolve()
        for doc in ds.documents:
            prefix = f"{ds.name}/"
            if not doc.doc_id.startswith(prefix):
                raise CorpusError(f"Document {doc.doc_id!r} is not under dataset {ds.name!r}")
            path = (corpus_dir / doc.doc_id[len(prefix):]).resolve()
            if not path.is_relative_to(corpus_dir):
                raise CorpusError(f"Document {doc.doc_id!r} would be written outside the benchmark folder")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(doc.text.encode("utf-8"))
        texts = {d.doc_id: d.text for d in ds.documents}
        tests = [
            {
                "query": q.text,
                "snippets": [
                    {"file_path": g.doc_id, "span": [g.start, g.end], "answer": texts[g.doc_id][g.start : g.end]}
                    for g in q.gold
                ],
                "tags": [],
            }
            for q in ds.queries
        ]
        atomic_write_text(root / "benchmarks" / f"{ds.name}.json", json.dumps({"tests": tests}, ensure_ascii=False))
    return root
