"""The headline rows of README.md and bench/RESULTS.md, made from the stored selection runs.

    python bench/headline.py            # print the dev and test tables
    python bench/headline.py --write    # put the test rows into README.md's results table

Reads each split's and dataset's runs of ``RUNS`` (``bench/results/<run>.json``, written by bench/selection.py
with ``--questions``; the commands are in bench/notes/2026-12-01-method-selection-commands.md): every method the
second run measured from it, the others (the baseline) from the first, and makes one row per (dataset, title style, method):
DRM with its intervals over questions and over documents, DRM@1, precision, recall, and DRM on the identifiable
questions and on the rest. README.md holds the test split's rows without the last two columns (``short``);
bench/RESULTS.md holds every row of both splits (bench/results_doc.py writes it). ``--write`` replaces each README
row whose first three cells (split · pool · embedder, titles, method) match a made row, and fails if the README
lacks one, so every figure in that table is one a stored run gave. tests/test_bench_tables.py checks that README.md
holds exactly these rows, tests/test_docs.py that bench/RESULTS.md is what bench/results_doc.py makes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT

from sac.methods import RECOMMENDED, parse_method

SPLITS = ("dev", "test")
DATASETS = ("cuad", "contractnli")
# Per split and dataset, (an earlier run, the run of the current summaries), on the splits rebuilt with the demo's
# documents in dev: the baseline (no summary) from the paper's methods' run, the methods with a summary
# (sac-generic, sac-expert and recommended) from their run with the current built-in summaries, which name their
# contract and answer no clause question and find more of its parties (BUILTIN_VERSION 14;
# bench/notes/2026-12-07-summaries-that-name.md, bench/notes/2026-12-07-summaries-v12-to-v14.md), with target
# resolution's third fit (bench/notes/2026-12-07-target-model-third-fit.md).
# Test: run once per change, after its choices were fixed on dev.
RUNS = {
    "dev": {
        "cuad": ("selection-dev-paper-cuad", "selection-dev-fit3-cuad"),
        "contractnli": ("selection-dev-paper-contractnli", "selection-dev-fit3-contractnli"),
    },
    "test": {
        "cuad": ("selection-test-paper-cuad", "selection-test-fit3-cuad"),
        "contractnli": ("selection-test-paper-contractnli", "selection-test-fit3-contractnli"),
    },
}
METHODS = ("baseline", "sac-generic", "sac-expert", parse_method(RECOMMENDED).name)
README = ROOT / "README.md"
README_SPLITS = ("test",)  # the README's one table: the test split, run once per change
COLUMNS = ("split · pool · embedder", "titles", "method", "questions", "DRM % [95 % CI]", "DRM % [95 % CI, documents]",
           "DRM@1 %", "precision %", "recall %", "DRM %, identifiable questions (n)", "DRM %, the rest (n)")
SHORT = 9  # the README's rows: every column but the identifiable / the rest split
HEADER = "| " + " | ".join(COLUMNS) + " |"
SHORT_HEADER = "| " + " | ".join(COLUMNS[:SHORT]) + " |"


def interval(cell: list[float] | None, *, estimate: bool = True, digits: int = 1) -> str:
    """A stored [estimate, low, high] as "12.3 [11.0, 13.6]" (``estimate=False``: the bounds alone); "—" for none."""
    if not cell:
        return "—"
    est, low, high = cell[:3]
    bounds = f"[{low:.{digits}f}, {high:.{digits}f}]"
    return f"{est:.{digits}f} {bounds}" if estimate else bounds


def pool_cell(run: Mapping[str, Any], block: Mapping[str, Any]) -> str:
    """A row's first cell: dataset, split, the documents searched (in pools of N where so) and the embedder."""
    pools = f" in pools of {block['pools_of']}" if block.get("pools_of") else ""
    return f"{block['dataset']} · {block['split']} · {block['documents']} docs{pools} · {run['embedder']}"


def method_cell(method: str, recommended: str = METHODS[-1]) -> str:
    return f"**recommended** = {method}" if method == recommended else method


