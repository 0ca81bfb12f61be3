"""Summaries: the builtin on the real demo corpus, the OpenAI path against a real local HTTP server
(tests/openai_stub.py) through the official ``openai`` client, the store, corpus runs and summary sets."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import pytest

from sac.config import SacConfig
from sac.errors import ConfigError, CorpusError, MissingCredentialsError, SummarizerError
from sac.protocols import Summarizer
from sac.summaries.builtin import BuiltinSummarizer
from sac.summaries.facts import extract_facts
from sac.summaries.llm import (
    LOCAL_TIMEOUT_S,
    OpenAISummarizer,
    clean_reply,
    estimate_cost_usd,
    fit_document,
    is_local_url,
    max_output_tokens,
)
from sac.summaries.prompts import (
    EXPERT_PROMPT,
    GENERIC_PROMPT,
    SHORTEN_PROMPT,
    SYSTEM_PROMPT,
    cut_at_word,
    prompt_hash,
    render_prompt,
)
from sac.summaries.registry import SUMMARIZERS, make_summarizer
from sac.summaries.runs import summarize_corpus, summarize_strategies
from sac.summaries.sets import load_summary_set, save_summary_set
from sac.summaries.store import SummaryStore
from sac.types import Document, text_hash
from tests.openai_stub import Answer, Drop, OpenAIStub, Status, free_port
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "data" / "demo" / "corpus"
CUAD_SOURCES = ROOT.parent / "shared" / "data" / "sources" / "cuad_v1" / "full_contract_txt"

# The disclosing party of each demo NDA, read from its opening lines.
NDA_PARTIES = {
    "contractnli/AGProjects-NDA.txt": "AG Projects",
    "contractnli/Mutual-Non-Disclosure-Agreement-Inventor-Product-Development-Experts-Inc..txt":
        "Product Development Experts",
    "contractnli/NDA_ResConnect.txt": "Mandarin Trading",
    "contractnli/VELCO%20NDA%20rev0%20Dec%2014%202015.txt": "Vermont Electric Power Company",
    "contractnli/ceii-and-nda.txt": "Dominion Energy South Carolina",
}
# Both parties of some CUAD contracts, read from their preambles.
CUAD_PARTIES = {
    "ALCOSTORESINC_12_14_2005-EX-10.26-AGENCY AGREEMENT.txt": ("General Electric Capital", "Duckwall-Alco Stores"),
    "KINGPHARMACEUTICALSINC_08_09_2006-EX-10.1-PROMOTION AGREEMENT.txt": ("Depomed", "King Pharmaceuticals"),
    "Loop Industries, Inc. - Marketing Agreement.txt": ("Loop Industries", "Indorama Loop Technologies"),
    "THERAVANCEBIOPHARMA,INC_05_08_2020-EX-10.2-SERVICE AGREEMENT.txt": ("Theravance Biopharma UK", "Brett Haumann"),
    "WESTERN COPPER - NON-COMPETITION AGREEMENT.txt": ("Glamis Gold", "Western Copper Corporation"),
    "RgcResourcesInc_20151216_8-K_EX-10.3_9372751_EX-10.3_Franchise Agreement.txt":
        ("Town of Vinton", "Roanoke Gas Company"),
    "IGENEBIOTECHNOLOGYINC_05_13_2003-EX-1-JOINT VENTURE AGREEMENT.txt": ("Tate & Lyle", "Igene Biotechnology"),
    "UnionDentalHoldingsInc_20050204_8-KA_EX-10_3345577_EX-10_Affiliate Agreement.txt":
        ("George D. Green", "Union Dental"),
}


def _load(dataset: str) -> list[Document]:
    folder = CORPUS / dataset
    return [
        Document(f"{dataset}/{p.name}", p.read_text(encoding="utf-8"), source=str(p))
        for p in sorted(folder.glob("*.txt"))
    ]


@pytest.fixture(scope="module")
def ndas() -> list[Document]:
    docs = _load("contractnli")
    assert len(docs) == 5
    return docs


@pytest.fixture(scope="module")
def cuad() -> list[Document]:
    docs = _load("cuad")
    assert len(docs) == 29
    return docs


def _llm(stub: OpenAIStub, strategy: str = "generic-llm", **kwargs) -> OpenAISummarizer:
    kwargs.setdefault("backoff_s", 0.01)
    return OpenAISummarizer(strategy, model="gpt-4o-mini", base_url=stub.base_url, **kwargs)


# -- prompts -----------------------------------------------------------------------------------


def test_prompts_are_templates_with_length_and_document():
    for template in (GENERIC_PROMPT, EXPERT_PROMPT):
        text = render_prompt(template, 130, "THE DOCUMENT TEXT")
        assert "at most 130 characters (about 18 words)" in text
        # The document comes first and the length last: a regeneration shares all but the last line.
        assert text.startswith("Document:\nTHE DOCUMENT TEXT\n\n---\n\n")
        assert text.rstrip().endswith("Length: at most 130 characters (about 18 words).")
        assert "Output only the summary" in text
    assert "entities" in GENERIC_PROMPT and "core purpose" in GENERIC_PROMPT
    for field in ("non-disclosure agreement", "privacy policy", "governing law", "automated", "controller"):
        assert field in EXPERT_PROMPT
    assert prompt_hash(GENERIC_PROMPT) == text_hash(GENERIC_PROMPT) != prompt_hash(EXPERT_PROMPT)
    assert prompt_hash(GENERIC_PROMPT, SYSTEM_PROMPT, SHORTEN_PROMPT) not in (prompt_hash(GENERIC_PROMPT), prompt_hash(EXPERT_PROMPT))


def test_prompt_without_document_placeholder_gets_the_document_appended():
    text = render_prompt("Summarise in {max_chars} chars ({max_words} words).", 90, "DOC")
    assert text == "Document:\nDOC\n\n---\n\nSummarise in 90 chars (12 words)."


def test_broken_prompt_template_fails_at_construction():
    with OpenAIStub() as stub, pytest.raises(ConfigError, match="placeholders"):
        _llm(stub, prompt="Summarise {the document} in {max_chars}")


# -- builtin summarizer --------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["generic", "expert"])
def test_builtin_nda_summaries_are_distinct_and_name_their_own_party(ndas, strategy):
    summarizer = BuiltinSummarizer(strategy)
    summaries = {d.doc_id: summarizer.summarize(d) for d in ndas}
    texts = [s.text for s in summaries.values()]
    assert len(set(texts)) == 5
    for doc_id, summary in summaries.items():
        assert len(summary.text) <= 170, summary.text
        assert NDA_PARTIES[doc_id] in summary.text, summary.text
        others = [p for i, p in NDA_PARTIES.items() if i != doc_id]
        assert not any(p in summary.text for p in others), summary.text
        assert "Non-Disclosure" in summary.text or "Non Disclosure" in summary.text


def test_builtin_summary_fields(ndas):
    doc = ndas[0]
    summary = BuiltinSummarizer("expert").summarize(doc)
    assert (summary.doc_id, summary.strategy, summary.model) == (doc.doc_id, "expert", "builtin")
    assert summary.doc_hash == doc.content_hash
    assert summary.target_chars == 150 and summary.cut is False and summary.version == 1
    assert datetime.fromisoformat(summary.created).utcoffset().total_seconds() == 0
    # The form leaves the receiving party blank: a role ("a receiving party") is not written as a party name.
    assert summary.text == (
        "Non-Disclosure Agreement: AG Projects; for discussing AG Projects’ services and products"
    )


def test_builtin_is_deterministic(ndas, cuad):
    first = [BuiltinSummarizer(s).summarize(d).text for s in ("generic", "expert") for d in ndas + cuad]
    second = [BuiltinSummarizer(s).summarize(d).text for s in ("generic", "expert") for d in ndas + cuad]
    assert first == second


@pytest.mark.parametrize("strategy", ["generic", "expert"])
def test_builtin_cuad_summaries_are_distinct_and_name_a_type(cuad, strategy):
    summaries = [BuiltinSummarizer(strategy).summarize(d) for d in cuad]
    texts = [s.text for s in summaries]
    assert len(set(texts)) == len(cuad)
    for text in texts:
        assert len(text) <= 170, text
        assert any(w in text for w in ("Agreement", "Amendment", "Contract")), text
        assert " between " in text or ": " in text


@pytest.mark.parametrize("name", sorted(CUAD_PARTIES))
def test_builtin_cuad_summaries_name_both_parties(cuad, name):
    doc = next(d for d in cuad if d.doc_id == f"cuad/{name}")
    for strategy in ("generic", "expert"):
        text = BuiltinSummarizer(strategy).summarize(doc).text
        for party in CUAD_PARTIES[name]:
            assert party in text, (strategy, text)


def test_builtin_expert_reads_type_parties_and_date(cuad):
    doc = next(d for d in cuad if "KINGPHARMA" in d.doc_id)
    text = BuiltinSummarizer("expert").summarize(doc).text
    assert text.startswith("Promotion Agreement: Depomed, Inc. and King Pharmaceuticals, Inc.; 27 Jun 2006; ")
    doc = next(d for d in cuad if "FLOTEK" in d.doc_id)
    text = BuiltinSummarizer("expert").summarize(doc).text
    # The short name the preamble defines ("FCC") is not inside the legal name, so it is written beside it.
    assert text == (
        "Supply Agreement: Florida Chemical Company, LLC (FCC) and Flotek Chemistry, LLC; 28 Feb 2019"
    )


def test_builtin_cuts_at_a_word_boundary_when_the_names_do_not_fit(cuad):
    doc = next(d for d in cuad if "PREMIERBIOMEDICAL" in d.doc_id)
    summarizer = BuiltinSummarizer("generic", target_chars=30)
    full = summarizer.summary_text(doc)
    summary = summarizer.summarize(doc)
    assert summary.cut is True and len(full) > 50
    assert len(summary.text) <= 50
    assert full.startswith(summary.text) and full[len(summary.text)] in " ,;"


def test_builtin_prompt_hash_tracks_heuristic_version(monkeypatch):
    import sac.summaries.builtin as summarizing

    before = BuiltinSummarizer("generic").prompt_hash
    assert before == BuiltinSummarizer("generic").prompt_hash != BuiltinSummarizer("expert").prompt_hash
    monkeypatch.setattr(summarizing, "BUILTIN_VERSION", summarizing.BUILTIN_VERSION + 1)
    assert BuiltinSummarizer("generic").prompt_hash != before


def test_builtin_rejects_unknown_strategy_and_tiny_target():
    with pytest.raises(ConfigError, match="'generic' or 'expert'"):
        BuiltinSummarizer("fancy")
    with pytest.raises(ConfigError, match="target_chars"):
        BuiltinSummarizer("generic", target_chars=5)


def test_builtin_handles_a_document_without_recognisable_structure():
    doc = Document("misc/notes.txt", "meeting notes\nwe talked about lunch\n" * 3)
    summary = BuiltinSummarizer("expert").summarize(doc)
    assert summary.text and len(summary.text) <= 170
    assert BuiltinSummarizer("generic").summarize(Document("misc/empty.txt", "")).text


@pytest.mark.large
@pytest.mark.slow
def test_builtin_summarizes_510_cuad_contracts_in_seconds():
    if not CUAD_SOURCES.is_dir():
        pytest.fail(f"CUAD sources not found at {CUAD_SOURCES}")
    paths = sorted(CUAD_SOURCES.glob("*.txt"))
    docs = [Document(p.name, p.read_text(encoding="utf-8", errors="replace")) for p in paths]
    assert len(docs) == 510
    texts = [BuiltinSummarizer("generic").summarize(d).text for d in docs]
    assert len(set(texts)) >= 500  # a few contracts are filed twice
    parties = [len(extract_facts(d).parties) for d in docs]
    assert sum(n >= 1 for n in parties) >= 500 and sum(n >= 2 for n in parties) >= 450
    assert sum(" between " in t for t in texts) >= 450


def test_cut_at_word():
    assert cut_at_word("alpha beta gamma", 12) == "alpha beta"
    assert cut_at_word("alpha beta", 20) == "alpha beta"
    assert cut_at_word("supercalifragilistic", 5) == "super"


def test_summarizers_match_the_protocol():
    with OpenAIStub() as stub:
        assert isinstance(_llm(stub), Summarizer)
    assert isinstance(BuiltinSummarizer("generic"), Summarizer)


# -- OpenAI-compatible summarizer ----------------------------------------------------------------


def test_openai_summary_from_a_plain_answer(ndas):
    doc = ndas[2]
    with OpenAIStub(Answer("NDA between Mandarin Trading (ResRequest) and a business partner.")) as stub:
        summary = _llm(stub).summarize(doc)
        request = stub.requests[0]
        headers = stub.headers[0]
    assert summary.text == "NDA between Mandarin Trading (ResRequest) and a business partner."
    assert (summary.doc_id, summary.strategy, summary.model) == (doc.doc_id, "generic-llm", "gpt-4o-mini")
    assert summary.doc_hash == doc.content_hash and summary.prompt_hash == prompt_hash(GENERIC_PROMPT, SYSTEM_PROMPT, SHORTEN_PROMPT)
    assert summary.cut is False and summary.target_chars == 150
    assert datetime.fromisoformat(summary.created).utcoffset().total_seconds() == 0
    assert request["model"] == "gpt-4o-mini" and request["temperature"] == 0
    assert request["max_tokens"] == max_output_tokens(170) == 76  # enough for 170 characters, no more
    system, user = request["messages"]
    assert system == {"role": "system", "content": SYSTEM_PROMPT} and user["role"] == "user"
    prompt = user["content"]
    assert "at most 150 characters" in prompt and prompt.startswith(f"Document:\n{doc.text}\n")
    assert headers["authorization"] == "Bearer not-needed"  # a local server gets a dummy key


def test_openai_expert_strategy_uses_the_expert_prompt(ndas):
    with OpenAIStub(Answer("NDA: AG Projects and a receiving party; law: Netherlands")) as stub:
        summarizer = _llm(stub, "expert-llm")
        summarizer.summarize(ndas[0])
        assert "privacy policy" in stub.prompts()[0]
    assert summarizer.prompt_hash == prompt_hash(EXPERT_PROMPT, SYSTEM_PROMPT, SHORTEN_PROMPT)


def test_openai_too_long_then_right_asks_again_with_a_smaller_target(ndas):
    right = Answer("NDA between AG Projects and a receiving party.")
    with OpenAIStub(Answer("x" * 60 + " " + "y" * 120), right) as stub:
        summary = _llm(stub).summarize(ndas[0])
        prompts = stub.prompts()
    assert len(prompts) == 2
    assert "at most 150 characters" in prompts[0] and "at most 130 characters" in prompts[1]
    assert summary.text == "NDA between AG Projects and a receiving party." and summary.cut is False


def test_openai_reply_within_twenty_over_target_is_accepted(ndas):
    reply = " ".join(["word"] * 34)  # 169 characters
    with OpenAIStub(Answer(reply)) as stub:
        summary = _llm(stub).summarize(ndas[0])
        assert stub.calls == 1
    assert summary.text == reply and not summary.cut


def test_openai_always_too_long_is_cut_at_a_word_boundary(ndas):
    replies = iter([" ".join(f"party{i}" for i in range(60 - n)) for n in range(3)])
    with OpenAIStub(handler=lambda body: next(replies)) as stub:
        summary = _llm(stub, max_attempts=3).summarize(ndas[0])
        prompts = stub.prompts()
    assert len(prompts) == 3 and "at most 110 characters" in prompts[2]
    shortest = " ".join(f"party{i}" for i in range(58))
    assert summary.cut is True and len(summary.text) <= 170
    assert shortest.startswith(summary.text) and shortest[len(summary.text)] == " "


def test_a_model_that_repeats_itself_is_not_asked_a_third_time(ndas):
    long_reply = " ".join(f"party{i}" for i in range(60))
    with OpenAIStub(default=long_reply) as stub:
        summary = _llm(stub, max_attempts=3).summarize(ndas[0])
        assert stub.calls == 2  # the rewrite came back unchanged: a third request would too
    assert summary.cut and long_reply.startswith(summary.text)


def test_too_long_reply_is_shortened_in_the_same_conversation(ndas):
    long_reply = "Mutual non-disclosure agreement between AG Projects and a receiving party " * 4
    short = "NDA between AG Projects and a receiving party."
    with OpenAIStub(Answer(long_reply), Answer(short)) as stub:
        summary = _llm(stub).summarize(ndas[0])
        first, second = stub.requests
    assert summary.text == short and not summary.cut
    # The follow-up repeats the first request word for word, so a server reuses its computed prefix.
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant", "content": long_reply}
    assert second["messages"][3]["content"] == SHORTEN_PROMPT.format(
        chars=len(long_reply.strip()), max_chars=130, max_words=18
    )
    assert second["max_tokens"] == max_output_tokens(150)


def test_reply_cut_short_by_the_token_cap_is_never_accepted_as_it_stands(ndas):
    # 40 characters, but the server stopped at max_tokens: the sentence is unfinished.
    short_but_cut = Answer("Non-disclosure agreement between AG Proj", finish_reason="length")
    with OpenAIStub(short_but_cut, Answer("NDA between AG Projects and a receiving party.")) as stub:
        summary = _llm(stub).summarize(ndas[0])
        assert [r["max_tokens"] for r in stub.requests] == [max_output_tokens(170), max_output_tokens(150)]
    assert summary.text == "NDA between AG Projects and a receiving party." and not summary.cut
    with OpenAIStub(default=short_but_cut) as stub:
        summary = _llm(stub, max_attempts=2).summarize(ndas[0])
        assert stub.calls == 2
    assert summary.text == "Non-disclosure agreement between AG Proj" and summary.cut


def test_both_strategies_share_the_document_prefix(ndas):
    doc = ndas[1]
    with OpenAIStub(Answer("NDA between PDE and an inventor."), Answer("NDA: PDE and an inventor.")) as stub:
        _llm(stub).summarize(doc)
        _llm(stub, "expert-llm").summarize(doc)
        generic, expert = stub.requests
    block = f"Document:\n{doc.text}\n\n---\n\n"
    assert generic["messages"][0] == expert["messages"][0]  # one system message for every strategy
    assert all(r["messages"][1]["content"].startswith(block) for r in (generic, expert))


def test_summarizer_records_attempts_seconds_and_tokens(ndas):
    with OpenAIStub(Answer("y " * 100), Answer("NDA between AG Projects and a receiving party.")) as stub:
        summarizer = _llm(stub)
        summarizer.summarize(ndas[0])
    stats = summarizer.stats[ndas[0].content_hash]
    assert stats["attempts"] == 2 and stats["reply_chars"] == [199, 46]
    assert stats["seconds"] >= 0 and stats["prompt_tokens"] > 2 * len(ndas[0].text) // 4 // 2
    assert stats["completion_tokens"] > 0


def test_local_servers_get_a_generous_timeout():
    for url in ("http://127.0.0.1:8089/v1", "http://localhost:11434/v1", "http://192.168.1.20:8000/v1",
                "http://[::1]:8000/v1", "http://gpu-box.local:8000/v1"):
        assert is_local_url(url), url
        assert OpenAISummarizer("generic-llm", model="m", base_url=url).timeout_s == LOCAL_TIMEOUT_S
    for url in (None, "https://api.openai.com/v1", "https://example.openai.azure.com/openai/v1", "http://8.8.8.8/v1"):
        assert not is_local_url(url), url
    remote = OpenAISummarizer("generic-llm", model="m", base_url="https://api.example.com/v1", api_key="k")
    assert remote.timeout_s == 120
    assert OpenAISummarizer("generic-llm", model="m", base_url="http://127.0.0.1:1/v1", timeout_s=5).timeout_s == 5


def test_openai_rejected_key_is_a_clear_error_without_the_key(ndas):
    secret = "sk-test-DO-NOT-PRINT-0123456789"
    with OpenAIStub(api_key="the-right-key") as stub:
        summarizer = _llm(stub, api_key=secret)
        with pytest.raises(SummarizerError) as caught:
            summarizer.summarize(ndas[0])
        assert stub.calls == 1  # a rejected key is not retried
    message = str(caught.value)
    assert "rejected" in message and stub.base_url in message and "OPENAI_API_KEY" in message
    assert secret not in message and secret[5:20] not in message
    assert secret not in repr(summarizer) and secret not in str(vars(summarizer).get("prompt"))


def test_openai_without_key_for_api_openai_com_names_the_variable():
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        OpenAISummarizer("generic-llm", model="gpt-4o-mini")


def test_openai_key_from_environment(monkeypatch, ndas):
    monkeypatch.setenv("OPENAI_API_KEY", "env-key-123")
    with OpenAIStub(api_key="env-key-123") as stub:
        assert _llm(stub).summarize(ndas[0]).text
        assert stub.headers[0]["authorization"] == "Bearer env-key-123"


def test_openai_rate_limit_then_answer_is_retried_without_waiting(ndas, monkeypatch):
    with OpenAIStub(Status(429), Answer("NDA between AG Projects and a receiving party.")) as stub:
        slept: list[float] = []
        monkeypatch.setattr("sac.summaries.llm.time.sleep", slept.append)
        summary = _llm(stub, backoff_s=5.0).summarize(ndas[0])  # Retry-After: 0 wins over the backoff
        assert stub.calls == 2
    assert summary.text.startswith("NDA between AG Projects") and max(slept, default=0.0) < 1.0


def test_openai_server_errors_and_dropped_connections_are_retried(ndas):
    with OpenAIStub(Status(500), Drop(), Status(503), Answer("NDA between AG Projects and a receiving party.")) as stub:
        summary = _llm(stub, max_retries=4).summarize(ndas[0])
        assert stub.calls == 4
    assert summary.text == "NDA between AG Projects and a receiving party."


def test_openai_persistent_server_error_names_the_document(ndas):
    with OpenAIStub(default="unused") as stub:
        stub.push(*[Status(500, "model crashed")] * 3)
        with pytest.raises(SummarizerError, match="HTTP 500") as caught:
            _llm(stub, max_retries=2).summarize(ndas[1])
        assert stub.calls == 3
    assert ndas[1].doc_id in str(caught.value) and "model crashed" in str(caught.value)


def test_openai_unreachable_server_fails_fast(monkeypatch):
    url = f"http://127.0.0.1:{free_port()}/v1"
    summarizer = OpenAISummarizer("generic-llm", model="m", base_url=url, max_retries=2, backoff_s=0.05)
    slept: list[float] = []
    monkeypatch.setattr("sac.summaries.llm.time.sleep", slept.append)
    with pytest.raises(SummarizerError, match="(?i)cannot reach") as caught:
        summarizer.summarize(Document("x/a.txt", "Supply Agreement between A Inc. and B LLC."))
    assert url in str(caught.value) and len(slept) == 2 and sum(slept) < 1.0  # two short backoffs, then it gives up


def test_openai_timeout_is_reported(ndas):
    late = Answer("late", delay_s=6.0)  # far beyond the 0.5 s timeout, however busy the machine
    with OpenAIStub(late) as stub, pytest.raises(SummarizerError, match="did not answer within 0.5 s"):
        _llm(stub, timeout_s=0.5, max_retries=0).summarize(ndas[0])


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('Sure! Here is a summary of the document:\n\n"**NDA** between X and Y."', "NDA between X and Y."),
        ("Summary: NDA between X\nand Y.", "NDA between X and Y."),
        ("**Summary:** NDA between X and Y.", "NDA between X and Y."),
        ("Here is a concise summary (140 characters): “NDA between X and Y.”", "NDA between X and Y."),
        ("Certainly!\nNDA between X and Y.", "NDA between X and Y."),
        ("<think>The user wants...</think>\nNDA between X and Y.", "NDA between X and Y."),
        ("  'NDA between X and Y.'  ", "NDA between X and Y."),
        ("NDA between X and Y: mutual, five years.", "NDA between X and Y: mutual, five years."),
    ],
)
def test_clean_reply(reply, expected):
    assert clean_reply(reply) == expected


def test_openai_reply_is_cleaned(ndas):
    reply = 'Sure! Here is a summary:\n\n"**Non-disclosure agreement** between AG Projects and a receiving party."'
    with OpenAIStub(Answer(reply)) as stub:
        summary = _llm(stub).summarize(ndas[0])
    assert summary.text == "Non-disclosure agreement between AG Projects and a receiving party."


def test_long_document_is_sent_as_head_and_tail_with_a_marker(cuad):
    doc = next(d for d in cuad if "BONTON" in d.doc_id)  # 161,630 characters
    with OpenAIStub(Answer("Agency agreement between Bon-Ton Stores and GA Retail.")) as stub:
        _llm(stub, context_chars=4000).summarize(doc)
        prompt = stub.prompts()[0]
    omitted = len(doc.text) - 4000
    assert f"\n[... {omitted} characters omitted ...]\n" in prompt
    assert doc.text[:3000] in prompt and doc.text[-1000:] in prompt
    assert doc.text[3000:3100] not in prompt and len(prompt) < 4000 + len(GENERIC_PROMPT) + 100
    assert fit_document("short", 4000) == "short"


def test_estimate_tokens_and_cost(ndas):
    with OpenAIStub() as stub:
        tokens = _llm(stub).estimate_tokens(ndas)
    chars = sum(len(SYSTEM_PROMPT) + len(render_prompt(GENERIC_PROMPT, 150, d.text)) for d in ndas)
    assert tokens["documents"] == 5 and abs(tokens["input_tokens"] - chars / 4) <= 1
    assert tokens["output_tokens"] == 5 * 170 // 4 + 1
    assert tokens["max_output_tokens"] == 5 * 3 * max_output_tokens(170)
    cost = estimate_cost_usd(tokens, "gpt-4o-mini")
    assert cost == pytest.approx((tokens["input_tokens"] * 0.15 + tokens["output_tokens"] * 0.60) / 1e6)
    assert estimate_cost_usd(tokens, "gpt-4o-mini-2024-07-18") == cost
    assert estimate_cost_usd(tokens, "gpt-4o") > cost
    assert estimate_cost_usd(tokens, "qwen2.5:1.5b") is None


def test_run_estimate_counts_only_missing_summaries_and_prices_them(ndas, tmp_path):
    from sac.summaries.builtin import BuiltinSummarizer
    from sac.summaries.runs import estimate_run

    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(default="Mutual NDA between two named parties about product development.") as stub:
        generic, expert = _llm(stub), _llm(stub, "expert-llm")
        summarize_corpus(ndas[:2], generic, store, concurrency=2)
        ahead = estimate_run([*ndas, ndas[0]], [generic, expert, BuiltinSummarizer("generic")], store)
        assert stub.calls == 2  # estimating sends nothing
    assert (ahead.documents, ahead.to_make, ahead.stored) == (5, 3 + 5 + 5, 2)
    assert ahead.tokens["requests"] == 8 and ahead.model == "gpt-4o-mini"
    by_hand = generic.estimate_tokens(ndas[2:])["input_tokens"] + expert.estimate_tokens(ndas)["input_tokens"]
    assert ahead.tokens["input_tokens"] == by_hand
    assert ahead.cost_usd == pytest.approx(estimate_cost_usd(ahead.tokens, "gpt-4o-mini"))
    text = ahead.describe()
    assert "13 summaries to make, 2 already stored" in text and "estimate: 8 requests" in text and "gpt-4o-mini" in text
    assert estimate_run(ndas, [BuiltinSummarizer("generic")], store).describe().count("\n") == 0  # no LLM, no estimate


class _Recording:
    """The real embedder, noting when each batch is embedded."""

    def __init__(self, inner, events: list) -> None:
        self._inner, self._events = inner, events

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def embed_documents(self, texts):
        self._events.append((time.monotonic(), "embed", texts[0]))
        return self._inner.embed_documents(texts)


@pytest.mark.slow
def test_build_embeds_the_other_indexes_while_the_llm_summarizes(tmp_path, memo, ndas):
    from sac.methods import parse_methods
    from sac.usecases.workbench import Workbench

    events: list = []

    def answer(request: dict) -> str:
        events.append((time.monotonic(), "llm", ""))
        return "Mutual NDA between two named parties; confidential information; five-year term."

    wb = Workbench(SacConfig(workspace=tmp_path / "ws", llm_concurrency=1), embedder=_Recording(memo, events))
    calls: list = []
    main = threading.get_ident()
    with OpenAIStub(handler=answer, delay_s=0.3) as stub:
        llm = _llm(stub)
        reports = wb.build("nda", ndas, parse_methods("baseline,sac-generic-llm"), summarizers=[llm],
                           progress=lambda stage, done, total: calls.append((threading.get_ident(), stage, done)))
    llm_times = [t for t, kind, _ in events if kind == "llm"]
    embeds = [(t, text) for t, kind, text in events if kind == "embed"]
    summary = "Mutual NDA between two named parties"
    assert len(llm_times) == 5
    baseline = [t for t, text in embeds if not text.startswith(summary)]
    with_summary = [t for t, text in embeds if text.startswith(summary)]
    assert baseline and with_summary
    assert min(baseline) < max(llm_times)  # the baseline was embedded while summaries were still being made
    assert min(with_summary) > max(llm_times)  # the LLM index waited for its summaries
    n = sum(len(wb.chunks(d)) for d in ndas)
    assert reports["baseline"].added == reports["sac-generic-llm"].added == n
    assert {thread for thread, _, _ in calls} == {main}  # a page's progress callback runs on its own thread
    assert ("summarizing (generic-llm)", 5) in {(stage, done) for _, stage, done in calls}


@pytest.mark.slow
def test_build_finishes_the_other_indexes_when_the_llm_fails(tmp_path, memo, ndas):
    from sac.methods import parse_methods
    from sac.usecases.workbench import Workbench

    wb = Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=memo)
    with OpenAIStub(api_key="sk-right") as stub:
        llm = _llm(stub, api_key="sk-wrong")
        with pytest.raises(SummarizerError, match="rejected"):
            wb.build("nda", ndas, parse_methods("baseline,sac-generic-llm"), summarizers=[llm])
    methods = {m.name: m for m in parse_methods("baseline,sac-generic-llm")}
    assert wb.index("nda", methods["baseline"]).count() == sum(len(wb.chunks(d)) for d in ndas)
    assert wb.index("nda", methods["sac-generic-llm"]).count() == 0


# -- store and corpus runs -------------------------------------------------------------------


def _echo_handler(request: dict) -> str:
    """Answer with the document's first line, so that each document gets its own summary."""
    document = request["messages"][-1]["content"].split("Document:\n", 1)[1]
    return "Summary of " + document.strip().splitlines()[0][:80]


