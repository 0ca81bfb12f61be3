"""Contracts named by their parties: one display name per document, the same in every list, table and flag.

The name comes from the document's text (``sac.summaries.display``); it is computed once per document version in
this process (keyed by id and content hash) and made unique across the documents asked about together.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from sac.summaries.display import DisplayName, display_name, party_label, unique_names
from sac.types import Document

__all__ = ["DisplayName", "display_names", "party_label"]

MAX_CACHED = 20_000  # names kept per process: a few MB for the largest pools

_cache: OrderedDict[tuple[str, str], DisplayName] = OrderedDict()
_lock = threading.Lock()


def _name_of(document: Document) -> DisplayName:
    key = (document.doc_id, document.content_hash)
    with _lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    made = display_name(document)  # outside the lock: regular expressions over the text's head, some ms a document
    with _lock:
        _cache[key] = made
        while len(_cache) > MAX_CACHED:
            _cache.popitem(last=False)
    return made


def display_names(documents: Iterable[Document]) -> dict[str, DisplayName]:
    """Document id -> its display name ("Accuray / Siemens · Distributor Agreement · 2010") and file title.

    Unique among ``documents``: a name two of them share gets its file title appended."""
    return unique_names({d.doc_id: _name_of(d) for d in documents})
