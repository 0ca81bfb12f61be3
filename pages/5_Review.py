"""Review: legal experts label what each method retrieved, mark new ground truth, and export both."""

from __future__ import annotations

import json

import streamlit as st

from sac.errors import SacError
from sac.methods import BASE_METHODS, method_label, searchable_methods
from sac.render import plots
from sac.render.highlight import Mark, render_hit, render_labelled, render_text
from sac.types import document_title, text_hash
from sac.usecases import review
from sac.usecases.compare import ComparisonRequest, compare_methods
from sac.usecases.evaluate import list_runs
from sac.usecases.review import LABELS, ChunkLabel, benchmark_json, find_quote, run_hits
from sac.wording import counted
from webapp import data, jobs, matters, settings, signin, widgets
from webapp.glossary import page_setup

page_setup("Review", "✅")
st.title("Review retrieved chunks")
st.markdown("Label each retrieved chunk for the question, mark the exact words that answer it as new ground "
            "truth, and export both. Labels are saved in the workspace as you submit them.")
widgets.show_flashes()

with widgets.stop_on_error():
    wb = settings.workbench()
    ws = wb.workspace
    store = review.review_store(wb)
    entries = {e.name: e for e in data.corpora()}

signed_in = signin.identity()
if signed_in is None:
    reviewer = st.text_input("Your name (saved with every label)", "", key="rev_reviewer", persist_state="session").strip()
else:
    reviewer = signed_in
    st.text_input("Reviewer (you are signed in; saved with every label)", signed_in, disabled=True, key="rev_reviewer_signed_in")
source = st.radio("Review", ["A live comparison", "A saved evaluation run"], horizontal=True, key="rev_source")


def labels_overview() -> None:
    """Every label of the workspace: counts per method, the reviewers' agreement, exports. Shown with or without a
    question chosen."""
    st.subheader("Labels so far")
    all_labels = store.labels()
    if not all_labels:
        st.caption("No labels yet.")
        return
    labelled = sorted({lab.corpus for lab in all_labels} & set(entries))
    report = review.label_report(all_labels, {c: data.dataset(entries[c]).queries for c in labelled})
    summary = widgets.labelled(report.summary)  # methods named as on Compare
    cols = st.columns([3, 2])
    cols[0].dataframe(summary, hide_index=True, key="rev_summary")
    cols[1].plotly_chart(plots.label_counts_figure(summary), key="rev_summary_fig")
    with st.expander(f"All {len(all_labels)} labels", key="rev_all_labels"):
        st.dataframe(report.table, hide_index=True, key="rev_labels_table")
    st.download_button("Export labels as CSV", report.csv, file_name="sac-review-labels.csv",
                       mime="text/csv", key="rev_export_csv", on_click=matters.record_export,
                       args=("review labels (CSV)",), kwargs={"labels": len(all_labels)})
    if report.agreement is not None:
        st.markdown("**Agreement between reviewers**, on the chunks both labelled (each reviewer's latest label "
                    "of a chunk, whichever method retrieved it)")
        st.dataframe(report.agreement, hide_index=True, key="rev_agreement")
        st.caption("Cohen's kappa: 1 is full agreement, 0 what chance gives with each reviewer's own label "
                   "frequencies; relevance counts relevant and partly relevant against the rest. In brackets, a 95 % "
                   "bootstrap interval over the chunks: from a few chunks it is wide.")
        differ = report.disagreements
        with st.expander(f"{counted(len(differ), 'chunk')} labelled differently", key="rev_disagreements"):
            st.dataframe(differ, hide_index=True, key="rev_disagreements_table")
            st.download_button("Export them as CSV", differ.to_csv(index=False), file_name="sac-review-disagreements.csv",
                               mime="text/csv", key="rev_export_disagreements", on_click=matters.record_export,
                               args=("review disagreements (CSV)",), kwargs={"chunks": len(differ)})
    if report.flagged:
        st.markdown("**Expert labels against the benchmark's wrong-document flags** (benchmark questions only)")
        st.dataframe(report.flags, hide_index=True, key="rev_flags")
        st.caption("DRM counts every hit of the right-hand column as wrong. One labelled relevant there is a "
                   "look-alike that answers the question as well; one labelled wrong document on the left says the "
                   "benchmark's ground truth misses a document.")


