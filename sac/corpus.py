"""Read documents (.txt, .md, .pdf, .docx, .html) and LegalBench-RAG benchmarks into ``Document``s.

Text from every format is normalised the same way: ``"\\r\\n"`` and ``"\\r"`` become ``"\\n"``, so all
offsets refer to the normalised text. Benchmark corpora are the exception: they are read as plain UTF-8,
unchanged, because their ground-truth spans are offsets into the exact file text.

Uploaded zip archives are read in memory, member by member, with limits on size, member count and
compression ratio; nothing is ever extracted to disk. Every error is a ``CorpusError`` that names the file.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from sac.errors import CorpusError
from sac.types import Dataset, Document, Query, Span

logger = logging.getLogger(__name__)

SUPPORTED_SUFFIXES: tuple[str, ...] = (".txt", ".md", ".pdf", ".docx", ".html", ".htm")
DEFAULT_MAX_BYTES = 50 * 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 500 * 1024 * 1024
DEFAULT_MAX_MEMBERS = 10_000
DEFAULT_MAX_RATIO = 200

# Small members may compress far better than max_ratio (a page of blank lines) and are harmless;
# the ratio limit only applies beyond this many bytes.
_RATIO_FLOOR = 1024 * 1024
_READ_BLOCK = 64 * 1024
# C0 control bytes that never occur in text files (tab, newlines, form feed and escape do).
_CONTROL_BYTES = bytes(b for b in range(32) if b not in b"\t\n\x0b\x0c\r\x1b") + b"\x7f"
_BINARY_CONTROL_SHARE = 0.10
_UTF8_MULTIBYTE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),  # before UTF-16 LE: its BOM starts the same way
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)
_DRIVE = re.compile(r"^[A-Za-z]:")


def normalize_newlines(text: str) -> str:
    """Turn ``"\\r\\n"`` and lone ``"\\r"`` into ``"\\n"``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------------------------------
# Single documents


