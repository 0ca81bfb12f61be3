"""Vectors shipped with a benchmark: a build copies them instead of running the model on the same texts.

A benchmark folder may hold ``vectors/<embedder index name>.npz``, and parts beside it
(``vectors/<embedder index name>.<part>.npz``): the packaged model's vectors of the texts its build embeds (every
method's chunk texts with their summaries, and the document collection's texts), as ``python -m sac vectors``
recorded them, float32 or float16 (read back as float32). The bundled demo ships them for its ContractNLI NDAs (every
method, float32) and for the three paper methods of its CUAD contracts (the part ``cuad``, float16: half the size,
the same top 8 for every demo question, near-ties in low ranks may swap; bench/notes/2026-12-06-demo-build-time.md),
and the app's workbench uses them (``Workbench.use_shipped_vectors``), so loading the demo copies those vectors
rather than embedding them (bench/notes/2026-12-04-shipped-vectors.md). The command line and the library embed unless
told to use them (`sac ingest --shipped-vectors`, ``Workbench.use_shipped_vectors``).

A seed answers only for

- the exact text: rows are keyed by the sha256 of the text's UTF-8, so any change to a chunk, a summary or a
  context line is a text the seed does not hold, and it goes to the model;
- the model it was made with: the file names the embedder's index name and a fingerprint of the packaged model's
  files, and it is used only when the configured embedder is that packaged model (``minilm`` or ``minilm-onnx``,
  which give the same vectors) with the same files.

Everything else goes to the model, loaded only when a text misses (``SeededEmbedder``). A seed that
cannot be read (missing, damaged, another format) or was made with another model is not used: the build embeds.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from sac.embedding.onnx import model_fingerprint, packaged_model_path
from sac.embedding.vectors import embedder_name
from sac.files import atomic_write
from sac.protocols import Embedder

log = logging.getLogger(__name__)

FORMAT = 1
# The configured embedders that run the packaged model at full precision: the same vectors, one index name.
PACKAGED = ("minilm", "minilm-onnx")


def text_digest(text: str) -> bytes:
    """The key of a text's row: the sha256 of its UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).digest()


@functools.cache
def _packaged_fingerprint() -> str:
    return model_fingerprint(packaged_model_path(), recipe="")


def model_identity(configured: str) -> str | None:
    """The fingerprint a seed must carry to be used with the configured embedder; None where no seed applies."""
    return _packaged_fingerprint() if configured.strip() in PACKAGED else None


@dataclass(frozen=True)
class VectorSeed:
    """Vectors by text digest, made with one model (``embedder``: the index name; ``model``: its fingerprint)."""

    embedder: str
    model: str
    digests: np.ndarray  # (n, 32) uint8
    vectors: np.ndarray  # (n, dim) float32

    @functools.cached_property
    def rows(self) -> dict[bytes, int]:
        """Text digest -> row."""
        return {bytes(d): i for i, d in enumerate(self.digests)}

    @property
    def dim(self) -> int:
        """The vectors' dimension."""
        return int(self.vectors.shape[1])

    def __len__(self) -> int:
        return int(self.vectors.shape[0])

    def get(self, text: str) -> np.ndarray | None:
        """The vector of exactly ``text``, or None when the seed does not hold it."""
        row = self.rows.get(text_digest(text))
        return None if row is None else self.vectors[row]


def seed_path(folder: Path, name: str, part: str = "") -> Path:
    """Where a benchmark folder keeps the seed of the embedder with index name ``name`` (one ``part`` of it)."""
    return folder / "vectors" / (f"{name}.{part}.npz" if part else f"{name}.npz")


def seed_files(folder: Path, name: str) -> list[Path]:
    """Every seed file of the embedder with index name ``name`` in a benchmark folder: the main one, then its parts."""
    main = seed_path(folder, name)
    parts = sorted((folder / "vectors").glob(f"{name}.*.npz")) if (folder / "vectors").is_dir() else []
    return [path for path in [main, *parts] if path.is_file()]


def read_seed(path: Path) -> VectorSeed:
    """Read a seed file; ValueError says what is wrong with one that cannot be used as it is."""
    try:
        with np.load(path, allow_pickle=False) as data:
            meta = json.loads(str(data["meta"]))
            digests = np.asarray(data["digests"], dtype=np.uint8)
            vectors = np.asarray(data["vectors"], dtype=np.float32)
    except Exception as err:  # noqa: BLE001 - numpy, zipfile and json each raise their own errors for a damaged file
        raise ValueError(f"cannot read {path}: {type(err).__name__}: {err}") from None
    if meta.get("format") != FORMAT:
        raise ValueError(f"{path} has format {meta.get('format')!r}, expected {FORMAT}")
    if digests.ndim != 2 or digests.shape[1] != 32 or vectors.ndim != 2 or len(vectors) != len(digests):
        raise ValueError(f"{path} holds {digests.shape} digests for {vectors.shape} vectors")
    return VectorSeed(str(meta.get("embedder", "")), str(meta.get("model", "")), digests, vectors)


