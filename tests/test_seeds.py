"""Vectors shipped with a benchmark (sac.embedding.seeds): the demo's cover what the app's demo button builds, they
are the packaged model's vectors of those texts, and a seed never answers for another text or another model."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from sac.config import SacConfig
from sac.embedding.seeds import SeededEmbedder, benchmark_seed, model_identity, read_seed, seed_path, write_seed
from sac.ingest.benchmark import load_benchmark
from sac.ingest.catalog import DEMO_DIR, corpus_name
from sac.methods import parse_methods
from sac.summaries.sets import import_summary_sets
from sac.usecases.workbench import Workbench

# What the Home page's demo button builds for ContractNLI (app.py: the paper's three, then the shipped LLM sets).
DEMO_METHODS = "baseline,sac-generic,sac-expert,sac-generic-llm,sac-expert-llm"
REMAKE = f"python -m sac vectors --datasets contractnli --methods {DEMO_METHODS}"


def _demo_build(workspace: Path, methods: str, *, shipped: bool, embedder=None):
    wb = Workbench(SacConfig.from_env(workspace=workspace), embedder=embedder)
    if shipped:
        wb.use_shipped_vectors(DEMO_DIR)
        assert wb.shipped_vectors(), f"data/demo ships no vectors for the packaged model: {REMAKE}"
    import_summary_sets(wb.summary_store, DEMO_DIR)
    [ds] = load_benchmark(DEMO_DIR, ["contractnli"])
    corpus = corpus_name("demo", ds)
    return wb, corpus, wb.build(corpus, ds.all_documents, parse_methods(methods))


@pytest.mark.slow
def test_the_demo_ships_the_packaged_models_vectors_of_every_text_its_build_embeds(tmp_path, embedder):
    wb, corpus, reports = _demo_build(tmp_path / "shipped", DEMO_METHODS, shipped=True)
    for name, report in reports.items():
        assert report.embedded == 0 and report.shipped == report.added > 0, (name, report, REMAKE)
        assert f"{report.added} copied from shipped vectors" in report.describe()
    assert wb._embedder is None, f"the build loaded the model: some text is not in the shipped vectors ({REMAKE})"

    # The copied vectors are the model's: the same index built by embedding holds the same vectors, record by record.
    plain, _, plain_reports = _demo_build(tmp_path / "embedded", "sac-generic", shipped=False, embedder=embedder)
    assert plain_reports["sac-generic"].embedded == reports["sac-generic"].added
    method = parse_methods("sac-generic")[0]
    copied = wb.index(corpus, method)._open(create=False).get(include=["embeddings"])
    made = plain.index(corpus, method)._open(create=False).get(include=["embeddings"])
    by_id = dict(zip(made["ids"], made["embeddings"], strict=True))
    assert sorted(copied["ids"]) == sorted(by_id)
    gaps = [float(np.max(np.abs(np.asarray(v) - np.asarray(by_id[i])))) for i, v in zip(copied["ids"], copied["embeddings"], strict=True)]
    assert max(gaps) < 1e-4, max(gaps)


def test_a_seed_answers_only_for_its_exact_texts_and_the_model_loads_only_for_the_rest(tmp_path, embedder):
    texts = ["Mutual Non-Disclosure Agreement between Acme and Beta.", "The Recipient shall hold the information."]
    path = tmp_path / "seed.npz"
    assert write_seed(path, [*texts, texts[0]], embedder.embed_documents([*texts, texts[0]]),
                      embedder=embedder.name, model="m") == 2
    seed = read_seed(path)
    loads = []

    def load():
        loads.append(1)
        return embedder

    seeded = SeededEmbedder([seed], load, embedder.name)
    both = seeded.embed_documents(texts)
    assert not loads and (seeded.shipped, seeded.embedded) == (2, 0)
    np.testing.assert_array_equal(both, np.stack([seed.get(t) for t in texts]))

    other = "The Recipient shall hold the information!"  # one character off: not the seeded text
    mixed = seeded.embed_documents([texts[1], other, texts[0]])
    assert len(loads) == 1 and (seeded.shipped, seeded.embedded) == (4, 1)
    np.testing.assert_allclose(mixed[1], embedder.embed_documents([other])[0], atol=1e-6)
    np.testing.assert_array_equal(mixed[[0, 2]], both[[1, 0]])
    assert seeded.embed_documents([]).shape == (0, embedder.dim)


def _copy_demo_seed(tmp_path: Path) -> Path:
    folder = tmp_path / "bench"
    name = "all-MiniLM-L6-v2"
    seed_path(folder, name).parent.mkdir(parents=True)
    shutil.copy(seed_path(DEMO_DIR, name), seed_path(folder, name))
    return folder


def test_vectors_of_another_model_a_damaged_file_or_another_embedder_are_not_used(tmp_path, caplog, embedder):
    folder = _copy_demo_seed(tmp_path)
    path = seed_path(folder, "all-MiniLM-L6-v2")
    assert benchmark_seed(folder, "minilm") is not None and benchmark_seed(folder, "minilm-onnx") is not None
    assert model_identity("minilm") == read_seed(path).model

    # Other embedders name other files, and none of them is the packaged model at full precision.
    for configured in ("minilm-onnx-int8", "openai:text-embedding-3-small", "thenlper/gte-large"):
        assert model_identity(configured) is None and benchmark_seed(folder, configured) is None

    # The same embedder name made with other model files: not used, and the log says why.
    seed = read_seed(path)
    with np.load(path) as data:
        texts_made = json.loads(str(data["meta"]))["texts"]
    assert texts_made == len(seed)
    np.savez_compressed(path, meta=np.array(json.dumps({"format": 1, "embedder": seed.embedder, "model": "0" * 16})),
                        digests=seed.digests, vectors=seed.vectors)
    with caplog.at_level(logging.WARNING, logger="sac.embedding.seeds"):
        assert benchmark_seed(folder, "minilm") is None
    assert "not this model" in caplog.text

    # A damaged file: not used, with the reason.
    path.write_bytes(seed_path(DEMO_DIR, "all-MiniLM-L6-v2").read_bytes()[:5000])
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="sac.embedding.seeds"):
        assert benchmark_seed(folder, "minilm") is None
    assert "cannot read" in caplog.text
    with pytest.raises(ValueError, match="cannot read"):
        read_seed(path)

    # A workbench on a caller's own embedder cannot tell which model that is: it uses no shipped vectors.
    own = Workbench(SacConfig.from_env(workspace=tmp_path / "ws"), embedder=embedder)
    own.use_shipped_vectors(DEMO_DIR)
    assert own.shipped_vectors() == []


@pytest.mark.slow
def test_sac_vectors_records_what_a_build_embeds_and_a_workbench_then_copies_it(tmp_path, cli):
    folder = tmp_path / "bench"
    (folder / "benchmarks").mkdir(parents=True)
    shutil.copy(DEMO_DIR / "benchmarks" / "contractnli.json", folder / "benchmarks")
    shutil.copytree(DEMO_DIR / "corpus" / "contractnli", folder / "corpus" / "contractnli")
    code, out, err = cli("vectors", "--benchmark", str(folder), "--methods", "baseline", "-q")
    assert code == 0, err
    path = seed_path(folder, "all-MiniLM-L6-v2")
    assert out.startswith(f"{path}: ") and len(read_seed(path)) > 0

    wb = Workbench(SacConfig.from_env(workspace=tmp_path / "ws"))
    wb.use_shipped_vectors(folder)
    assert len(wb.shipped_vectors()) == 1
    [ds] = load_benchmark(folder)
    reports = wb.build("bench-contractnli", ds.all_documents, parse_methods("baseline,sac-generic"))
    assert reports["baseline"].embedded == 0 and reports["baseline"].shipped == reports["baseline"].added
    # sac-generic's texts carry a summary the recording never embedded: the model embeds them.
    assert reports["sac-generic"].shipped == 0 and reports["sac-generic"].embedded == reports["sac-generic"].added

    # `sac ingest --shipped-vectors` copies them too; without the flag the command line embeds.
    code, out, err = cli("ingest", "--benchmark", str(folder), "--methods", "baseline", "--shipped-vectors",
                         "--workspace", str(tmp_path / "cli-ws"), "-q")
    assert code == 0, err
    assert f"0 chunks embedded, {reports['baseline'].added} copied from shipped vectors" in out
    code, out, err = cli("ingest", "--benchmark", str(folder), "--methods", "baseline",
                         "--workspace", str(tmp_path / "cli-ws-embedded"), "-q")
    assert code == 0 and f"/ baseline: {reports['baseline'].added} chunks embedded, 0 already" in out, (out, err)
    code, _, err = cli("ingest", "--corpus", "mine", "--shipped-vectors", "--workspace", str(tmp_path / "ws2"), "-q")
    assert code == 1 and "use it with --benchmark" in err

    code, _, err = cli("vectors", "--benchmark", str(folder), "--embedder", "minilm-onnx-int8", "-q")
    assert code == 1 and "packaged model" in err
    code, _, err = cli("vectors", "--benchmark", str(folder), "--corpus", "mine", "-q")
    assert code == 1 and "no --corpus or --pool" in err


@pytest.mark.slow
def test_the_home_pages_demo_button_copies_the_shipped_vectors(app_memo):
    from streamlit.testing.v1 import AppTest

    from tests.conftest import APP, finish_build

    home = AppTest.from_file(APP, default_timeout=300).run()
    home.radio(key="home_demo_datasets").set_value("contractnli")
    home.checkbox(key="home_demo_llm").set_value(False)
    home.button(key="home_load_demo").click().run()
    finish_build(home)
    assert not home.exception and not home.error, [e.value for e in [*home.exception, *home.error]]
    said = [i.value for i in home.info]
    assert any(text.endswith(": 0 chunks embedded, 444 copied from the shipped vectors, 0 already indexed.") for text in said), said
    assert any("Demo: done in" in s.value for s in home.success)