gold: tuple = ()
pinned: list[str] = []
hits: dict = {}
if source == "A live comparison":
    last = st.session_state.get("last_comparison") or ComparisonRequest(corpus="", query="", k=8, methods=())
    indexed = [n for n in entries if data.built_methods(wb, n)]
    if not indexed:
        st.warning("Nothing is indexed yet: load the demo on the home page first.")
        st.stop()
    cols = st.columns([2, 3, 1])
    if last.corpus in indexed and "rev_corpus" not in st.session_state:
        widgets.set_current_corpus(last.corpus)  # the last question run on Compare, with its corpus
    corpus = widgets.corpus_picker(indexed, "rev_corpus", cols[0])
    query = cols[1].text_input("Question", last.query if last.corpus == corpus else "",
                               key="rev_query", help="Opens with the last question run on Compare.").strip()
    k = int(cols[2].number_input("k", 1, 64, last.k, key="rev_k"))
    available = data.built_methods(wb, corpus)
    jobs.incomplete_notice(wb, corpus)
    options = searchable_methods(available)
    # Opens with the methods Compare last ran on this corpus (recommended among them), else the paper's three.
    compared = [m for m in last.methods if m in options] if last.corpus == corpus else []
    methods = st.multiselect("Methods", options, default=compared or [m for m in BASE_METHODS if m in available],
                             key="rev_methods", format_func=method_label)
    corpus_data = data.dataset(entries[corpus])
    queries = {q.query_id: q for q in corpus_data.queries}
    if queries:
        picked = st.selectbox("…or a benchmark question (its answer is known)", ["", *queries], key="rev_bench_query",
                              format_func=lambda q: queries[q].text if q else "—")
        if picked:
            query = queries[picked].text
    from_compare = last.corpus == corpus and last.query == query
    bench = next((q for q in corpus_data.queries if q.text == query), None)
    # A question without a benchmark answer shows the ground truth marked for it here, once there is some.
    marked = next((q for q in data.reviewed_questions(wb, corpus, corpus_data.documents).values() if q.text == query), None)
    gold = bench.gold if bench else (last.gold if from_compare else ()) or (marked.gold if marked else ())
    pinned = list(last.pinned) if from_compare else []
    query_id = bench.query_id if bench else f"live-{text_hash(query)[:8]}"
    label_source = "live"
    if not query or not methods:
        st.info("Type a question, pick a benchmark question, or run one on **Compare**; and choose methods.")
        labels_overview()
        st.stop()
    with widgets.stop_on_error():
        hits = data.search(wb, corpus, methods, query, k)
else:
    runs = {r.run_id: r for r in list_runs(ws)}
    if not runs:
        st.info("No saved run yet: run one on **Evaluate**.")
        labels_overview()
        st.stop()
    cols = st.columns([3, 1, 1])
    run_id = cols[0].selectbox("Run", list(runs), format_func=lambda r: runs[r].description, key="rev_run")
    run_settings = runs[run_id].settings
    dataset = cols[1].selectbox("Dataset", run_settings.get("datasets", []), key="rev_dataset")
    k = int(cols[2].number_input("k", 1, 64, 8, key="rev_run_k"))
    corpus = runs[run_id].corpus_of(dataset)
    if corpus not in entries:
        st.error(f"The run's benchmark corpus {corpus!r} is not available any more.")
        st.stop()
    corpus_data = data.dataset(entries[corpus])
    asked = data.run_questions(runs[run_id], dataset)  # with the ground truth the run was scored against
    queries = {q.query_id: q for q in (corpus_data.queries if asked is None else asked)}
    query_id = st.selectbox("Question", list(queries), format_func=lambda q: queries[q].text, key="rev_run_query")
    query = queries[query_id].text
    gold = queries[query_id].gold
    hits = run_hits(data.run_retrieved(runs[run_id]), dataset, query_id,
                    {d.doc_id: d.text for d in corpus_data.documents}, k)
    label_source = run_id
    if run_settings.get("pool"):
        st.caption("This run had a distractor pool: pool documents show their span only.")

documents = {d.doc_id: d for d in corpus_data.documents}
comparison = compare_methods(query, hits, gold=gold, pinned=pinned)
previous = {(lab.method, lab.doc_id, lab.start, lab.end): lab
            for lab in store.labels(corpus=corpus, query=query) if lab.reviewer == reviewer}
qkey = text_hash(f"{corpus}|{query}|{label_source}")[:10]

st.subheader("Label the hits")
if not reviewer:
    st.warning("Enter your name above to save labels or ground truth: every label carries its reviewer.")
