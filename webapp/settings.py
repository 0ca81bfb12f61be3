"""The session's configuration, and the resources every session shares.

``st.cache_resource`` holds the heavy objects, shared and never mutated: one embedding model per model, one Chroma
client per store, one ``Workbench`` per configuration. The session's index settings (chunk size and chunking,
summary length, embedder) live in its session state; with matters on, its workspace is its matter's.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from sac.config import SacConfig
from sac.usecases import matters
from sac.usecases.corpus import DEMO_DIR
from sac.usecases.workbench import Workbench, embedder_name, make_client, make_embedder
from sac.workspace import Workspace
from webapp.signin import identity

SETTINGS_KEY = "sac_settings"  # session state: index settings shared by every page
MATTER_KEY = "sac_matter"  # session state: the matter this session works in (checked by open_matter)
EMBEDDER_CHOICES = ("minilm", "minilm-onnx", "minilm-onnx-int8")


def settings() -> dict[str, Any]:
    """The index settings of this session (chunk size and chunking, summary length, embedder), defaults from SAC_*."""
    if SETTINGS_KEY not in st.session_state:
        env = SacConfig.from_env()
        st.session_state[SETTINGS_KEY] = {
            "chunk_size": env.chunk_size, "chunk_overlap": env.chunk_overlap, "chunking": env.chunking,
            "summary_chars": env.summary_chars, "embedder": env.embedder,
        }
    return dict(st.session_state[SETTINGS_KEY])


def set_settings(**values: Any) -> None:
    """Change some of this session's index settings (every page of the session uses them)."""
    current = settings()
    current.update(values)
    st.session_state[SETTINGS_KEY] = current


# The checkout the app runs from: the source datasets (CUAD, ContractNLI) sit beside it unless SAC_SOURCES says.
CHECKOUT = Path(__file__).resolve().parents[1]


def sources_dir() -> Path:
    """Where the full source datasets are: SAC_SOURCES, else ``../shared/data/sources`` beside the checkout."""
    return root_config().sources or CHECKOUT.parent / "shared" / "data" / "sources"


def root_config() -> SacConfig:
    """The deployment's configuration (``SAC_*`` and this session's index settings), before any matter."""
    return SacConfig.from_env(**settings())


def config() -> SacConfig:
    """The session's configuration: its matter's workspace when matters are on.

    ``open_matter`` checks the access file on every call. The API key comes only from the server's environment,
    never from a page: a key typed into the app goes straight to the summarizer it was typed for.
    """
    root = root_config()
    if root.access_file is None:
        return root
    return matters.open_matter(root, identity(), st.session_state.get(MATTER_KEY, ""))


def config_key(cfg: SacConfig) -> str:
    """A configuration as a cache key (its public settings; keys appear only as whether they are set)."""
    return json.dumps(cfg.public_dict(), sort_keys=True)


@st.cache_resource(show_spinner=False)  # the spinner is LazyEmbedder.model's: it also covers a load by a build
def _load_embedder(_cfg: SacConfig, key: str) -> Any:
    return make_embedder(_cfg)


def _embedder_key(cfg: SacConfig) -> str:
    """The settings that decide the loaded embedder, as a cache key.

    ``embed*``, the server it may share with the LLM, the workspace that caches ONNX exports; keys appear only as
    whether they are set.
    """
    shared = ("llm_base_url", "openai_api_key_set", "workspace")
    return json.dumps({k: v for k, v in cfg.public_dict().items() if k.startswith("embed") or k in shared},
                      sort_keys=True)


class LazyEmbedder:
    """Loads the shared model on first use, so pages that only list things never load it."""

    def __init__(self, cfg: SacConfig, name: str) -> None:
        self._cfg = cfg
        self.name = name
        self.configured = cfg.embedder  # the model it loads, as configured: Workbench.use_shipped_vectors checks it
        self._model: Any = None
        self._loading = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded model, kept once loaded: a background build embeds through it without touching Streamlit's caches.

        A page loads it through the shared cache; a build whose page was left before that loads it itself (no page
        to show a spinner on). A page shows the spinner whoever loads it: the build it just started may have taken
        the load first (its connection check wants the model), and the page waits for it.
        """
        if self._model is None:
            on_page = get_script_run_ctx(suppress_warning=True) is not None
            with st.spinner("Loading the embedding model…") if on_page else contextlib.nullcontext():
                with self._loading:  # one load: whoever comes second waits for it
                    if self._model is None:
                        self._model = (_load_embedder(self._cfg, _embedder_key(self._cfg)) if on_page
                                       else make_embedder(self._cfg))
        return self._model

    @property
    def dim(self) -> int:
        """The model's vector size."""
        return int(self.model.dim)

    def embed_documents(self, texts: Sequence[str]) -> Any:
        """The model's vectors of ``texts``."""
        return self.model.embed_documents(texts)

    def embed_query(self, text: str) -> Any:
        """The model's vector of one question."""
        return self.model.embed_query(text)

    def check_connection(self) -> None:
        """Let a remote model answer one request (nothing for a local one)."""
        check = getattr(self.model, "check_connection", None)
        if check is not None:
            check()


@st.cache_resource(show_spinner=False)
def _client(_cfg: SacConfig, workspace: str, chroma_url: str | None) -> Any:
    return make_client(_cfg)


@st.cache_resource(show_spinner=False)
def _workbench(_cfg: SacConfig, key: str) -> Workbench:
    # Every matter shares the deployment's embedding model (and its ONNX export under the root workspace).
    shared = dataclasses.replace(_cfg, workspace=root_config().workspace, chroma_database=None)
    wb = Workbench(
        _cfg, embedder=LazyEmbedder(shared, embedder_name(_cfg.embedder)),
        client=_client(_cfg, str(_cfg.workspace), _cfg.chroma_url),
    )
    # The demo's vectors, where this model made them: loading the demo (or finishing it on Corpus) copies them. Read
    # by the first build, not here.
    wb.use_shipped_vectors(DEMO_DIR)
    return wb


def workbench(cfg: SacConfig | None = None) -> Workbench:
    """The shared Workbench of a configuration (the session's by default)."""
    cfg = cfg or config()
    return _workbench(cfg, config_key(cfg))


def workspace() -> Workspace:
    """The session's workspace (its matter's, when matters are on)."""
    return Workspace(config().workspace)


def forget_clients() -> None:
    """Drop every cached store client and workbench (after a removal closed an embedded store, which they may hold)."""
    _client.clear()
    _workbench.clear()
