"""Compare: one question, every method side by side, ground truth highlighted, wrong documents flagged."""

from __future__ import annotations

import streamlit as st

from sac.errors import SacError
from sac.methods import BASE_METHODS, method_label, parse_method, searchable_methods
from sac.render import plots
from sac.render.highlight import render_context, render_hit, render_labelled, render_plain
from sac.render.trace import how_sure, named_target, offered_targets, trace_notes
from sac.types import document_title
from sac.usecases.compare import ComparisonRequest, DocumentDiff, compare_methods, document_diffs, metrics_frame
from sac.usecases.diagnostics import hit_boilerplate
from sac.wording import counted
from webapp import data, jobs, settings, widgets
from webapp.glossary import page_setup

page_setup("Compare", "🔍")


def shown_name(doc_id: str) -> str:
    """The document by its parties (its file title when the corpus list does not hold it)."""
    return names[doc_id].name if doc_id in names else document_title(doc_id)


def shown_label(doc_id: str) -> str:
    """The name with the file title beside it (a hit's header, a pin)."""
    return names[doc_id].label if doc_id in names else document_title(doc_id)


def pin_to(doc_id: str, question: str) -> None:
    """Pin the contract the user meant for this question ("I meant …"): the rerun searches inside it alone."""
    st.session_state["cmp_pin"] = doc_id
    st.session_state["cmp_pin_query"] = question


def doc_names(doc_ids: tuple[str, ...]) -> str:
    return "; ".join(shown_name(d) for d in doc_ids)


def diff_line(diff: DocumentDiff, right_known: bool) -> str:
    """What one method retrieved that the baseline did not: right documents first, then the others."""
    if diff.same:
        return "retrieved from the same documents as the baseline."
    parts = []
    if diff.gained:
        parts.append(f"found the question's document the baseline missed: {doc_names(diff.gained)}")
    if diff.lost:
        parts.append(f"missed the question's document the baseline found: {doc_names(diff.lost)}")
    if right_known and not (diff.gained or diff.lost):
        parts.append("same right documents as the baseline")
    other = "wrong document" if right_known else "document"
    if diff.only_method:
        parts.append(f"{len(diff.only_method)} {other}(s) only this method retrieved: {doc_names(diff.only_method)}")
    if diff.only_reference:
        parts.append(f"{len(diff.only_reference)} {other}(s) only the baseline retrieved: "
                     f"{doc_names(diff.only_reference)}")
    return " · ".join(parts) + "."


st.title("Compare methods on one question")

with widgets.stop_on_error():
    wb = settings.workbench()
    entries = data.corpora()

indexed = [e for e in entries if data.built_methods(wb, e.name)]
jobs.watch_corpora([e.name for e in indexed])  # a corpus a build makes searchable joins the list by itself
if not indexed:
    st.warning("No corpus is indexed with the current settings. Load the demo on the home page or build an index on **Corpus**.")
    for building in jobs.building_corpora():  # what this page waits for, by name: it opens on each as it is ready
        jobs.incomplete_notice(wb, building)
    st.page_link("app.py", label="Home: load the demo corpus", icon=":material/home:")
    st.stop()

by_name = {e.name: e for e in indexed}
top = st.columns([2, 1, 2])
corpus = widgets.corpus_picker(list(by_name), "cmp_corpus", top[0], bind="query-params",
                               help="Benchmark datasets have questions with known answers; uploaded corpora take your own.")
entry = by_name[corpus]
available = data.built_methods(wb, corpus)
jobs.incomplete_notice(wb, corpus)
k = int(top[1].number_input("k (hits per method)", min_value=1, max_value=64, value=8, key="cmp_k", bind="query-params"))
default_methods = [m for m in BASE_METHODS if m in available] or available[:3]
options = searchable_methods(available)  # search options (hybrid, docs, rerank) run on any built index
# While a build completes indexes, the choice takes each one up, until the user chooses their own.
methods = top[2].multiselect("Methods", options, default=jobs.follow_ready("cmp_methods", default_methods),
                             key="cmp_methods", format_func=method_label, bind="query-params",
                             help="+hybrid<w>: dense + BM25 · +docs<N>: documents first · +rerank: SAC_RERANKER")

with widgets.stop_on_error():
    dataset = data.dataset(entry)
documents = {d.doc_id: d for d in dataset.documents}
names = data.display_names(dataset.documents)