tabs = st.tabs([method_label(r.method) for r in comparison.results], key="rev_tabs")
for tab, result in zip(tabs, comparison.results):
    with tab, st.form(f"rev_form_{qkey}_{result.method}", border=False):
        message = st.empty()  # a refused save is reported here, above the hits, not below the last one
        chosen = []
        for hit, wrong in zip(result.hits, result.wrong):
            before = previous.get((result.method, hit.span.doc_id, hit.span.start, hit.span.end))
            left, right = st.columns([3, 2])
            left.markdown(render_hit(rank=hit.rank, title=document_title(hit.span.doc_id), score=hit.score,
                                     text=hit.chunk.text, span=hit.span, gold=gold, wrong=wrong),
                          unsafe_allow_html=True)
            wkey = f"rev_{qkey}_{result.method}_{hit.rank}"
            label = right.radio(f"Label for #{hit.rank}", LABELS, index=LABELS.index(before.label) if before else None,
                                horizontal=True,
                                key=f"{wkey}_label")
            note = right.text_input(f"Note for #{hit.rank}", before.note if before else "", key=f"{wkey}_note")
            chosen.append((hit, label, note))
        if st.form_submit_button(f"Save labels for {method_label(result.method)}", type="primary", disabled=not reviewer,
                                 key=f"rev_save_{qkey}_{result.method}"):
            labels = [
                ChunkLabel(corpus=corpus, query_id=query_id, query=query, method=result.method, doc_id=hit.span.doc_id,
                           start=hit.span.start, end=hit.span.end, label=label, reviewer=reviewer, rank=hit.rank,
                           note=note.strip(), source=label_source)
                for hit, label, note in chosen if label is not None
            ]
            try:
                saved = review.save_labels(wb, labels)
                widgets.flash("success", f"Saved {len(saved)} labels for {method_label(result.method)}.")
                st.rerun()
            except SacError as err:
                message.error(str(err))

labels_overview()

st.subheader("Mark new ground truth")
options = [(r.method, h) for r in comparison.results for h in r.hits if h.span.doc_id in documents]
if options:
    picked = st.selectbox("Chunk", range(len(options)), key=f"rev_gt_pick_{qkey}",
                          format_func=lambda i: f"{options[i][0]} #{options[i][1].rank} · {document_title(options[i][1].span.doc_id)}")
    hit = options[picked][1]
    mode = st.radio("Mark by", ["quote", "character range"], horizontal=True, key="rev_gt_mode")
    if mode == "quote":
        quote = st.text_area("Paste the exact words from the chunk", "", height=80, key=f"rev_gt_quote_{qkey}_{picked}")
        found = find_quote(hit.chunk.text, quote)
        if quote.strip() and found is None:
            st.warning("These words are not in the chunk exactly as typed.")
        start, end = (hit.span.start + found[0], hit.span.start + found[1]) if found else (hit.span.start, hit.span.start)
    else:
        lo, hi = st.slider("Characters of the chunk", 0, max(len(hit.chunk.text), 1), (0, len(hit.chunk.text)),
                           key=f"rev_gt_range_{qkey}_{picked}")
        start, end = hit.span.start + lo, hit.span.start + hi
    st.markdown(render_text(hit.chunk.text, [Mark(start, end, "selected")], offset=hit.span.start),
                unsafe_allow_html=True)
    gt_note = st.text_input("Note (optional)", "", key="rev_gt_note")
    if st.button("Add as ground truth", key="rev_gt_add", disabled=end <= start or not reviewer,
                 help=None if reviewer else "Enter your name at the top of the page first."):
        try:
            review.add_ground_truth(wb, corpus=corpus, query_id=query_id, query=query,
                                    document=documents[hit.span.doc_id], start=start, end=end, reviewer=reviewer,
                                    note=gt_note)
            widgets.flash("success", f"Added [{start}, {end}) of {document_title(hit.span.doc_id)} as ground truth.")
            st.rerun()
        except SacError as err:
            st.error(str(err))

new_gold = store.gold(corpus=corpus)
if new_gold:
    st.caption(f"New ground truth for {corpus}: {len(new_gold)} span(s).")
    for g in new_gold:
        st.markdown(render_labelled(f"{g.query} → {g.doc_id} [{g.start}, {g.end}):", g.answer), unsafe_allow_html=True)
    drop = st.selectbox("Remove a span", [None, *range(len(new_gold))], key="rev_gt_drop",
                        format_func=lambda i: "—" if i is None else f"{new_gold[i].doc_id} [{new_gold[i].start}, {new_gold[i].end})")
    if drop is not None and st.button("Remove it", key="rev_gt_remove"):
        store.remove_gold(new_gold[drop])
        st.rerun()
    st.download_button("Export as LegalBench-RAG benchmark JSON",
                       json.dumps(benchmark_json(new_gold), indent=1, ensure_ascii=False),
                       file_name=f"{corpus}-review.json", mime="application/json", key="rev_export_json",
                       on_click=matters.record_export, args=(f"reviewed ground truth of corpus {corpus!r} (JSON)",),
                       kwargs={"spans": len(new_gold)})
