"""Distractor pools: many look-alike documents around a benchmark's own."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Sequence
from pathlib import Path

from sac.errors import CorpusError
from sac.ingest.readers import (
    DEFAULT_MAX_BYTES,
    _add_unique,
    normalize_newlines,
    read_folder,
    read_path,
)
from sac.types import Dataset, Document

logger = logging.getLogger(__name__)


# --------------------------------------------------------------------------------------------------
# Distractor pools


def load_pool(
    sources: Sequence[Path], *, exclude: Iterable[Document] = (), strict: bool = True,
    max_bytes: int = DEFAULT_MAX_BYTES,
) -> list[Document]:
    """Distractor documents from folders, single files and ContractNLI JSON files, without duplicates.

    Doc ids: ``pool/<folder name>/<relative path>`` for a folder, ``pool/<file name>`` for a file,
    ``pool/contractnli/<file_name>`` for a ContractNLI JSON (``{"documents": [{"file_name", "text"}]}``).
    A document is dropped when its normalised text equals an ``exclude`` document's (the benchmark's own
    documents) or an earlier pool document's in doc id order. The result is sorted by doc id.

    Args:
        strict: raise on the first unreadable file; when False such files are logged and skipped.
    """
    candidates: dict[str, Document] = {}
    errors: list[CorpusError] = []

    def add(document: Document) -> None:
        before = len(errors)
        _add_unique(document, candidates, errors)
        if strict and len(errors) > before:
            raise errors[-1]

    for source in map(Path, sources):
        if source.is_dir():
            documents, failed = read_folder(source, max_bytes=max_bytes)
            if failed and strict:
                raise CorpusError(f"{source}: {len(failed)} file(s) cannot be read; first: {failed[0]}")
            errors.extend(failed)
            for d in documents:
                add(Document(f"pool/{source.name}/{d.doc_id}", d.text, d.source))
        elif source.suffix.lower() == ".json":
            for d in _contractnli_documents(source):
                add(d)
        else:
            try:
                d = read_path(source, max_bytes=max_bytes)
            except CorpusError as exc:
                if strict:
                    raise
                errors.append(exc)
                continue
            add(Document(f"pool/{source.name}", d.text, d.source))
    for error in errors:
        logger.warning("pool document skipped: %s", error)

    taken = {normalize_newlines(d.text) for d in exclude}
    pool = []
    for doc_id in sorted(candidates):
        document = candidates[doc_id]
        if document.text in taken:
            continue
        taken.add(document.text)
        pool.append(document)
    return pool


def _contractnli_documents(path: Path) -> list[Document]:
    try:
        payload = json.loads(path.read_bytes())
    except OSError as exc:
        raise CorpusError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CorpusError(f"{path}: is not valid JSON ({exc})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("documents"), list):
        raise CorpusError(f"{path}: missing the \"documents\" list of a ContractNLI file")
    documents = []
    for i, item in enumerate(payload["documents"]):
        if not isinstance(item, dict) or not isinstance(item.get("file_name"), str) \
                or not isinstance(item.get("text"), str):
            raise CorpusError(f"{path}: document {i} is missing \"file_name\" or \"text\" (strings)")
        file_name = item["file_name"].strip()
        text = normalize_newlines(item["text"])
        if not file_name or not text.strip():
            raise CorpusError(f"{path}: document {i} has an empty \"file_name\" or \"text\"")
        documents.append(Document(f"pool/contractnli/{file_name}", text, f"{path}#{i}"))
    return documents


def attach_pool(datasets: Sequence[Dataset], sources: Sequence[Path]) -> list[Dataset]:
    """``datasets`` with the distractor documents of ``sources`` added to each; unchanged when ``sources`` is empty.

    The benchmark's own documents, and copies of them, are left out of the pool. The CLI and the Evaluate page use
    it."""
    if not sources:
        return list(datasets)
    pool = tuple(load_pool(sources, exclude=[d for ds in datasets for d in ds.documents]))
    return [Dataset(ds.name, ds.documents, ds.queries, pool) for ds in datasets]