def test_second_corpus_run_makes_no_calls(tmp_path, ndas):
    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(handler=_echo_handler) as stub:
        first = summarize_corpus(ndas, _llm(stub), store, concurrency=2)
        assert stub.calls == 5
        second = summarize_corpus(ndas, _llm(stub), store, concurrency=2)
        assert stub.calls == 5
    assert first == second and set(first) == {d.doc_id for d in ndas}
    assert len({s.text for s in first.values()}) == 5


def test_cache_key_includes_target_and_prompt(tmp_path, ndas):
    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(handler=_echo_handler) as stub:
        summarize_corpus(ndas[:2], _llm(stub), store)
        summarize_corpus(ndas[:2], _llm(stub, target_chars=100), store)
        assert stub.calls == 4
        summarize_corpus(ndas[:2], _llm(stub, prompt=GENERIC_PROMPT + "\nBe brief."), store)
        assert stub.calls == 6
        summarize_corpus(ndas[:2], _llm(stub), store)
        assert stub.calls == 6


def test_concurrent_requests_overlap(tmp_path, cuad):
    store = SummaryStore(tmp_path / "summaries")
    seen: list[tuple[int, int, str]] = []
    with OpenAIStub(handler=_echo_handler, delay_s=0.3) as stub:
        out = summarize_corpus(cuad[:8], _llm(stub), store, concurrency=4, progress=lambda *a: seen.append(a))
        assert stub.calls == 8 and stub.max_in_flight >= 2
    assert len(out) == 8
    assert seen[0] == (0, 8, "") and seen[-1][:2] == (8, 8) and len(seen) == 9


