"""Evaluate: DRM, precision and recall against k for every method on a benchmark; runs saved and compared."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import streamlit as st

from sac.config import DEFAULT_K_VALUES
from sac.errors import ConfigError, SacError
from sac.methods import BASE_METHODS, method_label, parse_methods, suggested_methods
from sac.render import plots
from sac.usecases import corpus as corpus_cases
from sac.usecases import review
from sac.usecases.evaluate import (
    EvaluationRequest,
    RunFolder,
    changed_questions,
    compare_runs,
    evaluate_and_save,
    format_interval,
    interval_table,
    list_runs,
    query_diff,
    summary_table,
)
from sac.wording import counted
from webapp import data, jobs, matters, settings, widgets
from webapp.glossary import page_setup

page_setup("Evaluate", "📈")
SOURCES = settings.sources_dir()


st.title("Evaluate")
st.markdown("Run a benchmark: every question is retrieved once per method at the largest k, then scored at "
            "every k. **DRM** is the share of retrieved chunks from a document other than the question's; "
            "precision and recall count the characters that overlap the ground-truth answer.")
widgets.show_flashes()
widgets.chunking_select("eval_chunking")

REVIEWED = "reviewed:"  # a Benchmark choice "reviewed:<corpus>": the ground truth reviewers marked on that corpus

with widgets.stop_on_error():
    wb = settings.workbench()
    ws = wb.workspace
    benchmarks = corpus_cases.list_benchmarks(ws)
    entries = {e.name: e for e in data.corpora()}
    # Per corpus with ground truth marked on Review: its questions and spans.
    reviewed_counts = {c: n for c, n in review.reviewed_counts(wb).items() if c in entries}
choices = [*benchmarks, *(REVIEWED + c for c in reviewed_counts)]
if not choices:
    st.warning("No benchmark found: the demo folder data/demo is missing and none was uploaded on **Corpus**.")
    st.stop()

bench = st.selectbox("Benchmark", choices, key="eval_benchmark",
                     format_func=lambda b: (f"Reviewed ground truth of {b[len(REVIEWED):]} "
                                            f"({counted(reviewed_counts[b[len(REVIEWED):]][0], 'question')})"
                                            if b.startswith(REVIEWED) else b),
                     help="The bundled demo, a LegalBench-RAG zip uploaded on Corpus, or the ground truth marked on "
                          "**Review** for a corpus, searched in that corpus's own indexes.")
reviewed = bench[len(REVIEWED):] if bench.startswith(REVIEWED) else None
names = [reviewed] if reviewed else corpus_cases.benchmark_dataset_names(benchmarks[bench])
corpus_of = {n: reviewed or corpus_cases.dataset_corpus(bench, n) for n in names}
if reviewed:
    st.caption(f"{counted(reviewed_counts[reviewed][0], 'question')} with "
               f"{counted(reviewed_counts[reviewed][1], 'span')} marked on **Review**, searched in "
               f"the indexes of corpus `{reviewed}`. Spans marked later are in the next run, not in a saved one.")
with st.form("eval_form", border=True):
    datasets = st.multiselect("Datasets", names, default=names, key=f"eval_datasets_{bench}",  # each its own choice
                              help="The demo's cuad is 29 contracts (about 3,000 chunks per method): "
                                   "a few minutes the first time on 2 cores, seconds after.")
    cols = st.columns([2, 2])
    built = sorted({m for n in names for m in data.built_methods(wb, corpus_of[n])})
    for n in names:
        jobs.incomplete_notice(wb, corpus_of[n])
    # Indexes a background build has still to make are not waited for: the run uses what is ready (below).
    waiting = jobs.waiting_indexes([corpus_of[n] for n in names])
    llm = ["sac-generic-llm", "sac-expert-llm"]  # from the shipped LLM summary sets (or your own)
    options = list(dict.fromkeys([*BASE_METHODS, *llm, *built, *suggested_methods()]))
    ready = [m for m in BASE_METHODS if not any(m in w for w in waiting.values())]
    methods = cols[0].multiselect("Methods", options, default=jobs.follow_ready("eval_methods", ready),
                                  key="eval_methods", format_func=method_label)
    extra = cols[1].text_input("More methods (comma-separated)", "", key="eval_extra_methods",
                               placeholder="e.g. sac-generic-llm", help="Any sac-<strategy> whose summaries exist.")
    ks = st.multiselect("k values", list(DEFAULT_K_VALUES), default=list(DEFAULT_K_VALUES), key="eval_ks")
    hint = (f"Full source datasets are in {SOURCES}: e.g. `{SOURCES / 'contractnli' / 'test.json'}` (NDAs) or "
            f"`{SOURCES / 'cuad_v1' / 'full_contract_txt'}` (510 contracts, hours to index on 2 cores)."
            if SOURCES.is_dir() else "Folders of documents, single files, or ContractNLI JSON files.")
    pool_text = st.text_area("Distractor pool (optional): one path per line", "", height=80, key="eval_pool",
                             help="Look-alike documents added to every dataset's index; the ground truth does not "
                                  "change. " + hint)
    st.caption(hint)
    label = st.text_input("Run label", "app", key="eval_label")
    submitted = st.form_submit_button("Run the evaluation", type="primary", key="eval_run_button")

if submitted:
    progress = widgets.ProgressReporter(st.container(), unit="chunks")
    try:
        chosen = tuple(parse_methods(",".join([*methods, extra])))
        if not datasets:
            raise ConfigError("Choose at least one dataset.")
        # A method whose index a background build has still to make for a chosen dataset would wait for that build
        # without a word: it is left out of this run, by name.
        held = {m.name: [corpus_of[n] for n in datasets if m.index_name in waiting.get(corpus_of[n], [])]
                for m in chosen}
        held = {name: corpora for name, corpora in held.items() if corpora}
        if held:
            listed = "; ".join(f"{name} (still being built for {', '.join(corpora)})" for name, corpora in held.items())
            if all(m.name in held for m in chosen):
                raise ConfigError(f"Every method chosen is still being built: {listed}. Choose one that is ready, or "
                                  "run once the sidebar shows it complete.")
            widgets.flash("warning", f"Left out of this run: {listed}. Run again once the sidebar shows it complete.")
            chosen = tuple(m for m in chosen if m.name not in held)
        pool = tuple(Path(p.strip()).expanduser() for p in pool_text.splitlines() if p.strip())
        ks_chosen = tuple(ks or DEFAULT_K_VALUES)
        label_chosen = label.strip() or "app"
        # The same request `sac eval` makes for the same choices, so the saved run records the same settings.
        if reviewed:
            request = EvaluationRequest(tuple(corpus_cases.reviewed_datasets(wb, reviewed, pool)), chosen, ks_chosen,
                                        benchmark=reviewed, pool=pool, reviewed=reviewed, label=label_chosen)
        else:
            request = EvaluationRequest(tuple(corpus_cases.benchmark_datasets(wb, benchmarks[bench], datasets, pool)),
                                        chosen, ks_chosen, benchmark=bench, benchmark_dir=benchmarks[bench], pool=pool,
                                        label=label_chosen)
        if pool:
            st.info(f"Distractor pool: {len(request.datasets[0].distractors)} documents added to every dataset's index.")
        result, run = evaluate_and_save(wb, request, progress=progress)
        data.invalidate()
        st.session_state["eval_run"] = run.run_id
        widgets.flash("success", f"Run saved as {run.run_id} ({result.timings['total']:.0f} s).")
        st.rerun()
    except SacError as err:
        st.error(str(err))

INTERVAL_HEADERS = {"drm": "DRM % [95 % interval]", "precision": "precision % [95 % interval]",
                    "recall": "recall % [95 % interval]"}


def uncertainty_ui(run: RunFolder, methods: list[str]) -> dict[str, Any]:
    """95 % bootstrap intervals and paired differences to a reference method, mean over k; returns them for the
    export (``{}`` when the run cannot give them)."""
    st.markdown("**How sure are these figures?** 95 % bootstrap intervals (mean over k). "
                "A difference whose interval includes 0 is within noise, not a win.")
    cols = st.columns(2)
    reference = cols[0].selectbox("Reference method for paired differences", methods, key="eval_reference",
                                  format_func=method_label,
                                  index=methods.index("baseline") if "baseline" in methods else 0)
    resample = cols[1].radio("Resample", list(plots.RESAMPLE_LABELS), format_func=plots.RESAMPLE_LABELS.get, horizontal=True,
                             key="eval_resample",
                             help="Questions about one contract tend to succeed or fail together (one routing, one "
                             "summary). Resampling documents counts that, and its intervals are the ones to trust "
                             "when the claim is about new contracts; with only a handful of documents they are "
                             "rough themselves.")
    try:
        intervals, diff = data.run_uncertainty(run, reference if len(methods) > 1 else None, resample)
    except SacError as err:
        st.warning(str(err))
        return {}
    if note := data.run_few_units(run, resample):
        st.caption(f"Rough: {note}.")
    st.dataframe(interval_table(widgets.labelled(intervals), "mean")
                 .rename(columns=INTERVAL_HEADERS), key="eval_intervals")
    export: dict[str, Any] = {"resample": resample, "intervals": plots.json_records(intervals)}
    if diff is not None and len(diff):
        shown = diff.assign(difference=[format_interval(r.estimate, r.low, r.high, difference=True)
                                        for r in diff.itertuples()])
        shown = widgets.labelled(shown[["dataset", "method_b", "metric", "difference", "verdict"]]
                                   .rename(columns={"method_b": "method"}))
        st.dataframe(shown, hide_index=True, key="eval_paired")
        export["paired_differences"] = plots.json_records(diff)
    return export


def mismatch_ui(run: RunFolder, datasets: list[str], shown: str, methods: list[str], ks: list[int]) -> None:
    """Where the run's wrong-document hits go (the documents that take them), the pairs of documents mistaken for
    each other, and whose questions the wrong hits come from; per dataset ("overall" has no hits of its own)."""
    cols = st.columns(3)
    dataset = cols[0].selectbox("Dataset", datasets, key="eval_mismatch_dataset",
                                index=datasets.index(shown) if shown in datasets else 0)
    method = cols[1].selectbox("Method", methods, key="eval_mismatch_method", format_func=method_label,
                               index=next((i for i, m in enumerate(methods) if m != "baseline"), 0))
    k = cols[2].selectbox("k", ks, key="eval_mismatch_k", index=ks.index(8) if 8 in ks else 0)
    try:
        takers, asked, pairs = data.run_mismatch(run, dataset, method, k)
    except SacError as err:
        st.warning(str(err))
        return
    percent = st.column_config.NumberColumn(format="%.1f %%")
    titled = {"document": st.column_config.TextColumn(width="large")}
    st.markdown(f"**Documents that took wrong hits** ({int(takers['wrong hits'].sum())} wrong hits at k={k})")
    st.dataframe(takers.assign(document=[plots.document_titles(d) for d in takers["document"]],
                               **{"share of wrong hits": takers["share of wrong hits"] * 100}),
                 hide_index=True, key="eval_mismatch_takers", column_config={**titled, "share of wrong hits": percent})
    st.markdown("**Look-alike pairs**: the document asked about and the document that took its hits, most first")
    st.dataframe(pairs.assign(**{c: [plots.document_titles(d) for d in pairs[c]] for c in ("asked about", "took the hits")}),
                 hide_index=True, key="eval_mismatch_pairs",
                 column_config={c: st.column_config.TextColumn(width="medium") for c in ("asked about", "took the hits")})
    st.markdown("**Documents asked about**: their questions' DRM, worst first")
    st.dataframe(asked.assign(document=[plots.document_titles(d) for d in asked["document"]], drm=asked["drm"] * 100),
                 hide_index=True, key="eval_mismatch_asked", column_config={**titled, "drm": percent})
    st.caption("A few documents taking most wrong hits are look-alikes of the contracts asked about, or attractors: "
               "short texts full of the words every question uses. Their summaries are the first to read on "
               "**Summaries**.")


runs = {r.run_id: r for r in list_runs(ws)}
if not runs:
    st.info("No saved run yet: choose datasets and methods above and run the evaluation.")
    st.stop()

st.subheader("Results")
run_ids = list(runs)
labels = {r.run_id: r.description for r in runs.values()}
if st.session_state.get("eval_run") not in run_ids:
    st.session_state["eval_run"] = run_ids[0]
run_id = st.selectbox("Saved run", run_ids, format_func=labels.get, key="eval_run")
frame, meta = data.run_metrics(runs[run_id])
chart_sets = list(dict.fromkeys(frame["dataset"]))
cols = st.columns([1, 1, 2])
chart_set = cols[0].selectbox("Dataset for the k charts", chart_sets, index=chart_sets.index(plots.default_dataset(frame)),
                              key="eval_chart_dataset")
bar_ks = ["mean", *sorted({int(k) for k in frame["k"] if str(k) != "mean"})]
bar_k = cols[1].selectbox("k for the bars", bar_ks, key="eval_bar_k", format_func=lambda k: "mean over k" if k == "mean" else f"k={k}")
timings = meta.get("timings_s", {})
cols[2].caption(f"Created {meta.get('created', '')} · embedder {meta.get('config', {}).get('embedder', '')} · "
                f"chunks {meta.get('config', {}).get('chunk_size', '')} · timings (s): "
                + ", ".join(f"{k} {v}" for k, v in timings.items()))

labelled = widgets.labelled(frame)  # for charts and tables; downloads keep the resolved names
resample = st.session_state.get("eval_resample", "question")  # the unit chosen under "How sure are these figures?"
try:  # the error bars: the same intervals as the table below
    error_intervals = widgets.labelled(data.run_uncertainty(runs[run_id], None, resample)[0])
except SacError:  # e.g. documents of a run saved before it recorded them: the table below says so
    error_intervals = None
left, right = st.columns(2)
left.plotly_chart(plots.metric_vs_k(labelled, "drm", chart_set, error_intervals, resample), key="eval_fig_drm_k")
right.plotly_chart(plots.drm_per_dataset(labelled, bar_k), key="eval_fig_drm_dataset")
left, right = st.columns(2)
left.plotly_chart(plots.precision_recall_vs_k(labelled, chart_set, error_intervals, resample), key="eval_fig_pr_k")
right.plotly_chart(plots.precision_vs_recall(labelled, chart_set), key="eval_fig_p_r")
st.caption(plots.error_bar_note(resample, error_intervals is not None))

st.markdown("**DRM, precision and recall (%)**: mean over k and at k = 1, 8, 64")
st.dataframe(summary_table(labelled), key="eval_summary")
uncertainty = uncertainty_ui(runs[run_id], sorted(set(frame["method"])))
selective = runs[run_id].selective()
widgets.selective_ui(selective, key="eval_selective")

where = st.expander("Where the wrong-document hits go", key="eval_mismatch", on_change="rerun")
if where.open:
    with where:
        mismatch_ui(runs[run_id], [d for d in chart_sets if d != "overall"], chart_set, sorted(set(frame["method"])),
                    sorted({int(k) for k in frame["k"] if str(k) != "mean"}))
with st.expander("Every row", key="eval_all_rows"):
    st.dataframe(plots.results_table(labelled), hide_index=True, key="eval_rows")
cols = st.columns(2)
cols[0].download_button("Download CSV", plots.results_table(frame).to_csv(index=False), file_name=f"{run_id}.csv",
                        mime="text/csv", key="eval_download_csv", on_click=matters.record_export,
                        args=(f"run {run_id} metrics (CSV)",))
cols[1].download_button("Download JSON", json.dumps({"run_id": run_id, **meta, "metrics": frame.to_dict("records"),
                                                      "uncertainty": uncertainty,
                                                      "selective": plots.json_records(selective)}, indent=1, default=str),
                        file_name=f"{run_id}.json", mime="application/json", key="eval_download_json",
                        on_click=matters.record_export, args=(f"run {run_id} metrics (JSON)",))

st.subheader("Compare two runs")
if len(runs) < 2:
    st.caption("Save a second run (another method, a distractor pool, an edited summary set) to compare it with this one.")
else:
    cols = st.columns(2)
    run_a = cols[0].selectbox("Run A", run_ids, index=1, format_func=labels.get, key="eval_cmp_a")
    run_b = cols[1].selectbox("Run B", run_ids, index=0, format_func=labels.get, key="eval_cmp_b")
    try:
        st.dataframe(plots.run_diff_table(compare_runs(runs[run_a], runs[run_b])), key="eval_cmp_table", hide_index=True,
                     column_config={c: st.column_config.NumberColumn(format="%.1f") for c in plots.RUN_DIFF_NUMBERS})
        diff = query_diff(runs[run_a], runs[run_b], k=8)
        if len(diff):
            counts = diff.groupby(["method", "change"]).size().unstack(fill_value=0)
            st.caption("Questions whose top 8 gained or lost every right-document hit, B against A:")
            st.dataframe(counts, key="eval_cmp_queries")
            changes = changed_questions(runs[run_a], runs[run_b], k=8)
            changes["compare"] = [widgets.compare_link(c, q) if q else "" for c, q in zip(changes["corpus"], changes["query"])]
            if len(changes):
                st.dataframe(changes[["dataset", "method", "change", "query", "compare"]], hide_index=True,
                             key="eval_cmp_changes", column_config={
                                 "compare": st.column_config.LinkColumn("Compare", display_text="open question")})
    except (SacError, KeyError) as err:
        st.error(f"These runs cannot be compared: {err}")
