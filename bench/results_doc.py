"""bench/RESULTS.md, made from the stored results in bench/results/ and nothing else.

    python bench/results_doc.py            # print it
    python bench/results_doc.py --write    # write bench/RESULTS.md

The headline tables are bench/headline.py's rows; the other selection runs (small pools, LegalBench-RAG's titles,
the named pool) go through the same row maker; speed figures are read from the timing scripts' JSON. Every table
names its runs with the split, pool, title style, embedder, chunking, date and machine load the files record, and
says "not recorded" where a file does not. tests/test_docs.py fails when bench/RESULTS.md differs from ``make()``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import headline
from common import RESULTS, ROOT

OUT = Path(__file__).resolve().parent / "RESULTS.md"
CHUNKING = {"c500o0": "the paper's splitter, 500 characters", "c500o0m25": "merged (the app's default), 500 characters"}
SMALL_POOLS = ("small-pools-{split}-{dataset}",)
LEGALBENCH = "legalbench-{split}"
NAMED_POOL = "legalbench-pool-{split}-contractnli"
SAME_TYPE = "same-type-{split}-{dataset}-of{n}"
TARGETS = "selection-{split}-fit3-{dataset}"  # recommended beside sac-generic, on the splits with the demo in dev
PAIRED = "paired-{split}-targets-{dataset}"  # the same against the routing rules target resolution replaced
SAME_TYPE_SIZES = (3, 6, 10)


def table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def when(run: dict[str, Any]) -> str:
    """The UTC start a result file records, to the minute."""
    date = (run.get("machine") or {}).get("date")
    return date.replace("T", " ")[:16] if date else "not recorded"


def load(run: dict[str, Any], after: dict[str, Any] | None = None) -> str:
    """The load average (1, 5, 15 min) a file records at the start, and at the end where it does."""
    machine = run.get("machine") or {}
    start = machine.get("loadavg")
    end = machine.get("loadavg_end") or (after or {}).get("loadavg")
    if not start:
        return "not recorded"
    text = ", ".join(f"{x:.2f}" for x in start)
    return f"{text} → {', '.join(f'{x:.2f}' for x in end)}" if end else text


def chunking(key: str | None) -> str:
    return f"`{key}` ({CHUNKING[key]})" if key in CHUNKING else f"`{key}`" if key else "not recorded"


def sources(names: Sequence[str], results: Path) -> str:
    """Which stored runs a table reads: their file, embedder, chunking, start and load."""
    rows = []
    for name in names:
        run = headline.read_run(results, name)
        rows.append([f"[`{name}`](results/{name}.md)", run.get("embedder", "not recorded"),
                     chunking(run.get("chunking")), when(run), load(run)])
    return table(("run", "embedder", "chunking", "started (UTC)", "load at the start (1, 5, 15 min)"), rows)


def selection_rows(names: Sequence[str], results: Path) -> list[str]:
    """Every block of the named selection runs, in the headline's row format."""
    out = []
    for name in names:
        run = headline.read_run(results, name)
        for block in run["blocks"]:
            out += headline.block_rows(run, block, run["methods"])
    return out


def selection_table(names: Sequence[str], results: Path) -> str:
    body = "\n".join(selection_rows(names, results))
    return f"{headline.HEADER}\n|" + "---|" * len(headline.COLUMNS) + f"\n{body}"


def split_names(pattern: str, datasets: Sequence[str] = ("",)) -> list[str]:
    return [pattern.format(split=split, dataset=dataset) for split in headline.SPLITS for dataset in datasets]


