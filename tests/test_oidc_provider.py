"""The loopback OIDC provider of the sign-in tests (tests/oidc_provider.py) over real HTTP: discovery, the code flow,
the id_token's RS256 signature checked against its JWKS and its claims (nonce included) by Authlib's own validator."""

from __future__ import annotations

import base64
import http.client
import json
import re
import secrets
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet, RSAKey

from tests.oidc_provider import OIDCProvider, pkce_challenge

REDIRECT = "http://127.0.0.1:8599/oauth2callback"


@pytest.fixture
def provider():
    with OIDCProvider(redirect_uris=(REDIRECT,)) as p:
        yield p


def _request(provider, method: str, path: str, body: dict | None = None, headers: dict | None = None):
    """(status, headers, body) of one request, redirects not followed."""
    netloc = urlsplit(provider.issuer).netloc
    conn = http.client.HTTPConnection(netloc, timeout=10)
    data = urlencode(body) if body is not None else None
    all_headers = {"Content-Type": "application/x-www-form-urlencoded", **(headers or {})} if data else dict(headers or {})
    conn.request(method, path, body=data, headers=all_headers)
    reply = conn.getresponse()
    payload = reply.read().decode()
    conn.close()
    return reply.status, dict(reply.getheaders()), payload


def _basic(client_id: str, secret: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{client_id}:{secret}".encode()).decode()}


def _authorize(provider, email: str, nonce: str, verifier: str, state: str = "st-1") -> dict[str, str]:
    """Run /authorize as a browser would (the form, then its submit); returns the redirect's query."""
    params = {"client_id": provider.client_id, "redirect_uri": REDIRECT, "response_type": "code",
              "scope": "openid email profile", "state": state, "nonce": nonce,
              "code_challenge": pkce_challenge(verifier), "code_challenge_method": "S256"}
    status, _, page = _request(provider, "GET", "/authorize?" + urlencode(params))
    assert status == 200 and '<input type="email" name="email"' in page
    hidden = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page))
    assert hidden == params  # state and nonce travel in the form
    status, headers, _ = _request(provider, "POST", "/authorize", {**hidden, "email": email})
    assert status == 302 and headers["Location"].startswith(REDIRECT + "?")
    return {k: v[0] for k, v in parse_qs(urlsplit(headers["Location"]).query).items()}


def _token(provider, code: str, verifier: str, secret: str | None = None):
    status, _, body = _request(provider, "POST", "/token",
                               {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT,
                                "code_verifier": verifier},
                               _basic(provider.client_id, secret or provider.client_secret))
    return status, json.loads(body)


def test_discovery_names_every_endpoint_on_the_issuer(provider):
    status, _, body = _request(provider, "GET", "/.well-known/openid-configuration")
    meta = json.loads(body)
    assert status == 200 and meta["issuer"] == provider.issuer
    for name in ("authorization_endpoint", "token_endpoint", "jwks_uri", "userinfo_endpoint", "end_session_endpoint"):
        assert meta[name].startswith(provider.issuer + "/")
    assert meta["id_token_signing_alg_values_supported"] == ["RS256"] and "S256" in meta["code_challenge_methods_supported"]
    status, _, body = _request(provider, "GET", "/jwks")
    [key] = json.loads(body)["keys"]
    assert key["kty"] == "RSA" and "d" not in key  # the public half only


def test_code_flow_gives_an_id_token_signed_by_the_jwks_key_with_the_nonce(provider):
    nonce, verifier = secrets.token_urlsafe(12), secrets.token_urlsafe(48)
    back = _authorize(provider, "Alice@Example.org", nonce, verifier)
    assert back["state"] == "st-1"
    status, token = _token(provider, back["code"], verifier)
    assert status == 200 and token["token_type"] == "Bearer"

    _, _, jwks = _request(provider, "GET", "/jwks")
    decoded = jwt.decode(token["id_token"], KeySet.import_key_set(json.loads(jwks)), algorithms=["RS256"])
    assert decoded.header["alg"] == "RS256"
    claims = CodeIDToken(decoded.claims, decoded.header, {"iss": {"values": [provider.issuer]}},
                         {"nonce": nonce, "client_id": provider.client_id, "access_token": token["access_token"]})
    claims.validate()  # iss, aud, exp, iat, nonce: what Authlib checks when Streamlit signs someone in
    assert claims["email"] == "Alice@Example.org" and claims["aud"] == provider.client_id
    with pytest.raises(Exception, match="nonce"):
        CodeIDToken(decoded.claims, decoded.header, None, {"nonce": "another", "client_id": provider.client_id}).validate()
    with pytest.raises(BadSignatureError):
        jwt.decode(token["id_token"], RSAKey.generate_key(2048), algorithms=["RS256"])

    status, _, body = _request(provider, "GET", "/userinfo", headers={"Authorization": f"Bearer {token['access_token']}"})
    assert status == 200 and json.loads(body)["sub"] == claims["sub"]
    assert provider.issued[-1]["nonce"] == nonce


def test_the_provider_refuses_what_a_real_one_refuses(provider):
    verifier = secrets.token_urlsafe(48)
    bad = {"client_id": provider.client_id, "redirect_uri": "http://127.0.0.1:1/elsewhere", "response_type": "code",
           "scope": "openid"}
    assert _request(provider, "GET", "/authorize?" + urlencode(bad))[0] == 400
    code = _authorize(provider, "bob@example.org", "n", verifier)["code"]
    assert _token(provider, code, verifier, secret="wrong")[0] == 401  # the client is checked before the code is spent
    assert _token(provider, code, verifier)[0] == 200
    assert _token(provider, code, verifier)[0] == 400  # a code is used once
    code = _authorize(provider, "bob@example.org", "n", verifier)["code"]
    assert _token(provider, code, "another-verifier")[0] == 400
