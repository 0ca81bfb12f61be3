"""Corpus: upload documents (or a LegalBench-RAG benchmark), choose the index settings, build with progress."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pandas as pd
import streamlit as st

from sac.errors import SacError
from sac.methods import BASE_METHODS, METADATA_METHOD, method_label, parse_methods
from sac.render import plots
from sac.render.map import document_risk_figure
from sac.types import Document
from sac.usecases import corpus as corpus_cases
from sac.usecases import summaries
from sac.usecases.diagnostics import look_alike_risk
from sac.usecases.jobs import BuildStep
from sac.usecases.remove import RemovalReport, remove_corpus, remove_documents
from sac.wording import counted
from webapp import data, jobs, settings, widgets
from webapp.glossary import page_setup

page_setup("Corpus", "📄")

UPLOAD_TYPES = ["txt", "md", "pdf", "docx", "html", "htm", "zip"]
LLM_METHOD_STRATEGIES = tuple(summaries.LLM_STRATEGIES.values())


def settings_ui() -> dict[str, Any]:
    """Index settings (shared with every page of this session) and the summarizer for this build."""
    current = settings.settings()
    cols = st.columns(4)
    chunk_size = int(cols[0].number_input("Chunk size (characters)", 100, 4000, current["chunk_size"], step=50,
                                          key="corpus_chunk_size"))
    with cols[1]:
        widgets.chunking_select("corpus_chunking")
    summary_chars = int(cols[2].number_input("Summary length (characters)", 20, 1000, current["summary_chars"],
                                             step=10, key="corpus_summary_chars"))
    choices = list(dict.fromkeys([current["embedder"], *settings.EMBEDDER_CHOICES]))
    embedder = cols[3].selectbox("Embedder", choices, key="corpus_embedder",
                                 help="minilm: the packaged all-MiniLM-L6-v2, offline. The ONNX variants run faster.")
    settings.set_settings(chunk_size=chunk_size, summary_chars=summary_chars, embedder=embedder)

    kind = st.radio("Summarizer", ["built-in", "OpenAI-compatible endpoint"], horizontal=True, key="corpus_summarizer",
                    help="Built-in: offline extractive summaries (title, parties, date). An endpoint: any "
                         "OpenAI-compatible server (OpenAI, Azure, Ollama, vLLM, llama.cpp).")
    llm: dict[str, Any] | None = None
    # LLM methods build from summaries in the store (a shipped set, an earlier run) or from the endpoint below.
    options = [*BASE_METHODS, *(f"sac-{s}" for s in LLM_METHOD_STRATEGIES), "sac-generic+filename"]
    if kind != "built-in":
        cols = st.columns(3)
        llm = {
            "model": cols[0].text_input("Model", "gpt-4o-mini", key="corpus_llm_model"),
            "base_url": cols[1].text_input("Base URL (empty: api.openai.com)", "", key="corpus_llm_base_url",
                                           placeholder="http://127.0.0.1:8089/v1").strip() or None,
            # Kept only in this browser session's memory: never written to disk or to a log.
            "api_key": cols[2].text_input("API key", "", type="password", key="corpus_llm_key").strip() or None,
        }
    methods = st.multiselect("Methods to build", options, default=list(BASE_METHODS) + (
        [f"sac-{s}" for s in LLM_METHOD_STRATEGIES] if llm else []), key="corpus_methods", format_func=method_label,
        help="sac-generic+filename also embeds each file's name, and its document search reads it: metadata, not "
             f"the text, for questions that name a file (Compare then offers {METADATA_METHOD}).")
    return {"llm": llm, "methods": methods}


def llm_summarizers(wb: Any, llm: dict[str, Any] | None, methods: list[str]) -> list[Any]:
    """One summarizer per LLM method chosen (``sac-generic-llm``, ``sac-expert-llm``); none without an endpoint."""
    if not llm:
        return []
    return summaries.endpoint_summarizers(wb, methods, model=llm["model"], base_url=llm["base_url"],
                                          api_key=llm["api_key"])


def build_step(wb: Any, corpus: str, documents: list[Document], methods: list[str],
               llm: dict[str, Any] | None, notices: list[tuple[str, str]]) -> BuildStep:
    """One corpus's part of a background build; LLM summaries (when asked) are made while the other indexes embed,
    and their estimate goes to ``notices``."""
    summarizers = llm_summarizers(wb, llm, methods)
    if summarizers:
        # Shown before the first request (and kept with the result); requests go out llm_concurrency at a time.
        estimate = (f"{summaries.estimate_summaries(wb, documents, summarizers).describe()}\n\n"
                    f"Requests: {wb.config.llm_concurrency} at a time, while the other indexes are embedded; finished "
                    "summaries are kept if this stops.")
        notices.append(("info", estimate))
    return BuildStep(corpus, tuple(documents), tuple(parse_methods(",".join(methods))), tuple(summarizers))


def start(wb: Any, label: str, steps: list[BuildStep], notices: Sequence[tuple[str, str]] = ()) -> None:
    """Start the build in the background and show it: its progress is in the sidebar on every page, and
    ``notices`` (files not read, a benchmark saved, an LLM estimate) stay with it until the next build."""
    jobs.start_build(wb, label, steps, notices=notices)
    st.session_state["corpus_upload_round"] = st.session_state.get("corpus_upload_round", 0) + 1  # empty uploader
    widgets.set_current_corpus(steps[-1].corpus)  # the upload: this page's list and every other page show it
    st.rerun()


def last_build_report() -> None:
    """How this session's last build is going, with what was said when it started (files of the upload not read, a
    benchmark saved), or how it ended: what each index's sync did."""
    job = jobs.my_last_job()
    if job is None:
        return
    status = job.status()
    if status.active:  # once it ended, the sidebar says all of it (on every page)
        for kind, text in job.notices:
            getattr(st, kind)(text)
        st.info(f"{status.label} is {status.state} in the background (progress in the sidebar, on every page). "
                "Leaving this page does not stop it.", icon=":material/hourglass_top:")
    elif status.reports:
        st.dataframe(pd.DataFrame(status.reports), hide_index=True, key="corpus_last_build")