def read_document_bytes(
    name: str, data: bytes, *, doc_id: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Document:
    """Read one document from its bytes; the suffix of ``name`` picks the format.

    Text files are UTF-8 (a BOM is dropped) or, failing that, whatever encoding charset-normalizer
    finds. Line breaks are normalised to ``"\\n"`` for every format, so offsets refer to the normalised
    text. ``doc_id`` defaults to ``name``.

    Raises:
        CorpusError: unsupported suffix, over ``max_bytes``, binary or undecodable data, corrupt,
            encrypted or image-only PDF, corrupt .docx, or no text at all. The message names the file.
    """
    return _document_from_bytes(data, filename=name, label=name, doc_id=doc_id or name, source=name,
                                max_bytes=max_bytes)


def read_path(path: Path, *, doc_id: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES) -> Document:
    """Read one document file; ``doc_id`` defaults to the file name."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise CorpusError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if not path.is_file():
        raise CorpusError(f"{path}: is not a file")
    # Checked before reading so that a huge file is never loaded into memory.
    _check_size(str(path), size, max_bytes)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CorpusError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    return _document_from_bytes(data, filename=path.name, label=str(path), doc_id=doc_id or path.name,
                                source=str(path), max_bytes=max_bytes)


def read_folder(
    folder: Path, *, recursive: bool = True, max_bytes: int = DEFAULT_MAX_BYTES
) -> tuple[list[Document], list[CorpusError]]:
    """Read every document of ``folder``; a file that fails is reported and the others go on.

    Doc ids are paths relative to ``folder`` with ``"/"`` separators. Hidden files and folders
    (a leading ``"."``) and ``__MACOSX`` are skipped. Documents come sorted by doc id.
    """
    documents: list[Document] = []
    errors: list[CorpusError] = []
    for rel in _folder_files(Path(folder), recursive):
        try:
            documents.append(read_path(Path(folder) / rel, doc_id=rel, max_bytes=max_bytes))
        except CorpusError as exc:
            errors.append(exc)
    return documents, errors


def merge_documents(*groups: Iterable[Document]) -> tuple[list[Document], list[CorpusError]]:
    """Join document lists (e.g. several uploads) into one, keeping doc ids unique.

    A document whose id was already taken is dropped silently when its text is identical (the same
    document uploaded twice) and reported as a "duplicate document id" error otherwise.
    """
    seen: dict[str, Document] = {}
    errors: list[CorpusError] = []
    for group in groups:
        for document in group:
            _add_unique(document, seen, errors)
    return list(seen.values()), errors


def _document_from_bytes(
    data: bytes, *, filename: str, label: str, doc_id: str, source: str, max_bytes: int
) -> Document:
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise CorpusError(
            f"{label}: unsupported file type {suffix!r}; "
            f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
        )
    _check_size(label, len(data), max_bytes)
    if suffix == ".pdf":
        text = _pdf_text(data, label)
    elif suffix == ".docx":
        text = _docx_text(data, label)
    elif suffix in (".html", ".htm"):
        text = _html_text(_decode_text(data, label), label)
    else:
        text = _decode_text(data, label)
    text = normalize_newlines(text)
    if not text.strip():
        raise CorpusError(f"{label}: is empty (no text)")
    return Document(doc_id=doc_id, text=text, source=source)


def _check_size(label: str, size: int, max_bytes: int) -> None:
    if size > max_bytes:
        raise CorpusError(
            f"{label}: {size:,} bytes is over the limit of {max_bytes:,} bytes ({max_bytes / 2**20:g} MB); "
            "raise the limit (SAC_MAX_FILE_MB) or split the file"
        )


def _decode_text(data: bytes, label: str) -> str:
    """Decode text bytes: BOM, else UTF-8, else a detected encoding; reject binary data."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom):].decode(encoding)
            except UnicodeDecodeError as exc:
                raise CorpusError(
                    f"{label}: starts with a {encoding} byte order mark but byte offset "
                    f"{exc.start + len(bom)} ({data[exc.start + len(bom):exc.end + len(bom)]!r}) is not {encoding}; "
                    "re-save the file as UTF-8"
                ) from None
    if _looks_binary(data):
        raise CorpusError(f"{label}: looks binary (NUL or control bytes), not text; convert it to a text file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        utf8_error = exc
    bad = f"byte offset {utf8_error.start} ({data[utf8_error.start:utf8_error.start + 4]!r})"
    # Valid multi-byte UTF-8 before the bad bytes means a damaged UTF-8 file: guessing a legacy
    # encoding would turn every accented letter into mojibake.
    if _UTF8_MULTIBYTE.search(data, 0, utf8_error.start):
        raise CorpusError(f"{label}: is UTF-8 with invalid bytes at {bad}; repair or re-save it as UTF-8")
    detected = _detect_encoding(data)
    if detected is None:
        raise CorpusError(
            f"{label}: cannot be decoded: not UTF-8 (invalid bytes at {bad}) and no other encoding fits; "
            "save it as UTF-8 text"
        )
    try:
        return data.decode(detected)
    except (UnicodeDecodeError, LookupError):
        raise CorpusError(f"{label}: cannot be decoded: not UTF-8 (invalid bytes at {bad})") from None


def _looks_binary(data: bytes) -> bool:
    if b"\x00" in data:
        return True
    controls = len(data) - len(data.translate(None, _CONTROL_BYTES))
    return controls > _BINARY_CONTROL_SHARE * len(data)


def _detect_encoding(data: bytes) -> str | None:
    from charset_normalizer import from_bytes

    matches = list(from_bytes(data))
    if not matches:
        return None
    best = min(m.chaos for m in matches)
    # charset-normalizer ranks code pages that decode the same bytes equally well arbitrarily (it
    # picks cp1250 for French latin-1 text); prefer Windows-1252, the usual legacy encoding of
    # Western European documents, whenever it is among the cleanest readings.
    for match in matches:
        if match.chaos <= best and "cp1252" in match.could_be_from_charset:
            return "cp1252"
    return str(matches[0].encoding)


def _pdf_text(data: bytes, label: str) -> str:
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                decrypted = reader.decrypt("")
            except DependencyError:
                raise CorpusError(
                    f"{label}: is encrypted with AES; reading it needs the 'cryptography' package"
                ) from None
            if not decrypted:
                raise CorpusError(f"{label}: is encrypted (password protected); save an unprotected copy")
        pages = [page.extract_text() or "" for page in reader.pages]
    except CorpusError:
        raise
    except Exception as exc:  # pypdf raises many exception types on damaged files; all mean "unreadable"
        raise CorpusError(f"{label}: cannot be read as a PDF, it may be truncated or corrupt "
                          f"({type(exc).__name__}: {exc})") from None
    if not pages:
        raise CorpusError(f"{label}: is empty (a PDF with no pages)")
    text = "\n\n".join(pages)
    if not text.strip():
        raise CorpusError(f"{label}: has no text layer (scanned?) — run OCR first")
    return text


def _docx_text(data: bytes, label: str) -> str:
    import docx

    _check_docx_package(data, label)
    try:
        document = docx.Document(io.BytesIO(data))
        lines = list(_docx_lines(document))
    except Exception as exc:  # python-docx surfaces zip, XML and package errors alike; all mean "corrupt"
        raise CorpusError(f"{label}: cannot be read as a .docx file, it may be corrupt "
                          f"({type(exc).__name__}: {exc})") from None
    return "\n".join(lines)


def _check_docx_package(data: bytes, label: str) -> None:
    """Refuse a .docx whose zip parts would inflate past sane limits before python-docx reads them whole."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            infos = package.infolist()
    except Exception as exc:  # not a zip at all: python-docx would fail the same way
        raise CorpusError(f"{label}: cannot be read as a .docx file, it may be corrupt ({exc})") from None
    declared = sum(info.file_size for info in infos)
    if len(infos) > DEFAULT_MAX_MEMBERS or declared > DEFAULT_MAX_TOTAL_BYTES:
        raise CorpusError(f"{label}: the .docx would expand to {declared:,} bytes in {len(infos):,} parts (zip bomb?)")
    for info in infos:
        problem = _risky_compression(info, DEFAULT_MAX_RATIO)
        if problem:
            raise CorpusError(f"{label}: part {info.filename}: {problem}")


def _docx_lines(container: Any) -> Iterator[str]:
    """Paragraph texts in document order, descending into table cells (each merged cell once)."""
    from docx.table import Table

    for block in container.iter_inner_content():
        if isinstance(block, Table):
            for row in block.rows:
                seen: set[int] = set()
                for cell in row.cells:
                    if id(cell._tc) in seen:
                        continue
                    seen.add(id(cell._tc))
                    yield from _docx_lines(cell)
        else:
            yield block.text


def _html_text(html: str, label: str) -> str:
    from inscriptis import get_text

    try:
        return str(get_text(html))
    except Exception as exc:  # lxml parse errors; report rather than crash on a broken page
        raise CorpusError(f"{label}: cannot be read as HTML ({type(exc).__name__}: {exc})") from None


def _folder_files(folder: Path, recursive: bool) -> list[str]:
    if not folder.is_dir():
        raise CorpusError(f"{folder}: is not a folder")
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not _is_hidden(d)) if recursive else []
        rel_dir = Path(dirpath).relative_to(folder).as_posix()
        for filename in filenames:
            if _is_hidden(filename) or not (Path(dirpath) / filename).is_file():
                continue
            found.append(filename if rel_dir == "." else f"{rel_dir}/{filename}")
    return sorted(found)


def _is_hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


def _add_unique(document: Document, seen: dict[str, Document], errors: list[CorpusError]) -> None:
    previous = seen.get(document.doc_id)
    if previous is None:
        seen[document.doc_id] = document
    elif previous.text != document.text:
        errors.append(CorpusError(
            f"{document.source or document.doc_id}: duplicate document id {document.doc_id!r} with different "
            f"text (already read from {previous.source or previous.doc_id}); rename one of them"
        ))


# --------------------------------------------------------------------------------------------------
# Zip archives


@dataclass(frozen=True)
class _ZipLimits:
    max_bytes: int
    max_total_bytes: int
    max_members: int
    max_ratio: float


def read_zip(
    data: bytes,
    name: str,
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    max_members: int = DEFAULT_MAX_MEMBERS,
    max_ratio: float = DEFAULT_MAX_RATIO,
) -> tuple[list[Document], list[CorpusError]]:
    """Read the documents of a zip archive in memory; a member that fails is reported, the rest go on.

    Doc ids are member paths. Unsafe member names (absolute, ``..``, drive letters, backslashes),
    members over ``max_bytes`` or with a compression ratio over ``max_ratio`` are reported; directories,
    ``__MACOSX`` and dot files are skipped. In a LegalBench-RAG layout the ``benchmarks/*.json`` files
    and ``summaries/*.json`` summary sets are not documents, and corpus doc ids are relative to ``corpus/`` (``<dataset>/<file>``), as in the
    benchmark files.

    Raises:
        CorpusError: the data is not a zip, has more than ``max_members`` entries or expands past
            ``max_total_bytes``.
    """
    limits = _ZipLimits(max_bytes, max_total_bytes, max_members, max_ratio)
    seen: dict[str, Document] = {}
    errors: list[CorpusError] = []
    member_errors: list[tuple[str, CorpusError]] = []
    with _open_zip(data, name, limits) as archive:
        root = _benchmark_root(archive.namelist())
        for member, payload in _zip_members(archive, name, limits, member_errors):
            doc_id = member
            if root is not None:
                if member.startswith((f"{root}benchmarks/", f"{root}summaries/")) and member.lower().endswith(".json"):
                    continue  # benchmark files and shipped summary sets are not documents
                if member.startswith(f"{root}corpus/"):
                    doc_id = member[len(f"{root}corpus/"):]
            try:
                document = _document_from_bytes(payload, filename=member, label=f"{name}:{member}", doc_id=doc_id,
                                                source=f"{name}:{member}", max_bytes=max_bytes)
            except CorpusError as exc:
                errors.append(exc)
                continue
            _add_unique(document, seen, errors)
    errors[:0] = [exc for _, exc in member_errors]
    return sorted(seen.values(), key=lambda d: d.doc_id), errors


def _open_zip(data: bytes, name: str, limits: _ZipLimits) -> zipfile.ZipFile:
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise CorpusError(f"{name}: is not a readable zip archive ({exc})") from None
    infos = archive.infolist()
    if len(infos) > limits.max_members:
        archive.close()
        raise CorpusError(f"{name}: has {len(infos):,} entries, over the limit of {limits.max_members:,}")
    declared = sum(info.file_size for info in infos)
    if declared > limits.max_total_bytes:
        archive.close()
        raise CorpusError(
            f"{name}: would expand to {declared:,} bytes, over the limit of {limits.max_total_bytes:,} bytes"
        )
    return archive


def _zip_members(
    archive: zipfile.ZipFile, name: str, limits: _ZipLimits, errors: list[tuple[str, CorpusError]]
) -> Iterator[tuple[str, bytes]]:
    """Yield ``(member name, bytes)`` of the safe, supported file members; report the others in ``errors``."""
    total = 0
    for info in archive.infolist():
        member = info.filename
        label = f"{name}:{member}"
        problem = _unsafe_member_name(member)
        if problem:
            errors.append((member, CorpusError(f"{label}: skipped, unsafe member name ({problem})")))
            continue
        if info.is_dir() or any(_is_hidden(part) for part in member.split("/")):
            continue
        if PurePosixPath(member).suffix.lower() not in SUPPORTED_SUFFIXES + (".json",):
            errors.append((member, CorpusError(
                f"{label}: unsupported file type {PurePosixPath(member).suffix!r}; "
                f"supported: {', '.join(SUPPORTED_SUFFIXES)}"
            )))
            continue
        if info.file_size > limits.max_bytes:
            errors.append((member, CorpusError(
                f"{label}: {info.file_size:,} bytes uncompressed is over the limit of {limits.max_bytes:,} bytes"
            )))
            continue
        problem = _risky_compression(info, limits.max_ratio)
        if problem:
            errors.append((member, CorpusError(f"{label}: {problem}")))
            continue
        ratio_cap = max(_RATIO_FLOOR, int(limits.max_ratio * max(info.compress_size, 1)))
        # zipfile itself stops at the declared size; the hard cap keeps the limits whatever the header
        # says and whatever the zipfile version does.
        cap = min(limits.max_bytes, limits.max_total_bytes - total, ratio_cap)
        try:
            payload = _read_capped(archive, info, cap)
        except Exception as exc:  # zipfile and zlib each raise their own types on damaged data
            reason = f"{type(exc).__name__}: {exc}"
            errors.append((member, CorpusError(f"{label}: cannot be read from the archive ({reason})")))
            continue
        if payload is None:
            if cap == limits.max_total_bytes - total:
                raise CorpusError(f"{name}: expands past the limit of {limits.max_total_bytes:,} bytes (zip bomb?)")
            errors.append((member, CorpusError(
                f"{label}: inflates past {cap:,} bytes, more than it declares (zip bomb?); skipped"
            )))
            continue
        total += len(payload)
        yield member, payload


def _risky_compression(info: zipfile.ZipInfo, max_ratio: float) -> str | None:
    """Why a member must not be inflated, from its header; None when it may be read."""
    # bzip2 and lzma members are inflated a whole compressed block at a time, with no bound on the
    # output, so one read could exhaust memory before any cap applies. Zip tools write deflate.
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        return f"unsupported compression method {info.compress_type} (only stored and deflate are read)"
    ratio = info.file_size / max(info.compress_size, 1)
    if info.file_size > _RATIO_FLOOR and ratio > max_ratio:
        return f"compression ratio {ratio:,.0f} is over the limit of {max_ratio:g} (zip bomb?)"
    return None


def _read_capped(archive: zipfile.ZipFile, info: zipfile.ZipInfo, cap: int) -> bytes | None:
    """The member's bytes, or None as soon as more than ``cap`` bytes come out."""
    buffer = bytearray()
    with archive.open(info) as handle:
        while True:
            block = handle.read(min(_READ_BLOCK, cap + 1 - len(buffer)))
            if not block:
                return bytes(buffer)
            buffer += block
            if len(buffer) > cap:
                return None


def _unsafe_member_name(member: str) -> str | None:
    if "\\" in member:
        return "backslash in the path"
    if member.startswith("/"):
        return "absolute path"
    if _DRIVE.match(member):
        return "drive letter"
    if ".." in member.split("/"):
        return "'..' in the path"
    if any(ord(ch) < 32 for ch in member):
        return "control character in the name"
    return None


def _benchmark_root(names: Iterable[str]) -> str | None:
    """The folder prefix ('' or 'top/') of a LegalBench-RAG layout inside a zip, or None."""
    roots: set[str] = set()
    names = list(names)
    for member in names:
        match = re.match(r"^((?:[^/]+/)*?)benchmarks/[^/]+\.json$", member)
        if match:
            roots.add(match.group(1))
    for root in sorted(roots, key=len):
        if any(member.startswith(f"{root}corpus/") for member in names):
            return root
    return None


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
            raise CorpusError(
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


def _check_snippet(snippet: Any, j: int, at: str, corpus: Mapping[str, str]) -> Span:
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

