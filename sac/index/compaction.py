"""Making deleted records leave the embedded Chroma store's files (``<workspace>/chroma``).

chromadb's ``collection.delete`` removes records from its tables, but their text stays in ``chroma.sqlite3``:
its write-ahead log (table ``embeddings_queue``) keeps every write until the collection's HNSW segment flushes
(every 1,000 writes), and neither ``VACUUM`` nor ``chroma vacuum`` removes it; deleted vectors stay in the HNSW
files too. What does remove them (measured on chromadb 1.5 with a planted string, then grep):

1. ``rewrite_collection``: read the surviving records (ids, vectors, texts, metadata), delete the collection,
   create it again with the same name, configuration and metadata, add the records back. No vector is computed
   again. While the records go back the collection says ``sac_complete: False``: a crash leaves an index that
   "Finish building" repairs (it embeds what is missing), never one that is silently short.
2. ``vacuum_store``: merge the full-text index (deleted rows leave fragments in FTS5 segments until a merge),
   ``VACUUM`` the file (works while a client has it open), and remove the HNSW folders of deleted segments
   (``chroma/<segment id>/``; deleting a collection leaves them behind).

3. ``scrub_hnsw`` (with the store closed): zero the unused neighbour slots of every persisted HNSW index.
   hnswlib allocates its link lists without clearing them and writes them whole, so bytes of whatever the process
   freed before (a removed document's text, say) can sit in unused slots of ``data_level0.bin`` and
   ``link_lists.bin``. Slots past a list's count are never read, so zeroing them changes no search. ``length.bin``
   (one norm per element) is written for the index's capacity, the first 100 elements of a new one: its entries
   past the element count are uncleared memory too (a removed document's text can turn up there) and are zeroed
   the same way.

A Chroma server (``SAC_CHROMA_URL``) keeps its files on its own machine: compacting them is its operator's job.

4. ``settle_collection``: not about removal, about the same write-ahead log. Records written since the HNSW segment
   last flushed live only in the log, and every process that opens the store adds them to its graph again, in
   parallel, so two processes searching one unchanged index can get different hits (17 of 13,174 (question, k)
   rows of ContractNLI test, once at rank 1; on random vectors 41 of 300 queries;
   bench/notes/2026-12-02-summarizer-v6.md). Collections of fewer than 1,000 records never flush at all. Settling
   writes records back unchanged (upserts of their own vectors, texts and metadata) until the log reaches the flush
   point: the whole graph is then on disk and every process reads the same one (0 of those 300 queries differ).
   The settling process itself keeps searching the graph it holds in memory, which the rewrites changed otherwise
   than the one on disk (238 of 300 queries differed on 48,000 vectors; bench/notes/2026-12-03-settled-indexes.md);
   a caller that is its process's one user of the store closes and reopens it to read the disk's graph
   (``sac.usecases.evaluate.evaluate(reopen_store=True)``).
   A collection whose every search asks for all its records (the document collection of ``+docs``) need not be
   settled while its graph holds at most 2M + 1 elements (M = ``max_neighbors``, 16): no level-0 list (2M links)
   was ever full, so hnswlib pruned no link, every link runs both ways, and a search for every record (``ef`` at
   least the element count) reaches each one and gives its exact distance, whatever order the log was replayed
   in. That is the case settling costs most: about 1,000 / n upserts for n records, one id at most once per call;
   a one-document corpus's build (three methods) takes 44 s when it settles its document collections, 41 s of it
   settling, and 7 s when it does not (bench/notes/2026-12-03-small-corpora.md).
   After settling a collection of a few hundred records, Chroma (1.5.9) records the flush at an earlier write than
   the last, so up to one round of unchanged records is replayed, as updates, by each process that opens the
   store: updates that change nothing, so every process still searches the same graph.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import struct
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from sac.index.store import ADD_BATCH

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.collection_configuration import CreateCollectionConfiguration

_SEGMENT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PAGE = 5000


def rewrite_collection(client: ClientAPI, name: str) -> int:
    """Write collection ``name`` again from its own records; returns the records written.

    Then nothing deleted from it stays in the store's files (after ``vacuum_store``). The caller holds the
    collection's write lock."""
    col = client.get_collection(name, embedding_function=None)
    meta = dict(col.metadata or {})
    hnsw = col.configuration.get("hnsw")
    ids: list[str] = []
    vectors: list[Any] = []
    texts: list[str | None] = []
    metas: list[Any] = []
    offset = 0
    while True:
        got = col.get(include=["embeddings", "documents", "metadatas"], limit=PAGE, offset=offset)
        ids += got["ids"]
        vectors += list(got["embeddings"] if got["embeddings"] is not None else [])
        texts += got["documents"] if got["documents"] else [None] * len(got["ids"])
        metas += got["metadatas"] if got["metadatas"] else [None] * len(got["ids"])
        if len(got["ids"]) < PAGE:
            break
        offset += PAGE
    client.delete_collection(name)
    configuration: CreateCollectionConfiguration | None = {"hnsw": hnsw} if hnsw else None
    new = client.create_collection(name, configuration=configuration, metadata={**meta, "sac_complete": False},
                                   embedding_function=None)
    has_texts = any(t is not None for t in texts)
    for i in range(0, len(ids), ADD_BATCH):
        new.add(ids=ids[i:i + ADD_BATCH], embeddings=vectors[i:i + ADD_BATCH],
                metadatas=metas[i:i + ADD_BATCH] if all(metas[i:i + ADD_BATCH]) else None,
                # Every record of a collection with texts has one (sac writes a text with each chunk, or none at all).
                documents=cast("list[str]", texts[i:i + ADD_BATCH]) if has_texts else None)
    new.modify(metadata=meta)
    return len(ids)


