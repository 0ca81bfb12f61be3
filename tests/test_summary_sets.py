"""The LLM summary sets shipped in data/demo/summaries: they load, match the demo documents by content
hash, and an evaluation uses them with no LLM server anywhere."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sac.config import SacConfig
from sac.ingest.catalog import corpus_name
from sac.methods import parse_method, parse_methods
from sac.summaries.prompts import EXPERT_PROMPT, GENERIC_PROMPT, SHORTEN_PROMPT, SLACK_CHARS, SYSTEM_PROMPT, prompt_hash
from sac.summaries.sets import import_summary_sets, load_summary_set
from sac.types import text_hash
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench
from tests.openai_stub import free_port

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "data" / "demo"
SETS = {"generic-llm": DEMO / "summaries" / "generic-llm.json", "expert-llm": DEMO / "summaries" / "expert-llm.json"}
PROMPTS = {"generic-llm": GENERIC_PROMPT, "expert-llm": EXPERT_PROMPT}


@pytest.fixture(scope="module")
def demo_documents(demo_datasets):
    return [d for ds in demo_datasets.values() for d in ds.documents]


@pytest.mark.parametrize("strategy", sorted(SETS))
def test_shipped_set_has_one_summary_per_demo_document_matched_by_hash(strategy, demo_documents):
    summary_set = load_summary_set(SETS[strategy])
    assert summary_set.strategy == strategy and summary_set.target_chars == 150
    assert summary_set.model == "qwen2.5-coder-1.5b-instruct"
    # Made with the prompts as shipped: a user with the same model gets these from the cache.
    assert summary_set.prompt_hash == prompt_hash(PROMPTS[strategy], SYSTEM_PROMPT, SHORTEN_PROMPT)
    assert len(demo_documents) == 34
    assert set(summary_set.summaries) == {d.content_hash for d in demo_documents}
    by_id = {s.doc_id: s for s in summary_set.summaries.values()}
    for doc in demo_documents:
        summary = by_id[doc.doc_id]
        assert summary.doc_hash == doc.content_hash == text_hash(doc.text)
        assert 20 <= len(summary.text) <= summary_set.target_chars + SLACK_CHARS
        assert summary.text == summary.text.strip() and "\n" not in summary.text
    assert len({s.text for s in summary_set.summaries.values()}) == 34  # no two documents share a summary


@pytest.mark.parametrize("strategy", sorted(SETS))
def test_shipped_set_records_how_it_was_made(strategy):
    raw = json.loads(SETS[strategy].read_text(encoding="utf-8"))
    assert raw["format"] == "sac-summary-set/1" and raw["created"]
    for entry in raw["summaries"]:
        assert entry["chars"] == len(entry["text"]) and isinstance(entry["cut"], bool)
        assert 1 <= entry["attempts"] <= raw["meta"]["max_attempts"] and entry["seconds"] > 0
    meta = raw["meta"]
    assert meta["base_url"].startswith("http://127.0.0.1") and 4000 <= meta["context_chars"] <= 6000
    assert sum(meta["attempts"].values()) == 34 and meta["cut"] == sum(e["cut"] for e in raw["summaries"])
    assert meta["system_prompt"] == SYSTEM_PROMPT and meta["prompt"] == PROMPTS[strategy]
    assert "server" in meta


@pytest.mark.slow
def test_eval_uses_the_shipped_summaries_with_no_llm_server(tmp_path, memo, demo_datasets):
    # A fresh workspace, and an LLM base URL where nothing listens: nothing may try to generate.
    config = SacConfig(workspace=tmp_path / "fresh", llm_base_url=f"http://127.0.0.1:{free_port()}/v1")
    wb = Workbench(config, embedder=memo)
    assert sorted(import_summary_sets(wb.summary_store, DEMO)) == ["expert-llm", "generic-llm"]
    ds = demo_datasets["contractnli"]
    methods = parse_methods("baseline,sac-generic-llm,sac-expert-llm")
    result = evaluate(wb, [ds], methods, [1, 8])
    assert {r["method"] for r in result.metrics} == {m.name for m in methods}

    for strategy, path in SETS.items():
        shipped = load_summary_set(path).summaries
        records = wb.index(corpus_name("demo", ds), parse_method(f"sac-{strategy}")).records()
        assert len(records) == sum(len(wb.chunks(d)) for d in ds.documents)
        for meta in records.values():
            assert meta["summary_hash"] == text_hash(shipped[meta["doc_hash"]].text)
