"""LegalBench-RAG's own questions on the full-size splits: a third title style, ``legalbench``.

The built benchmarks' titles are made by rule (``firstpage``: the parties and document name as CUAD's annotations
or the NDA's head give them; ``filename``: as the file name gives them). LegalBench-RAG's titles were written by
a language model from each document ("Consider the Promotion Agreement between Depomed, Inc. and King
Pharmaceuticals, Inc. for Glumetza; ...", "Consider ResConnect's Non-Disclosure Agreement; ..."). The bundled
mini benchmark (``data/demo``: 194 CUAD questions on 29 contracts, 52 ContractNLI questions on 5 NDAs) holds such
questions, and every one of its documents is, byte for byte, a document of the full-size splits. This script
writes those questions, unchanged, into ``bench/.workspace/full/legalbench`` as the datasets ``<dataset>-<split>``
(each question in the split its document's text falls in), with the same corpus folders as the built styles, so
``bench/selection.py --titles legalbench`` searches them in the very indexes the headline tables were measured
on: the split's whole pool of look-alikes.

Each question is tagged ``identifiable`` as the builders tag theirs (``sac.ingest.identifiable``), from the names
its title gives: the owner of a possessive ("ResConnect's ...") and the parties after "between" (up to a "for"
that says what the agreement is for). Nothing is chosen on these questions: they check, on titles written the
way LegalBench-RAG writes them, the method chosen on dev. The 29 contracts and 5 NDAs are the demo's, which the
built-in summarizer's first rules were written against (README, "Results"), so these questions are not unseen
in the way the splits' other documents are.

    python bench/legalbench_titles.py           # writes the folder (bench/selection.py --titles legalbench does too)
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

from common import WORKSPACES, log

from sac.ingest.benchmark import load_benchmark
from sac.ingest.builders import SPLITS, split_of
from sac.ingest.catalog import DEMO_DIR
from sac.ingest.identifiable import as_text, identifiable
from sac.retrieval.names import split_title

STYLE = "legalbench"
FULL = WORKSPACES / "full"
DATASETS = ("cuad", "contractnli")
_POSSESSIVE = re.compile(r"^(?P<owner>.+?)['’]s?\s+\S")
_BETWEEN = re.compile(r"\bbetween\s+(?P<parties>.+)$", re.IGNORECASE)
_PURPOSE = re.compile(r"\s+for\s+.*$", re.IGNORECASE)
_SEPARATOR = re.compile(r",?\s+and\s+|,\s+(?!(?:inc|llc|ltd|corp|co|l\.?p|plc)\b\.?)", re.IGNORECASE)


def title_names(title: str) -> list[str]:
    """The names a LegalBench-RAG title (as ``split_title`` gives it, without "Consider the") gives its document: a
    possessive owner ("ResConnect" in "ResConnect's Non-Disclosure Agreement"), else the parties after "between",
    each on its own, without a trailing "for ..." and without parentheses ("Purolator Courier Ltd.", "Parcelway
    Courier Systems Canada Ltd.", "Dynamex Inc.")."""
    m = _BETWEEN.search(title)
    if m:
        parties = _PURPOSE.sub("", m["parties"]).replace("(", ", ").replace(")", "")
        return [p.strip(" .,") for p in _SEPARATOR.split(parties) if p.strip(" .,")]
    m = _POSSESSIVE.match(title)
    return [m["owner"].strip()] if m else []


def build(demo: Path = DEMO_DIR, full: Path = FULL) -> dict[str, dict[str, int]]:
    """Write ``full/legalbench``; returns the questions and identifiable questions per dataset and split."""
    out = full / STYLE
    if out.exists():
        shutil.rmtree(out)
    (out / "benchmarks").mkdir(parents=True)
    counts: dict[str, dict[str, int]] = {}
    for dataset in DATASETS:
        [mini] = load_benchmark(demo, [dataset])
        texts = {d.doc_id: d.text for d in mini.documents}
        for split in SPLITS:
            name = f"{dataset}-{split}"
            source = full / "firstpage" / "corpus" / name  # the built styles share their corpus folders
            corpus = out / "corpus" / name
            corpus.mkdir(parents=True)
            files: dict[str, str] = {}
            for path in sorted(source.iterdir()):
                os.link(path, corpus / path.name)
                files.setdefault(path.read_text(encoding="utf-8"), path.name)
            pool = {n: as_text(t) for t, n in files.items()}
            cache: dict[str, int] = {}
            tests = []
            for query in mini.queries:
                [doc_id] = query.gold_doc_ids
                if split_of(texts[doc_id]) != split:
                    continue
                file = files[texts[doc_id]]  # KeyError: a mini document missing from the split
                names = title_names(split_title(query.text)[0])
                tag = "identifiable" if identifiable(names, pool[file], list(pool.values()), cache) else "unidentifiable"
                tests.append({
                    "query": query.text,
                    "snippets": [{"file_path": f"{name}/{file}", "span": [s.start, s.end],
                                  "answer": texts[doc_id][s.start:s.end]} for s in query.gold],
                    "tags": [f"titles:{STYLE}", f"split:{split}", tag],
                    "split": split,
                })
            (out / "benchmarks" / f"{name}.json").write_text(json.dumps({"tests": tests}, indent=2,
                                                                        ensure_ascii=False) + "\n", encoding="utf-8")
            counts[name] = {"questions": len(tests), "identifiable": sum("identifiable" in t["tags"] for t in tests),
                            "documents": len({t["snippets"][0]["file_path"] for t in tests})}
            log(f"{STYLE}/{name}: {counts[name]}")
    load_benchmark(out)  # every span checked against its document again
    return counts


if __name__ == "__main__":
    build()
