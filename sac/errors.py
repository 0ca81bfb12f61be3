"""Errors raised by sac. Every one is a ``SacError``; the app and the CLI catch that at their edge.

SacError
 +-- ConfigError              a setting or argument is invalid
 +-- MissingCredentialsError  an API key is needed and not given
 +-- CorpusError              a document or benchmark cannot be read or does not check out
 |    +-- NotABenchmarkError  a zip holds no LegalBench-RAG layout (read it as plain documents)
 +-- SummarizerError          the summarizer (an LLM server) failed for a document
 +-- EmbedderError            an embedding model cannot be loaded or run
 +-- StoreError               the vector store cannot be reached or used
 +-- IndexNotBuiltError       a search ran against an index that was never built
 +-- QueryError               a query or k is unusable
 +-- BuildCancelled           a user cancelled the build (it stopped at its next safe point)
"""

from __future__ import annotations


class SacError(Exception):
    """Base class of every error sac raises on purpose."""


class ConfigError(SacError):
    """Raised when a setting or argument is invalid."""


class MissingCredentialsError(SacError):
    """Raised when a model needs an API key which has not been provided."""


class CorpusError(SacError):
    """Raised when a document or benchmark cannot be read or its spans do not match."""


class NotABenchmarkError(CorpusError):
    """Raised when a zip read as a benchmark has no ``corpus/`` and ``benchmarks/*.json`` layout."""


class SummarizerError(SacError):
    """Raised when a summary cannot be made; the message names the document."""


class EmbedderError(SacError):
    """Raised when an embedding model cannot be loaded or run."""


class StoreError(SacError):
    """Raised when the vector store cannot be reached or used."""


class IndexNotBuiltError(SacError):
    """Raised when a search runs against an index that has not been built."""


class BuildCancelled(SacError):
    """Raised inside a build its user cancelled, at its next safe point (the index under way stays incomplete)."""


class IndexIncompleteError(IndexNotBuiltError):
    """Raised when a search runs against an index whose last build stopped part-way."""


class AccessDenied(SacError):
    """The signed-in identity may not open that matter (or no identity where matters need one)."""


class QueryError(SacError):
    """Raised when a query text or k cannot be used."""