def test_failure_keeps_finished_summaries_and_rerun_completes(tmp_path, cuad):
    docs = cuad[:8]
    bad = docs[3]
    marker = bad.text.strip().splitlines()[0][:40]

    def flaky(request: dict):
        if marker in request["messages"][-1]["content"]:
            return Status(400, "This model's maximum context length is exceeded")
        return _echo_handler(request)

    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(handler=flaky) as stub:
        with pytest.raises(SummarizerError) as caught:
            summarize_corpus(docs, _llm(stub), store, concurrency=3)
        assert stub.calls == 8
    message = str(caught.value)
    assert "1 of 8" in message and repr(bad.doc_id) in message and "maximum context length" in message
    with OpenAIStub(handler=_echo_handler) as stub:
        kept = [d for d in docs if store.get_cached(d, _llm(stub)) is not None]
        assert len(kept) == 7 and bad not in kept
        out = summarize_corpus(docs, _llm(stub), store, concurrency=3)
        assert stub.calls == 1 and "maximum" not in stub.prompts()[0]
    assert len(out) == 8
    assert all(len(store.history(d.content_hash, "generic-llm")) == 1 for d in docs)


def test_stop_event_keeps_finished_summaries_and_rerun_makes_only_missing_calls(tmp_path, cuad):
    docs = cuad[:8]
    stop = threading.Event()
    store = SummaryStore(tmp_path / "summaries")

    def progress(done: int, total: int, doc_id: str) -> None:
        if done >= 3:
            stop.set()

    with OpenAIStub(handler=_echo_handler, delay_s=0.05) as stub:
        partial = summarize_corpus(docs, _llm(stub), store, concurrency=2, progress=progress, stop=stop)
        first_calls = stub.calls
    assert 3 <= len(partial) < 8 and first_calls == len(partial)
    with OpenAIStub(handler=_echo_handler) as stub:
        out = summarize_corpus(docs, _llm(stub), store, concurrency=2)
        assert stub.calls == 8 - len(partial)
    assert len(out) == 8 and all(out[k] == v for k, v in partial.items())
    assert all(len(store.history(d.content_hash, "generic-llm")) == 1 for d in docs)