def vacuum_store(chroma_dir: Path) -> list[str]:
    """Merge the full-text index, VACUUM ``chroma.sqlite3`` and remove HNSW folders of deleted segments.

    Returns the folders removed."""
    path = chroma_dir / "chroma.sqlite3"
    if not path.is_file():
        return []
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        try:
            con.execute("INSERT INTO embedding_fulltext_search(embedding_fulltext_search) VALUES('optimize')")
        except sqlite3.OperationalError:  # a store without the full-text table
            pass
        con.execute("VACUUM")
        segments = {str(row[0]) for row in con.execute("SELECT id FROM segments")}
    finally:
        con.close()
    removed = []
    for folder in sorted(chroma_dir.iterdir()):
        if folder.is_dir() and _SEGMENT.fullmatch(folder.name) and folder.name not in segments:
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder.name)
    return removed


# hnswlib's header as chromadb persists it (header.bin): a format version, then hnswlib's saveIndex fields.
_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")


def scrub_hnsw(segment_dir: Path) -> int:
    """Zero what one persisted HNSW index does not use; returns the bytes zeroed.

    That is the unused neighbour slots (and each list header's unused byte) and the norms past the element count.
    Raises ValueError, changing nothing, when the files do not have the layout read here. Only for a closed store:
    a running one would write its own copy back."""
    header = (segment_dir / "header.bin").read_bytes()
    if len(header) < _HEADER.size:
        raise ValueError(f"{segment_dir / 'header.bin'}: {len(header)} bytes, expected at least {_HEADER.size}")
    (_version, offset_level0, _max_elements, count, per_element, label_offset, offset_data, _max_level, _enter,
     max_m, max_m0, _m, _mult, _ef) = _HEADER.unpack_from(header)
    if offset_level0 != 0 or offset_data != 4 + 4 * max_m0 or not offset_data < label_offset < per_element:
        raise ValueError(f"{segment_dir}: an HNSW layout this code does not know (offsetData {offset_data}, "
                         f"maxM0 {max_m0}, label offset {label_offset}, element size {per_element})")
    level0 = bytearray((segment_dir / "data_level0.bin").read_bytes())
    if len(level0) % per_element or len(level0) < count * per_element:
        raise ValueError(f"{segment_dir / 'data_level0.bin'}: {len(level0)} bytes for {count} elements of {per_element}")
    zeroed = sum(_clear_list(level0, i * per_element, offset_data) for i in range(count))
    # Room past the header's count (a new index's file is made for its first 100 elements) is never read.
    zeroed += _clear_tail(level0, count * per_element)
    links_path = segment_dir / "link_lists.bin"
    links = bytearray(links_path.read_bytes()) if links_path.is_file() else bytearray()
    block, pos = 4 + 4 * max_m, 0
    for _ in range(count if links else 0):
        (size,) = struct.unpack_from("<I", links, pos)
        pos += 4
        if size % block or pos + size > len(links):
            raise ValueError(f"{links_path}: a link list of {size} bytes at {pos - 4}, blocks of {block}")
        zeroed += sum(_clear_list(links, start, block) for start in range(pos, pos + size, block))
        pos += size
    zeroed += _clear_tail(links, pos)
    norms_path = segment_dir / "length.bin"  # one float32 per element (its vector's norm), written for the capacity
    norms = bytearray(norms_path.read_bytes()) if norms_path.is_file() else bytearray()
    if norms and (len(norms) % 4 or len(norms) < 4 * count):
        raise ValueError(f"{norms_path}: {len(norms)} bytes for {count} elements of 4")
    cleared_norms = _clear_tail(norms, 4 * count)
    if zeroed:
        _replace(segment_dir / "data_level0.bin", level0)
        if links:
            _replace(links_path, links)
    if cleared_norms:
        _replace(norms_path, norms)
    return zeroed + cleared_norms


