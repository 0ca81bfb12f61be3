r"""Read documents (.txt, .md, .pdf, .docx, .html) into ``Document``s.

Text from every format is normalised the same way: ``"\r\n"`` and ``"\r"`` become ``"\n"``, so all
offsets refer to the normalised text. Every error is a ``CorpusError`` that names the file.
"""

from __future__ import annotations

import io
import logging
import os
import re
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from sac.errors import CorpusError
from sac.types import Document

if TYPE_CHECKING:
    from docx.blkcntnr import BlockItemContainer
    from docx.document import Document as DocxDocument

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
# The readers of the formats (charset-normalizer, pypdf, python-docx, inscriptis) are imported inside the functions
# that need them: `import sac` should not load a PDF library to read a text file, or at all.


def normalize_newlines(text: str) -> str:
    r"""Turn ``"\r\n"`` and lone ``"\r"`` into ``"\n"``."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


# --------------------------------------------------------------------------------------------------
# Single documents


def read_document_bytes(
    name: str, data: bytes, *, doc_id: str | None = None, max_bytes: int = DEFAULT_MAX_BYTES
) -> Document:
    r"""Read one document from its bytes; the suffix of ``name`` picks the format.

    Text files are UTF-8 (a BOM is dropped) or, failing that, whatever encoding charset-normalizer
    finds. Line breaks are normalised to ``"\n"`` for every format, so offsets refer to the normalised
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
    from charset_normalizer import from_bytes  # heavy: loaded for the first file that is not UTF-8

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
    # pypdf logs what it repairs on a damaged file ("EOF marker not found") as warnings, which reach stderr ahead of
    # the one clear error raised below; a file it reads in the end needs none of them.
    quiet = logging.getLogger("pypdf")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        return _pdf_pages(data, label)
    finally:
        quiet.setLevel(level)


def _pdf_pages(data: bytes, label: str) -> str:
    from pypdf import PdfReader  # heavy: loaded for the first PDF
    from pypdf.errors import DependencyError  # heavy: loaded for the first PDF

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
    import docx  # heavy: loaded for the first .docx

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


def _docx_lines(container: DocxDocument | BlockItemContainer) -> Iterator[str]:
    """Paragraph texts in document order, descending into table cells (each merged cell once)."""
    from docx.table import Table  # heavy: loaded for the first .docx

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
    from inscriptis import get_text  # heavy: loaded for the first HTML page

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
