"""A small OpenID Connect provider on 127.0.0.1 for the sign-in tests: the authorization-code flow that Streamlit's
``st.login`` (Authlib's Starlette client) runs, spoken over real HTTP.

- ``/.well-known/openid-configuration``: discovery (issuer, endpoints, RS256, PKCE S256, ``client_secret_basic``
  and ``client_secret_post``);
- ``/authorize``: checks the client, the redirect URI and the request, then shows an HTML form where the tester
  types an email; submitting it approves at once and redirects back with a one-time code, the request's
  ``state`` and (kept with the code) its ``nonce`` and PKCE challenge;
- ``/token``: the code for an ``id_token`` (RS256, signed with a key made at start, carrying ``iss``, ``aud``,
  ``sub``, ``email``, ``nonce``) and an ``access_token``; client id and secret, redirect URI and PKCE verifier
  checked, each code used once;
- ``/jwks``: the public key; ``/userinfo``: the claims for an access token; ``/logout``: the end-session
  endpoint, back to ``post_logout_redirect_uri``.

Everything it issued is kept in ``OIDCProvider.issued`` for the tests to read.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import RSAKey


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def pkce_challenge(verifier: str) -> str:
    """The S256 code challenge of a PKCE verifier (RFC 7636)."""
    return _b64url(hashlib.sha256(verifier.encode("ascii")).digest())


@dataclass
class _Grant:
    client_id: str
    redirect_uri: str
    email: str
    nonce: str | None
    code_challenge: str | None


@dataclass
class OIDCProvider:
    """One client (``client_id``, ``client_secret``) allowed to return to ``redirect_uris``. Use as a context
    manager: it listens on a free loopback port from ``start()`` until ``stop()``."""

    client_id: str = "sac-workbench"
    client_secret: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    redirect_uris: tuple[str, ...] = ()
    issued: list[dict[str, Any]] = field(default_factory=list)  # the claims of every id_token issued

    def __post_init__(self) -> None:
        self.key = RSAKey.generate_key(2048, parameters={"kid": secrets.token_hex(8), "use": "sig", "alg": "RS256"})
        self._grants: dict[str, _Grant] = {}
        self._access: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    # -- life --------------------------------------------------------------------------------
    def start(self) -> OIDCProvider:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True, name="oidc-provider").start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> OIDCProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def issuer(self) -> str:
        if self._server is None:
            raise RuntimeError("the provider is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def metadata_url(self) -> str:
        return f"{self.issuer}/.well-known/openid-configuration"

    def metadata(self) -> dict[str, Any]:
        base = self.issuer
        return {
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "jwks_uri": f"{base}/jwks",
            "userinfo_endpoint": f"{base}/userinfo",
            "end_session_endpoint": f"{base}/logout",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "email", "email_verified", "name", "nonce"],
        }

    def jwks(self) -> dict[str, Any]:
        return {"keys": [self.key.as_dict(private=False)]}

    # -- the flow ------------------------------------------------------------------------------
    def check_authorize(self, params: dict[str, str]) -> str | None:
        """What is wrong with an authorization request, or None."""
        if params.get("client_id") != self.client_id:
            return "unknown client_id"
        if params.get("redirect_uri") not in self.redirect_uris:
            return "redirect_uri not registered for this client"
        if params.get("response_type") != "code":
            return "only response_type=code is supported"
        if "openid" not in params.get("scope", "").split():
            return "scope must include openid"
        if params.get("code_challenge") and params.get("code_challenge_method") != "S256":
            return "only the S256 code challenge is supported"
        return None

    def approve(self, params: dict[str, str], email: str) -> str:
        """Approve an authorization request for ``email``; returns the redirect back to the client."""
        code = secrets.token_urlsafe(24)
        with self._lock:
            self._grants[code] = _Grant(params["client_id"], params["redirect_uri"], email.strip(), params.get("nonce"),
                                        params.get("code_challenge"))
        back = {"code": code}
        if "state" in params:
            back["state"] = params["state"]
        return f"{params['redirect_uri']}?{urlencode(back)}"

    def exchange(self, form: dict[str, str], authorization: str | None) -> tuple[int, dict[str, Any]]:
        """The token endpoint: (HTTP status, JSON body)."""
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        if authorization and authorization.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(authorization[6:]).decode().partition(":")
        if client_id != self.client_id or client_secret != self.client_secret:
            return 401, {"error": "invalid_client"}
        if form.get("grant_type") != "authorization_code":
            return 400, {"error": "unsupported_grant_type"}
        with self._lock:
            grant = self._grants.pop(form.get("code", ""), None)
        if grant is None or grant.client_id != client_id:
            return 400, {"error": "invalid_grant", "error_description": "unknown or used code"}
        if form.get("redirect_uri") != grant.redirect_uri:
            return 400, {"error": "invalid_grant", "error_description": "redirect_uri differs from the request's"}
        if grant.code_challenge and pkce_challenge(form.get("code_verifier", "")) != grant.code_challenge:
            return 400, {"error": "invalid_grant", "error_description": "PKCE verifier does not match"}
        now = int(time.time())
        user = {"sub": "user-" + hashlib.sha256(grant.email.lower().encode()).hexdigest()[:16], "email": grant.email,
                "email_verified": True, "name": grant.email.split("@")[0]}
        claims = {"iss": self.issuer, "aud": client_id, "iat": now, "exp": now + 600, "auth_time": now, **user}
        if grant.nonce is not None:
            claims["nonce"] = grant.nonce
        id_token = jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)
        access_token = secrets.token_urlsafe(24)
        with self._lock:
            self._access[access_token] = user
            self.issued.append(claims)
        return 200, {"access_token": access_token, "token_type": "Bearer", "expires_in": 600, "id_token": id_token,
                     "scope": "openid email profile"}

    def userinfo(self, authorization: str | None) -> dict[str, Any] | None:
        token = authorization[7:] if authorization and authorization.startswith("Bearer ") else ""
        with self._lock:
            return self._access.get(token)


SIGN_IN_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Test identity provider</title></head>
<body><h1>Test identity provider</h1><p>Sign in to {client}</p>
<form method="post" action="/authorize">{hidden}
<label>Email <input type="email" name="email" required autofocus></label>
<button type="submit">Continue</button></form></body></html>"""


