"""Survey: one question, every contract. One row per contract with its own best spans, a column per method."""

from __future__ import annotations

import streamlit as st

from sac.methods import method_label, parse_method, searchable_methods
from sac.usecases.survey import default_methods, export_bytes, ignored_options, llm_configured
from sac.wording import counted
from webapp import data, matters, settings, widgets
from webapp.glossary import page_setup

page_setup("Survey", "📋")

READER_K = 5  # hits a row's "Read in place" marks in its contract (at least the row's own spans)

st.title("Survey: one question, every contract")
st.markdown("The question is searched **inside each contract**, so every row holds spans of its own contract only: "
            "no hit from another document, by construction. Sort by a column's header, filter the rows, read a span "
            "in place, download the table.")

with widgets.stop_on_error():
    wb = settings.workbench()
    entries = data.corpora()
indexed = [e for e in entries if data.built_methods(wb, e.name)]
if not indexed:
    st.warning("No corpus is indexed with the current settings. Load the demo on the home page or build an index on **Corpus**.")
    st.page_link("app.py", label="Home: load the demo corpus", icon=":material/home:")
    st.stop()

by_name = {e.name: e for e in indexed}
top = st.columns([2, 2, 1])
corpus = widgets.corpus_picker(list(by_name), "survey_corpus", top[0])
available = data.built_methods(wb, corpus)
options = searchable_methods(available)
methods = top[1].multiselect("Methods (a column each)", options, default=default_methods(options), key="survey_methods",
                             format_func=method_label,
                             help="Several methods: their spans side by side, contract by contract. Inside one contract "
                             "the chunks' own words rank best (baseline+hybrid0.5): a summary, the same on every chunk "
                             "of a contract, does not tell them apart.")
per_document = int(top[2].number_input("Spans per contract", min_value=1, max_value=5, value=1, key="survey_k"))

with widgets.stop_on_error():
    dataset = data.dataset(by_name[corpus])
documents = list(dataset.documents)
names = data.display_names(documents)
question = st.text_input("Your question", key="survey_question", bind="query-params",
                         placeholder="e.g. Which law governs the agreement?")
chosen = st.multiselect(f"Contracts (all {len(documents)} when none is chosen; type a party to find one)",
                        [d.doc_id for d in documents], key="survey_documents", format_func=lambda d: names[d].label)
answers = False
if llm_configured(wb.config):
    answers = st.checkbox(f"A short answer per contract from its spans ({wb.config.llm_model}, quoting only them)",
                          key="survey_answers", help="One request per contract and method to the configured LLM.")
for method in methods:
    skipped = ignored_options(parse_method(method))
    if skipped:
        st.caption(f"{method_label(method)}: {', '.join(skipped)} do not apply to a survey: every contract is "
                   "searched (a +hybrid weight and +inner still rank the spans inside each).")

if not methods:
    st.info("Choose at least one method.")
    st.stop()
if not question or not question.strip():
    st.info("Type a question to see the best span of every contract.")
    st.stop()

picked = set(chosen)
surveyed = [d for d in documents if d.doc_id in picked] if chosen else documents
progress = widgets.ProgressReporter(st.empty().container(), unit="contracts")
with widgets.stop_on_error():
    table = data.survey(wb, corpus, methods, question, surveyed, per_document=per_document, answers=answers,
                        progress=progress)
for note in table.notes:
    st.warning(note)

shown = table.where(st.text_input("Filter rows (a party, a file name, words of the spans)", key="survey_filter"))
frame = shown.frame()
several = len(table.methods) > 1
links: dict[str, object] = {}
for method in table.methods:
    column = f"read · {method}" if several else "read"
    frame[column] = [widgets.reader_link(corpus, row.doc_id, table.question, method, max(per_document, READER_K),
                                         (hit.span.start, hit.span.end)) if (hit := row.best(method)) else None
                     for row in shown.rows]
    links[column] = st.column_config.LinkColumn(method_label(method) if several else "read", display_text="Read in place")
renamed = {c: c.replace(f" · {m}", f" · {method_label(m)}") for m in table.methods for c in frame.columns
           if c.endswith(f" · {m}") and not c.startswith("read")}
st.caption(f"{counted(len(shown.rows), 'contract')} of {len(table.rows)} · searched in {table.seconds:.1f} s · "
           "score: cosine to the question (under +hybrid, the fused score scaled over every contract's chunks)")
st.dataframe(frame.drop(columns=["document"]).rename(columns=renamed), hide_index=True, key="survey_table",
             column_config={**links, "contract": st.column_config.TextColumn(width="large")})

by_id = {row.doc_id: row for row in shown.rows}
if by_id:  # the table's links open a new tab; this one stays in the session, a link a keyboard reaches
    pick = st.selectbox("Read one contract in place", list(by_id), key="survey_read_pick",
                        format_func=lambda d: by_id[d].name.label)
    first = by_id[pick].best(table.methods[0])
    st.page_link("pages/9_Reader.py", label=f"Open {by_id[pick].name.name} in the Reader", icon=":material/menu_book:",
                 query_params=widgets.reader_params(corpus, pick, table.question, table.methods[0],
                                                    max(per_document, READER_K),
                                                    (first.span.start, first.span.end) if first else None))

what = f"survey of corpus {corpus!r}: {table.question!r}"
cols = st.columns(2)
cols[0].download_button("Download CSV", export_bytes(shown, "csv"), file_name="survey.csv", mime="text/csv",
                        key="survey_csv", on_click=matters.record_export, args=(f"{what} (CSV)",),
                        kwargs={"rows": len(shown.rows)})
cols[1].download_button("Download XLSX", export_bytes(shown, "xlsx"), file_name="survey.xlsx",
                        mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", key="survey_xlsx",
                        on_click=matters.record_export, args=(f"{what} (XLSX)",), kwargs={"rows": len(shown.rows)})