def headline_section(results: Path) -> str:
    parts = ["## Headline: the four methods on the full-size benchmarks", "",
             "DRM, precision and recall in %, mean over k = 1…64, with 95 % bootstrap intervals over questions and, "
             "for DRM, over documents (each with all its questions). Each split is searched against all its "
             "documents, both title styles against the same index. Every choice was made on dev; test was run once "
             "per change. `sac-generic` and `sac-expert` are the built-in summaries, which name their contract and "
             "answer no clause question (no governing law, no term: notes/2026-12-07-summaries-that-name.md) and "
             "find more of its parties (BUILTIN_VERSION 14: notes/2026-12-07-summaries-v12-to-v14.md; two ContractNLI "
             "test NDAs were read before its last rules, so the ContractNLI test rows are not clean test figures "
             "for that change, within 0.2 points of the runs before it); "
             "they and `recommended` (target resolution's third fit on dev: notes/2026-12-07-target-model-third-fit.md) come "
             "from one run with those summaries, the baseline (no summary) from the run of the paper's methods. "
             "README.md's table is the test rows without the last two columns. Both splits are the ones rebuilt "
             "with the demo's documents in dev."]
    for split, title in (("dev", "Dev (where every choice was made)"), ("test", "Test (run once per change)")):
        names = list(dict.fromkeys(name for pair in headline.RUNS[split].values() for name in pair))
        parts += ["", f"### {title}", "", sources(names, results), "",
                  f"{headline.HEADER}\n|" + "---|" * len(headline.COLUMNS) + "\n" + "\n".join(headline.rows(split, results))]
    return "\n".join(parts)


def target_section(results: Path) -> str:
    """Target resolution of ``recommended`` in the headline runs: coverage, DRM@1 on the covered questions, AUROC."""
    method = headline.METHODS[-1]
    names, rows = [], []
    for split in headline.SPLITS:
        for dataset in headline.DATASETS:
            name = TARGETS.format(split=split, dataset=dataset)
            names.append(name)
            run = headline.read_run(results, name)
            for block in run["blocks"]:
                for r in block.get("selective", []):
                    if r["method"] == method:
                        rows.append([headline.pool_cell(run, block), block["titles"], r["questions"], r["documents"],
                                     headline.interval(r["coverage"]), headline.interval(r["drm@1 covered"]),
                                     headline.interval(r["auroc"], digits=3)])
    return "\n".join([
        "## Which contract a question means: target resolution", "",
        f"`recommended` ({method}) says per question which contract it means and how sure it is "
        "(sac.retrieval.targets, fitted on dev). *Coverage*: the share of questions it is sure of (probability at least "
        "`CONFIDENT`); *DRM@1 covered*: wrong first hits among those; *AUROC*: how well the probability tells a right "
        "top contract from a wrong one. 95 % intervals with the split's documents resampled "
        "(sac.evaluation.selective). On dev the model was fitted and `CONFIDENT` chosen; test was run once after.", "",
        sources(list(dict.fromkeys(names)), results), "",
        table(("split · pool · embedder", "titles", "questions", "documents", "coverage %", "DRM@1 covered %", "AUROC"),
              rows)])


def versus_rules_section(results: Path) -> str:
    """``recommended`` with target resolution against the same method with the routing rules it replaced, paired."""
    names, rows = [], []
    for split in headline.SPLITS:
        for dataset in headline.DATASETS:
            name = PAIRED.format(split=split, dataset=dataset)
            if not (results / f"{name}.json").is_file():
                continue
            names.append(name)
            run = headline.read_run(results, name)
            for r in run["rows"]:
                if r["subset"] != "all":
                    continue
                cells = [f"{r['dataset']} · {r['pool']} docs", r["titles"], str(r["questions"])]
                for metric in ("drm", "recall"):
                    m = r[metric]
                    cells += [f"{m['before']:.1f} → {m['after']:.1f}",
                              f"{_signed(m['difference_by_document'])} {m['verdict_by_document']}"]
                rows.append(cells)
    return "\n".join([
        "## Target resolution against the routing rules it replaced", "",
        "`recommended` run twice on the same indexes and questions: with the routing rules of before 2026-12-06 "
        "(quotes, squashed names, rare words, initials; the code of commit cf05903) and with target resolution. "
        "Mean over k = 1…64; the paired difference after − before with its 95 % interval, the split's documents "
        "resampled (bench/paired.py).", "",
        sources(names, results), "",
        table(("split · pool", "titles", "questions", "DRM % rules → model", "Δ DRM, documents",
               "recall % rules → model", "Δ recall, documents"), rows)])


def _signed(cell: list[float]) -> str:
    est, low, high = cell[:3]
    return f"{est:+.1f} [{low:+.1f}, {high:+.1f}]"


