"""A local stand-in for an OpenAI-compatible server, for tests.

It is a real HTTP server on 127.0.0.1 (a free port, a background thread) that speaks the parts of the
OpenAI protocol the project uses: ``POST /v1/chat/completions``, ``POST /v1/embeddings`` (float or base64
vectors, as asked) and ``GET /v1/models``. The official ``openai`` client talks to it through
``base_url=stub.base_url``. Each test scripts it:

    with OpenAIStub() as stub:
        stub.push(Status(429), Answer("Supply agreement between A and B."))
        ...
        assert stub.calls == 2

Behaviours are taken from the queue one per request; when the queue is empty, ``handler`` (a callable
taking the request JSON and returning a string or a behaviour) or ``default`` answers. Every request body
is recorded in ``requests``; ``max_in_flight`` is the largest number of requests received at once and
``max_serving`` the largest number answered at once. ``serial=True`` answers one request at a time, the
others wait in line, like a llama.cpp server with one slot.

Embeddings have their own queue (``push_embeddings``: ``Status`` and ``Drop`` behaviours), delay
(``embed_delay_s``) and high-water mark of requests answered at once (``max_embed_in_flight``); with
``embed_models`` set, another model name gets OpenAI's 404. The vectors are ``trigram_vector``s.
"""

from __future__ import annotations

import base64
import contextlib
import json
import socket
import struct
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.waiting import wait_for_clock


@dataclass(frozen=True)
class Answer:
    """Reply with a chat completion whose message content is ``text``."""

    text: str
    delay_s: float = 0.0
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Status:
    """Reply with an HTTP error in OpenAI's error format (429 and 5xx carry ``Retry-After: 0``)."""

    code: int
    message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass(frozen=True)
class Drop:
    """Close the connection without answering."""

    delay_s: float = 0.0


Behaviour = Answer | Status | Drop

_ERROR_TYPES = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "forbidden"),
    404: ("invalid_request_error", "model_not_found"),
    429: ("rate_limit_exceeded", "rate_limit_exceeded"),
}