def test_unreachable_server_stops_the_run_early(tmp_path, cuad):
    url = f"http://127.0.0.1:{free_port()}/v1"
    summarizer = OpenAISummarizer("generic-llm", model="m", base_url=url, max_retries=1, backoff_s=0.01)
    with pytest.raises(SummarizerError, match="(?i)cannot reach") as caught:
        summarize_corpus(cuad, summarizer, SummaryStore(tmp_path / "s"), concurrency=2)
    not_started = int(re.search(r"\((\d+) documents? (?:was|were) not started\)", str(caught.value)).group(1))
    assert not_started >= len(cuad) - 4  # it stopped at once: at most the first requests of each thread ran


def test_several_strategies_go_document_by_document(tmp_path, ndas):
    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(handler=_echo_handler) as stub:
        summarizers = [_llm(stub), _llm(stub, "expert-llm")]
        out = summarize_strategies(ndas[:3], summarizers, store, concurrency=1)
        order = [(("expert" if "legal expert" in p else "generic"), next(d.doc_id for d in ndas if d.text in p))
                 for p in stub.prompts()]
    assert order == [(kind, d.doc_id) for d in ndas[:3] for kind in ("generic", "expert")]
    assert set(out) == {"generic-llm", "expert-llm"} and all(len(v) == 3 for v in out.values())
    with pytest.raises(ConfigError, match="one summarizer per strategy"):
        summarize_strategies(ndas, [summarizers[0], summarizers[0]], store)