def block_rows(run: Mapping[str, Any], block: Mapping[str, Any], methods: Iterable[str] = METHODS,
               rows: Iterable[Mapping[str, Any]] | None = None, *, short: bool = False) -> list[str]:
    """One table row per method of one block of a stored selection run (``rows``: the block's rows, where they
    come from more than one run), in the order of ``methods``; ``short`` leaves out the last two columns."""
    by = {(r["subset"], r["method"]): r for r in (block["rows"] if rows is None else rows)}
    out = []
    for method in methods:
        r = by[("all", method)]
        subsets = []
        for subset in ("identifiable", "unidentifiable"):
            s = by.get((subset, method))
            subsets.append(f"{interval(s['drm'])} ({s['questions']})" if s else "—")
        cells = [pool_cell(run, block), block["titles"], method_cell(method), str(r["questions"]),
                 interval(r["drm"]), interval(r.get("drm_by_document"), estimate=False), f"{r['drm@1']:.1f}",
                 interval(r["precision"]), interval(r["recall"]), *subsets]
        out.append("| " + " | ".join(cells[:SHORT] if short else cells) + " |")
    return out


def rows(split: str, results: Path = RESULTS, *, short: bool = False) -> list[str]:
    """The table rows of one split, CUAD first, each title style in turn, the methods in ``METHODS`` order."""
    out = []
    for dataset in DATASETS:
        run = read_run(results, RUNS[split][dataset][0])
        later = read_run(results, RUNS[split][dataset][1])
        for block in run["blocks"]:
            [same] = [b for b in later["blocks"] if b["titles"] == block["titles"]]
            if (same["documents"], later["embedder"]) != (block["documents"], run["embedder"]):
                raise SystemExit(f"{dataset} {split}: the two runs of RUNS searched other pools")
            later_ran = {r["method"] for r in same["rows"]}  # a method the second run measured comes from it
            merged = [*(r for r in block["rows"] if r["method"] not in later_ran), *same["rows"]]
            out += block_rows(run, block, METHODS, merged, short=short)
    return out


def readme_rows(results: Path = RESULTS) -> list[str]:
    """The rows of README.md's results table: ``README_SPLITS``, without the identifiable / the rest columns."""
    return [row for split in README_SPLITS for row in rows(split, results, short=True)]


def run_names() -> list[str]:
    """Every run the tables read, each once."""
    return list(dict.fromkeys(name for split in SPLITS for names in RUNS[split].values() for name in names))


def read_run(results: Path, name: str, split: str = "", dataset: str = "") -> dict[str, Any]:
    """A stored result file, ``name`` formatted with the split and dataset."""
    return json.loads((results / (name.format(split=split, dataset=dataset) + ".json")).read_text("utf-8"))


def key(row: str) -> tuple[str, ...]:
    """A table row's first three cells: which block and method it is."""
    return tuple(c.strip() for c in row.strip().strip("|").split("|")[:3])


def write(text: str, made: list[str], where: str) -> str:
    """``text`` with each row whose key a made row has replaced by it; every made row must be found."""
    by_key = {key(r): r for r in made}
    found: set[tuple[str, ...]] = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("| ") and key(line) in by_key:
            lines[i] = by_key[key(line)]
            found.add(key(line))
    missing = [" | ".join(k) for k in by_key if k not in found]
    if missing:
        raise SystemExit(f"{where} has no row for: " + "; ".join(missing))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help="replace the rows of README.md's results table")
    args = p.parse_args(argv)
    if not args.write:
        for split in SPLITS:
            print(f"\n**{split}**\n\n{HEADER}\n" + "|---" * len(COLUMNS) + "|\n" + "\n".join(rows(split)))
        return 0
    made = readme_rows()
    README.write_text(write(README.read_text("utf-8"), made, README.name), "utf-8")
    print(f"wrote {len(made)} rows into {README.relative_to(ROOT)}; bench/RESULTS.md: python bench/results_doc.py "
          "--write", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
