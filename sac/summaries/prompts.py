"""Summary prompts: the paper's generic and expert-guided prompts, length control, prompt hashes.

One short summary per document and strategy is prepended to every chunk before embedding, so that a
chunk carries the identity of its document (parties, type, subject).
"""

from __future__ import annotations

from typing import Protocol

from sac.errors import ConfigError
from sac.files import utc_now
from sac.types import Document, Summary, text_hash

SLACK_CHARS = 20  # the paper accepted a summary up to 20 characters over the target
MIN_TARGET_CHARS = 20

# --------------------------------------------------------------------------------------------------
# Prompts
# --------------------------------------------------------------------------------------------------

# Prompts put the document first and the instructions after it. The system message and the
# "Document:" block are the same for every strategy and every length, so a server that reuses the
# computed prefix of the previous request (llama.cpp, vLLM, OpenAI's prompt caching) processes a
# document once for a regeneration with a smaller target and once for both strategies.
SYSTEM_PROMPT = (
    "You write very short summaries of legal documents. Reply with the summary only: one line of plain "
    "text, no introduction, no heading, no quotation marks."
)

DOCUMENT_BLOCK = "Document:\n{document}\n\n---\n\n"

GENERIC_PROMPT = DOCUMENT_BLOCK + """\
Summarise the document above. Your summary will be placed in front of every small chunk of the \
document before the chunks are indexed for search, so that each chunk, read alone, still shows which \
document it comes from.

Focus on:
- its most important entities: name the parties;
- its core purpose;
- its key legal topics.
Be concise and specific: prefer the facts that set this document apart from similar documents over \
general statements. Write one sentence of plain text.

Output only the summary: no introduction, no heading, no quotation marks.
Length: at most {max_chars} characters (about {max_words} words)."""

EXPERT_PROMPT = DOCUMENT_BLOCK + """\
You are a legal expert. Write a very short summary of the document above. It will be placed in front \
of every small chunk of the document before the chunks are indexed for search, so that each chunk, \
read alone, shows which document it comes from, even among many documents of the same kind.

Step 1. Decide which type the document is: a non-disclosure agreement, a privacy policy, or another \
kind of contract.
Step 2. Fill in the template for that type with the facts that tell this document apart from other \
documents of the same type. Leave out fields the document does not state.
- Non-disclosure agreement: the parties; what counts as confidential information; the purpose; the \
obligations of the receiving party; exclusions; permitted disclosures; the term; remedies; governing law.
- Privacy policy: the controller; the data collected; the purposes of processing; the legal basis; \
recipients; international transfers; retention; the rights of users; how to complain; automated \
decisions.
- Other contract: the type of contract; the parties; the subject; key dates; governing law.

Write one line of plain text: the document type, a colon, then the facts of its template separated by \
semicolons, the names of the parties first, e.g. "<document type>: <parties>; <fact>; <fact>". Keep the \
facts that distinguish the document most and drop the rest.

Output only the summary: no reasoning, no steps, no heading, no quotation marks.
Length: at most {max_chars} characters (about {max_words} words)."""


# Asked in the same conversation when a reply is too long: the model sees its own reply and the
# document stays in the shared prefix, so a rewrite costs little more than its answer.
SHORTEN_PROMPT = (
    "That summary has {chars} characters; the limit is {max_chars}. Rewrite it in at most {max_chars} "
    "characters (about {max_words} words): keep the document type and the names of the parties, drop the "
    "least distinctive details. Output only the summary."
)


def prompt_hash(prompt: str, system: str | None = None, shorten: str | None = None) -> str:
    """Content hash of a prompt template (with its system message and its shortening request, if any).

    Part of every summary cache key: a change to any of them makes different summaries.
    """
    if not system and not shorten:
        return text_hash(prompt)
    return text_hash(f"{system or ''}\x00{prompt}\x00{shorten or ''}")


def words_for(max_chars: int) -> int:
    """A word count to go with a character limit: small models follow word counts more closely."""
    return max(3, max_chars // 7)


def render_prompt(template: str, max_chars: int, document: str) -> str:
    """Fill ``{max_chars}``, ``{max_words}`` and ``{document}``.

    A template without ``{document}`` gets the document block put in front of it, so the document
    still comes first.
    """
    try:
        if "{document}" in template:
            return template.format(max_chars=max_chars, max_words=words_for(max_chars), document=document)
        instructions = template.format(max_chars=max_chars, max_words=words_for(max_chars))
        return DOCUMENT_BLOCK.format(document=document) + instructions
    except (KeyError, IndexError, ValueError) as err:
        raise ConfigError(
            "Expected a prompt template with only {max_chars}, {max_words} and {document} placeholders, "
            f"got an error ({type(err).__name__}: {err}). Write literal braces as {{{{ and }}}}."
        ) from None


def default_prompt(strategy: str) -> str:
    """The expert prompt for strategies named ``expert...``, the generic one otherwise."""
    return EXPERT_PROMPT if strategy.lower().startswith("expert") else GENERIC_PROMPT


def cut_at_word(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters, at a word boundary where there is one."""
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit + 1]
    space = head.rfind(" ")
    # Cutting inside a very long word beats dropping most of the budget.
    cut = head[:space] if space >= limit // 2 else text[:limit]
    return cut.rstrip(" ,;:-(/&").rstrip()



class _Maker(Protocol):
    strategy: str
    model: str
    prompt_hash: str
    target_chars: int


def made_summary(maker: _Maker, document: Document, text: str, *, cut: bool) -> Summary:
    """The ``Summary`` a summarizer (built-in or LLM) made of ``document``: its strategy, model and prompt, now."""
    return Summary(doc_id=document.doc_id, strategy=maker.strategy, text=text, doc_hash=document.content_hash,
                   model=maker.model, prompt_hash=maker.prompt_hash, target_chars=maker.target_chars, cut=cut,
                   created=utc_now())
