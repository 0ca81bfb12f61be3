"""Make a summarizer by name (``builtin`` offline, ``openai`` for any OpenAI-compatible server)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypedDict, Unpack, cast

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.protocols import Summarizer
from sac.summaries.builtin import BuiltinSummarizer
from sac.summaries.llm import (
    LLM_STRATEGIES,
    LOCAL_TIMEOUT_S,
    OpenAISummarizer,
    is_local_url,
)


class LLMOptions(TypedDict, total=False):
    """Settings of the LLM summarizer (``OpenAISummarizer``) that ``make_summarizer`` passes on; None keeps the default."""

    system_prompt: str | None
    shorten_prompt: str
    max_attempts: int
    context_chars: int
    timeout_s: float | None
    max_retries: int
    backoff_s: float
    temperature: float | None


def _make_builtin(strategy: str, config: SacConfig, prompt: str | None, **options: Unpack[LLMOptions]) -> Summarizer:
    # The builtin reads no prompt and no LLM option; they are accepted so that every factory has one signature.
    return BuiltinSummarizer(strategy.removeprefix("builtin-"), target_chars=config.summary_chars)


def _make_openai(strategy: str, config: SacConfig, prompt: str | None, **options: Unpack[LLMOptions]) -> Summarizer:
    # "generic"/"expert" become "generic-llm"/"expert-llm": LLM summaries are a method of their own.
    if options.get("timeout_s") is None:
        timeout_s = config.llm_timeout_s
        if is_local_url(config.llm_base_url):
            timeout_s = max(timeout_s, LOCAL_TIMEOUT_S)  # requests queue at a one-at-a-time local server
        options["timeout_s"] = timeout_s
    return OpenAISummarizer(
        LLM_STRATEGIES.get(strategy, strategy),
        model=config.llm_model,
        base_url=config.llm_base_url,
        api_key=config.openai_api_key,
        prompt=prompt,
        target_chars=config.summary_chars,
        **options,
    )


SUMMARIZERS: dict[str, Callable[..., Summarizer]] = {
    "builtin": _make_builtin,
    "openai": _make_openai,
}


def llm_summarizer(
    config: SacConfig, strategy: str, *, model: str | None = None, base_url: str | None = None,
    api_key: str | None = None, prompt: str | None = None, target_chars: int | None = None,
) -> Summarizer:
    """``make_summarizer("openai", ...)`` with the endpoint a user typed in (empty values keep the config's).

    Timeouts, concurrency and local-server handling come from ``config`` (``SAC_LLM_*``) as for the CLI.
    """
    changes: dict[str, Any] = {"llm_model": model, "llm_base_url": base_url, "openai_api_key": api_key,
                               "summary_chars": target_chars}
    config = dataclasses.replace(config, **{k: v for k, v in changes.items() if v})
    return make_summarizer("openai", strategy, config, prompt)


def make_summarizer(
    kind: str, strategy: str, config: SacConfig, prompt: str | None = None, **options: Unpack[LLMOptions]
) -> Summarizer:
    """A summarizer by registry name (``"builtin"`` or ``"openai"``) for ``strategy``.

    ``options`` go to the LLM summarizer (``context_chars``, ``timeout_s``, ``max_attempts``, ...); the
    builtin ignores them.
    """
    try:
        factory = SUMMARIZERS[kind]
    except KeyError:
        raise ConfigError(f"Unknown summarizer {kind!r}. Choices are: {sorted(SUMMARIZERS)}") from None
    given = cast(LLMOptions, {k: v for k, v in options.items() if v is not None})  # the same keys, fewer of them
    return factory(strategy, config, prompt, **given)
