"""One method in two runs of bench/selection.py (or one method of each, ``--after-method``), compared on the same
questions: the paired difference with its 95 % bootstrap interval, per dataset, title style and question subset.

    python bench/selection.py --split dev --methods recommended --questions --out selection-dev-before
    # ... change the method ...
    python bench/selection.py --split dev --methods recommended --questions --out selection-dev-after
    python bench/paired.py selection-dev-before selection-dev-after --method recommended --out paired-dev
    # two methods on the same questions, each from its own run (the second one's indexes built apart):
    python bench/paired.py selection-test-table-cuad-settled selection-test-filename-cuad --method recommended \
        --after-method sac-generic+docs1+filename+names --out paired-test-filename-cuad

Both runs need ``--questions`` (every question's figures at each k) and the same questions. Figures are the project's
(DRM: wrong-document hits over all hits, sac.evaluation.metrics), the mean over k = 1…64; the difference is
``after - before`` in points; "better" / "worse" when its interval excludes 0
(sac.evaluation.uncertainty.paired_difference), once with questions resampled and once with the split's
documents resampled, each with all its questions: questions about one contract share its routing and tend to
move together, so a change that only the question intervals call "better" may be one contract's luck (runs
without each question's document get it from the benchmark). Writes bench/results/<out>.json and .md.
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import pandas as pd
import selection
from common import RESULTS, command_line, machine, write_results

from sac.evaluation.uncertainty import bootstrap_intervals, paired_difference
from sac.methods import parse_method

SUBSETS = ("all", "identifiable", "unidentifiable")


def load(name: str, method: str, label: str) -> pd.DataFrame:
    path = RESULTS / f"{name}.questions.csv.gz"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run bench/selection.py with --questions --out {name}")
    frame = pd.read_csv(path)
    frame = frame[frame["method"] == method]
    if frame.empty:
        raise SystemExit(f"{name} has no rows of {method}")
    return selection.with_documents(frame.assign(method=label))


def pools(name: str) -> tuple[dict[tuple[str, str], int], str]:
    """(dataset-split, title style) -> documents searched, and the embedder, from a run's JSON."""
    run = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    return ({(f"{b['dataset']}-{b['split']}", b["titles"]): b["documents"] for b in run["blocks"]}, run["embedder"])


def compare(before: pd.DataFrame, after: pd.DataFrame, resamples: int) -> list[dict[str, Any]]:
    keys = ["dataset", "titles", "query_id", "k"]
    if set(map(tuple, before[keys].to_numpy())) != set(map(tuple, after[keys].to_numpy())):
        raise SystemExit("the two runs did not ask the same questions")
    both = pd.concat([before, after])
    rows = []
    for (dataset, titles), block in both.groupby(["dataset", "titles"], sort=True):
        for subset in SUBSETS:
            frame = block if subset == "all" else block[block["identifiable"] == (subset == "identifiable")]
            if frame.empty:
                continue
            row: dict[str, Any] = {"dataset": dataset, "titles": titles, "subset": subset,
                                   "questions": int(frame["query_id"].nunique())}
            frame = frame.drop(columns=["titles", "identifiable"])
            ci = bootstrap_intervals(frame, n_resamples=resamples)
            means = ci[(ci["k"].astype(str) == "mean") & (ci["dataset"] != "overall")].set_index(["method", "metric"])
            row["documents"] = int(frame["document"].nunique())
            for metric in ("drm", "recall", "precision"):
                row[metric] = {"before": round(100 * means.loc[("before", metric), "estimate"], 2),
                               "after": round(100 * means.loc[("after", metric), "estimate"], 2)}
                for unit, key in (("question", ""), ("document", "_by_document")):
                    d = paired_difference(frame, "before", "after", metric=metric, n_resamples=resamples,
                                          resample=unit).iloc[0]
                    row[metric] |= {f"difference{key}": [round(100 * d["estimate"], 2), round(100 * d["low"], 2),
                                                         round(100 * d["high"], 2)], f"verdict{key}": d["verdict"]}
            rows.append(row)
    return rows


def markdown(result: dict[str, Any]) -> str:
    same = result["after_method"] == result["method"]
    what = (f"{result['method']}: {result['before']} -> {result['after']}" if same else
            f"{result['method']} ({result['before']}) -> {result['after_method']} ({result['after']})")
    lines = [f"# {what}, paired on the same questions", "",
             f"Command: `{result['command']}` · embedder {result['embedder']} · built-in summaries · "
             f"{result['machine']['date']}", "",
             "Mean over k = 1…64, %; difference = after - before in points with its 95 % bootstrap interval, "
             "questions resampled, then documents resampled (each with all its questions); for DRM lower is "
             "better.", "",
             "| dataset-split · pool | titles | subset | questions (documents) | DRM before -> after | Δ DRM "
             "[95 % CI, questions] | [95 % CI, documents] | recall before -> after | Δ recall [95 % CI, questions] "
             "| [95 % CI, documents] |", "|---" * 10 + "|"]
    for r in result["rows"]:
        cells = []
        for metric in ("drm", "recall"):
            m = r[metric]
            est, low, high = m["difference"]
            cells += [f"{m['before']:.2f} -> {m['after']:.2f}", f"{est:+.2f} [{low:+.2f}, {high:+.2f}] {m['verdict']}"]
            _, low, high = m["difference_by_document"]
            cells.append(f"[{low:+.2f}, {high:+.2f}] {m['verdict_by_document']}")
        head = (f"| {r['dataset']} · {r['pool']} docs | {r['titles']} | {r['subset']} | {r['questions']} "
                f"({r['documents']}) | ")
        lines.append(head + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", help="results name of the first run (bench/results/<name>.questions.csv.gz)")
    p.add_argument("after", help="results name of the second run")
    p.add_argument("--method", default="recommended", help="the method to compare (an alias is resolved)")
    p.add_argument("--after-method", help="the method of the second run, when another (default: --method)")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--out", required=True, help="results name to write")
    args = p.parse_args(argv)
    method = parse_method(args.method).name
    after_method = parse_method(args.after_method or args.method).name
    started = time.perf_counter()
    rows = compare(load(args.before, method, "before"), load(args.after, after_method, "after"), args.resamples)
    (pool, embedder), (pool_after, embedder_after) = pools(args.before), pools(args.after)
    if (pool, embedder) != (pool_after, embedder_after):
        raise SystemExit("the two runs searched different pools or embedders")
    for row in rows:
        row["pool"] = pool[(row["dataset"], row["titles"])]
    result = {"method": method, "after_method": after_method, "before": args.before, "after": args.after,
              "embedder": embedder, "rows": rows,
              "machine": machine(),
              "seconds": round(time.perf_counter() - started, 1),
              "command": command_line("paired.py", argv)}
    write_results(args.out, result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
