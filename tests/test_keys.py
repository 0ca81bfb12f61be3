"""One name per fact: the index key's embedder name and the app's LLM summarizers follow the configuration."""

from __future__ import annotations

import pytest

from sac.config import SacConfig
from sac.embedding.vectors import embedder_name
from sac.methods import parse_methods
from sac.summaries.registry import llm_summarizer
from sac.usecases.workbench import Workbench
from tests.openai_stub import EMBED_DIM, OpenAIStub


def test_embedder_name_is_the_loaded_models_name_without_loading_it(tmp_path):
    for configured, expected in [
        ("minilm", "all-MiniLM-L6-v2"), ("minilm-onnx", "all-MiniLM-L6-v2"),
        ("minilm-onnx-int8", "all-MiniLM-L6-v2-int8"), ("openai:e5", "openai-e5"),
        ("thenlper/gte-large", "gte-large"), ("/models/my-model/", "my-model"),
    ]:
        assert embedder_name(configured) == expected
        assert Workbench(SacConfig(workspace=tmp_path, embedder=configured)).embedder_name == expected


@pytest.mark.slow
def test_openai_embeddings_build_and_search_under_one_index_key(tmp_path, demo_datasets):
    """A real OpenAI-protocol server on loopback (tests/openai_stub.py) serves /v1/embeddings."""
    dataset = demo_datasets["contractnli"]
    documents = list(dataset.documents)[:2]
    methods = parse_methods("baseline,sac-generic")
    with OpenAIStub() as stub:
        config = SacConfig(workspace=tmp_path / "ws", embedder="openai:stub-embed", llm_base_url=stub.base_url)
        wb = Workbench(config)
        key_before = wb.index("demo-contractnli", methods[0]).key
        reports = wb.build("demo-contractnli", documents, methods)
        assert wb.embedder.name == "openai-stub-embed" and wb.embedder.dim == EMBED_DIM
        assert wb.index("demo-contractnli", methods[0]).key == key_before
        assert all(r.added > 0 for r in reports.values())
        # A second workbench (a new process, say) finds the same indexes before loading anything.
        again = Workbench(config)
        assert all(again.index("demo-contractnli", m).count() == sum(len(wb.chunks(d)) for d in documents)
                   for m in methods)
        hits = again.search("demo-contractnli", methods, ["confidential information"], 4)
        assert all(len(hits[m.name][0]) == 4 for m in methods)
        assert stub.embedding_requests and all(r["model"] == "stub-embed" for r in stub.embedding_requests)


def test_app_llm_summarizers_take_timeouts_from_the_configuration(tmp_path):
    config = SacConfig.from_env({"SAC_LLM_TIMEOUT_S": "37", "SAC_WORKSPACE": str(tmp_path)})
    remote = llm_summarizer(config, "generic-llm", model="gpt-4o-mini", base_url="https://llm.example/v1", api_key="k")
    assert (remote.strategy, remote.model, remote.timeout_s) == ("generic-llm", "gpt-4o-mini", 37.0)
    local = llm_summarizer(config, "expert", model="qwen", base_url="http://127.0.0.1:9/v1", target_chars=120)
    assert (local.strategy, local.target_chars) == ("expert-llm", 120)
    assert local.timeout_s >= 900  # a local server answers one request at a time
