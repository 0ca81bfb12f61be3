"""Opening the Chroma store: embedded (``PersistentClient`` under the workspace) or a ``chroma run`` server."""

from __future__ import annotations

import threading
from typing import Any

from sac.config import SacConfig
from sac.errors import StoreError

_persistent_client_lock = threading.Lock()


def make_client(config: SacConfig) -> Any:
    """``HttpClient`` when ``config.chroma_url`` is set, else ``PersistentClient`` under the workspace."""
    import chromadb
    from chromadb.config import Settings

    settings = Settings(anonymized_telemetry=False)
    if config.chroma_url:
        from urllib.parse import urlparse

        url = urlparse(config.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(f"SAC_CHROMA_URL must look like http://127.0.0.1:8000, got {config.chroma_url!r}")
        try:
            client = chromadb.HttpClient(
                host=url.hostname, port=url.port or (443 if url.scheme == "https" else 8000),
                ssl=url.scheme == "https", settings=settings,
            )
            client.heartbeat()
        except Exception as err:  # noqa: BLE001 - chromadb raises several unrelated types here
            raise StoreError(
                f"Cannot reach the Chroma server at {config.chroma_url}: {err}. "
                "Start it with `chroma run --path DIR --host 127.0.0.1 --port 8000` or unset SAC_CHROMA_URL."
            ) from err
        return client
    path = config.workspace / "chroma"
    try:
        path.mkdir(parents=True, exist_ok=True)
        # chromadb shares one System per path between clients and creates it without a lock: two sessions
        # opening the same store at once get a KeyError or an unstarted System.
        with _persistent_client_lock:
            return chromadb.PersistentClient(path=str(path), settings=settings)
    except Exception as err:  # noqa: BLE001 - OSError, sqlite and chromadb's own errors
        raise StoreError(f"Cannot open the Chroma store in {path}: {type(err).__name__}: {err}") from err


def describe_store(config: SacConfig) -> str:
    """Where the indexes live, for messages: the server URL or the embedded store's folder."""
    if config.chroma_url:
        return f"the Chroma server at {config.chroma_url}"
    return f"the Chroma store in {config.workspace / 'chroma'}"
