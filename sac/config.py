"""One configuration object, read from arguments and ``SAC_*`` environment variables."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sac.errors import ConfigError

# The default (merged) chunking: a piece with fewer non-space characters joins a neighbour (sac.chunking.merge).
MIN_CHUNK_CHARS = 25

# A value of one SacConfig field (an override of from_env; None leaves the field as the environment sets it).
FieldValue = str | int | float | Path | None

DEFAULT_K_VALUES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64)

# Where a local embedding model runs (sac.embedding.devices resolves "auto"); cuda:<n> picks one GPU of several.
EMBED_DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda", "mps")


def check_embed_device(device: str) -> str:
    """``device`` if it is a known SAC_EMBED_DEVICE value, else a ConfigError naming the choices."""
    if device in EMBED_DEVICES or re.fullmatch(r"cuda:\d+", device):
        return device
    raise ConfigError(f"Expected SAC_EMBED_DEVICE to be one of {list(EMBED_DEVICES)} or cuda:<n>, got {device!r}")


@dataclass(frozen=True)
class SacConfig:
    """Every setting of the library, the app and the CLI; frozen, so variants are made with ``dataclasses.replace``."""

    workspace: Path = Path("workspace")  # corpora, summaries, indexes, runs, reviews
    chroma_url: str | None = None  # e.g. http://127.0.0.1:8000 -> chromadb.HttpClient
    chroma_database: str | None = None  # the server's database (one per matter, sac.usecases.matters); None -> its default
    access_file: Path | None = None  # identity -> matters (TOML, sac.usecases.matters); None: one workspace, no matters
    sources: Path | None = None  # CUAD and ContractNLI sources for full benchmarks; None: ../shared/data/sources
    chunk_size: int = 500  # characters
    chunk_overlap: int = 0
    chunking: str = "merged"  # "merged": tiny pieces join a neighbour (no blank hits); "paper": the paper's splitter exactly
    summary_chars: int = 150  # target summary length
    embedder: str = "minilm"  # packaged offline model; "minilm-onnx"; any sentence-transformers name or path; "openai:<model>"
    embed_batch_size: int = 32  # texts per model call (local models) or per request (an embeddings server)
    embed_device: str = "auto"  # local models: auto (cuda, else mps, else cpu) | cpu | cuda | cuda:<n> | mps
    embed_base_url: str | None = None  # embeddings server for openai:<model>; None -> llm_base_url (and its key)
    embed_api_key: str | None = field(default=None, repr=False)  # that server's key; never printed, never written
    embed_concurrency: int = 4  # embeddings requests in flight at once
    embed_max_retries: int = 4  # retries of a request after a connection error, timeout, 429 or 5xx
    embed_timeout_s: float = 120.0  # seconds per embeddings request
    reranker: str = "none"  # for the +rerank option: "lexical" (built in) or a sentence-transformers CrossEncoder
    llm_model: str = "gpt-4o-mini"
    llm_base_url: str | None = None  # any OpenAI-compatible server; None -> api.openai.com
    openai_api_key: str | None = field(default=None, repr=False)  # never printed, never written
    llm_concurrency: int = 4
    llm_timeout_s: float = 120.0
    max_file_mb: float = 50.0
    hnsw_ef_search: int = 256
    hnsw_ef_construction: int = 256
    hnsw_max_neighbors: int = 32

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ConfigError(f"Expected chunk_size >= 1, got {self.chunk_size}")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise ConfigError(
                f"Expected 0 <= chunk_overlap < chunk_size ({self.chunk_size}), got {self.chunk_overlap}"
            )
        if self.chunking not in ("merged", "paper"):
            raise ConfigError(f"Expected chunking 'merged' (the default) or 'paper', got {self.chunking!r}")
        if self.chunking == "merged" and self.chunk_overlap:
            raise ConfigError(
                f"chunk_overlap {self.chunk_overlap} needs chunking 'paper': 'merged' joins tiny pieces of "
                "chunks that tile the document, which overlapping chunks do not"
            )
        if self.summary_chars < 20:
            raise ConfigError(f"Expected summary_chars >= 20, got {self.summary_chars}")
        if self.llm_concurrency < 1:
            raise ConfigError(f"Expected llm_concurrency >= 1, got {self.llm_concurrency}")
        check_embed_device(self.embed_device)
        if self.embed_batch_size < 1 or self.embed_concurrency < 1:
            raise ConfigError(
                f"Expected embed_batch_size >= 1 and embed_concurrency >= 1, got {self.embed_batch_size} and "
                f"{self.embed_concurrency}"
            )
        if self.embed_max_retries < 0 or self.embed_timeout_s <= 0:
            raise ConfigError(
                f"Expected embed_max_retries >= 0 and embed_timeout_s > 0, got {self.embed_max_retries} and "
                f"{self.embed_timeout_s}"
            )
        if self.max_file_mb <= 0:
            raise ConfigError(f"Expected max_file_mb > 0, got {self.max_file_mb}")

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **overrides: FieldValue) -> SacConfig:
        """Build a config from ``SAC_*`` variables and ``OPENAI_API_KEY``; ``overrides`` win."""
        values: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            raw = environ.get(f"SAC_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _parse(f.name, f.type, raw)
        if environ.get("OPENAI_API_KEY") and "openai_api_key" not in values:
            values["openai_api_key"] = environ["OPENAI_API_KEY"]
        if environ.get("OPENAI_BASE_URL") and "llm_base_url" not in values:
            values["llm_base_url"] = environ["OPENAI_BASE_URL"]
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    @property
    def chunking_key(self) -> str:
        """Part of every index key: ``c500o0`` is the paper's splitter, ``c500o0m25`` the default merged chunking."""
        base = f"c{self.chunk_size}o{self.chunk_overlap}"
        return base if self.chunking == "paper" else f"{base}m{MIN_CHUNK_CHARS}"

    def public_dict(self) -> dict[str, Any]:
        """The settings without secrets, for run folders and display."""
        out = {k: (str(v) if isinstance(v, Path) else v) for k, v in dataclasses.asdict(self).items()}
        for secret in ("openai_api_key", "embed_api_key"):
            out[f"{secret}_set"] = out.pop(secret) is not None
        return out


def _parse(name: str, type_name: object, raw: str) -> FieldValue:
    type_text = str(type_name)
    try:
        if type_text.startswith("int"):
            return int(raw)
        if type_text.startswith("float"):
            return float(raw)
    except ValueError:
        raise ConfigError(f"SAC_{name.upper()} must be a number, got {raw!r}") from None
    if type_text.startswith("Path"):
        return Path(raw)
    return raw
