"""Audit trail: who uploaded, built, edited, sent to a language model, exported and deleted what in this workspace."""

from __future__ import annotations

import streamlit as st

from sac.audit import ACTIONS, entries_csv, entries_frame
from sac.errors import SacError
from webapp import matters, settings
from webapp.glossary import page_setup

page_setup("Audit trail", "📜")
st.title("Audit trail")
matter = matters.current_matter()
st.markdown(
    (f"Everything done in the matter **{matter}**" if matter else "Everything done in this workspace")
    + ": uploads, builds, summary edits, documents sent to a language model (and the server they went to), "
    "exports and deletions, with who did it and when. The log is append-only; each line carries the hash of "
    "the one before, so an edited or removed line shows below. Entries name documents by id, never their text."
)
try:
    log = settings.workbench().audit
    entries = log.entries()
    broken = log.verify()
except (SacError, ValueError) as err:
    st.error(f"Cannot read the audit trail: {err}")
    st.stop()
if not entries:
    st.info("Nothing has been recorded yet.")
    st.stop()
if broken is None:
    st.success(f"{len(entries):,} entries; the chain of hashes is unbroken.", icon=":material/verified:")
else:
    st.error(f"The log was changed: line {broken} does not follow the line before it.", icon=":material/gpp_bad:")

cols = st.columns(2)
actions = cols[0].multiselect("Actions", [a for a in ACTIONS if any(e["action"] == a for e in entries)],
                              key="audit_actions")
people = cols[1].multiselect("Who", sorted({e["who"] for e in entries}), key="audit_who")
shown = [e for e in entries if (not actions or e["action"] in actions) and (not people or e["who"] in people)]
st.dataframe(entries_frame(shown), hide_index=True, key="audit_table")  # text cells: never rendered as HTML
st.download_button("Export as CSV", entries_csv(shown), file_name=f"sac-audit-{matter or 'workspace'}.csv",
                   mime="text/csv", key="audit_export", on_click=matters.record_export,
                   args=("audit trail (CSV)",), kwargs={"entries": len(shown)})
