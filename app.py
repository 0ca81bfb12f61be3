"""SAC Workbench, home: what DRM and SAC are, what the workspace holds, and one button to load the demo."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from sac.usecases.corpus import demo_steps
from sac.usecases.evaluate import list_runs
from webapp import data, jobs, matters, settings, widgets
from webapp.glossary import page_setup

page_setup(None, "⚖️")

DEMO_CHOICES = {
    "contractnli": "ContractNLI only: 5 look-alike NDAs, 52 questions (seconds: their vectors ship with the demo)",
    "both": "ContractNLI and CUAD: 5 NDAs + 29 commercial contracts, 246 questions (the paper's three methods in under a "
            "minute, everything in about 4 minutes on 2 cores)",
}



def load_demo(datasets: list[str] | None, llm: bool = False) -> None:
    """Start indexing the demo in the background: the three paper methods of every dataset first (Compare can
    use each index as soon as it is complete), then the two built from the shipped LLM summary sets."""
    wb = settings.workbench()
    jobs.start_build(wb, "Demo", demo_steps(wb, datasets, llm=llm), note="Open **Compare** to see DRM at work.")
    st.rerun()


st.title("SAC Workbench")
st.markdown(
    "**Document-Level Retrieval Mismatch (DRM)** is retrieval returning chunks from the wrong document: "
    "legal corpora are full of look-alike contracts, and a 500-character chunk of one NDA reads like "
    "the same clause of a hundred others. "
    "**Summary-Augmented Chunking (SAC)** prepends a short (~150-character) summary of its document to "
    "every chunk before embedding, so each chunk carries which contract it comes from. "
    "This workbench measures DRM and precision/recall for the baseline and SAC methods on your documents, "
    "shows every method's hits side by side, and lets legal experts review and correct what was retrieved."
)

widgets.show_flashes()
jobs.watch_builds()  # the button below is disabled while a build runs: enabled again when it ends
with widgets.stop_on_error():
    wb = settings.workbench()
    ws = wb.workspace
    indexes = data.indexes(wb)
    corpora = data.corpora()
    runs = list_runs(ws)

st.subheader("Your workspace")
strategies = sorted({i.method for i in indexes if i.method.startswith("sac-")})
cols = st.columns(4)
indexed = {i.corpus for i in indexes if i.chunks}
cols[0].metric("Corpora indexed", len(indexed), help=f"{len(corpora)} available: benchmark datasets (with questions, "
               "the demo's among them) and uploaded document sets; a corpus counts once it has an index")
cols[1].metric("Indexes", len(indexes), help="One per corpus, method, embedder and chunking")
cols[2].metric("Summary sets in use", len(strategies), help="SAC methods with an index: " + (", ".join(strategies) or "none"))
cols[3].metric("Saved evaluation runs", len(runs))
st.caption(f"Workspace folder: `{ws.root}` · " + widgets.index_settings_caption(wb.config))

if indexes:
    frame = pd.DataFrame([{"corpus": i.corpus, "method": i.method, "chunks": i.chunks, "embedder": i.embedder,
                           "chunking": i.chunking, "state": "complete" if i.complete else "incomplete: finish on Corpus"}
                          for i in indexes])
    st.dataframe(frame.sort_values(["corpus", "method"]), hide_index=True, width="stretch", key="home_indexes")
else:
    st.info("Nothing is indexed yet. Load the demo corpus below, or upload your own documents on the **Corpus** page.")

st.subheader("Start with the demo")
st.markdown(
    "The demo is the LegalBench-RAG mini benchmark: real contracts with questions whose answers are marked "
    "character by character, so every hit can be checked against the right document. Loading it builds "
    "the `baseline`, `sac-generic` and `sac-expert` indexes offline: no API key needed. The demo also ships "
    "LLM summaries (Qwen2.5-Coder-1.5B-Instruct, generic and expert prompts) for `sac-generic-llm` and "
    "`sac-expert-llm`: no LLM runs here."
)
# ContractNLI first: Compare is useful within a minute (bench/demo_first_minute.py); CUAD can follow.
choice = st.radio("Datasets to load", list(DEMO_CHOICES), format_func=DEMO_CHOICES.get, index=0,
                  key="home_demo_datasets", horizontal=False)
with_llm = st.checkbox("Also build sac-generic-llm and sac-expert-llm from the shipped LLM summaries", value=True,
                       key="home_demo_llm", help="Two more indexes: about two thirds more time.")
running = jobs.board().running()
if running is not None:
    st.info(f"{running.label} is being built in the background: its progress is in the sidebar on every page. "
            "Compare can search each index as soon as it is complete.", icon=":material/hourglass_top:")
if st.button("Load the demo corpus", type="primary", key="home_load_demo", disabled=running is not None):
    with widgets.stop_on_error():
        load_demo(["contractnli"] if choice == "contractnli" else None, llm=with_llm)

st.subheader("Then")
st.page_link("pages/3_Compare.py", label="Compare: one question, every method side by side, wrong documents flagged",
             icon=":material/compare:")
st.page_link("pages/4_Evaluate.py", label="Evaluate: DRM, precision and recall against k, saved runs", icon=":material/monitoring:")
st.page_link("pages/1_Corpus.py", label="Corpus: upload your own documents and build indexes", icon=":material/upload_file:")
st.page_link("pages/2_Summaries.py", label="Summaries: read, edit and compare the summaries SAC prepends", icon=":material/edit_note:")
st.page_link("pages/5_Review.py", label="Review: label retrieved chunks, mark new ground truth, export", icon=":material/rate_review:")
st.page_link("pages/6_Embedding_map.py", label="Embedding map: see why a method confuses documents, baseline beside SAC",
             icon=":material/scatter_plot:")

matter = matters.current_matter()
if matter:
    with st.expander(f"Remove the matter {matter}", icon=":material/delete_forever:"):
        st.markdown("Deletes everything of this matter for everyone: its corpora, indexes (and its database on a "
                    "Chroma server), summaries, runs, reviews and audit log. The deployment's own log records who "
                    "removed it. This cannot be undone.")
        typed = st.text_input("Type the matter's name to confirm", key="home_matter_confirm")
        if st.button("Remove this matter", type="primary", key="home_matter_remove", disabled=typed != matter):
            with widgets.stop_on_error():
                done = matters.remove_matter(matter)
                widgets.flash("success", f"Removed the matter {matter!r} ({done['files']:,} files).")
            st.query_params.clear()
            st.rerun()