def run_removal(remove: Callable[[], RemovalReport], *, forget_choice: bool = False) -> None:
    """Run a removal; its report is shown after the rerun, or its error now."""
    try:
        report = remove()
    except SacError as err:
        data.invalidate()
        st.error(str(err))
        return
    widgets.flash("success", report.message())
    data.store_reopened()
    if forget_choice:
        del st.session_state["corpus_shown"]  # the corpus may be gone from the list
    st.rerun()


st.title("Corpus")
st.markdown("Upload contracts (or a LegalBench-RAG benchmark as a zip), choose how they are chunked, "
            "summarised and embedded, and build one index per method.")
widgets.show_flashes()

with widgets.stop_on_error():
    st.subheader("1 · Settings")
    choice = settings_ui()
    wb = settings.workbench()
    ws = wb.workspace
st.caption(widgets.index_settings_caption(wb.config) + " Other pages use these settings in this session.")

st.subheader("2 · Add documents")
uploaded_corpora = [e.name for e in data.corpora() if e.kind == "upload"]
cols = st.columns([1, 2])
target = cols[0].selectbox("Add to corpus", ["(new corpus)"] + uploaded_corpora, key="corpus_target")
new_name = cols[1].text_input("New corpus name", "my-contracts", key="corpus_new_name",
                              disabled=target != "(new corpus)",
                              help="Letters, digits, '.', '_' or '-'. A LegalBench-RAG zip becomes a benchmark instead.")
# A finished build empties the uploader: a new key each round (an uploader's files cannot be reset in place).
files = st.file_uploader("Files: .txt .md .pdf .docx .html, a .zip of them, or a LegalBench-RAG folder as .zip",
                         type=UPLOAD_TYPES, accept_multiple_files=True,
                         key=f"corpus_files_{st.session_state.get('corpus_upload_round', 0)}")
building = jobs.board().running() is not None
jobs.watch_builds()  # buttons disabled while a build runs, and this session's last build's report
if st.button("Add and build indexes", type="primary", key="corpus_build", disabled=not files or not choice["methods"],
             help="Runs in the background. A build is running now: this one queues behind it." if building else
             "Runs in the background."):
    progress = widgets.ProgressReporter(st.container(), unit="files")
    notices: list[tuple[str, str]] = []
    try:
        # A file that cannot be read is a warning, shown with the build (or at once when nothing is built).
        uploads = corpus_cases.read_uploads([(f.name, f.getvalue()) for f in files], progress)
        notices.extend(("warning", problem) for problem in uploads.problems)
        steps: list[BuildStep] = []
        for file_name, datasets in uploads.benchmarks.items():
            name = corpus_cases.benchmark_name(file_name)
            kept = corpus_cases.keep_benchmark(wb, name, datasets)
            notices.append(("info", f"Saved benchmark {name!r} with {len(datasets)} dataset(s); it is listed on "
                                    "Compare and Evaluate."))
            steps += [build_step(wb, corpus, list(ds.documents), choice["methods"], choice["llm"], notices)
                      for corpus, ds in kept.items()]
        if uploads.documents:
            corpus = new_name.strip() if target == "(new corpus)" else target
            all_docs = ws.add_documents(corpus, uploads.documents)
            steps.append(build_step(wb, corpus, all_docs, choice["methods"], choice["llm"], notices))
        if steps:
            start(wb, f"Building {', '.join(dict.fromkeys(s.corpus for s in steps))}", steps, notices)
        elif not uploads.benchmarks:
            notices.append(("error", "No document could be read."))
    except SacError as err:
        notices.append(("error", str(err)))
    finally:
        data.invalidate()
    for kind, text in notices:  # nothing is building (start reruns the page): the files' errors show now
        getattr(st, kind)(text)
