"""Reranking: a second stage that reorders the first stage's top N.

Method option ``+rerank`` (``+rerank30``: the top 30; 50 by default). The reranker is named by
``SAC_RERANKER`` (``SacConfig.reranker``):

- ``none`` (default): no reranker; selecting ``+rerank`` is a ConfigError that says how to configure one.
- ``lexical``: the built-in lexical-overlap reranker below; offline, deterministic, no model.
- anything else: a sentence-transformers ``CrossEncoder`` model name or folder (e.g.
  ``cross-encoder/ms-marco-MiniLM-L-6-v2``). None ships offline: it is downloaded on first use, so it
  needs internet once (or a local folder).

A reranker reads what the index embedded (summary + section line + chunk text), so it keeps the
document context SAC adds; the hits it returns carry the original chunks and spans.

``DEFAULT_CANDIDATES`` = 50 is a knob; docs/methods.md lists it (no measurement recorded).
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from sac.config import SacConfig
from sac.embedding.models import wait_for_preload
from sac.errors import ConfigError
from sac.protocols import Reranker
from sac.retrieval.hybrid import tokenize
from sac.types import Chunk

DEFAULT_CANDIDATES = 50
NO_RERANKER = ("", "none")


class LexicalReranker:
    """Share of the query's (idf-weighted) words that a chunk contains; idf over the candidates.

    ``score = sum(idf(w) for w in query words in the chunk) / sum(idf(w) for w in query words)``, with
    ``idf(w) = ln(1 + (n - df(w) + 0.5) / (df(w) + 0.5))`` over the n candidates, so words that every
    candidate shares (the question's boilerplate) weigh little and a rare name weighs much. Ties keep
    the first stage's order.
    """

    name = "lexical"

    def rerank(self, query: str, chunks: Sequence[Chunk], top_k: int) -> list[tuple[Chunk, float]]:
        """The ``top_k`` chunks with their scores (class docstring), best first."""
        words = list(dict.fromkeys(tokenize(query)))
        bags = [set(tokenize(c.text)) for c in chunks]
        n = len(chunks)
        df = Counter(w for bag in bags for w in words if w in bag)
        idf = {w: math.log(1.0 + (n - df[w] + 0.5) / (df[w] + 0.5)) for w in words}
        total = sum(idf.values())
        scored = [
            (chunk, sum(idf[w] for w in words if w in bag) / total if total else 0.0)
            for chunk, bag in zip(chunks, bags)
        ]
        order = sorted(range(n), key=lambda i: -scored[i][1])  # stable: ties keep the first stage's order
        return [scored[i] for i in order[:top_k]]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` scoring (query, passage) pairs."""

    def __init__(self, model: str, *, batch_size: int = 32) -> None:
        self.name = model
        self.batch_size = batch_size
        wait_for_preload()  # an app page may be importing sentence-transformers in the background
        try:
            from sentence_transformers import CrossEncoder  # heavy: torch and transformers, for this reranker only
        except ImportError as err:
            raise ConfigError(f"SAC_RERANKER={model!r} needs the sentence-transformers package: {err}") from err
        try:
            self._model = CrossEncoder(model, device="cpu")
        except Exception as err:  # noqa: BLE001 - OSError, HTTP and hub errors all mean "not available here"
            raise ConfigError(
                f"Cannot load the CrossEncoder reranker {model!r}: {type(err).__name__}: {err}. No reranker ships "
                "offline: download it once with internet access (or name a local folder) in SAC_RERANKER, "
                "or set SAC_RERANKER=lexical for the built-in lexical reranker."
            ) from err

    def rerank(self, query: str, chunks: Sequence[Chunk], top_k: int) -> list[tuple[Chunk, float]]:
        """The ``top_k`` chunks with the model's score for each (query, chunk text) pair, best first."""
        if not chunks:
            return []
        scores = self._model.predict([(query, c.text) for c in chunks], batch_size=self.batch_size)
        order = sorted(range(len(chunks)), key=lambda i: -float(scores[i]))
        return [(chunks[i], float(scores[i])) for i in order[:top_k]]


RERANKERS: dict[str, Callable[[], Reranker]] = {"lexical": LexicalReranker}
_loaded: dict[str, Reranker] = {}
_loaded_lock = threading.Lock()


def make_reranker(config: SacConfig) -> Reranker:
    """The configured reranker (loaded once per name), or a ConfigError when none is configured."""
    name = (config.reranker or "").strip()
    if name.lower() in NO_RERANKER:
        raise ConfigError(
            "The rerank option needs a reranker and none is configured (no cross-encoder model ships "
            "offline). Set SAC_RERANKER to a sentence-transformers CrossEncoder name or folder, e.g. "
            "cross-encoder/ms-marco-MiniLM-L-6-v2 (downloaded once with internet access), or to "
            f"'lexical' for the built-in lexical-overlap reranker. Built in: {sorted(RERANKERS)}."
        )
    with _loaded_lock:
        found = _loaded.get(name)
        if found is None:
            factory = RERANKERS.get(name)
            found = factory() if factory is not None else CrossEncoderReranker(name)
            if not isinstance(found, Reranker):
                raise ConfigError(f"Reranker {name!r} does not implement rerank(query, chunks, top_k)")
            _loaded[name] = found
        return found


def rerank_texts(reranker: Reranker, query: str, chunks: Sequence[Chunk], texts: Sequence[str],
                 top_k: int) -> list[tuple[Chunk, float]]:
    """Rerank ``chunks`` reading ``texts`` (what was embedded for each); returns the original chunks."""
    by_span: dict[Any, Chunk] = {c.span: c for c in chunks}
    shown = [Chunk(c.span, t) for c, t in zip(chunks, texts)]
    return [(by_span[c.span], score) for c, score in reranker.rerank(query, shown, top_k)]
