"""Summaries from any OpenAI-compatible server (OpenAI, Azure, Ollama, vLLM, llama.cpp)."""

from __future__ import annotations

import ipaddress
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from sac.errors import ConfigError, MissingCredentialsError, SummarizerError
from sac.retry import retry_delay, retryable
from sac.summaries.prompts import (
    MIN_TARGET_CHARS,
    SHORTEN_PROMPT,
    SLACK_CHARS,
    SYSTEM_PROMPT,
    cut_at_word,
    default_prompt,
    made_summary,
    prompt_hash,
    render_prompt,
    words_for,
)
from sac.types import Document, Summary

if TYPE_CHECKING:
    from openai import APIStatusError

# --------------------------------------------------------------------------------------------------
# OpenAI-compatible summarizer
# --------------------------------------------------------------------------------------------------

API_KEY_ENV = "OPENAI_API_KEY"
LOCAL_API_KEY = "not-needed"  # local OpenAI-compatible servers (Ollama, vLLM, llama.cpp) accept any key
LLM_STRATEGIES = {"generic": "generic-llm", "expert": "expert-llm"}

# Approximate list prices in USD per 1M tokens (input, output); check the provider's page before relying on them.
PRICES_USD_PER_1M: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
}

_QUOTES = {'"': '"', "'": "'", "“": "”", "‘": "’", "«": "»", "`": "`"}
_PREAMBLE_LINE_RE = re.compile(
    r"(?i)^(?:sure|certainly|of course|okay|ok|absolutely|here(?:'s|’s| is| are)|below is|the following is)\b"
)
_HERE_IS_RE = re.compile(
    r"(?i)^(?:(?:sure|certainly|of course|okay|ok|absolutely)[!.,]?\s*)?"
    r"(?:here(?:'s|’s| is| are)|below is)\b[^:\n]{0,100}:\s*"
)
_POLITE_RE = re.compile(r"(?i)^(?:sure|certainly|of course|okay|absolutely)[!.,]\s+")
_LABEL_RE = re.compile(
    r"(?i)^(?:[*_#>\s]*)(?:(?:document|final|short|concise|generic|expert|the)\s+)*summary"
    r"(?:\s*\([^)]*\))?\s*[*_]*\s*[:\-–—]\s*[*_]*\s*"
)


def clean_reply(text: str) -> str:
    """The summary in an LLM reply: no preamble, label, markdown, surrounding quotes or line breaks."""
    text = re.sub(r"(?s)<think>.*?</think>", "", text or "").strip()  # reasoning models served locally
    text = re.sub(r"^```[\w-]*\s*|\s*```$", "", text).strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    # "Sure! Here is a summary:" on a line of its own.
    while (
        len(lines) > 1
        and _PREAMBLE_LINE_RE.match(lines[0])
        and (lines[0].endswith((":", "!", ".")) or len(lines[0]) < 80)
    ):
        lines.pop(0)
    text = " ".join(lines)
    for _ in range(3):
        before = text
        text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
        text = _HERE_IS_RE.sub("", text)
        text = _POLITE_RE.sub("", text)
        text = _LABEL_RE.sub("", text)
        text = re.sub(r"^[#>*\-\s]+(?=\w)", "", text).strip()
        if len(text) >= 2 and text[0] in _QUOTES and text[-1] == _QUOTES[text[0]]:
            text = text[1:-1].strip()
        if text == before:
            break
    return re.sub(r"\s+", " ", text).strip()


def fit_document(text: str, context_chars: int) -> str:
    """``text`` if it fits ``context_chars``; else its head and tail with a visible marker between them.

    The head holds the title and parties, the tail often the governing law and signatures.
    """
    if len(text) <= context_chars:
        return text
    head = context_chars * 3 // 4
    tail = context_chars - head
    omitted = len(text) - head - tail
    return f"{text[:head]}\n[... {omitted} characters omitted ...]\n{text[len(text) - tail:]}"


def estimate_cost_usd(tokens: Mapping[str, int], model: str) -> float | None:
    """Approximate cost of ``tokens`` (from ``estimate_tokens``) at list prices; None for an unknown model."""
    name = model.lower().rsplit("/", 1)[-1]
    # "gpt-4o-mini-2024-07-18" is priced as "gpt-4o-mini": the longest known prefix wins.
    known = [m for m in PRICES_USD_PER_1M if name == m or name.startswith(m + "-")]
    if not known:
        return None
    price_in, price_out = PRICES_USD_PER_1M[max(known, key=len)]
    return (tokens.get("input_tokens", 0) * price_in + tokens.get("output_tokens", 0) * price_out) / 1_000_000