def test_concurrency_against_a_server_that_answers_one_request_at_a_time(tmp_path, cuad):
    docs = cuad[:6]
    store = SummaryStore(tmp_path / "summaries")
    with OpenAIStub(handler=_echo_handler, delay_s=0.15, serial=True) as stub:
        # The last request waits ~5 x 0.15 s in line; the timeout for a local server allows for that.
        out = summarize_corpus(docs, _llm(stub), store, concurrency=4)
        assert stub.max_in_flight >= 2 and stub.max_serving == 1 and stub.calls == 6
    assert len(out) == 6 and all(len(store.history(d.content_hash, "generic-llm")) == 1 for d in docs)


@pytest.mark.slow
def test_ctrl_c_keeps_every_finished_summary_once_and_a_rerun_makes_only_the_rest(tmp_path, cuad):
    docs = cuad[:10]
    store = SummaryStore(tmp_path / "summaries")

    def interrupt(done: int, total: int, doc_id: str) -> None:
        if done >= 2:
            raise KeyboardInterrupt  # what Ctrl-C raises in the calling thread

    with OpenAIStub(handler=_echo_handler, delay_s=0.2) as stub:
        with pytest.raises(KeyboardInterrupt):
            summarize_corpus(docs, _llm(stub), store, concurrency=3, progress=interrupt)
        # requests under way at the interrupt finish in the background and are stored
        wait_until(lambda: stub.in_flight == 0
                   and sum(store.get_cached(d, _llm(stub)) is not None for d in docs) >= stub.calls,
                   timeout=30, interval=0.05, stable=0.2,
                   what="the requests under way at the interrupt to finish and be stored")
        sent = stub.calls
    stored = [d for d in docs if store.get_cached(d, _llm(stub)) is not None]
    assert 2 <= len(stored) == sent < len(docs)  # no new document was started after the interrupt
    with OpenAIStub(handler=_echo_handler) as stub:
        out = summarize_corpus(docs, _llm(stub), store, concurrency=3)
        assert stub.calls == len(docs) - len(stored)
        asked = {d.doc_id for d in docs for p in stub.prompts() if d.text[:300] in p}
        assert len(asked) == stub.calls and not asked & {d.doc_id for d in stored}
    assert len(out) == 10 and all(len(store.history(d.content_hash, "generic-llm")) == 1 for d in docs)