def same_type_section(results: Path) -> str:
    """Same-type pools of 3, 6 and 10: DRM@8 on the questions whose title names a contract alone in its pool."""
    names, rows, missing = [], [], []
    for split in headline.SPLITS:
        for dataset in headline.DATASETS:
            for n in SAME_TYPE_SIZES:
                name = SAME_TYPE.format(split=split, dataset=dataset, n=n)
                if not (results / f"{name}.json").is_file():
                    missing.append(f"{dataset} {split} in pools of {n}")
                    continue
                names.append(name)
                run = headline.read_run(results, name)
                for block in run["blocks"]:
                    for r in block["rows"]:
                        if r["subset"] in ("all", "named alone"):
                            rows.append([headline.pool_cell(run, block), block["titles"],
                                         headline.method_cell(r["method"]), r["subset"], r["questions"],
                                         f"{r['drm@8']:.1f}", f"{r['drm@1']:.1f}", headline.interval(r["drm"]),
                                         headline.interval(r["recall"])])
    return "\n".join([
        "## A user's few contracts of one kind: same-type pools of 3, 6 and 10", "",
        "Each split's CUAD contracts in pools of 3, 6 or 10 of one contract type (distributor, licence, supply ...; "
        "ContractNLI: NDAs), consecutive by text hash, each question searched in its own pool's indexes "
        "(`selection.py --same-type-pools N`). *named alone*: the questions whose title names a party or company "
        "that its own contract writes and no other contract of its pool does (sac.ingest.identifiable with at most 1 "
        "document): every one of their top 8 hits should come from that contract (DRM@8 0). DRM and recall: mean over "
        "k = 1…64 with 95 % intervals over questions. Nothing was chosen on the test runs. Dev pools led to two changes "
        "of target resolution before the runs shown: company forms taken off a squashed name one after another "
        "(\"EUROPEANMICROHOLDINGSINC\" is \"European Micro\"), and a party whose first words start a squashed name "
        "(\"Flotek Chemistry, LLC\" for \"FLOTEKINDUSTRIESINCCN\"; bench/notes/2026-12-07-party-starts.md), then "
        "a third: the longest start of a squashed name written in a contract's head (\"Rubio's\"), and a clue no "
        "other document holds weighed by the log of the pool's size (bench/notes/2026-12-07-target-model-third-fit.md). "
        "The runs shown are of the built-in summaries that name their contract (no governing law, no term; "
        "BUILTIN_VERSION 14) and of that third fit."
        + (f" Not run yet: {', '.join(missing)}." if missing else ""), "",
        sources(names, results), "",
        table(("split · pool · embedder", "titles", "method", "subset", "questions", "DRM@8 %", "DRM@1 %", "DRM %",
               "recall %"), rows)])


def selection_section(title: str, text: str, names: list[str], results: Path) -> str:
    return "\n".join([f"## {title}", "", text, "", sources(names, results), "", selection_table(names, results)])


def title_floor_section(results: Path) -> str:
    floor = headline.read_run(results, "title_floor")
    method = floor["method"]
    rows = [[r["dataset"], r["split"], r["titles"], r["questions"], r["unidentifiable"], r["lookalikes_median"],
             f"{r['floor_drm@1']:.1f}", f"{r[method]['all']:.1f}", f"{r[method]['identifiable']:.1f}",
             f"{r[method]['unidentifiable']:.1f}", f"`{r[method]['source']}`"] for r in floor["rows"]]
    return "\n".join([
        "## The look-alike floor", "",
        "DRM@1 in % of a reader that gets every identifiable question right and picks at random among the split's "
        "documents with the same confirmable title words for the rest (`bench/title_floor.py`), beside the "
        f"recommended method's DRM@1 (`{method}`). A reference, not a bound: see docs/benchmarks.md. The file "
        "records no date or load (no timing).", "",
        table(("dataset", "split", "titles", "questions", "unidentifiable", "look-alikes (median)",
               "look-alike floor", "method: all", "identifiable", "unidentifiable", "from"), rows)])