last_build_report()

st.subheader("3 · Documents")
entries = data.corpora()
if not entries:
    st.info("No corpus yet.")
    st.stop()
by_name = {e.name: e for e in entries}
shown = widgets.corpus_picker(list(by_name), "corpus_shown", format_func=lambda n: by_name[n].label,
                              persist_state="session")
with widgets.stop_on_error():
    dataset = data.dataset(by_name[shown])
built = data.built_methods(wb, shown)
partial = data.incomplete_methods(wb, shown)
st.caption(f"{counted(len(dataset.documents), 'document')} · {counted(len(dataset.queries), 'benchmark question')} · "
           f"indexes built with the current settings: {', '.join(built) or 'none'}")
jobs.incomplete_notice(wb, shown)
if partial and not building:
    if st.button(f"Finish building {', '.join(partial)}", key="corpus_finish", type="primary"):
        try:
            start(wb, f"Finishing {shown}", [BuildStep(shown, dataset.documents, tuple(parse_methods(",".join(partial))))])
        except SacError as err:
            st.error(str(err))
names = data.display_names(dataset.documents)
frame = pd.DataFrame([
    {"contract": names[d.doc_id].name, "document": d.doc_id, "characters": len(d.text), "chunks": len(wb.chunks(d)),
     "source": d.source or ""}
    for d in dataset.documents
])
st.dataframe(frame, hide_index=True, key="corpus_documents")
sac_built = [m for m in built if m.startswith("sac-")]
if "baseline" in built and sac_built:
    risk_box = st.expander("Look-alike risk per document: why hits come from the wrong document", key="corpus_risk",
                           on_change="rerun")
    if risk_box.open:
        with risk_box:
            other = st.selectbox("Beside the baseline", sac_built, key="corpus_risk_method")
            try:
                risk = look_alike_risk(wb, shown, other)
                st.plotly_chart(document_risk_figure(risk, other), key="corpus_risk_figure")
                st.dataframe(plots.risk_table(risk, other), hide_index=True, key="corpus_risk_table")
                st.caption("Wrong-document neighbours: share of each chunk's 8 nearest chunks that come from another "
                           "document (a question that lands here finds that share of wrong neighbours). Closest other "
                           "document: mean best cosine of a chunk to another document's chunk. Boilerplate: share of "
                           "chunks with a near-copy (cosine ≥ 0.95) in another document.")
            except SacError as err:
                st.error(str(err))

cols = st.columns(2)
with cols[0]:
    if choice["llm"]:
        try:
            ahead = summaries.estimate_summaries(wb, list(dataset.documents),
                                                 llm_summarizers(wb, choice["llm"], choice["methods"]))
            st.caption(ahead.describe().replace("\n", " · ") if ahead.strategies
                       else "Add sac-generic-llm or sac-expert-llm to the methods to build to summarise with this endpoint.")
        except SacError as err:
            st.error(str(err))
    if st.button("Build or update this corpus's indexes", key="corpus_rebuild", disabled=building or not choice["methods"],
                 help="Embeds only what is missing or changed; the methods chosen above. Runs in the background."):
        try:
            notices = []
            step = build_step(wb, shown, list(dataset.documents), choice["methods"], choice["llm"], notices)
            start(wb, f"Building {shown}", [step], notices)
        except SacError as err:
            st.error(str(err))
with cols[1]:
    if by_name[shown].kind == "upload":
        remove = st.multiselect("Remove documents", [d.doc_id for d in dataset.documents], key="corpus_remove_pick",
                                format_func=lambda d: names[d].label)
        if st.button("Remove from the corpus and every index", key="corpus_remove", disabled=building or not remove,
                     help="Also deletes their summaries, review labels and spans, and the saved runs that hold their "
                          "text; then the index store is compacted, so the text is gone from disk."):
            run_removal(lambda: remove_documents(wb, shown, remove))
    else:
        st.caption("Benchmark corpora are read-only document by document: their questions point into these exact "
                   "documents. The whole corpus can be removed below.")
    with st.expander("Remove this whole corpus", key="corpus_remove_all_box"):
        sure = st.checkbox(f"Yes: remove {shown} with its indexes, summaries, review labels and the saved runs over it",
                           key="corpus_remove_all_sure")
        if st.button("Remove the corpus", key="corpus_remove_all", disabled=building or not sure):
            run_removal(lambda: remove_corpus(wb, shown), forget_choice=True)