@pytest.mark.slow
def test_cli_summarize_survives_ctrl_c_and_a_rerun_writes_one_set_per_strategy(tmp_path):
    """The real command in a child process against the stub: SIGINT part-way, then the same command again."""
    workspace = tmp_path / "ws"
    log = workspace / "logs" / "summarize.jsonl"
    env = {**os.environ, "SAC_WORKSPACE": str(workspace), "ORT_DISABLE_TELEMETRY": "1", "HF_HUB_OFFLINE": "1"}
    # After 4 answers the stub holds every request until the child is interrupted: the interrupt always
    # lands part-way, however fast or slow the machine.
    gate = threading.Event()

    def held(request: dict) -> str:
        if len(stub.requests) > 4:
            gate.wait(60)
        return _echo_handler(request)

    with OpenAIStub(handler=held, delay_s=0.1) as stub:
        command = [
            sys.executable, "-m", "sac", "summarize", "--datasets", "contractnli", "--strategy",
            "generic-llm,expert-llm", "--summarizer", "openai", "--model", "stub-model", "--base-url",
            stub.base_url, "--concurrency", "2", "--context-chars", "5000", "-q",
            "--out", str(tmp_path / "sets" / "{strategy}.json"), "--meta", "server=openai stub",
        ]
        # As in a terminal: a test run started in the background (CI) inherits SIGINT ignored.
        child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                 preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        store = SummaryStore(workspace / "summaries")
        made_by = [OpenAISummarizer(s, model="stub-model", base_url=stub.base_url) for s in ("generic-llm", "expert-llm")]

        def kept() -> set[tuple[str, str]]:
            return {(d.doc_id, s.strategy) for d in _load("contractnli") for s in made_by if store.get_cached(d, s)}

        # Wait for the store, not the log: a log line is written just before its summary is stored, and an
        # interrupted process does not wait for the worker between the two.
        wait_until(lambda: child.poll() is not None or len(kept()) >= 3, timeout=120, what="three summaries stored",
                   detail=lambda: f"{len(kept())} stored so far")
        assert child.poll() is None, child.communicate()
        child.send_signal(signal.SIGINT)
        gate.set()  # requests under way may finish; no new one may start
        _, err = child.communicate(timeout=60)
        assert child.returncode == 130 and "interrupted: finished work is kept" in err
        assert "estimate: 10 requests" in err and "no price known for 'stub-model'" in err
        first_calls = stub.calls
        stored = kept()
        assert 3 <= len(stored) < 10 and not (tmp_path / "sets").exists()
        assert len(log.read_text(encoding="utf-8").splitlines()) >= len(stored)  # every stored summary is logged

        again = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
        assert again.returncode == 0, again.stderr
        assert stub.calls - first_calls == 10 - len(stored)  # only the missing summaries were asked for
    for strategy in ("generic-llm", "expert-llm"):
        loaded = load_summary_set(tmp_path / "sets" / f"{strategy}.json")
        assert loaded.strategy == strategy and len(loaded.summaries) == 5
        assert loaded.meta["context_chars"] == 5000 and loaded.meta["server"] == "openai stub"
        assert loaded.meta["attempts"] == {"1": 5} and loaded.meta["max_tokens"] == max_output_tokens(170)
        raw = json.loads((tmp_path / "sets" / f"{strategy}.json").read_text(encoding="utf-8"))
        assert all(entry["attempts"] == 1 and entry["seconds"] >= 0 for entry in raw["summaries"])
        # None duplicated. (The demo's shipped qwen set is imported too: it is a version of its own.)
        assert all(sum(v.model == "stub-model" for v in store.history(h, strategy)) == 1 for h in loaded.summaries)
    assert len(log.read_text(encoding="utf-8").splitlines()) >= 10


