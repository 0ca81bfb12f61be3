"""Opening the Chroma store: embedded (``PersistentClient`` under the workspace) or a ``chroma run`` server."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from sac.config import SacConfig
from sac.errors import StoreError
from sac.files import file_lock

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.config import Settings

_persistent_client_lock = threading.Lock()
# The imports of chromadb below are inside functions: chromadb takes seconds to load, and `import sac` (the CLI's
# --help, the app's first page) must not wait for a store it may never open.


def is_missing(err: Exception) -> bool:
    """Whether a chromadb error says the collection asked for does not exist (its type varies by version)."""
    return "does not exist" in str(err) or type(err).__name__ == "NotFoundError"


def make_client(config: SacConfig) -> ClientAPI:
    """``HttpClient`` when ``config.chroma_url`` is set, else ``PersistentClient`` under the workspace."""
    import chromadb  # heavy: loaded when a store is first opened
    from chromadb.config import DEFAULT_DATABASE, Settings  # heavy: as chromadb

    settings = Settings(anonymized_telemetry=False)
    if config.chroma_url:
        url = urlparse(config.chroma_url)
        if url.scheme not in ("http", "https") or not url.hostname:
            raise StoreError(f"SAC_CHROMA_URL must look like http://127.0.0.1:8000, got {config.chroma_url!r}")
        try:
            host, port, ssl = url.hostname, url.port or (443 if url.scheme == "https" else 8000), url.scheme == "https"
            database = config.chroma_database or DEFAULT_DATABASE
            if config.chroma_database:
                _ensure_database(host, port, ssl, settings, config.chroma_database)
            client = chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=settings, database=database)
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
        # opening the same store at once get a KeyError or an unstarted System. Two processes opening a new
        # store at once both create its tables ("table collections already exists", "database is locked"),
        # so the opening is also held under a lock file of the workspace.
        with _persistent_client_lock, file_lock(config.workspace / "locks" / "chroma-open.lock"):
            return chromadb.PersistentClient(path=str(path), settings=settings)
    except Exception as err:  # noqa: BLE001 - OSError, sqlite and chromadb's own errors
        raise StoreError(f"Cannot open the Chroma store in {path}: {type(err).__name__}: {err}") from err


def _ensure_database(host: str, port: int, ssl: bool, settings: Settings, name: str) -> None:
    """Create the server's database ``name`` (one per matter) unless it exists.

    Clients that open a new matter at once (two sessions, or shards on several machines) may all find it missing;
    the creations that lose the race fail with "already exists", and count as opened when the database is there
    afterwards.
    """
    import chromadb  # heavy: loaded when a store is first opened
    from chromadb.errors import NotFoundError  # heavy: as chromadb

    admin = chromadb.AdminClient(_server_settings(settings, host, port, ssl))
    try:
        admin.get_database(name)
    except NotFoundError:
        try:
            admin.create_database(name)
        except Exception as err:  # noqa: BLE001 - the server answers "already exists" as a plain ChromaError
            try:
                admin.get_database(name)
            except NotFoundError:
                raise err from None


def drop_database(config: SacConfig) -> bool:
    """Delete the server's database ``config.chroma_database`` and every collection in it (a matter's removal).

    False when there is no server or no such database. Compacting the server's disk afterwards is its operator's
    task (docs/deploying.md, "Deletion that leaves nothing").
    """
    if not (config.chroma_url and config.chroma_database):
        return False
    import chromadb  # heavy: loaded when a store is first opened
    from chromadb.config import Settings  # heavy: as chromadb
    from chromadb.errors import NotFoundError  # heavy: as chromadb

    url = urlparse(config.chroma_url)
    ssl = url.scheme == "https"
    admin = chromadb.AdminClient(_server_settings(Settings(anonymized_telemetry=False), url.hostname or "",
                                                  url.port or (443 if ssl else 8000), ssl))
    try:
        admin.get_database(config.chroma_database)
    except NotFoundError:
        return False
    client = chromadb.HttpClient(host=url.hostname or "", port=url.port or (443 if ssl else 8000), ssl=ssl,
                                 settings=Settings(anonymized_telemetry=False), database=config.chroma_database)
    for collection in client.list_collections():
        client.delete_collection(collection.name)
    admin.delete_database(config.chroma_database)
    return True


def _server_settings(settings: Settings, host: str, port: int, ssl: bool) -> Settings:
    """``settings`` pointed at the Chroma server at ``host:port``, for an ``AdminClient``."""
    from chromadb.config import Settings  # heavy: loaded when a store is first opened

    return Settings(**{**settings.model_dump(), "chroma_api_impl": "chromadb.api.fastapi.FastAPI",
                       "chroma_server_host": host, "chroma_server_http_port": port,
                       "chroma_server_ssl_enabled": ssl})


def release_store(config: SacConfig) -> None:
    """Close this process's embedded store of ``config``, before its folder is deleted.

    chromadb keeps one System per path, and one left open over a deleted folder fails on the next write ("readonly
    database").
    """
    if config.chroma_url:
        return
    from chromadb.api.shared_system_client import SharedSystemClient  # heavy: loaded when a store is first opened

    key = str(config.workspace / "chroma")
    with _persistent_client_lock:
        system = SharedSystemClient._identifier_to_system.pop(key, None)
        SharedSystemClient._identifier_to_refcount.pop(key, None)
    if system is not None:
        system.stop()


def describe_store(config: SacConfig) -> str:
    """Where the indexes live, for messages: the server URL or the embedded store's folder."""
    if config.chroma_url:
        return f"the Chroma server at {config.chroma_url}"
    return f"the Chroma store in {config.workspace / 'chroma'}"