reviewed = data.reviewed_questions(wb, corpus, dataset.documents)
sources = [*(["Benchmark question"] if dataset.queries else []), *(["Reviewed question"] if reviewed else []),
           "Your own question"]
source = st.radio("Question", sources, horizontal=True, key="cmp_source", bind="query-params")
gold: tuple = ()
pinned: list[str] = []
query_id = ""
if source in ("Benchmark question", "Reviewed question"):
    benchmark = source == "Benchmark question"
    queries = {q.query_id: q for q in dataset.queries} if benchmark else reviewed
    query_id = st.selectbox(
        f"Pick one of the {len(queries)} benchmark questions (type to search)" if benchmark
        else f"Pick a question with ground truth marked on Review ({counted(len(queries), 'question')})",
        list(queries), format_func=lambda qid: queries[qid].text, bind="query-params",
        key="cmp_query_pick" if benchmark else "cmp_review_pick",
    )
    query = queries[query_id].text
    gold = queries[query_id].gold
    if benchmark and query_id == next(iter(queries)):  # the default: the file's first, not one chosen for how it comes out
        st.caption(f"Questions are listed in the benchmark's order and the first is shown. One question can go either "
                   f"way: the figures over every question are in **How the methods do on all {len(queries)} "
                   "questions…** below.")
    st.caption("Ground truth is known for this question: hits from any other document are flagged, "
               "the answer's characters are highlighted." if benchmark else
               "Ground truth marked on **Review** for this question: hits from any other document are flagged, "
               "the marked characters are highlighted.")
else:
    query = st.text_input("Your question", key="cmp_query_text", bind="query-params",
                          placeholder="e.g. Which law governs the agreement between the parties?")
    # A pin belongs to the question it was chosen for (a shared link brings both): a new question unpins.
    if st.session_state.get("cmp_pin"):
        if st.session_state.setdefault("cmp_pin_query", query) != query:
            st.caption(f"Unpinned {widgets.literal(shown_label(st.session_state['cmp_pin']))}: it was chosen for the "
                       "previous question.")
            st.session_state["cmp_pin"] = ""
            del st.session_state["cmp_pin_query"]
    pin = st.selectbox(
        "The contract this question is about (optional: pinning it searches inside that contract only)",
        [""] + list(documents), format_func=lambda d: names[d].label if d else "— not pinned —", key="cmp_pin",
        bind="query-params",
        on_change=lambda: st.session_state.update(cmp_pin_query=st.session_state.get("cmp_query_text", "")),
    )
    pinned = [pin] if pin else []
    query_id = "live"

if not methods:
    st.info("Choose at least one method.")
    st.stop()
if not query or not query.strip():
    st.info("Type a question, or pick a benchmark question, to see every method's hits side by side.")
    st.stop()

with widgets.stop_on_error():
    found = data.search_traced(wb, corpus, methods, query, k, within=tuple(pinned))  # a pin: searched inside alone
traces = [r.trace for r in found.values()]
# With no answer known and nothing pinned, the contract the question names for sure (every method that resolved one
# agrees) stands in for a pin: every column's hits, the baseline's too, are flagged against it. It stays the page's
# reading, not the user's pin: the comparison handed to Review records only what the user pinned.
named = named_target(traces) if not gold and not pinned else None
comparison = compare_methods(query, {m: list(r.hits) for m, r in found.items()}, gold=gold,
                             pinned=pinned or ([named.doc_id] if named else []))
st.session_state["last_comparison"] = ComparisonRequest(
    corpus=corpus, query=query.strip(), k=k, methods=tuple(methods), query_id=query_id, gold=tuple(gold),
    pinned=tuple(pinned),
)
titles = {d: n.label for d, n in names.items()}
if named is not None:
    st.caption(f"Flagged against the contract the question names: {widgets.literal(shown_label(named.doc_id))} "
               f"({how_sure(named.probability)}). Pin a contract above to search inside it alone.")
offered = offered_targets(traces) if source == "Your own question" and not pinned else []
if offered:
    st.markdown("**Which contract did you mean?** The question names no contract for sure; choosing one pins it "
                "and searches inside it alone.")
    for candidate in offered:
        st.button(f"I meant {widgets.literal(shown_name(candidate.doc_id))} ({100 * candidate.probability:.0f} %)",
                  key=f"cmp_meant_{candidate.doc_id}", on_click=pin_to, args=(candidate.doc_id, query))

