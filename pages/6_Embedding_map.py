"""Embedding map: the chunks of a few documents in 2-D, baseline beside SAC, with a question and its hits."""

from __future__ import annotations

import streamlit as st

from sac.render.map import embedding_map_figure
from sac.types import document_title, text_hash
from sac.usecases import diagnostics
from webapp import data, jobs, settings, widgets
from webapp.glossary import page_setup

page_setup("Embedding map", "🗺️")
st.title("Embedding map")
st.markdown("Every dot is a chunk, coloured by its document; the star is the question, the rings its top-k "
            "hits. Without a summary, the clauses every contract shares crowd together whatever document they "
            "come from; SAC's summary pulls each document's chunks apart. The **silhouette** by document "
            "(cosine, in the full embedding space) says how far: near 1 apart, near 0 mixed.")

with widgets.stop_on_error():
    wb = settings.workbench()
    indexed = [e for e in data.corpora() if data.built_methods(wb, e.name)]
if not indexed:
    st.warning("No corpus is indexed with the current settings. "
               "Load the demo on the home page or build an index on **Corpus**.")
    st.stop()

by_name = {e.name: e for e in indexed}
cols = st.columns([2, 2, 2, 1])
corpus = widgets.corpus_picker(list(by_name), "map_corpus", cols[0])
available = data.built_methods(wb, corpus)
jobs.incomplete_notice(wb, corpus)
left = cols[1].selectbox("Left", available, index=available.index("baseline") if "baseline" in available else 0,
                         key="map_left")
right_default = next((m for m in ("sac-generic", "sac-expert") if m in available), available[-1])
right = cols[2].selectbox("Right", available, index=available.index(right_default), key="map_right")
k = int(cols[3].number_input("k", min_value=1, max_value=32, value=8, key="map_k"))

with widgets.stop_on_error():
    corpus_data = data.dataset(by_name[corpus])
targets: list[str] = []
if corpus_data.queries:
    queries = {q.query_id: q for q in corpus_data.queries}
    query_id = st.selectbox("Question", list(queries), format_func=lambda qid: queries[qid].text, key="map_query_pick")
    query = queries[query_id].text
    targets = sorted(queries[query_id].gold_doc_ids)
else:
    query = st.text_input("Question", key="map_query_text", placeholder="e.g. Which law governs the agreement?")
if not query or not query.strip():
    st.info("Type a question to place it on the map.")
    st.stop()

methods = list(dict.fromkeys([left, right]))
with widgets.stop_on_error():
    hits = data.search(wb, corpus, methods, query, k)
    all_docs, lookalikes = diagnostics.map_documents(wb, corpus, methods[0], targets[0] if targets else None, n=5)

hit_docs = [h.span.doc_id for m in methods for h in hits[m]]
default_docs = list(dict.fromkeys([*targets, *hit_docs, *lookalikes]))[:8]
cols = st.columns([4, 1])
chosen = cols[0].multiselect("Documents on the map", all_docs, default=[d for d in default_docs if d in all_docs],
                             format_func=document_title, key=f"map_docs_{text_hash(corpus + '|' + query)[:12]}",
                             help="By default: the question's document, the documents of the hits, and look-alikes.")
projections = ["pca", "umap"] if diagnostics.umap_available() else ["pca"]
projection = cols[1].radio("Projection", projections, key="map_projection", format_func=str.upper,
                           help="PCA by default; UMAP when the umap-learn package is installed.")
if len(chosen) < 2:
    st.info("Choose at least two documents.")
    st.stop()

with widgets.stop_on_error():
    maps = diagnostics.embedding_maps(wb, corpus, methods, chosen, query, hits, projection)
metric_cols = st.columns(len(maps))
for column, m in zip(metric_cols, maps):
    column.metric(f"Silhouette by document · {m.method}", "n/a" if m.silhouette is None else f"{m.silhouette:.2f}")
st.plotly_chart(embedding_map_figure(maps, targets), key="map_figure")
shown = set(chosen)
outside = {m: sum(h.span.doc_id not in shown for h in hits[m]) for m in methods}
if any(outside.values()):
    st.caption("Hits from documents not on the map: " + ", ".join(f"{m} {n}" for m, n in outside.items()))
