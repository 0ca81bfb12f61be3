"""When and how long to wait before retrying a request to an OpenAI-compatible server.

The LLM summarizer and the embeddings client share these rules.
"""

from __future__ import annotations

import random
from collections.abc import Mapping


def retryable(status: int, code: object) -> bool:
    """Rate limits and server errors pass; an exhausted quota and other 4xx (bad model, key, input) do not."""
    if status == 429:
        return code != "insufficient_quota"
    return status in (408, 409) or status >= 500


def retry_delay(attempt: int, headers: Mapping[str, str] | None, backoff_s: float) -> float:
    """Seconds before retry ``attempt + 1``: the server's ``Retry-After`` (capped at 60 s), else exponential."""
    if headers is not None:
        for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
            value = headers.get(name)
            try:
                if value is not None:
                    return min(60.0, max(0.0, float(value) * scale))
            except ValueError:
                continue
    # Jitter keeps concurrent requests from retrying in lockstep.
    return float(backoff_s * (2**attempt) * random.uniform(0.75, 1.0))