table = metrics_frame(comparison)
if comparison.targets:
    # Methods named as the columns below name them ("recommended (…)", "(reads file names)"), in full.
    st.dataframe(plots.percent_table(widgets.labelled(table),
                                     {"precision": "precision %", "recall": "recall %", "drm": "DRM %"})
                 .rename(columns={"wrong": "wrong-document hits"}), hide_index=True, key="cmp_table",
                 column_config={"method": st.column_config.TextColumn(width="large")})
    if not gold:
        st.caption("Precision and recall need the answer's characters (a benchmark or reviewed question); a pinned or "
                   "named contract gives DRM only: —.")
for diff in document_diffs(comparison):
    label = f"{method_label(diff.method)} vs {method_label(diff.reference)}:"  # as the columns below name them
    st.markdown(render_labelled(label, diff_line(diff, bool(comparison.targets))), unsafe_allow_html=True)

if dataset.queries:
    overall = st.expander(f"How the methods do on all {len(dataset.queries)} questions of this dataset at k={k}",
                          key="cmp_all_questions", on_change="rerun")
    if overall.open:
        with overall:
            st.dataframe(widgets.labelled(data.all_questions(wb, corpus, methods, k, dataset.queries)), hide_index=True,
                         key="cmp_all_table", column_config={"method": st.column_config.TextColumn(width="large")})
            st.caption("One question can go either way; these figures are over every question. "
                       "The Evaluate page runs every k and saves the run.")

summary_doc = next(iter(sorted(comparison.targets)), None)
# How many other documents hold a near-copy of each hit's chunk, read from the baseline index (no summary).
boilerplate = (hit_boilerplate(wb, corpus, {r.method: r.hits for r in comparison.results})
               if "baseline" in available else {r.method: [None] * len(r.hits) for r in comparison.results})
columns = st.columns(len(comparison.results))
for column, result in zip(columns, comparison.results):
    with column:
        st.subheader(method_label(result.method))
        if result.drm is not None:
            wrong = sum(1 for w in result.wrong if w)
            figures = f"DRM **{result.drm * 100:.0f} %** ({wrong} of {len(result.hits)} hits from another document)"
            if result.precision is not None:
                figures = (f"precision **{result.precision * 100:.1f} %** · recall **{result.recall * 100:.1f} %** · "
                           + figures)
            st.markdown(figures)
        strategy = parse_method(result.method).strategy
        doc_for_summary = summary_doc or (result.hits[0].span.doc_id if result.hits else None)
        if strategy is None:
            st.markdown(render_plain("No summary: chunks are embedded alone.", muted=True), unsafe_allow_html=True)
        elif doc_for_summary in documents:
            try:
                summary = data.summaries(wb, corpus, list(dataset.documents), strategy).get(doc_for_summary)
            except SacError as err:
                summary = None
                st.caption(str(err))
            if summary is not None:
                st.markdown(render_labelled(f"Summary used for {shown_name(doc_for_summary)}:", summary.text),
                            unsafe_allow_html=True)
        for label, text in trace_notes(found[result.method].trace, query, comparison.targets, titles=titles):
            st.markdown(render_labelled(label, text), unsafe_allow_html=True)
        if not result.hits:
            st.info("No hits.")
        for hit, wrong, others in zip(result.hits, result.wrong, boilerplate[result.method]):
            doc = documents.get(hit.span.doc_id)
            st.markdown(render_hit(rank=hit.rank, title=shown_label(hit.span.doc_id), score=hit.score,
                                   text=hit.chunk.text, span=hit.span, gold=gold, wrong=wrong), unsafe_allow_html=True)
            if others:
                st.caption(f"Boilerplate: {others} other document(s) hold a near-identical chunk (cosine ≥ 0.95, "
                           "no summary): this text alone cannot tell which contract it is from.")
            if doc is not None:
                with st.expander(f"#{hit.rank} in its document", key=f"cmp_ctx_{result.method}_{hit.rank}"):
                    st.markdown(render_context(doc.text, hit.span, gold), unsafe_allow_html=True)
                st.page_link("pages/9_Reader.py", label="Read in place", icon=":material/menu_book:",
                             query_params=widgets.reader_params(corpus, doc.doc_id, query.strip(), result.method, k,
                                                                (hit.span.start, hit.span.end)))
