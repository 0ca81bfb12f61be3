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

A Chroma server (``SAC_CHROMA_URL``) keeps its files on its own machine: compacting them is its operator's job.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

from sac.index.store import ADD_BATCH

_SEGMENT = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
PAGE = 5000


def rewrite_collection(client: Any, name: str) -> int:
    """Write collection ``name`` again from its own records, so nothing deleted from it stays in the store's
    files (after ``vacuum_store``); returns the records written. The caller holds the collection's write lock."""
    col = client.get_collection(name, embedding_function=None)
    meta = dict(col.metadata or {})
    hnsw = dict((col.configuration or {}).get("hnsw") or {})
    ids: list[str] = []
    vectors: list[Any] = []
    texts: list[str | None] = []
    metas: list[Any] = []
    offset = 0
    while True:
        got = col.get(include=["embeddings", "documents", "metadatas"], limit=PAGE, offset=offset)
        ids += got["ids"]
        vectors += list(got["embeddings"] if got["embeddings"] is not None else [])
        texts += list(got["documents"] or [None] * len(got["ids"]))
        metas += list(got["metadatas"] or [None] * len(got["ids"]))
        if len(got["ids"]) < PAGE:
            break
        offset += PAGE
    client.delete_collection(name)
    configuration = {"hnsw": hnsw} if hnsw else None
    new = client.create_collection(name, configuration=configuration, metadata={**meta, "sac_complete": False},
                                   embedding_function=None)
    has_texts = any(t is not None for t in texts)
    for i in range(0, len(ids), ADD_BATCH):
        new.add(ids=ids[i:i + ADD_BATCH], embeddings=vectors[i:i + ADD_BATCH],
                metadatas=metas[i:i + ADD_BATCH] if all(metas[i:i + ADD_BATCH]) else None,
                documents=texts[i:i + ADD_BATCH] if has_texts else None)
    new.modify(metadata=meta)
    return len(ids)


def vacuum_store(chroma_dir: Path) -> list[str]:
    """Merge the full-text index, VACUUM ``chroma.sqlite3`` and remove HNSW folders of deleted segments;
    returns the folders removed."""
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