def test_builtin_corpus_run_runs_inline_and_caches(tmp_path, ndas):
    store = SummaryStore(tmp_path / "summaries")
    summarizer = BuiltinSummarizer("expert")
    out = summarize_corpus(ndas + ndas[:1], summarizer, store)  # a repeated document is summarized once
    assert list(out) == [d.doc_id for d in ndas]
    assert all(s.text == summarizer.summarize(d).text for d, s in zip(ndas, out.values(), strict=True))
    assert all(len(store.history(d.content_hash, "expert")) == 1 for d in ndas)
    assert not list((tmp_path / "summaries").rglob("*.tmp"))
    with pytest.raises(ConfigError, match="concurrency"):
        summarize_corpus(ndas, summarizer, store, concurrency=0)


def test_edits_add_versions_and_win(tmp_path, ndas):
    doc = ndas[3]
    store = SummaryStore(tmp_path / "summaries")
    summarizer = BuiltinSummarizer("generic")
    generated = summarize_corpus([doc], summarizer, store)[doc.doc_id]
    assert generated.version == 1 and store.current(doc, "generic") == generated
    edit = store.save_edit(doc, "generic", "  VELCO NDA: Vermont Electric Power Co. and a recipient;\nCEII and BCSI. ")
    assert (edit.version, edit.model) == (2, "human")
    assert edit.text == "VELCO NDA: Vermont Electric Power Co. and a recipient; CEII and BCSI."
    second = store.save_edit(doc, "generic", "VELCO NDA on CEII, BCSI and CI.")
    assert second.version == 3 and store.current(doc, "generic") == second
    history = store.history(doc.content_hash, "generic")
    assert [h.version for h in history] == [1, 2, 3] and [h.model for h in history] == ["builtin", "human", "human"]
    # The generated summary is still the cache; a run makes nothing new and returns the edit.
    assert store.get_cached(doc, summarizer) == generated
    assert summarize_corpus([doc], summarizer, store)[doc.doc_id] == second
    # Another strategy and changed content have nothing current.
    assert store.current(doc, "expert") is None
    assert store.current(dataclasses.replace(doc, text=doc.text + " amended"), "generic") is None
    # A copy under another name shares the content, so the summary follows it.
    assert store.current(dataclasses.replace(doc, doc_id="copies/velco.txt"), "generic").doc_id == "copies/velco.txt"
    with pytest.raises(ConfigError, match="non-empty"):
        store.save_edit(doc, "generic", "  \n ")


