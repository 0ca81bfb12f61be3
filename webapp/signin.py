"""Sign-in: Streamlit's OIDC (``st.login`` / ``st.user``).

On with an ``[auth]`` section in ``.streamlit/secrets.toml`` (docs/deploying.md, "Sign-in"); without one the app is
open, as on 127.0.0.1. Only the default provider is used: ``st.login()`` with no name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import streamlit as st

AUTH_KEYS = ("redirect_uri", "cookie_secret")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")  # in [auth] itself or in [auth.default]


def _auth_section() -> dict[str, Any] | None:
    """The ``[auth]`` section of the secrets, or None when there is none (or no secrets file at all)."""
    try:
        section = st.secrets.get("auth")
    except FileNotFoundError:  # no secrets file (StreamlitSecretNotFoundError), or one that does not parse
        return None
    return dict(section) if section is not None else None


def _missing_auth_keys(section: dict[str, Any]) -> list[str]:
    provider = section["default"] if isinstance(section.get("default"), Mapping) else section
    return [key for key in AUTH_KEYS if not section.get(key)] + [key for key in PROVIDER_KEYS if not provider.get(key)]


def sign_in_configured() -> bool:
    """Whether sign-in is on: ``[auth]`` holds every key Streamlit's default provider needs."""
    section = _auth_section()
    return section is not None and not _missing_auth_keys(section)


def identity() -> str | None:
    """The signed-in user: the provider's email, lower-cased (its ``sub`` when it gives no email).

    None when sign-in is off or nobody is signed in (``page_setup`` stops every page before that).
    """
    if not sign_in_configured() or not st.user.get("is_logged_in"):
        return None
    for claim in ("email", "sub"):
        value = st.user.get(claim)
        if isinstance(value, str) and value.strip():
            return value.strip().lower() if claim == "email" else value.strip()
    return None


def sign_in_gate() -> None:
    """With sign-in on and nobody signed in: a short explanation and the Sign in button, and nothing else of the app.

    An ``[auth]`` section that lacks keys stops every page too: a broken sign-in never leaves the app open.
    """
    section = _auth_section()
    if section is None:
        return
    missing = _missing_auth_keys(section)
    if missing:
        st.error(f"Sign-in is half configured: the [auth] section of .streamlit/secrets.toml lacks {', '.join(missing)}. "
                 "Add them (docs/deploying.md, \"Sign-in\"), or remove the section to run without sign-in.")
        st.stop()
    if identity() is None:
        st.title("SAC Workbench")
        st.markdown("This workbench is shared by a team: sign in to see its corpora, runs and reviews. "
                    "Labels and ground truth you save carry the identity you sign in with.")
        if st.button("Sign in", type="primary", icon=":material/login:", key="sac_sign_in"):
            st.login()
        st.stop()


def signed_in_panel() -> None:
    """The sidebar's line saying who is signed in, with the Sign out button (nothing when sign-in is off)."""
    who = identity()
    if who is None:
        return
    st.text(f"Signed in as {who}")  # as text: a provider's claim is never rendered as markdown or HTML
    if st.button("Sign out", icon=":material/logout:", key="sac_sign_out"):
        st.logout()
