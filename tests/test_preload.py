"""The embedding model's libraries import in the background when an app page opens (``sac.embedding.models.preload``):
most of a first model load is importing sentence-transformers and PyTorch, which can happen while the user reads.
Each test runs in a fresh interpreter, where nothing has imported them yet."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # each test imports the model's libraries in a fresh interpreter

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str, tmp_path: Path) -> str:
    env = {**os.environ, "SAC_WORKSPACE": str(tmp_path / "workspace"), "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout


def test_preload_imports_the_libraries_once_and_loads_no_model(tmp_path):
    out = _fresh("""
        import gc, sys
        from sac.config import SacConfig
        from sac.embedding import models
        assert "sentence_transformers" not in sys.modules and "torch" not in sys.modules
        models.preload("openai:text-embedding-3-small")  # a remote model: nothing to import
        assert not models._PRELOADS
        models.preload("minilm"), models.preload(" minilm "), models.preload("thenlper/gte-large")
        assert len(models._PRELOADS) == 1  # the same libraries: one thread
        models.wait_for_preload()
        assert "sentence_transformers" in sys.modules and "torch" in sys.modules
        assert not any(type(o).__name__ == "SentenceTransformer" for o in gc.get_objects())  # no model read
        embedder = models.make_embedder(SacConfig())
        print(embedder.name, embedder.embed_query("governing law").shape)
    """, tmp_path)
    assert out.split() == ["all-MiniLM-L6-v2", "(384,)"]


def test_opening_the_app_starts_the_import_and_no_model_load(tmp_path):
    out = _fresh("""
        import gc, sys
        from streamlit.testing.v1 import AppTest
        from sac.embedding import models
        home = AppTest.from_file("app.py", default_timeout=120).run()
        assert not home.exception, home.exception
        models.wait_for_preload()
        print("sentence_transformers" in sys.modules, any(type(o).__name__ == "SentenceTransformer" for o in gc.get_objects()))
    """, tmp_path)
    assert out.split()[-2:] == ["True", "False"]
