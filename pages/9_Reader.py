"""Reader: the whole text of one contract with a question's hits marked, stepping from one hit to the next.

Its contract, question, method and k are bound to the URL's query parameters, so a hit on Compare and a row of the
Survey open it on that contract at that hit (``webapp.widgets.reader_link``)."""

from __future__ import annotations

import streamlit as st

from sac.methods import method_label, parse_method, searchable_methods
from sac.render.highlight import Mark, context_window, escape, render_text
from sac.wording import counted
from webapp import data, settings, widgets
from webapp.glossary import page_setup

page_setup("Reader", "📖")

WINDOW = 1500  # characters shown each side of the current hit


def hit_at(raw: str | None) -> tuple[int, int] | None:
    """The ``rd_at`` parameter ("start-end") as a span, or None."""
    try:
        start, end = (int(x) for x in (raw or "").split("-"))
    except ValueError:
        return None
    return (start, end) if 0 <= start < end else None


def from_url(key: str, options: list[str]) -> int:
    """The position of the query parameter ``key``'s value among ``options`` (0 when it is not one of them).

    The contract and the method are read from the URL by their ids, not by the labels a bound select box would use."""
    value = st.query_params.get(key)
    return options.index(value) if value in options else 0


def step(by: int, count: int) -> None:
    st.session_state["rd_pos"] = min(max(st.session_state.get("rd_pos", 0) + by, 0), count - 1)


st.title("Reader: a whole contract, the question's hits marked")

with widgets.stop_on_error():
    wb = settings.workbench()
    entries = data.corpora()
if not entries:
    st.warning("No corpus yet. Load the demo on the home page or upload contracts on **Corpus**.")
    st.stop()
by_name = {e.name: e for e in entries}
top = st.columns([1, 3])
corpus = top[0].selectbox("Corpus", list(by_name), key="rd_corpus", bind="query-params")
with widgets.stop_on_error():
    dataset = data.dataset(by_name[corpus])
documents = {d.doc_id: d for d in dataset.documents}
if not documents:
    st.info("This corpus holds no document.")
    st.stop()
names = data.display_names(list(documents.values()))
doc_id = top[1].selectbox("Contract (type a party or a file name)", list(documents), key="rd_doc_pick",
                          index=from_url("rd_doc", list(documents)), format_func=lambda d: names[d].label)
document = documents[doc_id]
if st.query_params.get("rd_doc") != doc_id:  # another contract chosen here: the hit a link pointed at is not in it
    st.query_params.pop("rd_at", None)
    st.query_params["rd_doc"] = doc_id

built = data.built_methods(wb, corpus)
options = searchable_methods(built)
asked = st.query_params.get("rd_method")
if asked and asked not in options:  # a method a link names (Compare's, with its options) runs on its built index
    try:
        if parse_method(asked).index_name in built:
            options.append(parse_method(asked).name)
    except Exception:  # noqa: BLE001 - a mistyped link: the list's own methods remain
        pass
cols = st.columns([3, 2, 1])
question = cols[0].text_input("Question", key="rd_q", bind="query-params",
                              placeholder="e.g. Which law governs the agreement?")
method = cols[1].selectbox("Method", options, key="rd_method_pick", index=from_url("rd_method", options),
                           format_func=method_label, disabled=not options)
if method:
    st.query_params["rd_method"] = method
k = int(cols[2].number_input("Hits", min_value=1, max_value=64, value=5, key="rd_k", bind="query-params"))

st.subheader(names[doc_id].name)
st.caption(f"{names[doc_id].file_title} · {len(document.text):,} characters")

spans: list[tuple[int, int, str]] = []
if question and question.strip() and method:
    with widgets.stop_on_error():
        found = data.survey(wb, corpus, [method], question, [document], per_document=k, slot="reader")
    hits = found.rows[0].hits.get(found.methods[0], ())
    spans = [(h.span.start, h.span.end, f"#{h.rank} · score {h.score:.3f}") for h in hits]
elif not built:
    st.info("No index of this corpus is built with the current settings: the text is shown without hits.")
followed = hit_at(st.query_params.get("rd_at"))
if followed and followed[1] <= len(document.text) and followed not in [(a, b) for a, b, _ in spans]:
    spans.append((*followed, "the hit you followed"))

signature = (corpus, doc_id, question, method, k, followed)
if st.session_state.get("rd_signature") != signature:  # a new contract or question: open on the hit followed
    st.session_state["rd_signature"] = signature
    at = [(a, b) for a, b, _ in spans]
    st.session_state["rd_pos"] = at.index(followed) if followed in at else 0

if not spans:
    if question and question.strip():
        st.info("No hit in this contract.")
    st.markdown(render_text(document.text, compact=True), unsafe_allow_html=True)
    st.stop()

count = len(spans)
pos = min(st.session_state.get("rd_pos", 0), count - 1)
nav = st.columns([1, 1, 6])
nav[0].button("◀ Previous", key="rd_prev", disabled=pos == 0, on_click=step, args=(-1, count))
nav[1].button("Next ▶", key="rd_next", disabled=pos >= count - 1, on_click=step, args=(1, count))
st.radio("Hits", list(range(count)), key="rd_pos", horizontal=True, label_visibility="collapsed",
         format_func=lambda i: f"{i + 1}: {spans[i][2]}")
start, end, label = spans[pos]
st.markdown(f"**Hit {pos + 1} of {count}** · {label} · characters [{start:,}, {end:,}) of "
            f"{len(document.text):,} ({start / max(len(document.text), 1):.0%} into the contract)")
marks = [Mark(a, b, "selected" if i == pos else "chunk") for i, (a, b, _) in enumerate(spans)]
window, lo = context_window(document.text, start, end, WINDOW)
prefix = "… " if lo > 0 else ""
suffix = " …" if lo + len(window) < len(document.text) else ""
st.markdown(f'<div class="sac-reader">{escape(prefix)}{render_text(window, marks, offset=lo, compact=True)}'
            f"{escape(suffix)}</div>", unsafe_allow_html=True)
st.caption(f"Green: hit {pos + 1}; blue: the other {counted(count - 1, 'hit')}. {WINDOW:,} characters shown each side.")

whole = st.expander("The whole contract, every hit marked", key="rd_whole", on_change="rerun")
if whole.open:
    with whole:
        st.markdown(render_text(document.text, marks, compact=True), unsafe_allow_html=True)
