"""The ONNX backend of the packaged MiniLM against the PyTorch one, on real demo text.

The export takes a while (and much longer on a busy machine), so it runs once per module into a
temporary model folder; every test here reuses it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sac.chunking.split import chunk_document
from sac.config import SacConfig
from sac.embedding.onnx import OnnxMiniLMEmbedder
from sac.errors import EmbedderError

pytestmark = pytest.mark.slow  # every test needs the module's ONNX export of the model

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("onnx-workspace")


@pytest.fixture(scope="module")
def onnx_fp32(workspace) -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(workspace / "models", batch_size=32, quantized=False)


@pytest.fixture(scope="module")
def onnx_int8(workspace, onnx_fp32) -> OnnxMiniLMEmbedder:
    return OnnxMiniLMEmbedder(workspace / "models", batch_size=32, quantized=True)


@pytest.fixture(scope="module")
def texts(demo_datasets) -> list[str]:
    """~220 real texts: every ContractNLI chunk, a seeded sample of CUAD chunks (whitespace-only ones
    included, as the corpus has them), whole documents far over 256 tokens, and edge cases."""
    nli = [c.text for d in demo_datasets["contractnli"].documents for c in chunk_document(d)]
    cuad = [c.text for d in demo_datasets["cuad"].documents[:4] for c in chunk_document(d)]
    rng = np.random.default_rng(7)
    sample = [cuad[i] for i in sorted(rng.choice(len(cuad), 90, replace=False))]
    long_texts = [d.text[:6000] for d in demo_datasets["contractnli"].documents]
    out = nli + sample + long_texts + ["   \n\t ", "", "Governing law."]
    return out


@pytest.fixture(scope="module")
def torch_vectors(memo, texts) -> np.ndarray:
    """The PyTorch model's vectors (through the session's memo: texts other tests embedded are not redone)."""
    return memo.embed_documents(texts)


def test_embedder_shape_and_names(onnx_fp32, onnx_int8):
    assert onnx_fp32.name == "all-MiniLM-L6-v2"  # shares indexes with the PyTorch backend
    assert onnx_int8.name == "all-MiniLM-L6-v2-int8"
    assert onnx_fp32.dim == onnx_int8.dim == 384
    assert onnx_fp32.max_tokens == 256
    assert onnx_fp32.embed_documents([]).shape == (0, 384)
    vector = onnx_fp32.embed_query("termination for convenience")
    assert vector.shape == (384,) and vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-5


def test_tokens_match_sentence_transformers(onnx_fp32, embedder, texts):
    """Same ids, truncated at 256 exactly as sentence-transformers does (tokenizer.json says 128)."""
    features = embedder._model.tokenize(texts)
    mask = features["attention_mask"].numpy().astype(bool)
    expected = [row[m].tolist() for row, m in zip(features["input_ids"].numpy(), mask)]
    got = onnx_fp32.tokenize(texts)
    assert got == expected
    assert max(len(ids) for ids in got) == 256  # the long texts were cut


def test_fp32_matches_pytorch_per_row(onnx_fp32, texts, torch_vectors):
    vectors = onnx_fp32.embed_documents(texts)
    assert vectors.shape == torch_vectors.shape and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosine = (vectors * torch_vectors).sum(axis=1)
    assert cosine.min() >= 0.99, f"worst row {int(cosine.argmin())}: {cosine.min():.5f}"


def test_order_does_not_depend_on_batching(onnx_fp32, texts):
    """Rows come back in input order whatever the length sort and batch size do."""
    small = OnnxMiniLMEmbedder(onnx_fp32.model_dir, batch_size=5)
    a = onnx_fp32.embed_documents(texts[:40])
    b = small.embed_documents(texts[:40][::-1])[::-1]
    assert ((a * b).sum(axis=1) > 0.9999).all()


def _top_sets(query_vectors: np.ndarray, chunk_vectors: np.ndarray, k: int) -> list[set[int]]:
    scores = query_vectors @ chunk_vectors.T
    return [set(np.argsort(-row, kind="stable")[:k].tolist()) for row in scores]


def _mean_overlap(a: list[set[int]], b: list[set[int]], k: int) -> float:
    return float(np.mean([len(x & y) / k for x, y in zip(a, b)]))


@pytest.fixture(scope="module")
def contractnli_top8(demo_datasets, memo):
    ds = demo_datasets["contractnli"]
    chunks = [c.text for d in ds.documents for c in chunk_document(d)]
    queries = [q.text for q in ds.queries]
    assert len(queries) == 52
    return chunks, queries, _top_sets(memo.embed_documents(queries), memo.embed_documents(chunks), 8)


def test_fp32_top8_retrieval_matches_pytorch(onnx_fp32, contractnli_top8):
    chunks, queries, expected = contractnli_top8
    got = _top_sets(onnx_fp32.embed_documents(queries), onnx_fp32.embed_documents(chunks), 8)
    assert _mean_overlap(got, expected, 8) >= 0.99


def test_int8_close_to_fp32(onnx_int8, texts, torch_vectors):
    """Every text with content >= 0.98; whitespace-only texts ([CLS] [SEP] alone) all share one vector,
    which int8 moves a little more (about 0.973)."""
    cosine = (onnx_int8.embed_documents(texts) * torch_vectors).sum(axis=1)
    content = np.array([bool(t.strip()) for t in texts])
    assert cosine[content].min() >= 0.98, f"worst row {int(np.argmin(np.where(content, cosine, 2)))}"
    assert cosine[~content].min() >= 0.95
    assert cosine.mean() >= 0.99


def test_int8_top8_retrieval_close(onnx_int8, contractnli_top8):
    chunks, queries, expected = contractnli_top8
    got = _top_sets(onnx_int8.embed_documents(queries), onnx_int8.embed_documents(chunks), 8)
    assert _mean_overlap(got, expected, 8) >= 0.9


def test_cached_export_is_reused(onnx_fp32, onnx_int8):
    files = sorted(p.name for p in onnx_fp32.model_dir.iterdir() if p.suffix == ".onnx")
    assert files == sorted([onnx_fp32.model_file.name, onnx_int8.model_file.name])
    assert not list(onnx_fp32.model_dir.glob("*.tmp"))  # no leftovers of the atomic writes
    before = {p: p.stat().st_mtime_ns for p in (onnx_fp32.model_file, onnx_int8.model_file)}
    again = OnnxMiniLMEmbedder(onnx_fp32.model_dir, quantized=False)
    again_int8 = OnnxMiniLMEmbedder(onnx_fp32.model_dir, quantized=True)
    assert not again.exported and not again_int8.exported
    assert again.model_file == onnx_fp32.model_file and again_int8.model_file == onnx_int8.model_file
    assert {p: p.stat().st_mtime_ns for p in before} == before


def test_registry_builds_onnx_embedders_from_the_workspace(workspace, onnx_fp32, onnx_int8):
    from sac.embedding.models import make_embedder
    from sac.usecases.workbench import Workbench

    for name, built in (("minilm-onnx", onnx_fp32), ("minilm-onnx-int8", onnx_int8)):
        config = SacConfig(workspace=workspace, embedder=name)
        emb = make_embedder(config)
        assert isinstance(emb, OnnxMiniLMEmbedder) and not emb.exported
        assert emb.name == built.name == Workbench(config).embedder_name


def test_session_runs_where_onnxruntime_can(workspace, onnx_fp32, onnx_int8):
    """CUDA when onnxruntime offers it (onnxruntime-gpu) and the setting allows; the wheel here offers only the
    CPU, so here every session runs there and asking for CUDA fails before anything is exported."""
    import onnxruntime as ort

    from sac.embedding.models import make_embedder

    cuda = "CUDAExecutionProvider" in ort.get_available_providers()
    assert onnx_fp32.providers == onnx_int8.providers == (
        ["CUDAExecutionProvider", "CPUExecutionProvider"] if cuda else ["CPUExecutionProvider"])
    on_cpu = make_embedder(SacConfig(workspace=workspace, embedder="minilm-onnx", embed_device="cpu"))
    assert on_cpu.providers == ["CPUExecutionProvider"]
    if not cuda:
        empty = workspace / "no-export"
        with pytest.raises(EmbedderError, match="SAC_EMBED_DEVICE=cuda but onnxruntime offers only"):
            OnnxMiniLMEmbedder(empty, device="cuda")
        assert not empty.exists()


@pytest.mark.slow
def test_two_processes_export_once_without_corruption(tmp_path):
    """Two processes start on an empty cache together: both get a working model, one file results."""
    code = (
        "import sys; from pathlib import Path; from sac.embedding.onnx import OnnxMiniLMEmbedder;"
        "e = OnnxMiniLMEmbedder(Path(sys.argv[1])); v = e.embed_query('governing law');"
        "print(int(e.exported), round(float(v @ v), 4))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
        for _ in range(2)
    ]
    outputs = [p.communicate(timeout=900)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sorted(int(o[0]) for o in outputs) == [0, 1]  # the second waited for the first's export
    assert all(o[1] == "1.0" for o in outputs)
    assert len(list(tmp_path.glob("*.onnx"))) == 1 and not list(tmp_path.glob("*.tmp"))
