"""A selection run's figures again, with documents resampled beside questions: how sure its intervals are
when the claim is about new contracts.

    python bench/resample.py selection-test-names4 --out resample-test-names4

Reads a run of bench/selection.py made with ``--questions`` (``bench/results/<name>.questions.csv.gz`` and its
JSON), recomputes every block's rows from the stored questions (no retrieval) and writes them as selection.py
does, with two more columns: DRM's 95 % interval and its paired difference to sac-generic when the bootstrap
draws the split's documents, each with all its questions (sac.evaluation.uncertainty, ``resample="document"``).
Questions about one contract share its routing and summary and tend to fail together, so these intervals are
wider; a "better" that only the question intervals grant is a win on these contracts, not yet on new ones.
Runs that did not record each question's document get it from the benchmark (bench/.workspace/full).
"""

from __future__ import annotations

import argparse
import json
import time

import pandas as pd
import selection
from common import RESULTS, machine, write_results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run", help="results name of a selection.py run made with --questions")
    p.add_argument("--resamples", type=int, default=1000)
    p.add_argument("--out", required=True, help="results name to write")
    args = p.parse_args(argv)
    path = RESULTS / f"{args.run}.questions.csv.gz"
    if not path.is_file():
        raise SystemExit(f"{path} is missing: run bench/selection.py with --questions --out {args.run}")
    started = time.perf_counter()
    run = json.loads((RESULTS / f"{args.run}.json").read_text(encoding="utf-8"))
    questions = selection.with_documents(pd.read_csv(path))
    blocks = []
    for block in run["blocks"]:
        name = f"{block['dataset']}-{block['split']}"
        frame = questions[(questions["dataset"] == name) & (questions["titles"] == block["titles"])]
        blocks.append({**{k: v for k, v in block.items() if k != "rows"},
                       "rows": selection.summarize(frame.drop(columns=["titles"]), run["methods"], args.resamples)})
    result = {**{k: v for k, v in run.items() if k not in ("blocks", "machine", "command")},
              "from_run": {"name": args.run, "command": run["command"], "machine": run["machine"]},
              "blocks": blocks, "machine": machine(), "seconds": round(time.perf_counter() - started, 1),
              "command": "python bench/resample.py " + " ".join(argv or __import__("sys").argv[1:])}
    text = selection.markdown(result).replace(
        "\n\nDRM, precision", f"\n\nRecomputed from `{args.run}` (`{run['command']}`, {run['machine']['date']}, "
        f"load {run['machine']['loadavg']}).\n\nDRM, precision", 1)
    write_results(args.out, result, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
