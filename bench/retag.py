"""Stored selection runs again, with the ``identifiable`` tags the benchmark builder gives now.

    python bench/retag.py selection-test-table-cuad-settled selection-test-inner-cuad

A question's ``identifiable`` tag is the builder's (sac.ingest.builders): its title names something found in its
document's text and in at most 3 documents of the split, its own included. Stored runs keep the split they were made
on: the hash-only split of the runs made before the demo's documents were kept in dev, rebuilt here into
bench/.workspace/full-hash-split. When that rule changes, questions move between the
identifiable and unidentifiable subsets while every retrieved hit stays what it was. For each run (one made by
bench/selection.py with ``--questions``, full pools), this rebuilds the benchmarks into bench/.workspace/full
(deterministic; only the tags can differ), reads every question's tag there and, where any moved, rewrites the
run's stored questions and recomputes its rows from them as selection.py makes them, with no retrieval rerun. The
"all" rows must come out as stored, or nothing is written. The run then records what moved (``retagged``) and its
Markdown says so. Paired comparisons made from such runs (bench/paired.py) are remade with their own commands.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import time
from pathlib import Path

import pandas as pd
import selection
from common import RESULTS, ROOT, SOURCES_DIR, command_line, log, write_results

from sac.ingest.builders import BUILDERS, TITLE_STYLES

HASH_SPLIT = selection.common.WORKSPACES / "full-hash-split"


def current_tags(datasets: set[str], root: Path = HASH_SPLIT,
                 dev_documents: frozenset[str] = frozenset()) -> dict[tuple[str, str, str], bool]:
    """(``<dataset>-<split>``, title style, query id) -> identifiable, the builder's tags now.

    The benchmarks are built into ``root`` with every document split by its hash alone, as the runs before the
    demo's documents were kept in dev were, or with ``dev_documents`` kept in dev, as later runs were."""
    for dataset in sorted(datasets):
        for style in TITLE_STYLES:
            BUILDERS[dataset](SOURCES_DIR, root / style, titles=style, dev_documents=dev_documents)
    return {(f"{dataset}-{split}", style, query_id): "identifiable" in tags
            for dataset in sorted(datasets) for split in ("dev", "test")
            for style, (_, by_query) in selection.load_split(dataset, split, root).items()
            for query_id, tags in by_query.items()}


def stored_tags(name: str) -> dict[tuple[str, str, str], bool]:
    """The same keys -> identifiable, as run ``name`` stored them."""
    stored = pd.read_csv(RESULTS / f"{name}.questions.csv.gz", usecols=["dataset", "titles", "query_id", "identifiable"])
    return {(d, t, q): bool(i) for d, t, q, i in stored.drop_duplicates().itertuples(index=False)}


def retag(name: str, tags: dict[tuple[str, str, str], bool], command: str) -> dict[str, int] | None:
    """Rewrite run ``name`` with ``tags``; the questions that moved per "<dataset> · <titles>" (None: none moved)."""
    path = RESULTS / f"{name}.questions.csv.gz"
    run = json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))
    stored = pd.read_csv(path)
    keys = list(zip(stored["dataset"], stored["titles"], stored["query_id"]))
    missing = sorted({k for k in keys if k not in tags})
    if missing:
        raise SystemExit(f"{name}: {len(missing)} questions are not in the full benchmarks, e.g. {missing[0]} "
                         "(runs on a --pool-limit sub-pool are not retagged)")
    now = pd.Series([tags[k] for k in keys], index=stored.index)
    changed = stored[stored["identifiable"] != now].drop_duplicates(["dataset", "titles", "query_id"])
    if changed.empty:
        return None
    moved = {f"{d} · {t}": int(n) for (d, t), n in changed.groupby(["dataset", "titles"]).size().items()}
    questions = selection.with_documents(stored.assign(identifiable=now))
    blocks = []
    for block in run["blocks"]:
        frame = questions[(questions["dataset"] == f"{block['dataset']}-{block['split']}")
                          & (questions["titles"] == block["titles"])]
        rows = selection.summarize(frame.drop(columns=["titles"]), run["methods"], run.get("resamples", 1000))
        before = [r for r in block["rows"] if r["subset"] == "all"]
        if [r for r in rows if r["subset"] == "all"] != before:
            raise SystemExit(f"{name}: the 'all' rows of {block['dataset']} · {block['titles']} do not come out as "
                             "stored; not rewritten")
        blocks.append({**block, "rows": rows})
    record = {"date": time.strftime("%Y-%m-%d"), "commit": _commit(), "command": command, "moved": moved}
    result = {**run, "blocks": blocks, "retagged": [*run.get("retagged", []), record]}
    text = selection.markdown(result).replace("\n\nDRM, precision", "\n\n" + _line(record) + "\n\nDRM, precision", 1)
    stored.assign(identifiable=now).to_csv(path, index=False)
    write_results(name, result, text)
    return moved


def _line(record: dict) -> str:
    moved = ", ".join(f"{n} {block}" for block, n in record["moved"].items())
    return (f"Identifiable tags as the builder gives them at {record['commit']} ({record['date']}, `{record['command']}`): "
            f"questions moved from one subset to the other: {moved}. The subset rows are recomputed from the stored "
            "questions; no retrieval was rerun, and the 'all' rows are as the run made them.")


def _commit() -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("runs", nargs="+", help="results names of selection.py runs made with --questions")
    args = p.parse_args(argv)
    for name in args.runs:
        if not (RESULTS / f"{name}.questions.csv.gz").is_file():
            raise SystemExit(f"{name}: no stored questions ({name}.questions.csv.gz); only --questions runs retag")
    datasets = {block["dataset"] for name in args.runs
                for block in json.loads((RESULTS / f"{name}.json").read_text(encoding="utf-8"))["blocks"]}
    log(f"building {', '.join(sorted(datasets))} into {HASH_SPLIT}")
    tags = current_tags(datasets)
    command = command_line("retag.py", argv)
    for name in args.runs:
        moved = retag(name, tags, command)
        log(f"{name}: " + (", ".join(f"{n} moved in {b}" for b, n in moved.items()) if moved else "no question moved"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
