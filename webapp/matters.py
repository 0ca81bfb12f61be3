"""Matters (a firm's workspaces kept apart, ``sac.usecases.matters``) in the app.

The sidebar's matter choice and its gate, removing a whole matter, and the exports a matter's audit trail records.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from sac import audit
from sac.errors import SacError
from sac.usecases import matters
from webapp.data import store_reopened
from webapp.settings import MATTER_KEY, root_config, workbench
from webapp.signin import identity


def matter_gate() -> None:
    """With matters on: the sidebar's matter choice, or a refusal and ``st.stop()``.

    A ``?matter=`` in the URL (a shared link, or a crafted one) is opened through ``open_matter``, which
    refuses and logs a matter the signed-in identity may not open; the session keeps its own matter then.
    """
    audit.set_actor(identity())
    try:
        root = root_config()
    except SacError:
        return  # bad settings: the page says what is wrong, and opens nothing
    if root.access_file is None:
        return
    who = identity()
    if who is None:
        st.error("This deployment keeps matters apart (SAC_ACCESS_FILE is set), so it needs sign-in: configure "
                 "an [auth] section in .streamlit/secrets.toml (docs/deploying.md, \"Sign-in\").")
        st.stop()
    try:
        mine = matters.Access.load(root.access_file).matters_of(who)
        asked = st.query_params.get("matter")
        if asked and asked != st.session_state.get(MATTER_KEY):
            matters.open_matter(root, who, asked)
            st.session_state[MATTER_KEY] = asked
    except SacError as err:
        st.text(str(err))  # as text: it quotes the identity and the URL's matter, neither rendered as markdown
        st.error("This matter cannot be opened.", icon=":material/block:")
        st.stop()
    if not mine:
        st.text(f"{who} has no matters in the access file.")
        st.error("Ask whoever keeps the access file to add one.", icon=":material/block:")
        st.stop()
    if st.session_state.get(MATTER_KEY) not in mine:
        st.session_state[MATTER_KEY] = mine[0]
    with st.sidebar:
        st.selectbox("Matter", mine, index=mine.index(st.session_state[MATTER_KEY]), key="sac_matter_pick",
                     on_change=_pick_matter,
                     help="Each matter is a workspace of its own: its corpora, indexes, runs, reviews and audit log.")
    st.query_params["matter"] = st.session_state[MATTER_KEY]


def _pick_matter() -> None:
    """The sidebar's choice: the session and the URL both name it (the URL's old value would win otherwise)."""
    st.session_state[MATTER_KEY] = st.session_state["sac_matter_pick"]
    st.query_params["matter"] = st.session_state[MATTER_KEY]


def current_matter() -> str | None:
    """The matter this session works in, or None without matters."""
    try:
        on = root_config().access_file is not None
    except SacError:
        return None
    return st.session_state.get(MATTER_KEY) if on else None


def matter_param() -> dict[str, str] | None:
    """The query parameter that keeps a link inside the session's matter (None without matters)."""
    matter = current_matter()
    return {"matter": matter} if matter else None


def remove_matter(matter: str) -> dict[str, Any]:
    """Delete the whole matter, then forget every cached store client and listing.

    ``sac.usecases.matters.remove_matter`` checks the identity may open it; with the caches dropped, no session
    reads the deleted folder.
    """
    done = matters.remove_matter(root_config(), identity(), matter)
    store_reopened()
    st.session_state.pop(MATTER_KEY, None)
    return done


def record_export(what: str, **details: Any) -> None:
    """``on_click`` of a download button: the export goes into the matter's audit trail."""
    try:
        audit.set_actor(identity())
        workbench().audit.record("export", what, **details)
    except SacError:
        pass  # the page already shows why the workspace cannot be opened