def free_port() -> int:
    """A port with nothing listening on it (for "server unreachable" tests)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])



EMBED_DIM = 64


def trigram_vector(text: str) -> list[float]:
    """A deterministic stand-in embedding: hashed character trigrams (texts that share words point alike)."""
    vec = [0.0] * EMBED_DIM
    lowered = text.lower()
    for j in range(len(lowered) - 2):
        vec[zlib.crc32(lowered[j : j + 3].encode("utf-8")) % EMBED_DIM] += 1.0
    return vec

class OpenAIStub:
    """A scripted OpenAI-compatible chat-completions server on 127.0.0.1; use as a context manager."""

    def __init__(
        self,
        *behaviours: Behaviour,
        handler: Callable[[dict[str, Any]], str | Behaviour] | None = None,
        default: str = "Stub summary of the document.",
        api_key: str | None = None,
        delay_s: float = 0.0,
        model: str = "stub-model",
        serial: bool = False,
        embed_delay_s: float = 0.0,
        embed_models: Collection[str] | None = None,
    ) -> None:
        self.handler = handler
        self.default = default
        self.api_key = api_key  # when set, any other bearer token gets a 401 like OpenAI's
        self.delay_s = delay_s  # added to every request
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.max_in_flight = 0
        self.max_serving = 0
        self.serial = serial
        self._serial_lock = threading.Lock()
        self._serving = 0
        self._queue: deque[Behaviour] = deque(behaviours)
        self._lock = threading.Lock()
        self._in_flight = 0
        self.embedding_requests: list[dict[str, Any]] = []
        self.embedding_headers: list[dict[str, str]] = []
        self.embed_delay_s = embed_delay_s
        self.embed_models = set(embed_models) if embed_models is not None else None
        self.max_embed_in_flight = 0
        self._embed_in_flight = 0
        self._embed_queue: deque[Behaviour] = deque()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._released = threading.Event()  # set: every delay ends now (release_delays)

    # -- control -----------------------------------------------------------------------------

    def push(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self._queue.extend(behaviours)

    def push_embeddings(self, *behaviours: Behaviour) -> None:
        """Answer the next embeddings requests with these (``Status`` or ``Drop``), one per request."""
        with self._lock:
            self._embed_queue.extend(behaviours)

    def release_delays(self) -> None:
        """End every delay now, those under way included: the held requests are answered at once."""
        self._released.set()

    @property
    def in_flight(self) -> int:
        """Chat requests received and not yet answered."""
        with self._lock:
            return self._in_flight

    def _hold(self, seconds: float) -> None:
        """A request's delay: until the clock has moved ``seconds`` on, or ``release_delays``."""
        if seconds > 0:
            wait_for_clock(time.monotonic() + seconds, interval=0.01, unless=self._released.is_set)

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def prompts(self) -> list[str]:
        """The user message of every chat request, in order."""
        with self._lock:
            return [r["messages"][-1]["content"] for r in self.requests]

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("The stub is not running: use it as a context manager")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def __enter__(self) -> OpenAIStub:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:
                if self.path.rstrip("/") != "/v1/models":
                    self._not_found()
                    return
                models = [{"id": stub.model, "object": "model", "created": 0, "owned_by": "openai-stub"}]
                self._json(200, {"object": "list", "data": models})

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                if self.path.rstrip("/") == "/v1/embeddings":
                    self._embeddings(json.loads(raw or b"{}"))
                    return
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._not_found()
                    return
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "Body is not JSON", "type": "invalid_request_error"}})
                    return
                with stub._lock:
                    stub.requests.append(body)
                    stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                    stub._in_flight += 1
                    stub.max_in_flight = max(stub.max_in_flight, stub._in_flight)
                    behaviour: Behaviour | str | None = stub._queue.popleft() if stub._queue else None
                slot = stub._serial_lock if stub.serial else contextlib.nullcontext()
                with slot:
                    with stub._lock:
                        stub._serving += 1
                        stub.max_serving = max(stub.max_serving, stub._serving)
                    try:
                        token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                        if stub.api_key is not None and token != stub.api_key:
                            # Like OpenAI, the message shows only the key's ends.
                            shown = f"{token[:3]}***{token[-2:]}" if len(token) > 6 else "***"
                            behaviour = Status(401, f"Incorrect API key provided: {shown}.")
                        elif behaviour is None:
                            behaviour = stub.handler(body) if stub.handler else stub.default
                        if isinstance(behaviour, str):
                            behaviour = Answer(behaviour)
                        stub._hold(stub.delay_s + behaviour.delay_s)
                        self._serve(behaviour, body)
                    finally:
                        with stub._lock:
                            stub._in_flight -= 1
                            stub._serving -= 1

            def _embeddings(self, body: dict[str, Any]) -> None:
                texts = body.get("input") or []
                texts = [texts] if isinstance(texts, str) else texts
                with stub._lock:
                    stub.embedding_requests.append(body)
                    stub.embedding_headers.append({k.lower(): v for k, v in self.headers.items()})
                    stub._embed_in_flight += 1
                    stub.max_embed_in_flight = max(stub.max_embed_in_flight, stub._embed_in_flight)
                    behaviour = stub._embed_queue.popleft() if stub._embed_queue else None
                try:
                    stub._hold(stub.embed_delay_s)
                    token = (self.headers.get("Authorization") or "").removeprefix("Bearer ").strip()
                    model = body.get("model", "")
                    if stub.api_key is not None and token != stub.api_key:
                        shown = f"{token[:3]}***{token[-2:]}" if len(token) > 6 else "***"
                        behaviour = Status(401, f"Incorrect API key provided: {shown}.")
                    elif behaviour is None and stub.embed_models is not None and model not in stub.embed_models:
                        behaviour = Status(404, f"The model `{model}` does not exist or you do not have access to it.")
                    if behaviour is not None:
                        self._serve(behaviour, body)
                        return
                    vectors = [trigram_vector(t) for t in texts]
                    if body.get("encoding_format") == "base64":  # what the openai client asks for by default
                        encoded: list[Any] = [base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() for v in vectors]
                    else:
                        encoded = vectors
                    data = [{"object": "embedding", "index": i, "embedding": e} for i, e in enumerate(encoded)]
                    self._json(200, {"object": "list", "data": data, "model": model or stub.model,
                                     "usage": {"prompt_tokens": 0, "total_tokens": 0}})
                finally:
                    with stub._lock:
                        stub._embed_in_flight -= 1

            def _not_found(self) -> None:
                error = {"message": f"Unknown path {self.path}", "type": "invalid_request_error", "code": None}
                self._json(404, {"error": error})

            def _serve(self, behaviour: Behaviour, body: dict[str, Any]) -> None:
                if isinstance(behaviour, Drop):
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(behaviour, Status):
                    kind, code = _ERROR_TYPES.get(behaviour.code, ("server_error", None))
                    headers = dict(behaviour.headers)
                    if behaviour.code == 429 or behaviour.code >= 500:
                        headers.setdefault("Retry-After", "0")
                    message = behaviour.message or f"Stub error {behaviour.code}"
                    error = {"message": message, "type": kind, "param": None, "code": code}
                    self._json(behaviour.code, {"error": error}, headers)
                    return
                text = behaviour.text
                self._json(200, {
                    "id": f"chatcmpl-stub{stub.calls}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": body.get("model", stub.model),
                    "choices": [{
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": behaviour.finish_reason,
                    }],
                    "usage": {"prompt_tokens": len(json.dumps(body)) // 4, "completion_tokens": len(text) // 4,
                              "total_tokens": len(json.dumps(body)) // 4 + len(text) // 4},
                })

            def _json(self, code: int, data: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                payload = json.dumps(data).encode("utf-8")
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # A client that gave up (timeout, Ctrl-C) closes its connection: that is not a stub error.
                if not isinstance(sys.exc_info()[1], ConnectionError):
                    super().handle_error(request, client_address)

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-stub", daemon=True
        )
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
