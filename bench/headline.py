"""The headline rows of README.md and bench/README.md, made from the stored selection runs.

    python bench/headline.py            # print the dev and test tables
    python bench/headline.py --write    # put those rows into README.md and bench/README.md

Reads each dataset's runs of ``RUNS`` for every split (``bench/results/<run>.json``, written by bench/selection.py
with ``--questions``; the commands are in bench/README.md): the paper's methods from the first, the recommended
method's rows from the second, and makes one row per (dataset, title style, method):
DRM with its intervals over questions and over documents, DRM@1, precision, recall, and DRM on the identifiable
questions and on the rest. ``--write`` replaces each README row whose first three cells (split · pool · embedder,
titles, method) match a made row, and fails if a README lacks one, so every figure in those tables is one a
stored run gave. tests/test_bench_tables.py checks that the READMEs hold exactly these rows.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT

from sac.retrieval.methods import RECOMMENDED, parse_method

SPLITS = ("dev", "test")
DATASETS = ("cuad", "contractnli")
# Per dataset, (the run of the paper's methods, the run of the recommended method). Since summarizer v9 both are one
# run per split with the four methods (bench/README.md, "Summarizer v8 and v9"), since initials the runs of that
# change (bench/README.md, "*initials*"; the paper's methods gave their v9 rows again); before v9 ContractNLI's came
# from the settled runs and the recommended method's own run, CUAD's from the v7 runs.
RUNS = {
    "cuad": ("selection-{split}-initials-cuad", "selection-{split}-initials-cuad"),
    "contractnli": ("selection-{split}-initials-contractnli", "selection-{split}-initials-contractnli"),
}
METHODS = ("baseline", "sac-generic", "sac-expert", parse_method(RECOMMENDED).name)
READMES = (ROOT / "README.md", ROOT / "bench" / "README.md")
HEADER = ("| split · pool · embedder | titles | method | questions | DRM % [95 % CI] | DRM % [95 % CI, documents] | "
          "DRM@1 % | precision % | recall % | DRM %, identifiable questions (n) | DRM %, the rest (n) |")


def _interval(cell: list[float] | None, *, estimate: bool = True) -> str:
    if not cell:
        return "—"
    est, low, high = cell[:3]
    bounds = f"[{low:.1f}, {high:.1f}]"
    return f"{est:.1f} {bounds}" if estimate else bounds


def rows(split: str, results: Path = RESULTS) -> list[str]:
    """The table rows of one split, CUAD first, each title style in turn, the methods in ``METHODS`` order."""
    out = []
    for dataset in DATASETS:
        run = _run(results, RUNS[dataset][0], split, dataset)
        later = _run(results, RUNS[dataset][1], split, dataset)
        for block in run["blocks"]:
            by = {(r["subset"], r["method"]): r for r in block["rows"]}
            [same] = [b for b in later["blocks"] if b["titles"] == block["titles"]]
            assert (same["documents"], later["embedder"]) == (block["documents"], run["embedder"]), "another pool"
            by.update({(r["subset"], r["method"]): r for r in same["rows"] if r["method"] == METHODS[-1]})
            for method in METHODS:
                r = by[("all", method)]
                subsets = []
                for subset in ("identifiable", "unidentifiable"):
                    s = by.get((subset, method))
                    subsets.append(f"{_interval(s['drm'])} ({s['questions']})" if s else "—")
                label = f"**recommended** = {method}" if method == METHODS[-1] else method
                cells = [f"{block['dataset']} · {block['split']} · {block['documents']} docs · {run['embedder']}",
                         block["titles"], label, str(r["questions"]), _interval(r["drm"]),
                         _interval(r.get("drm_by_document"), estimate=False), f"{r['drm@1']:.1f}",
                         _interval(r["precision"]), _interval(r["recall"]), *subsets]
                out.append("| " + " | ".join(cells) + " |")
    return out


def run_names() -> list[str]:
    """Every run the tables read, each once."""
    return list(dict.fromkeys(name.format(split=split, dataset=dataset)
                              for dataset, names in RUNS.items() for name in names for split in SPLITS))


def _run(results: Path, name: str, split: str, dataset: str) -> dict[str, Any]:
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
    p.add_argument("--write", action="store_true", help="replace the rows in README.md and bench/README.md")
    args = p.parse_args(argv)
    made = {split: rows(split) for split in SPLITS}
    if not args.write:
        for split in SPLITS:
            print(f"\n**{split}**\n\n{HEADER}\n" + "|---" * 11 + "|\n" + "\n".join(made[split]))
        return 0
    every = [r for split in SPLITS for r in made[split]]
    for path in READMES:
        path.write_text(write(path.read_text("utf-8"), every, path.name), "utf-8")
        print(f"wrote {len(every)} rows into {path.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