def _clear_list(buffer: bytearray, start: int, size: int) -> int:
    """Zero what one neighbour list does not use: its header's fourth byte, and the slots past its count."""
    (count,) = struct.unpack_from("<H", buffer, start)
    used = 4 + 4 * count
    if used > size:
        raise ValueError(f"a neighbour list of {count} entries at byte {start} does not fit in {size} bytes")
    stale = [start + 3, *range(start + used, start + size)]
    dirty = sum(1 for i in stale if buffer[i])
    if dirty:
        buffer[start + 3] = 0
        buffer[start + used:start + size] = bytes(size - used)
    return dirty


def _clear_tail(buffer: bytearray, start: int) -> int:
    dirty = sum(1 for b in buffer[start:] if b)
    if dirty:
        buffer[start:] = bytes(len(buffer) - start)
    return dirty


def _replace(path: Path, data: bytearray) -> None:
    tmp = path.with_name(path.name + ".scrub")
    tmp.write_bytes(data)
    tmp.replace(path)


def scrub_store(chroma_dir: Path) -> int:
    """``scrub_hnsw`` on every persisted HNSW index of a closed embedded store; returns the bytes zeroed."""
    return sum(scrub_hnsw(folder) for folder in sorted(chroma_dir.iterdir())
               if folder.is_dir() and _SEGMENT.fullmatch(folder.name) and (folder / "header.bin").is_file())


def settle_collection(client: ClientAPI, name: str, store_dir: Path, *, read_whole: bool = False) -> int:
    """Flush collection ``name``'s HNSW graph to disk whole (module docstring, 4).

    Returns the unchanged records written again (0 when nothing was waiting). ``read_whole``: every search of the
    collection asks for all its records, so a graph too small for hnswlib to prune a link is left as it is.
    Embedded store only; the caller holds the collection's write lock."""
    col = client.get_collection(name, embedding_function=None)
    hnsw = (col.configuration or {}).get("hnsw") or {}
    threshold = int(hnsw.get("sync_threshold") or 1000)
    con = sqlite3.connect(f"file:{store_dir / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        row = con.execute("SELECT id FROM segments WHERE collection = ? AND scope = 'VECTOR'", (str(col.id),)).fetchone()
        if row is None:
            return 0
        flushed = con.execute("SELECT seq_id FROM max_seq_id WHERE segment_id = ?", (row[0],)).fetchone()
        waiting = con.execute("SELECT COUNT(*) FROM embeddings_queue WHERE topic LIKE ? AND seq_id > ?",
                              (f"%/{col.id}", (flushed[0] or 0) if flushed else 0)).fetchone()[0]
    finally:
        con.close()
    if not waiting or (read_whole and _never_pruned(store_dir / str(row[0]), waiting, int(hnsw.get("max_neighbors") or 16))):
        return 0
    pad = threshold - waiting % threshold
    got = col.get(include=["embeddings", "documents", "metadatas"], limit=min(pad, ADD_BATCH))
    embeddings = got["embeddings"]
    if not got["ids"] or embeddings is None:
        return 0
    written = 0
    while written < pad:  # one id at most once per call: a small collection goes round again
        n = min(pad - written, len(got["ids"]))
        col.upsert(ids=got["ids"][:n], embeddings=embeddings[:n],
                   documents=got["documents"][:n] if got["documents"] else None,
                   metadatas=got["metadatas"][:n] if got["metadatas"] and all(got["metadatas"][:n]) else None)
        written += n
    return written


def _never_pruned(segment_dir: Path, waiting: int, max_neighbors: int) -> bool:
    """Whether a collection's graph holds at most 2M + 1 elements, so that hnswlib pruned no link.

    Its flushed elements, if any, plus every record waiting in the log (an upper bound): with at most 2M + 1, no
    level-0 list of 2M links was ever full."""
    elements = waiting
    header = segment_dir / "header.bin"
    if header.is_file():
        data = header.read_bytes()
        if len(data) < _HEADER.size:
            return False
        elements += _HEADER.unpack_from(data)[3]
    return elements <= 2 * max_neighbors + 1
