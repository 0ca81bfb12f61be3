"""A short answer to a question from a few passages of one contract, by an OpenAI-compatible LLM, quoting them.

Optional: only where an LLM is configured (``SacConfig.llm_base_url`` or an OpenAI key). The model sees the question
and the passages of one contract, nothing else, and is told to quote them; ``quotes_found`` checks that every quote
of the answer is in those passages, so an answer that quotes words the contract's passages do not hold is marked.
The request goes through the summarizer's client (``OpenAISummarizer.chat``): one client, one retry policy.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from sac.config import SacConfig
from sac.errors import ConfigError
from sac.summaries.casing import squash
from sac.summaries.llm import OpenAISummarizer
from sac.summaries.registry import make_summarizer
from sac.types import Document

ANSWER_CHARS = 300  # about two sentences
NOT_FOUND = "Not in these passages."
ANSWER_SYSTEM = (
    "You answer a question about one contract from a few passages of it. Use only the passages given. Quote the "
    "words you rely on in double quotes, copied exactly. Reply with the answer only, in one or two sentences."
)
ANSWER_PROMPT = """\
Passages of the contract {name}:

{passages}

Question: {question}

Answer in at most {max_words} words from these passages only, quoting the words you rely on in double quotes. If the \
passages do not answer the question, reply exactly: {not_found}"""
_QUOTE_RE = re.compile(r"[\"“]([^\"“”]{3,}?)[\"”]")


def llm_configured(config: SacConfig) -> bool:
    """Whether an LLM is configured: a base URL (a local server) or an OpenAI key."""
    return bool(config.llm_base_url or config.openai_api_key)


def answer_maker(config: SacConfig) -> OpenAISummarizer:
    """The client that answers, with the configured model, server, key, timeout and retries."""
    if not llm_configured(config):
        raise ConfigError("Answers need an LLM: set SAC_LLM_BASE_URL (an OpenAI-compatible server) or OPENAI_API_KEY")
    maker = make_summarizer("openai", "survey-answer", config, system_prompt=ANSWER_SYSTEM)
    if not isinstance(maker, OpenAISummarizer):  # the registry's "openai" entry makes one
        raise ConfigError(f"Expected an OpenAI-compatible client, got {type(maker).__name__}")
    return maker


def answer_messages(question: str, name: str, passages: Sequence[str]) -> list[dict[str, str]]:
    """The chat messages: the system rule, then the passages (numbered) and the question."""
    numbered = "\n\n".join(f"[{i}] {squash(p)}" for i, p in enumerate(passages, start=1))
    prompt = ANSWER_PROMPT.format(name=name, passages=numbered, question=squash(question),
                                  max_words=ANSWER_CHARS // 6, not_found=NOT_FOUND)
    return [{"role": "system", "content": ANSWER_SYSTEM}, {"role": "user", "content": prompt}]


def answer(maker: OpenAISummarizer, question: str, document: Document, name: str, passages: Sequence[str]) -> str:
    """The model's short answer to ``question`` from ``passages`` of ``document`` (called ``name``), on one line."""
    reply = maker.chat(answer_messages(question, name, passages), document, ANSWER_CHARS)
    reply = re.sub(r"(?s)<think>.*?</think>", "", reply)  # reasoning models served locally
    return squash(reply)


def quotes_found(text: str, passages: Sequence[str]) -> bool | None:
    """True when every quote of ``text`` is in ``passages`` (white space and case aside); None when it quotes nothing."""
    quotes = [squash(q).strip(" .,;:").lower() for q in _QUOTE_RE.findall(text)]
    quotes = [q for q in quotes if q]
    if not quotes:
        return None
    held = squash(" ".join(passages)).lower()
    return all(q in held for q in quotes)
