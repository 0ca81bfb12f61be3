"""Where corpora, summaries, indexes, runs and reviews live on disk.

```
<workspace>/
  chroma/                 embedded chromadb (unused with SAC_CHROMA_URL)
  lexical/<collection>/   BM25 of each index, beside it (sac.index.lexical; also with SAC_CHROMA_URL)
  corpora/<name>.jsonl    uploaded corpora, one document per line
  summaries/              summary cache and hand-edited versions
  runs/<run id>/          saved evaluation runs (format: sac.evaluation.runs.RunFolder)
  reviews/                expert labels
  audit.jsonl             who did what, when (sac.audit)
  locks/                  writer locks, and the lock that opens the embedded store
```
No user-supplied string becomes a path without passing ``safe_name``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from sac.audit import AuditLog, ids_detail
from sac.errors import ConfigError, CorpusError
from sac.files import atomic_write_text, safe_name
from sac.types import Document


class Workspace:
    """The folders of one workspace, and its corpora and run folders."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    @property
    def chroma_dir(self) -> Path:
        """The embedded Chroma store."""
        return self.root / "chroma"

    @property
    def summaries_dir(self) -> Path:
        """Summary sets and their hand-edited versions."""
        return self.root / "summaries"

    @property
    def runs_dir(self) -> Path:
        """Saved evaluation runs, one folder each."""
        return self.root / "runs"

    @property
    def reviews_dir(self) -> Path:
        """Expert labels from the Review page."""
        return self.root / "reviews"

    @property
    def corpora_dir(self) -> Path:
        """Uploaded corpora, one JSON Lines file each."""
        return self.root / "corpora"

    # -- corpora ------------------------------------------------------------------------
    def corpus_path(self, name: str) -> Path:
        """The file of corpus ``name``; a ConfigError for a name that is not a safe file name."""
        return self.corpora_dir / f"{safe_name(name, 'corpus name')}.jsonl"

    def list_corpora(self) -> list[str]:
        """The names of the saved corpora, sorted."""
        if not self.corpora_dir.is_dir():
            return []
        return sorted(p.stem for p in self.corpora_dir.glob("*.jsonl"))

    def load_corpus(self, name: str) -> list[Document]:
        """The documents of corpus ``name``; a CorpusError naming the known corpora when there is none."""
        path = self.corpus_path(name)
        if not path.is_file():
            raise CorpusError(f"No corpus named {name!r} in {self.corpora_dir}. Known: {self.list_corpora()}")
        docs = []
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                docs.append(Document(row["doc_id"], row["text"], row.get("source")))
        return docs

    def save_corpus(self, name: str, documents: Iterable[Document]) -> Path:
        """Write a corpus (replacing any of that name), sorted by document id."""
        path = self.corpus_path(name)
        lines = [
            json.dumps({"doc_id": d.doc_id, "text": d.text, "source": d.source}, ensure_ascii=False)
            for d in sorted(documents, key=lambda d: d.doc_id)
        ]
        atomic_write_text(path, "".join(line + "\n" for line in lines))
        return path

    def add_documents(self, name: str, documents: Sequence[Document]) -> list[Document]:
        """Add documents to a corpus (creating it); a document id already there is replaced."""
        existing = {d.doc_id: d for d in self.load_corpus(name)} if self.corpus_path(name).is_file() else {}
        existing.update({d.doc_id: d for d in documents})
        self.save_corpus(name, existing.values())
        AuditLog(self.root).record("upload", f"corpus {name!r}", documents=ids_detail([d.doc_id for d in documents]),
                                   chars=sum(len(d.text) for d in documents))
        return sorted(existing.values(), key=lambda d: d.doc_id)

    def remove_documents(self, name: str, doc_ids: Iterable[str]) -> list[Document]:
        """Rewrite corpus ``name`` without these documents; returns the documents kept."""
        drop = set(doc_ids)
        kept = [d for d in self.load_corpus(name) if d.doc_id not in drop]
        self.save_corpus(name, kept)
        return kept

    # -- runs ---------------------------------------------------------------------------
    def new_run_dir(self, label: str = "eval") -> Path:
        """Create a new run folder ``<UTC time>-<label>`` (with a counter when that name is taken)."""
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        base = f"{stamp}-{safe_name(label, 'run label')}"
        for i in range(1000):
            path = self.runs_dir / (base if i == 0 else f"{base}-{i}")
            try:
                path.mkdir(parents=True)
                return path
            except FileExistsError:
                continue
        raise ConfigError(f"Cannot create a run folder under {self.runs_dir}")