def speed_section(results: Path) -> str:
    ingest = headline.read_run(results, "ingest")
    raw = ingest["raw"]
    rows = []
    for backend, rate in raw["rate"].items():
        speed = raw["speedup_vs_minilm"].get(backend)
        cos = raw["cosine_vs_minilm"].get(backend)
        built = ingest["summary"][backend]
        rows.append([f"`{backend}`", f"{rate:.1f}",
                     f"{speed['median']:.2f} ({speed['min']:.2f}-{speed['max']:.2f})" if speed else "1.00",
                     f"{cos['min']:.4f} / {cos['mean']:.4f}" if cos else "-", f"{built['chunks_per_s']:.1f}",
                     f"{built['embed_share']:.3f}", f"{built.get('index_speedup_vs_minilm', 1.0):.2f}"])
    parts = [
        "## Speed", "",
        "Timings on the machine the files name (2 shared cores; see bench/README.md, \"The machine\"): a figure "
        "holds only with its load.", "",
        "### Embedding backends: raw encode and index builds", "",
        f"`ingest.json`: the first {ingest['args']['limit']} demo {ingest['args']['dataset'].upper()} contracts, "
        f"{ingest['chunks_per_method']:,} chunks per method, methods {ingest['args']['methods']}; raw encode over "
        f"{raw['texts']:,} embedding texts in {raw['slices']} slices, speedup = median of the paired per-slice "
        f"ratios (range); builds into a fresh workspace per backend. Chunking {chunking(ingest.get('chunking'))}; "
        f"started {when(ingest)} UTC, load {load(ingest)}.", "",
        table(("backend", "raw texts/s", "speedup vs PyTorch", "cosine to PyTorch (min / mean)",
               "index build chunks/s", "embedder share of build time", "index speedup vs PyTorch"), rows)]
    rows = []
    for name in ("query", "query-pool", "query-nda-pool"):
        q = headline.read_run(results, name)
        chunks = "/".join(f"{n:,}" for n in dict.fromkeys(q["index_chunks"].values()))
        for lat in q["latency"]:
            rows.append([f"`{name}`", f"{q['corpus']} ({q['documents']} docs, {chunks} chunks per index)",
                         f"`{q['args']['embedder']}`", lat["k"], lat["queries"],
                         f"{lat['total_p50_ms']:.1f} / {lat['total_p95_ms']:.1f}",
                         f"{lat['embed_p50_ms']:.1f} / {lat['embed_p95_ms']:.1f}",
                         f"{lat['search_p50_ms']:.1f} / {lat['search_p95_ms']:.1f}", when(q), load(q)])
    parts += ["", "### Query latency: a three-method comparison", "",
              "`query.py`: one query embedding, then the top k from each of three indexes (baseline, sac-generic, "
              "sac-expert), after warm-up questions; milliseconds.", "",
              table(("file", "corpus", "embedder", "k", "questions", "total p50 / p95", "embedding p50 / p95",
                     "search p50 / p95", "started (UTC)", "load (start → end)"), rows)]
    rows = []
    for name in ("eval", "eval-pool", "eval-nda-pool"):
        e = headline.read_run(results, name)
        corpora = "; ".join(f"{d['corpus']} ({d['documents']} docs, {d['queries']} questions)"
                            for d in e["datasets"].values())
        for r in e["runs"]:
            rows.append([f"`{name}`", corpora, f"`{e['args']['embedder']}`", r["run"], f"{r['wall_s']:.1f}",
                         f"{r['index']:.2f}", f"{r['query_embedding']:.2f}", f"{r['search']:.2f}",
                         f"{r['scoring']:.2f}", when(e), load(e)])
    parts += ["", "### Full evaluation", "",
              "`eval.py`: every question, three methods, seven k; run 1 builds what is missing, run 2 finds the "
              "indexes built; seconds.", "",
              table(("file", "corpus", "embedder", "run", "wall", "index", "query embedding", "search", "scoring",
                     "started (UTC)", "load (start → end)"), rows)]
    r = headline.read_run(results, "routing-cuad-all")
    args = r["args"]
    rows = [[f"`{m}`", f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f}", f"{d['peak_rss_mb']:,}",
             ", ".join(f"{x:.2f}" for x in d["load"])] for m, d in r["methods"].items()]
    parts += ["", "### Search at scale: the full CUAD pool", "",
              f"`routing-cuad-all.json`: {args['questions']} questions asked one at a time at k = 8 against every "
              f"distinct CUAD contract of both splits in one index (a size for latency and memory, not a quality "
              f"result), `{args['embedder']}`, {args['chunking']} chunking, each method in a fresh process; started "
              f"{when(r)} UTC.", "",
              table(("method", "search p50 / p95 (ms)", "peak RSS (MB)", "load (1, 5, 15 min)"), rows)]
    s = headline.read_run(results, "small_build")
    rows = [[x["dataset"], x["documents"], x["mode"], x["builds"], f"{x['records']:,}", f"{x['build_s (median)']:.1f}",
             f"{x['settle_s (median)']:.1f}", x["every / now"] or "-"] for x in s["rows"]]
    parts += ["", "### Building a small corpus", "",
              "`small_build.json`: baseline, sac-generic and sac-expert into a fresh workspace per build, with every "
              "collection settled (`every`) and with the document collection left as it is (`now`); medians. "
              f"Started {when(s)} UTC, load {load(s, s.get('machine_after'))}.", "",
              table(("dataset", "documents", "mode", "builds", "chunk records", "build (s)", "settling (s)",
                     "every / now"), rows)]
    rows = []
    for name in ("demo-first-minute-contractnli", "demo-first-minute-contractnli-read10", "demo-first-minute-both"):
        d = headline.read_run(results, name)
        first = d.get("click_to_first_compare_answer_s")
        rows.append([f"`{name}`", d["datasets"], d.get("read_s", "not recorded"),
                     f"{first:.1f}" if first is not None else "not recorded", f"{d['load_demo_s']:.1f}",
                     "; ".join(d["embedded"]),
                     f"{d['load_before'][0]:.2f} → {d['load_after'][0]:.2f}"])
    parts += ["", "### The first minute", "",
              "`demo_first_minute.py`: Home, **Load the demo corpus**, then Compare, from an empty workspace; seconds "
              "from the click. These files record no date (the notes give them).", "",
              table(("file", "datasets", "seconds on Home before the click", "click to the first Compare answer",
                     "click to the whole demo built", "what the build did", "load (1 min) before → after"), rows)]
    return "\n".join(parts)


