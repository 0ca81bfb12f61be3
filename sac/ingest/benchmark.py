"""LegalBench-RAG benchmarks: ``corpus/<dataset>/*.txt`` and ``benchmarks/<dataset>.json``.

Benchmark corpora are read as plain UTF-8, unchanged, because their ground-truth spans are offsets
into the exact file text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from sac.errors import CorpusError, NotABenchmarkError
from sac.ingest.archives import _benchmark_root, _open_zip, _zip_members, _ZipLimits
from sac.ingest.readers import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_MEMBERS,
    DEFAULT_MAX_RATIO,
    DEFAULT_MAX_TOTAL_BYTES,
    _folder_files,
)
from sac.types import Dataset, Document, Query, Span

# --------------------------------------------------------------------------------------------------
# LegalBench-RAG benchmarks


def load_benchmark(root: Path, datasets: Sequence[str] | None = None) -> list[Dataset]:
    """Load a LegalBench-RAG folder: ``corpus/<dataset>/*.txt`` and ``benchmarks/<dataset>.json``.

    Doc ids are the benchmark's ``file_path`` (``<dataset>/<file name>``); a dataset's documents are
    all files of ``corpus/<dataset>/``, read as exact UTF-8. Every snippet is checked against the
    corpus. Query ids are ``<dataset>-<index:04d>``.

    Raises:
        CorpusError: missing folders or files, malformed JSON, unknown dataset names, or a snippet whose
            span or answer does not match its document.
    """
    root = Path(root)
    bench_dir = root / "benchmarks"
    if not bench_dir.is_dir():
        raise CorpusError(
            f"{root}: has no benchmarks/ folder; expected corpus/<dataset>/*.txt and benchmarks/<dataset>.json"
        )
    available = sorted(p.stem for p in bench_dir.glob("*.json") if p.is_file())
    result = []
    for name in _choose_datasets(available, datasets, str(root)):
        corpus_dir = root / "corpus" / name
        if not corpus_dir.is_dir():
            raise CorpusError(f"{root}: has no corpus/{name}/ folder for benchmarks/{name}.json")
        corpus: dict[str, str] = {}
        sources: dict[str, str] = {}
        for rel in _folder_files(corpus_dir, recursive=True):
            path = corpus_dir / rel
            corpus[f"{name}/{rel}"] = _exact_utf8(path.read_bytes(), str(path))
            sources[f"{name}/{rel}"] = str(path)
        bench_path = bench_dir / f"{name}.json"
        result.append(_build_dataset(name, bench_path.read_bytes(), str(bench_path), corpus, sources))
    return result


def load_benchmark_zip(
    data: bytes,
    name: str = "benchmark.zip",
    datasets: Sequence[str] | None = None,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_ratio: float = DEFAULT_MAX_RATIO,
) -> list[Dataset]:
    """``load_benchmark`` for a zip of a LegalBench-RAG folder (optionally inside one top folder).

    The archive is read in memory with the same limits as ``read_zip``; any problem with a member under
    ``corpus/`` or ``benchmarks/`` fails the whole load, since a benchmark must be complete.
    """
    limits = _ZipLimits(max_bytes, max_total_bytes, max_members, max_ratio)
    with _open_zip(data, name, limits) as archive:
        root = _benchmark_root(archive.namelist())
        if root is None:
            raise NotABenchmarkError(
                f"{name}: is not a LegalBench-RAG archive; expected corpus/<dataset>/*.txt and "
                "benchmarks/<dataset>.json"
            )
        errors: list[tuple[str, CorpusError]] = []
        benchmarks: dict[str, bytes] = {}
        files: dict[str, dict[str, bytes]] = {}
        for member, payload in _zip_members(archive, name, limits, errors):
            if not member.startswith(root):
                continue
            parts = member[len(root):].split("/")
            if len(parts) == 2 and parts[0] == "benchmarks" and parts[1].lower().endswith(".json"):
                benchmarks[parts[1][: -len(".json")]] = payload
            elif len(parts) >= 3 and parts[0] == "corpus":
                files.setdefault(parts[1], {})["/".join(parts[2:])] = payload
    relevant = [exc for member, exc in errors if member.startswith((f"{root}corpus/", f"{root}benchmarks/"))]
    if relevant:
        raise CorpusError(f"{name}: {len(relevant)} benchmark file(s) cannot be read; first: {relevant[0]}")
    result = []
    for dataset in _choose_datasets(sorted(benchmarks), datasets, name):
        if dataset not in files:
            raise CorpusError(f"{name}: has no {root}corpus/{dataset}/ folder for benchmarks/{dataset}.json")
        corpus: dict[str, str] = {}
        sources: dict[str, str] = {}
        for rel in sorted(files[dataset]):
            label = f"{name}:{root}corpus/{dataset}/{rel}"
            corpus[f"{dataset}/{rel}"] = _exact_utf8(files[dataset][rel], label)
            sources[f"{dataset}/{rel}"] = label
        result.append(_build_dataset(dataset, benchmarks[dataset], f"{name}:{root}benchmarks/{dataset}.json",
                                     corpus, sources))
    return result


def _choose_datasets(available: Sequence[str], wanted: Sequence[str] | None, where: str) -> list[str]:
    if not available:
        raise CorpusError(f"{where}: has no benchmarks/<dataset>.json files")
    if wanted is None:
        return list(available)
    if isinstance(wanted, str):  # a bare string would otherwise be read as a list of letters
        wanted = [wanted]
    unknown = [w for w in wanted if w not in available]
    if unknown:
        raise CorpusError(f"{where}: unknown dataset(s) {', '.join(map(repr, unknown))}; available: "
                          f"{', '.join(available)}")
    return list(dict.fromkeys(wanted))


def _exact_utf8(data: bytes, label: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(
            f"{label}: benchmark corpus files must be UTF-8; invalid bytes at byte offset {exc.start} "
            f"({data[exc.start:exc.start + 4]!r})"
        ) from None


def _build_dataset(
    name: str, raw: bytes, where: str, corpus: Mapping[str, str], sources: Mapping[str, str]
) -> Dataset:
    """Parse and check one benchmark file against its corpus (shared by the folder and zip loaders)."""
    try:
        payload = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{where}: is not UTF-8 JSON (invalid bytes at byte offset {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise CorpusError(f"{where}: is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("tests"), list):
        raise CorpusError(f"{where}: missing the top-level \"tests\" list")
    queries = []
    for index, test in enumerate(payload["tests"]):
        at = f"{where}: dataset {name!r}, test {index}"
        if not isinstance(test, dict):
            raise CorpusError(f"{at}: expected an object, got {type(test).__name__}")
        query = test.get("query")
        if not isinstance(query, str) or not query.strip():
            raise CorpusError(f"{at}: missing \"query\" (a non-empty string)")
        at = f"{at} ({_preview(query)})"
        snippets = test.get("snippets")
        if not isinstance(snippets, list) or not snippets:
            raise CorpusError(f"{at}: missing \"snippets\" (a non-empty list)")
        gold = tuple(_check_snippet(s, j, at, corpus) for j, s in enumerate(snippets))
        queries.append(Query(query_id=f"{name}-{index:04d}", text=query, gold=gold, dataset=name))
    documents = tuple(Document(doc_id=d, text=corpus[d], source=sources.get(d)) for d in sorted(corpus))
    return Dataset(name=name, documents=documents, queries=tuple(queries))


def _check_snippet(snippet: object, j: int, at: str, corpus: Mapping[str, str]) -> Span:
    at = f"{at}, snippet {j}"
    if not isinstance(snippet, dict):
        raise CorpusError(f"{at}: expected an object, got {type(snippet).__name__}")
    file_path = snippet.get("file_path")
    if not isinstance(file_path, str) or not file_path:
        raise CorpusError(f"{at}: missing \"file_path\" (a string like \"<dataset>/<file>.txt\")")
    span = snippet.get("span")
    if (not isinstance(span, list) or len(span) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in span)):
        raise CorpusError(f"{at} in {file_path!r}: missing \"span\" (a list [start, end] of two integers)")
    start, end = span
    text = corpus.get(file_path)
    if text is None:
        raise CorpusError(f"{at}: file {file_path!r} is not in the corpus")
    if not 0 <= start <= end <= len(text):
        raise CorpusError(
            f"{at} in {file_path!r}: span [{start}, {end}] is outside the document (0..{len(text)})"
        )
    answer = snippet.get("answer")
    if answer is not None:
        if not isinstance(answer, str):
            raise CorpusError(f"{at} in {file_path!r}: \"answer\" must be a string")
        if text[start:end] != answer:
            raise CorpusError(
                f"{at} in {file_path!r}: span [{start}, {end}] does not match the answer: the text there is "
                f"{_preview(text[start:end])}, the answer is {_preview(answer)}"
            )
    return Span(file_path, start, end)


def _preview(text: str, width: int = 60) -> str:
    return repr(text if len(text) <= width else text[:width] + "…")
