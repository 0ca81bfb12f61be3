"""Build the full-size LegalBench-RAG-style benchmarks (dev and test splits) from the source datasets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sac.errors import ConfigError
from sac.ingest.benchmark import load_benchmark
from sac.ingest.builders import BUILDERS, TITLE_STYLES


def dev_documents(benchmark: Path | None) -> frozenset[str]:
    """The text hashes of a benchmark folder's documents (the demo's): the builders keep them in the dev split."""
    if benchmark is None:
        return frozenset()
    return frozenset(d.content_hash for ds in load_benchmark(benchmark) for d in ds.all_documents)


def build_benchmarks(sources: Path, out: Path, dataset: str, titles: str, *, limit: int | None = None,
                     keep_partial: bool = False, dev_benchmark: Path | None = None,
                     log: Any = None) -> dict[str, dict[str, Any]]:
    """Write the full-size benchmarks, one dev and one test split per dataset and title style.

    ``out[/<style>]/corpus/<dataset>-{dev,test}/`` and ``.../benchmarks/<dataset>-{dev,test}.json`` for ``dataset``
    (cuad, contractnli or all) and ``titles`` (a style or both); every document of ``dev_benchmark`` (the demo) goes to
    dev. Returns a report per style and dataset."""
    names = list(BUILDERS) if dataset == "all" else [dataset]
    styles = list(TITLE_STYLES) if titles == "both" else [titles]
    unknown = [n for n in names if n not in BUILDERS] + [s for s in styles if s not in TITLE_STYLES]
    if unknown:
        raise ConfigError(f"Unknown dataset or title style {unknown}: datasets {sorted(BUILDERS)}, styles "
                          f"{list(TITLE_STYLES)} or both")
    if not sources.is_dir():
        raise ConfigError(f"The source datasets are not at {sources}: give --sources DIR or set SAC_SOURCES")
    keep_in_dev = dev_documents(dev_benchmark)
    reports = {}
    for style in styles:
        target = out / style if len(styles) > 1 else out
        for name in names:
            options: dict[str, Any] = {"titles": style, "limit": limit, "dev_documents": keep_in_dev}
            if name == "cuad":
                options["keep_partial"] = keep_partial
            report = BUILDERS[name](sources, target, **options)
            reports[f"{style}/{name}"] = report.as_dict()
            if log:
                log(f"{target}: {name}-dev {report.questions['dev']} questions on {report.documents['dev']} documents, "
                    f"{name}-test {report.questions['test']} on {report.documents['test']}")
    return reports