class _FatalSummarizerError(SummarizerError):
    """A failure every other document would hit too (key rejected, server unreachable, unknown model)."""


def _is_reasoning_model(model: str) -> bool:
    name = model.lower().rsplit("/", 1)[-1]
    return name.startswith(("o1", "o3", "o4", "gpt-5"))  # these accept only the default temperature


LOCAL_TIMEOUT_S = 900.0  # a local server answers one request at a time: a request may queue behind others
CHARS_PER_TOKEN_FLOOR = 2.5  # few replies pack fewer characters into a token (names, numbers, punctuation)


def is_local_url(base_url: str | None) -> bool:
    """True for a server on this machine or a private network (Ollama, vLLM, llama.cpp next to the app)."""
    if not base_url:
        return False
    host = (urlsplit(base_url).hostname or "").lower()
    if host in ("localhost", "host.docker.internal") or host.endswith((".local", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_unspecified


def max_output_tokens(limit_chars: int) -> int:
    """Tokens enough for any reply of ``limit_chars`` characters: a longer reply is refused anyway."""
    return math.ceil(limit_chars / CHARS_PER_TOKEN_FLOOR) + 8


class OpenAISummarizer:
    """Summaries from any OpenAI-compatible chat-completions server (OpenAI, Azure, Ollama, vLLM, llama.cpp).

    Length control follows the paper: a reply up to ``target_chars + 20`` is accepted; a longer one is
    asked for again with a target 20 characters smaller; after ``max_attempts`` the shortest reply is
    cut at a word boundary and marked ``cut``. Asking again is a follow-up in the same conversation
    (``shorten_prompt``: "that summary has N characters; rewrite it in at most M"): small models tend
    to repeat a fresh answer word for word whatever the number in the prompt, but shorten their own
    text when shown it. A rewrite that repeats an earlier reply ends the attempts. A reply is capped
    at ``max_output_tokens`` of the current limit: one the cap cut short counts as too long. Rate limits, 5xx answers, timeouts and
    dropped connections are retried ``max_retries`` times with exponential backoff from ``backoff_s``
    (a ``Retry-After`` header wins).

    The request is a system message plus one user message that holds the document first and the
    instructions after it, so regenerations and the other strategy share the document's prefix.
    ``timeout_s`` defaults to 120 s, or ``LOCAL_TIMEOUT_S`` for a server on this machine or a private
    network, which serves one request at a time. ``stats`` records per document hash the attempts,
    seconds and token usage of the summaries this instance made.
    """

    def __init__(
        self,
        strategy: str,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        prompt: str | None = None,
        system_prompt: str | None = SYSTEM_PROMPT,
        shorten_prompt: str = SHORTEN_PROMPT,
        target_chars: int = 150,
        max_attempts: int = 3,
        context_chars: int = 24000,
        timeout_s: float | None = None,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        temperature: float | None = 0.0,
    ) -> None:
        """Long because each setting is checked here with its own message, so a bad value fails before any request."""
        if not strategy.strip():
            raise ConfigError("Expected a strategy name such as 'generic-llm', got an empty string")
        if not model.strip():
            raise ConfigError("Expected a model name such as 'gpt-4o-mini', got an empty string")
        if target_chars < MIN_TARGET_CHARS:
            raise ConfigError(f"Expected target_chars >= {MIN_TARGET_CHARS}, got {target_chars}")
        if max_attempts < 1 or max_retries < 0:
            raise ConfigError(f"Expected max_attempts >= 1 and max_retries >= 0, got {max_attempts} and {max_retries}")
        if context_chars < 1000:
            raise ConfigError(f"Expected context_chars >= 1000, got {context_chars}")
        if timeout_s is None:
            timeout_s = LOCAL_TIMEOUT_S if is_local_url(base_url) else 120.0
        if timeout_s <= 0 or backoff_s < 0:
            raise ConfigError(f"Expected timeout_s > 0 and backoff_s >= 0, got {timeout_s} and {backoff_s}")
        self.strategy = strategy
        self.name = f"openai-{strategy}"
        self.model = model
        self.target_chars = target_chars
        self.prompt = prompt if prompt is not None else default_prompt(strategy)
        self.system_prompt = system_prompt or None
        self.shorten_prompt = shorten_prompt
        render_prompt(self.prompt, target_chars, "")  # a broken template fails here, not per document
        try:
            shorten_prompt.format(chars=1, max_chars=1, max_words=1)
        except (KeyError, IndexError, ValueError) as err:
            raise ConfigError(
                "Expected a shortening request with only {chars}, {max_chars} and {max_words} placeholders, "
                f"got an error ({type(err).__name__}: {err})"
            ) from None
        self.prompt_hash = prompt_hash(self.prompt, self.system_prompt, self.shorten_prompt)
        self.max_attempts = max_attempts
        self.context_chars = context_chars
        self.timeout_s = float(timeout_s)
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.temperature = temperature
        self.stats: dict[str, dict[str, Any]] = {}
        self._stats_lock = threading.Lock()

        key = api_key or os.environ.get(API_KEY_ENV) or None
        if key is None:
            if base_url is None:
                raise MissingCredentialsError(
                    f"Model {model!r} on api.openai.com needs an API key: set the {API_KEY_ENV} environment "
                    "variable (or enter a key in the settings), or give the base URL of an OpenAI-compatible "
                    "server such as Ollama, vLLM or llama.cpp."
                )
            key = LOCAL_API_KEY
        self._secret = key
        try:
            import openai  # heavy: loaded when an LLM summarizer is made, so `import sac` stays quick
        except ImportError:
            raise ConfigError("The OpenAI summarizer needs the openai package: pip install openai") from None
        self._openai = openai
        # Retries are ours (see _complete): the client's own would hide the backoff from tests and settings.
        self._client = openai.OpenAI(api_key=key, base_url=base_url, timeout=self.timeout_s, max_retries=0)
        self.base_url = str(self._client.base_url).rstrip("/")

    def __repr__(self) -> str:
        return (
            f"OpenAISummarizer(strategy={self.strategy!r}, model={self.model!r}, base_url={self.base_url!r}, "
            f"target_chars={self.target_chars})"
        )

    def summarize(self, document: Document) -> Summary:
        """The LLM's summary of ``document``.

        A reply over ``target_chars`` (plus slack) is asked again shorter, up to ``max_attempts`` times; failing
        that, the shortest reply is cut at a word."""
        started = time.perf_counter()
        limit = self.target_chars + SLACK_CHARS
        body = fit_document(document.text, self.context_chars)
        target = self.target_chars
        shortest: str | None = None
        usage = {"prompt_tokens": 0, "completion_tokens": 0}
        replies: list[int] = []
        seen: set[str] = set()
        summary: Summary | None = None
        messages = self.messages(body, target)
        for _ in range(self.max_attempts):
            reply, finished, used = self._complete(messages, document, target)
            for name in usage:
                usage[name] += used.get(name, 0)
            text = clean_reply(reply)
            replies.append(len(text))
            # A reply the token cap cut short is unfinished: never accept it as it stands.
            if text and len(text) <= limit and finished != "length":
                summary = made_summary(self, document, text, cut=False)
                break
            if text and (shortest is None or len(text) < len(shortest)):
                shortest = text
            if text in seen:
                break  # the model repeats itself: asking once more would bring the same reply
            seen.add(text)
            target = max(MIN_TARGET_CHARS, target - SLACK_CHARS)
            if text:
                messages = [*messages, {"role": "assistant", "content": reply}, self._shorten(text, target)]
            else:
                messages = self.messages(body, target)
        if summary is None:
            if shortest is None:
                raise SummarizerError(
                    f"{self.base_url} returned an empty summary for {document.doc_id!r} "
                    f"({self.max_attempts} attempts with model {self.model!r})"
                )
            summary = made_summary(self, document, cut_at_word(shortest, limit), cut=True)
        with self._stats_lock:
            self.stats[document.content_hash] = {
                "attempts": len(replies), "seconds": round(time.perf_counter() - started, 2),
                "reply_chars": replies, **usage,
            }
        return summary

    def messages(self, body: str, target: int) -> list[dict[str, str]]:
        """The chat messages asking for a summary of ``body`` in at most ``target`` characters."""
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        return [*messages, {"role": "user", "content": render_prompt(self.prompt, target, body)}]

    def chat(self, messages: list[dict[str, str]], document: Document, max_chars: int) -> str:
        """One reply of at most about ``max_chars`` characters to ``messages``, about ``document``.

        Through this summarizer's client, retries and error messages: other short answers about one document than
        its summary (the survey's answer per contract, ``sac.summaries.answers``) need no second client."""
        reply, _, _ = self._complete(messages, document, max(MIN_TARGET_CHARS, max_chars - SLACK_CHARS))
        return reply

    def _shorten(self, text: str, target: int) -> dict[str, str]:
        content = self.shorten_prompt.format(chars=len(text), max_chars=target, max_words=words_for(target))
        return {"role": "user", "content": content}

    def estimate_tokens(self, documents: Iterable[Document]) -> dict[str, int]:
        """Rough token counts (4 characters a token) for summarizing ``documents`` once each.

        ``output_tokens`` assumes one reply of ``target_chars + 20`` characters per document;
        ``max_output_tokens`` is the bound if every document took all attempts at the token cap.
        Regenerations repeat the prompt (a server with prompt caching bills most of it cached) and
        the hidden reasoning tokens of reasoning models come on top.
        """
        count = 0
        prompt_chars = 0
        for document in documents:
            count += 1
            body = fit_document(document.text, self.context_chars)
            prompt_chars += sum(len(m["content"]) for m in self.messages(body, self.target_chars))
        limit = self.target_chars + SLACK_CHARS
        return {
            "documents": count,
            "requests": count,
            "input_tokens": math.ceil(prompt_chars / 4),
            "output_tokens": math.ceil(count * limit / 4),
            "max_output_tokens": count * self.max_attempts * max_output_tokens(limit),
        }

    def _complete(
        self, messages: list[dict[str, str]], document: Document, target: int
    ) -> tuple[str, str | None, dict[str, int]]:
        """The reply's text, finish reason and token usage."""
        openai = self._openai
        kwargs: dict[str, Any] = {"model": self.model, "messages": messages}
        if not _is_reasoning_model(self.model):
            # Reasoning models spend hidden tokens from the same budget: a cap would starve them.
            kwargs["max_tokens"] = max_output_tokens(target + SLACK_CHARS)
            if self.temperature is not None:
                kwargs["temperature"] = self.temperature
        for attempt in range(self.max_retries + 1):
            try:
                response = self._client.chat.completions.create(**kwargs)
            except (openai.AuthenticationError, openai.PermissionDeniedError) as err:
                raise _FatalSummarizerError(
                    f"The API key was rejected by {self.base_url} (HTTP {err.status_code}). Check {API_KEY_ENV} "
                    "or the key entered in the settings."
                ) from None
            except openai.APIStatusError as err:
                if not retryable(err.status_code, getattr(err, "code", None)) or attempt == self.max_retries:
                    raise self._status_error(err, document, attempt + 1) from None
                time.sleep(retry_delay(attempt, err.response.headers, self.backoff_s))
            except openai.APITimeoutError:
                if attempt == self.max_retries:
                    raise SummarizerError(
                        f"{self.base_url} did not answer within {self.timeout_s:g} s for {document.doc_id!r} "
                        f"({attempt + 1} attempts). A busy local server may need a longer timeout."
                    ) from None
                time.sleep(retry_delay(attempt, None, self.backoff_s))
            except openai.APIConnectionError as err:
                if attempt == self.max_retries:
                    cause = self._scrub(str(err.__cause__ or err))
                    raise _FatalSummarizerError(
                        f"Cannot reach {self.base_url} ({cause}) while summarizing {document.doc_id!r}. "
                        "Check the base URL and that the server is running."
                    ) from None
                time.sleep(retry_delay(attempt, None, self.backoff_s))
            except openai.OpenAIError as err:
                raise SummarizerError(
                    f"Summarizing {document.doc_id!r} with {self.model!r} at {self.base_url} failed: "
                    f"{self._scrub(str(err))}"
                ) from None
            else:
                choices = getattr(response, "choices", None) or []
                content = choices[0].message.content if choices else None
                finished = getattr(choices[0], "finish_reason", None) if choices else None
                used = getattr(response, "usage", None)
                usage = {
                    name: int(getattr(used, name, 0) or 0) for name in ("prompt_tokens", "completion_tokens")
                }
                return content or "", finished, usage
        raise AssertionError("unreachable: the loop returns or raises")

    def _status_error(self, err: APIStatusError, document: Document, attempts: int) -> SummarizerError:
        message = self._scrub(str(getattr(err, "message", "") or err))
        text = f"{self.base_url} answered HTTP {err.status_code} for {document.doc_id!r}: {message}"
        if err.status_code == 404:
            return _FatalSummarizerError(f"{text}. Check the model name {self.model!r} and the base URL.")
        if err.status_code == 429:
            return SummarizerError(f"{text} (rate limited, {attempts} attempts)")
        return SummarizerError(text if attempts == 1 else f"{text} ({attempts} attempts)")

    def _scrub(self, text: str) -> str:
        secret = self._secret
        return text.replace(secret, "***") if secret and len(secret) >= 4 else text
