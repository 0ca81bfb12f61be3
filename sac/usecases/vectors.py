"""Record the vectors of a benchmark's texts, to ship with it (``sac vectors``; sac.embedding.seeds reads them)."""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from sac.config import SacConfig
from sac.embedding.models import make_embedder
from sac.embedding.seeds import PACKAGED, RecordingEmbedder, model_identity, seed_path, write_seed
from sac.embedding.vectors import embedder_name
from sac.errors import ConfigError
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import corpus_name
from sac.methods import MethodSpec
from sac.progress import Progress
from sac.summaries.sets import import_summary_sets
from sac.usecases.workbench import Workbench


def record_vectors(config: SacConfig, folder: Path, dataset_names: Sequence[str] | None, methods: Sequence[MethodSpec],
                   progress: Progress | None = None, *, part: str = "", float16: bool = False) -> tuple[Path, int]:
    """Build ``methods`` over the benchmark's datasets in a temporary workspace with the configured model (one that
    seeds can serve: ``PACKAGED``), and write every text embedded, with its vector, to ``folder``'s seed file (its
    ``part`` file, beside the main one; float16 with ``float16``). Returns the file and its rows."""
    identity = model_identity(config.embedder)
    if identity is None:
        raise ConfigError(f"Shipped vectors are made with the packaged model ({', '.join(PACKAGED)}), "
                          f"not {config.embedder!r}")
    datasets = load_benchmark(folder, list(dataset_names) if dataset_names else None)
    recorder = RecordingEmbedder(make_embedder(config))
    with tempfile.TemporaryDirectory(prefix="sac-vectors-") as tmp:
        wb = Workbench(dataclasses.replace(config, workspace=Path(tmp), chroma_url=None), embedder=recorder)
        import_summary_sets(wb.summary_store, folder)
        for ds in datasets:
            wb.build(corpus_name(folder.name, ds), ds.all_documents, methods, progress=progress)
        wb.close_store()
    path = seed_path(folder, embedder_name(config.embedder), part)
    rows = write_seed(path, recorder.texts, np.asarray(recorder.vectors, dtype=np.float32),
                      embedder=embedder_name(config.embedder), model=identity,
                      dtype=np.float16 if float16 else np.float32)
    return path, rows
