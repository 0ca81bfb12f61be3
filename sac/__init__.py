"""SAC Workbench: Summary-Augmented Chunking for reliable retrieval over look-alike legal documents."""

from sac.config import SacConfig
from sac.errors import SacError
from sac.types import Chunk, Dataset, Document, Hit, Query, RetrievalResult, Span, Summary

__all__ = ["Chunk", "Dataset", "Document", "Hit", "Query", "RetrievalResult", "SacConfig", "SacError", "Span", "Summary"]