def benchmark_seed(folder: Path, configured: str) -> VectorSeed | None:
    """The seed a benchmark folder ships for the configured embedder (its files joined), if it has one it can use.

    A file that cannot be read, or was made with another model, is left out with a warning."""
    paths = seed_files(folder, embedder_name(configured))
    if configured.strip() not in PACKAGED or not paths:
        return None
    identity = model_identity(configured)
    usable: list[VectorSeed] = []
    for path in paths:
        try:
            seed = read_seed(path)
        except ValueError as err:
            log.warning("Shipped vectors not used, the build embeds instead: %s", err)
            continue
        if seed.embedder != embedder_name(configured) or seed.model != identity:
            log.warning("Shipped vectors %s were made with %s (model %s), not this model (%s): the build embeds instead",
                        path, seed.embedder, seed.model, identity)
            continue
        usable.append(seed)
    if len(usable) <= 1:
        return usable[0] if usable else None
    return VectorSeed(usable[0].embedder, usable[0].model, np.concatenate([s.digests for s in usable]),
                      np.concatenate([s.vectors for s in usable]))


def write_seed(path: Path, texts: Iterable[str], vectors: np.ndarray, *, embedder: str, model: str,
               dtype: type[np.floating[Any]] = np.float32) -> int:
    """Write the vector of each text of ``texts``, one row per distinct text in digest order, atomically.

    ``vectors`` are in the order of ``texts``; a text seen twice keeps its first vector. ``dtype`` float16 halves the
    file (a unit vector's parts then differ by at most about 1e-4 from the model's). Returns the rows written."""
    seen: dict[bytes, int] = {}
    for i, text in enumerate(texts):
        seen.setdefault(text_digest(text), i)
    rows = sorted(seen.items(), key=lambda item: item[0])
    digests = np.frombuffer(b"".join(d for d, _ in rows), dtype=np.uint8).reshape(len(rows), 32)
    picked = np.asarray(vectors, dtype=np.float32)[[i for _, i in rows]].astype(dtype)
    meta = json.dumps({"format": FORMAT, "embedder": embedder, "model": model, "texts": len(rows),
                       "dtype": np.dtype(dtype).name})
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, lambda handle: np.savez_compressed(handle, meta=np.array(meta), digests=digests, vectors=picked))
    return len(rows)


class SeededEmbedder:
    """Takes a text's vector from the seeds where one holds that exact text; embeds the rest with the model.

    ``load`` gives the model, loaded only when a text misses. Counts what it took from the seeds and what it
    embedded."""

    def __init__(self, seeds: Sequence[VectorSeed], load: Callable[[], Embedder], name: str) -> None:
        self._seeds = tuple(seeds)
        self._load = load
        self.name = name
        self.shipped = 0  # texts whose vector came from a seed
        self.embedded = 0  # texts the model embedded

    @property
    def dim(self) -> int:
        """The seeds' dimension (the model's when there is no seed)."""
        return self._seeds[0].dim if self._seeds else int(self._load().dim)

    def _seeded(self, text: str) -> np.ndarray | None:
        for seed in self._seeds:
            vector = seed.get(text)
            if vector is not None:
                return vector
        return None

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One row per text: from a seed where one holds the text, else from the model."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows: list[np.ndarray | None] = [self._seeded(t) for t in texts]
        missing = [i for i, row in enumerate(rows) if row is None]
        if missing:
            computed = np.asarray(self._load().embed_documents([texts[i] for i in missing]), dtype=np.float32)
            for i, vector in zip(missing, computed, strict=True):
                rows[i] = vector
        self.shipped += len(texts) - len(missing)
        self.embedded += len(missing)
        return np.stack([np.asarray(r, dtype=np.float32) for r in rows])

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector, as ``embed_documents`` gives it."""
        out: np.ndarray = self.embed_documents([text])[0]
        return out


class RecordingEmbedder:
    """The model, keeping every text it embeds and its vector (for ``sac.usecases.vectors.record_vectors``)."""

    def __init__(self, inner: Embedder) -> None:
        self._inner = inner
        self.name, self.dim = inner.name, inner.dim
        self.texts: list[str] = []
        self.vectors: list[np.ndarray] = []

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """The model's rows, recorded with their texts."""
        out = np.asarray(self._inner.embed_documents(texts), dtype=np.float32)
        self.texts.extend(texts)
        self.vectors.extend(out)
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """The model's query vector (not recorded: queries are not shipped)."""
        return self._inner.embed_query(text)