def test_store_survives_a_new_instance_and_reports_corrupt_files(tmp_path, ndas):
    root = tmp_path / "summaries"
    summarize_corpus(ndas, BuiltinSummarizer("generic"), SummaryStore(root))
    again = SummaryStore(root)
    assert all(again.get_cached(d, BuiltinSummarizer("generic")) is not None for d in ndas)
    victim = next(root.rglob("*.json"))
    victim.write_text("{not json", encoding="utf-8")
    with pytest.raises(SummarizerError, match="Cannot read stored summaries"):
        summarize_corpus(ndas, BuiltinSummarizer("generic"), again)


def test_summary_set_round_trip_and_import_by_hash(tmp_path, ndas):
    with OpenAIStub(handler=_echo_handler) as stub:
        summarizer = _llm(stub, "expert-llm")
        made = summarize_corpus(ndas, summarizer, SummaryStore(tmp_path / "maker"))
    path = tmp_path / "sets" / "contractnli-expert-llm.json"
    path.parent.mkdir()
    meta = {"base_url": "http://example.invalid/v1", "note": "demo"}
    save_summary_set(path, [made[d.doc_id] for d in ndas], meta=meta)
    raw = json.loads(path.read_text(encoding="utf-8"))
    assert {"strategy", "model", "prompt_hash", "target_chars", "created", "summaries"} <= set(raw)
    assert set(raw["summaries"][0]) == {"doc_id", "doc_hash", "text", "chars", "cut"}
    assert raw["summaries"][0]["chars"] == len(raw["summaries"][0]["text"])

    loaded = load_summary_set(path)
    assert (loaded.strategy, loaded.model, loaded.prompt_hash, loaded.target_chars) == (
        "expert-llm", "gpt-4o-mini", prompt_hash(EXPERT_PROMPT, SYSTEM_PROMPT, SHORTEN_PROMPT), 150
    )
    assert loaded.meta == {"base_url": "http://example.invalid/v1", "note": "demo"}
    assert set(loaded.summaries) == {d.content_hash for d in ndas}
    assert loaded.summaries[ndas[0].content_hash].text == made[ndas[0].doc_id].text

    store = SummaryStore(tmp_path / "user")
    assert store.import_summaries(loaded.summaries.values()) == 5 and store.import_summaries(loaded.summaries.values()) == 0
    renamed = Document("uploads/my-nda.txt", ndas[0].text)  # matched by content, not name
    current = store.current(renamed, "expert-llm")
    assert current.text == made[ndas[0].doc_id].text and current.doc_id == "uploads/my-nda.txt"
    assert store.current(Document("x.txt", ndas[0].text + "!"), "expert-llm") is None
    # An imported set is the cache of the same summarizer: a run makes no calls.
    with OpenAIStub(handler=_echo_handler) as stub:
        summarize_corpus(ndas, _llm(stub, "expert-llm"), store)
        assert stub.calls == 0


def test_summary_set_errors(tmp_path, ndas):
    generic = BuiltinSummarizer("generic").summarize(ndas[0])
    expert = BuiltinSummarizer("expert").summarize(ndas[1])
    with pytest.raises(ConfigError, match="one strategy"):
        save_summary_set(tmp_path / "mixed.json", [generic, expert], meta={})
    with pytest.raises(ConfigError, match="at least one"):
        save_summary_set(tmp_path / "empty.json", [], meta={})
    broken = tmp_path / "broken.json"
    broken.write_text('{"strategy": "x"}', encoding="utf-8")
    with pytest.raises(CorpusError, match="broken.json"):
        load_summary_set(broken)
    evil = tmp_path / "evil.json"
    entry = {"doc_id": "a", "doc_hash": "../../etc", "text": "t"}
    data = {"strategy": "x", "model": "m", "prompt_hash": "p", "target_chars": 150, "summaries": [entry]}
    evil.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CorpusError, match="hex"):
        load_summary_set(evil)


# -- registry ----------------------------------------------------------------------------------


def test_make_summarizer(tmp_path):
    config = SacConfig(workspace=tmp_path, summary_chars=120, llm_base_url="http://127.0.0.1:9/v1", llm_model="qwen2.5")
    builtin = make_summarizer("builtin", "expert", config)
    assert isinstance(builtin, BuiltinSummarizer) and (builtin.name, builtin.target_chars) == ("builtin-expert", 120)
    llm = make_summarizer("openai", "generic", config)
    assert (llm.strategy, llm.model, llm.target_chars) == ("generic-llm", "qwen2.5", 120)
    assert llm.base_url == "http://127.0.0.1:9/v1" and llm.prompt_hash == prompt_hash(GENERIC_PROMPT, SYSTEM_PROMPT, SHORTEN_PROMPT)
    assert llm.timeout_s == LOCAL_TIMEOUT_S  # a local server: requests may queue behind each other
    prompt = "Name the parties in {max_chars} chars."
    custom = make_summarizer("openai", "my-strategy", config, prompt=prompt, context_chars=5000, timeout_s=30,
                             max_attempts=2)
    assert custom.strategy == "my-strategy" and custom.prompt_hash == prompt_hash(prompt, SYSTEM_PROMPT, SHORTEN_PROMPT)
    assert (custom.context_chars, custom.timeout_s, custom.max_attempts) == (5000, 30, 2)
    remote = make_summarizer("openai", "generic", SacConfig(workspace=tmp_path, openai_api_key="sk-x"))
    assert remote.timeout_s == 120 and remote.base_url == "https://api.openai.com/v1"
    assert make_summarizer("builtin", "generic", config, context_chars=5000).name == "builtin-generic"
    with pytest.raises(ConfigError) as caught:
        make_summarizer("anthropic", "generic", config)
    assert str(caught.value) == f"Unknown summarizer 'anthropic'. Choices are: {sorted(SUMMARIZERS)}"
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        make_summarizer("openai", "generic", SacConfig(workspace=tmp_path))
