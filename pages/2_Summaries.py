"""Summaries: read every document's summary per strategy, edit one (new version, re-embedded at once),
regenerate, and flag look-alike summaries that cannot tell their documents apart."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from sac.errors import SacError, SummarizerError
from sac.methods import parse_method
from sac.render.highlight import render_labelled
from sac.types import text_hash
from sac.usecases import summaries as summary_cases
from sac.usecases.summaries import FILTERS, filter_summaries, lookalike_pairs, summaries_frame
from webapp import data, settings, widgets
from webapp.glossary import page_setup

page_setup("Summaries", "📝")

BUILTIN = summary_cases.BUILTIN_STRATEGIES
LLM = tuple(summary_cases.LLM_STRATEGIES.values())


def summarizer_ui(strategy: str, target: int) -> Any:
    """The summarizer to regenerate ``strategy`` with: the built-in one, or an endpoint with an editable prompt."""
    kinds = ["built-in", "OpenAI-compatible endpoint"] if strategy in BUILTIN else ["OpenAI-compatible endpoint"]
    kind = st.radio("Regenerate with", kinds, horizontal=True, key="sum_regen_kind")
    if kind == "built-in":
        return summary_cases.builtin_summarizer(strategy, target)
    cols = st.columns(3)
    model = cols[0].text_input("Model", "gpt-4o-mini", key="sum_llm_model")
    base_url = cols[1].text_input("Base URL (empty: api.openai.com)", "", key="sum_llm_base_url").strip() or None
    api_key = cols[2].text_input("API key", "", type="password", key="sum_llm_key").strip() or None
    prompt = st.text_area("Prompt ({max_chars} and {document} are filled in)", summary_cases.default_prompt(strategy),
                          height=220, key=f"sum_prompt_{strategy}")
    llm_strategy = strategy if strategy not in BUILTIN else f"{strategy}-llm"
    return summary_cases.endpoint_summarizer(settings.workbench(), llm_strategy, model=model, base_url=base_url,
                                             api_key=api_key, prompt=prompt, target_chars=target)


st.title("Summaries")
st.markdown("SAC embeds each chunk after its document's summary. A summary that does not say which contract "
            "it is (parties, type, date) cannot keep look-alike documents apart: find those here, and fix them.")
widgets.show_flashes()

with widgets.stop_on_error():
    wb = settings.workbench()
    entries = {e.name: e for e in data.corpora()}
if not entries:
    st.info("No corpus yet: load the demo on the home page or upload documents on **Corpus**.")
    st.stop()

corpus = widgets.corpus_picker(list(entries), "sum_corpus", format_func=lambda n: entries[n].label,
                               persist_state="session")
with widgets.stop_on_error():
    dataset = data.dataset(entries[corpus])
documents = list(dataset.documents)
built = data.built_methods(wb, corpus)
known = list(dict.fromkeys([*BUILTIN, *(m[4:] for m in built if m.startswith("sac-")), *LLM]))
chosen = st.multiselect("Strategies", known, default=list(BUILTIN), key="sum_strategies",
                        help="sac-<strategy> is the method that embeds chunks after these summaries.")

summaries: dict[str, dict] = {}
for strategy in chosen:
    try:
        summaries[strategy] = data.summaries(wb, corpus, documents, strategy)
    except SummarizerError:
        st.info(f"No {strategy!r} summaries yet: generate them below (an OpenAI-compatible endpoint) "
                "or on **Corpus**.")
    except SacError as err:
        st.error(str(err))

cols = st.columns([2, 1, 1])
search = cols[0].text_input("Search documents and summaries", "", key="sum_search")
show = cols[1].selectbox("Show", FILTERS, key="sum_filter")
threshold = cols[2].slider("Look-alike if cosine ≥", 0.5, 1.0, 0.9, 0.01, key="sum_threshold",
                           help="Each summary is embedded with the index's embedder and compared to every other.")
lookalikes = {}
if summaries and len(documents) > 1:
    try:
        for strategy, by_doc in summaries.items():
            ids = [d.doc_id for d in documents if d.doc_id in by_doc]
            lookalikes[strategy] = data.lookalikes(wb, ids, [by_doc[i].text for i in ids])
    except SacError as err:
        st.error(str(err))
frame = summaries_frame(documents, summaries, {d.doc_id: len(wb.chunks(d)) for d in documents}, lookalikes)
shown = filter_summaries(frame, search, show, threshold)
st.caption(f"{len(shown)} of {len(frame)} documents · target length {wb.config.summary_chars} characters "
           "(20 over allowed) · similarity: cosine to the most similar other document's summary")
column_config = {"doc_id": None, "document": st.column_config.TextColumn("document", pinned=True, width="medium")}
column_config.update({s: st.column_config.TextColumn(s, width="large") for s in summaries})
column_config.update({f"{s} similarity": st.column_config.ProgressColumn(
    f"{s} similarity", min_value=0.0, max_value=1.0, format="%.3f", width="small") for s in lookalikes})
picked = st.dataframe(shown, hide_index=True, column_config=column_config, key="sum_table", on_select="rerun",
                      selection_mode="single-row")
rows = picked.selection.rows if picked is not None else []
if rows:
    row = shown.iloc[rows[0]]
    for s in summaries:
        if isinstance(row.get(s), str):
            st.markdown(render_labelled(f"{row['document']} · {s}:", row[s]), unsafe_allow_html=True)
else:
    st.caption("Select a row to read its summaries in full.")
pairs = lookalike_pairs(lookalikes, threshold)
if len(pairs):
    st.warning(f"{len(pairs)} pair(s) of look-alike summaries (cosine ≥ {threshold:.2f}): their chunks carry "
               "nearly the same context, so SAC cannot tell these documents apart. Edit one to name what differs.")
    st.dataframe(pairs, hide_index=True, key="sum_pairs")
elif lookalikes:
    st.caption(f"No two summaries are {threshold:.2f} or more similar.")

st.subheader("Edit or regenerate a summary")
doc_ids = [d.doc_id for d in documents]
by_id = {d.doc_id: d for d in documents}
cols = st.columns([3, 1])
doc_id = cols[0].selectbox("Document", doc_ids, key="sum_edit_doc")
strategy = cols[1].selectbox("Strategy", known, key="sum_edit_strategy")
document = by_id[doc_id]
store = wb.summary_store
current = store.current(document, strategy)
method = parse_method(f"sac-{strategy}")
indexed = method.name in built

history = store.history(document.content_hash, strategy)
if history:
    st.dataframe(pd.DataFrame([{"version": s.version, "model": s.model, "chars": len(s.text), "cut": s.cut,
                                "created": s.created, "text": s.text} for s in reversed(history)]),
                 hide_index=True, key="sum_history",
                 column_config={"text": st.column_config.TextColumn("text", width="large")})

# The text box is keyed by the version this session opened, not the newest: when someone else saves meanwhile, a
# new key would replace the text typed here with theirs, and "Save" would store their text as this person's edit.
base_key = f"sum_base_{text_hash(doc_id)}_{strategy}"
base_version = st.session_state.setdefault(base_key, current.version if current else 0)
base = next((s for s in history if s.version == base_version), current)
if current and current.version > base_version:
    st.warning(f"Version {current.version} was saved by someone else after you opened version {base_version}. "
               f"Saving adds your text as version {current.version + 1}; every version stays in the history above.",
               icon=":material/group:")
    if st.button(f"Load version {current.version} instead", key="sum_load_latest"):
        st.session_state[base_key] = current.version
        st.rerun()
edit_key = f"sum_edit_text_{text_hash(doc_id)}_{strategy}_{base_version}"
text = st.text_area(f"Summary ({strategy})", base.text if base else "", height=100, key=edit_key)
st.caption(f"{len(text.strip())} characters (target {wb.config.summary_chars}). "
           + (f"Saving re-embeds only this document's chunks in the {method.name} index."
              if indexed else f"No {method.name} index with the current settings yet: it will use this summary when built."))
if st.button("Save as a new version", type="primary", key="sum_save", disabled=not text.strip()):
    try:
        saved = summary_cases.save_edit(wb, document, strategy, text)
        st.session_state[base_key] = saved.version
        if indexed:
            report, seconds = summary_cases.reembed(wb, corpus, documents, method)
            st.session_state["sum_last_report"] = {
                "document": doc_id, "method": method.name, "version": saved.version,
                "chunks re-embedded": report.added, "chunks kept": report.kept, "removed": report.deleted,
                "documents changed": report.documents_changed, "seconds": round(seconds, 2),
            }
        widgets.flash("success", f"Saved version {saved.version} of the {strategy} summary." + (
            f" Re-embedded {report.added} chunks of {report.documents_changed} document in {method.name} "
            f"({report.kept} unchanged) in {seconds:.1f} s." if indexed else ""))
        data.invalidate()
        st.rerun()
    except SacError as err:
        st.error(str(err))
if st.session_state.get("sum_last_report"):
    st.caption("Last re-embedding after an edit:")
    st.dataframe(pd.DataFrame([st.session_state["sum_last_report"]]), hide_index=True, key="sum_report")

with st.expander("Regenerate", key="sum_regen_box"):
    try:
        summarizer = summarizer_ui(strategy, wb.config.summary_chars)
    except SacError as err:
        st.error(str(err))
        summarizer = None
    cols = st.columns(2)
    one = cols[0].button("Regenerate this document", key="sum_regen_one", disabled=summarizer is None)
    every = cols[1].button("Regenerate all documents", key="sum_regen_all", disabled=summarizer is None)
    if one or every:
        targets = [document] if one else documents
        progress = widgets.ProgressReporter(st.container(), unit="documents")
        try:
            made = summary_cases.regenerate_summaries(wb, targets, summarizer, progress=progress)
            for target in targets:  # this session's own new versions: its text boxes follow them
                st.session_state.pop(f"sum_base_{text_hash(target.doc_id)}_{summarizer.strategy}", None)
            regen_method = parse_method(f"sac-{summarizer.strategy}")
            note = ""
            if regen_method.name in built:
                report, seconds = summary_cases.reembed(wb, corpus, documents, regen_method, progress=progress)
                note = f" Re-embedded {report.added} chunks in {regen_method.name} in {seconds:.1f} s."
            widgets.flash("success", f"Regenerated {len(made)} {summarizer.strategy} summaries.{note}")
            data.invalidate()
            st.rerun()
        except SacError as err:
            st.error(str(err))
