"""Build or update a corpus's indexes, whole or one shard of N (several machines filling one Chroma server)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sac.index.shard_book import Shard
from sac.index.shards import parse_shard, require_server
from sac.index.store import SyncReport
from sac.methods import MethodSpec
from sac.types import Document
from sac.usecases.workbench import Workbench

__all__ = ["Shard", "SyncReport", "parse_shard", "require_server", "shard_lines"]


def shard_lines(wb: Workbench, corpus: str, documents: Sequence[Document], methods: Sequence[MethodSpec],
                reports: Mapping[str, SyncReport], shard: Shard) -> list[str]:
    """What one shard did to each index, and whether the index is complete now, a line each."""
    own = sum(shard.owns(d.doc_id) for d in documents)
    by_index = {m.index_name: m for m in methods}
    lines = []
    for name, rep in reports.items():
        lines.append(f"{corpus} / {name} (shard {shard.label}, {own} of {len(documents)} documents): {rep.describe()}")
        index = wb.index(corpus, by_index[name])
        status = index.shard_status()
        if not index.is_complete():
            lines.append(f"{corpus} / {name}: index incomplete: {status.describe()}")
        else:
            how = f"all {shard.count} shards done" if status.all_done else "its last build ran to the end"
            lines.append(f"{corpus} / {name}: index complete: {how}")
    return lines