def _handler(provider: OIDCProvider) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet: pytest shows failures, not traffic
            pass

        def _send(self, status: int, body: bytes, content_type: str, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, body: dict[str, Any]) -> None:
            self._send(status, json.dumps(body).encode(), "application/json")

        def _redirect(self, location: str) -> None:
            self._send(302, b"", "text/plain", {"Location": location})

        def _form(self) -> dict[str, str]:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length).decode("utf-8")
            return {k: v[-1] for k, v in parse_qs(raw, keep_blank_values=True).items()}

        def _authorize_page(self, params: dict[str, str]) -> None:
            problem = provider.check_authorize(params)
            if problem:
                self._send(400, html.escape(problem).encode(), "text/plain; charset=utf-8")
                return
            hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                             for k, v in params.items())
            page = SIGN_IN_PAGE.format(client=html.escape(params["client_id"]), hidden=hidden)
            self._send(200, page.encode(), "text/html; charset=utf-8")

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            if url.path == "/.well-known/openid-configuration":
                self._json(200, provider.metadata())
            elif url.path == "/jwks":
                self._json(200, provider.jwks())
            elif url.path == "/authorize":
                self._authorize_page(query)
            elif url.path == "/userinfo":
                user = provider.userinfo(self.headers.get("Authorization"))
                self._json(200, user) if user else self._json(401, {"error": "invalid_token"})
            elif url.path == "/logout":
                back = query.get("post_logout_redirect_uri")
                if back in provider.redirect_uris:
                    self._redirect(back)
                else:
                    self._send(200, b"Signed out.", "text/plain")
            else:
                self._json(404, {"error": "not_found"})

        def do_POST(self) -> None:
            path = urlsplit(self.path).path
            form = self._form()
            if path == "/authorize":
                email = form.pop("email", "").strip()
                problem = provider.check_authorize(form) or (None if "@" in email else "an email is required")
                if problem:
                    self._send(400, html.escape(problem).encode(), "text/plain; charset=utf-8")
                    return
                self._redirect(provider.approve(form, email))
            elif path == "/token":
                status, body = provider.exchange(form, self.headers.get("Authorization"))
                self._json(status, body)
            else:
                self._json(404, {"error": "not_found"})

    return Handler