def make(results: Path = RESULTS) -> str:
    small = [name.format(split=split, dataset=dataset) for split in headline.SPLITS
             for dataset in headline.DATASETS for name in SMALL_POOLS]
    parts = [
        "# Results",
        "",
        "<!-- Generated by bench/results_doc.py from bench/results/: do not edit. Regenerate with "
        "`python bench/results_doc.py --write`. -->",
        "",
        "Every figure here is read from a stored result file in [`results/`](results/) by "
        "[`results_doc.py`](results_doc.py); tests/test_docs.py fails when this page differs from what the "
        "script makes. What the figures mean, the splits and the title styles: "
        "[docs/benchmarks.md](../docs/benchmarks.md). Why each method is as it is, dated: [notes/](notes/README.md).",
        "",
        headline_section(results),
        "",
        target_section(results),
        "",
        versus_rules_section(results),
        "",
        same_type_section(results),
        "",
        selection_section(
            "A handful of contracts: pools of 5",
            "Each split's documents in consecutive pools of 5 by text hash (a remainder of fewer than 5 left out with "
            "its questions), each question searched in its own pool's indexes (`selection.py --pools-of 5`). "
            "Nothing was chosen on these runs.", small, results),
        "",
        selection_section(
            "LegalBench-RAG's own titles",
            "The bundled mini benchmark's questions (titles written by LegalBench-RAG's language model), each in the "
            "split its document falls in, searched in the headline runs' indexes against the split's whole pool "
            "(`selection.py --titles legalbench`). Few documents: read the document intervals. Nothing was chosen "
            "on these runs; the documents are the demo's, which the built-in summarizer's first rules were written "
            "against.", split_names(LEGALBENCH), results),
        "",
        selection_section(
            "ContractNLI as LegalBench-RAG selects it: the named pool",
            "File-name titles on the NDAs whose file name names a party, in indexes of their own "
            "(`selection.py --named-pool`); identifiable tags are the full split's. Nothing was chosen on these runs.",
            split_names(NAMED_POOL), results),
        "",
        title_floor_section(results),
        "",
        speed_section(results),
    ]
    return "\n".join(parts) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = p.parse_args(argv)
    text = make()
    if args.write:
        OUT.write_text(text, "utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
