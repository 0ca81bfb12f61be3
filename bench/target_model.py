"""Fit the target-resolution model (sac.retrieval.targets) on the dev split, and measure it on a split.

    python bench/target_model.py fit                 # dev: fit the weights, choose CONFIDENT; writes target-model-dev
    python bench/target_model.py measure --split test  # the stored fit on test, once: coverage, wrong, AUROC
    python bench/target_model.py compare --before bench/results/target-model-dev-first-fit.json  # two fits on dev
    python bench/target_model.py variants            # dev: the model fitted without some of its inputs, side by side

The examples are the benchmarks' titled questions, one per (pool, document, title style): each document's title is
asked of every pool it is in: the whole split (CUAD, ContractNLI), and same-type pools of 3, 6 and 10 documents
(selection.same_type_pools), so the weights see corpora of every size. Each same-type pool is also asked the title
of a contract of its type that it lacks (block "... · absent"): the right answer there is "none", and any sure answer
is wrong; it teaches the "none" option's lift from the title's words no document writes (``unheld``).
The model is a conditional logit over the
documents that hold a clue of the title and a "none" option (sac.retrieval.targets): an example's label is its
document when that document holds a clue, else "none". The fit maximises the likelihood with a small L2 penalty;
CONFIDENT is then the lowest probability at which at most 1 % of the dev examples whose top candidate reaches it
have the wrong top candidate (the stated risk). LIKELY (a candidate offered to the user, 0.1) is a stated choice, not fitted.

Writes bench/results/target-model-<split>.json (and .md): the weights, and per block (dataset, title style, pool
size) the examples, the share whose document holds a clue, coverage (top candidate sure), wrong among the sure,
and the AUROC of the top candidate's probability for "the top candidate is the question's document".
tests/test_targets.py checks that sac.retrieval.targets holds the stored dev fit.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import common
import numpy as np
import selection
from common import RESULTS, log, machine, write_results
from scipy.optimize import minimize
from sklearn.metrics import roc_auc_score

from sac.index.lexical import LexicalIndex, Lexicon, tokenize
from sac.retrieval import names, targets
from sac.retrieval.trace import Match
from sac.types import Document

POOL_SIZES = (3, 6, 10)
RISK = 0.01  # at most this share of the sure answers wrong, on dev
L2 = 0.001


@dataclass
class Example:
    block: str  # "<dataset> · <titles> · <pool>"
    document: str  # the question's document
    title: str
    candidates: list[str]
    x: np.ndarray  # (candidates, features)
    label: int  # index into candidates, or -1: none
    corpus: int  # documents in the pool
    unheld: int  # the title's name words no document of the pool writes (targets.unheld)
    clues: dict[str, list[Match]]  # document -> the clues of the title it holds (targets.evidence)


def pool_index(documents: list[Document], lines: dict[str, dict[str, str]]) -> LexicalIndex:
    """The lexical documents index of a pool, in memory, its derived lines taken from ``lines`` (per document)."""
    index = LexicalIndex("documents", [d.doc_id for d in documents], [d.doc_id for d in documents],
                         [d.content_hash for d in documents], Lexicon.from_tokens([tokenize(d.text) for d in documents]),
                         texts=[d.text for d in documents])
    for key in ("evidence", "squashed_texts", "initials"):
        index.cache[key] = [lines[d.doc_id][key] for d in documents]
    return index


def document_lines(documents: list[Document]) -> dict[str, dict[str, str]]:
    """Per document, what targets keeps of it: its evidence line, squashed text and initials (made once)."""
    out = {}
    for doc in documents:
        out[doc.doc_id] = {"evidence": targets._evidence_line(doc.text), "squashed_texts": names.squash(doc.text),
                           "initials": names.initials(doc.text)}
    return out


def examples(split: str, datasets: list[str]) -> list[Example]:
    selection.ensure_benchmarks()
    out: list[Example] = []
    for dataset in datasets:
        blocks = selection.load_split(dataset, split)
        lines = document_lines(list(next(iter(blocks.values()))[0].documents))
        for style, (ds, _) in blocks.items():
            titles = {}
            for q in ds.queries:
                [doc] = q.gold_doc_ids
                titles.setdefault(doc, q.text.split(";")[0] + "; ?")
            pools = [("all", ds)] + [(f"{n}", p) for n in POOL_SIZES for p in selection.same_type_pools(ds, n)]
            for size, pool in pools:
                index = pool_index(list(pool.documents), lines)
                for doc in (d.doc_id for d in pool.documents if d.doc_id in titles):
                    out.append(example(f"{dataset} · {style} · {size}", index, doc, titles[doc]))
                absent = outside(ds, pool, titles) if size != "all" else None
                if absent is not None:  # a contract of the pool's type that the pool lacks: the answer is "none"
                    out.append(example(f"{dataset} · {style} · {size} · absent", index, absent, titles[absent]))
            log(f"{dataset}-{split} {style}: {sum(e.block.startswith(f'{dataset} · {style}') for e in out)} examples")
    return out


def outside(ds: Any, pool: Any, titles: dict[str, str]) -> str | None:
    """The first document (by text hash) of the pool's contract type with a title that the pool does not hold."""
    held = {d.doc_id for d in pool.documents}
    kinds = {kind_of(ds, d.doc_id) for d in pool.documents}
    for doc in sorted(ds.documents, key=lambda d: d.content_hash):
        if doc.doc_id not in held and doc.doc_id in titles and kind_of(ds, doc.doc_id) in kinds:
            return str(doc.doc_id)
    return None


def kind_of(ds: Any, doc_id: str) -> str:
    return "nda" if ds.name.startswith("contractnli") else selection.contract_type(doc_id)


def example(block: str, index: LexicalIndex, document: str, title: str) -> Example:
    clues = targets.evidence(index, title)
    order = sorted(clues)
    x = np.array([[targets.features(clues[d], len(index))[f] for f in targets.FEATURES] for d in order],
                 dtype=float).reshape(len(order), len(targets.FEATURES))
    return Example(block, document, title, order, x, order.index(document) if document in clues else -1, len(index),
                   targets.unheld(index, title), clues)


def without(e: Example, dropped: frozenset[str]) -> Example:
    """``e`` as a model without the inputs ``dropped`` reads it: a kind of clue dropped is no clue (nor counted
    ``alone``), a dropped feature is 0."""
    clues = {d: kept for d, ms in e.clues.items() if (kept := [m for m in ms if m.kind not in dropped])}
    order = sorted(clues)
    x = np.array([[0.0 if f in dropped else targets.features(clues[d], e.corpus)[f] for f in targets.FEATURES]
                  for d in order], dtype=float).reshape(len(order), len(targets.FEATURES))
    return Example(e.block, e.document, e.title, order, x, order.index(e.document) if e.document in clues else -1,
                   e.corpus, e.unheld, clues)


def probabilities(e: Example, w: np.ndarray, b: float, u: float) -> tuple[np.ndarray, float]:
    return targets.probabilities(e.x @ w if len(e.candidates) else np.zeros(0), e.corpus, b + u * e.unheld)


def fit(data: list[Example], dropped: frozenset[str] = frozenset()) -> tuple[np.ndarray, float, float]:
    """The weights, the none score and its lift per unheld word of maximum likelihood (small L2 penalty); a feature
    in ``dropped`` weighs 0."""
    k = len(targets.FEATURES)

    def loss(theta: np.ndarray) -> float:
        w, b, u = theta[:k], theta[k], theta[k + 1]
        total = 0.0
        for e in data:
            p, none = probabilities(e, w, b, u)
            total -= np.log(max(p[e.label] if e.label >= 0 else none, 1e-12))
        return total / len(data) + L2 * (float(w @ w) + u * u)

    start = np.array([targets.WEIGHTS[f] for f in targets.FEATURES] + [targets.NULL_SCORE, targets.UNHELD_WEIGHT])
    bounds = [(0.0, 0.0) if f in dropped else (0.0, 50.0) for f in targets.FEATURES] + [(-30.0, 30.0), (0.0, 50.0)]
    start = np.where([f in dropped for f in targets.FEATURES] + [False, False], 0.0, start)
    done = minimize(loss, start, method="L-BFGS-B", bounds=bounds)
    return done.x[:k], float(done.x[k]), float(done.x[k + 1])


def scored(data: list[Example], w: np.ndarray, b: float, u: float) -> list[tuple[str, float, bool, bool]]:
    """Per example: block, top probability, whether the top is right, whether its document holds a clue (an absent
    document's example is never right: any sure answer to it is wrong)."""
    out = []
    for e in data:
        p, _ = probabilities(e, w, b, u)
        if len(p):
            i = int(np.argmax(p))  # ties: the first in doc-id order, as targets.candidates sorts them
            out.append((e.block, float(p[i]), e.candidates[i] == e.document, e.label >= 0))
        else:
            out.append((e.block, 0.0, False, False))
    return out


def choose_confident(rows: list[tuple[str, float, bool, bool]]) -> float:
    """The lowest threshold at which at most RISK of the sure answers are wrong (0.5 at least), over the questions whose
    contract is in the pool (the benchmarks' case); the absent blocks report how often a missing contract is answered
    for sure at that threshold."""
    rows = [r for r in rows if not r[0].endswith("absent")]
    best = 1.0
    for t in sorted({round(p, 3) for _, p, _, _ in rows if p >= 0.5}, reverse=True):
        sure = [right for _, p, right, _ in rows if p >= t]
        if sure and sum(not r for r in sure) / len(sure) <= RISK:
            best = t
    return best


def table(rows: list[tuple[str, float, bool, bool]], confident: float) -> list[dict[str, Any]]:
    by: dict[str, list[tuple[str, float, bool, bool]]] = defaultdict(list)
    for r in rows:
        by[r[0]].append(r)
    out = []
    for block in sorted(by):
        got = by[block]
        sure = [r for r in got if r[1] >= confident]
        labels = [r[2] for r in got]
        auroc = float(roc_auc_score(labels, [r[1] for r in got])) if 0 < sum(labels) < len(labels) else None
        out.append({"block": block, "examples": len(got), "clue_share": round(sum(r[3] for r in got) / len(got), 4),
                    "coverage": round(len(sure) / len(got), 4),
                    "wrong_sure": round(sum(not r[2] for r in sure) / len(sure), 4) if sure else None,
                    "top_right": round(sum(labels) / len(got), 4),
                    "auroc": round(auroc, 4) if auroc is not None else None})
    return out


def markdown(result: dict[str, Any]) -> str:
    w = result["weights"]
    lines = [f"# Target model, {result['split']} split", "",
             f"Command: `{result['command']}` · {result['machine']['date']} · load {result['machine']['loadavg']}", "",
             "Weights: " + ", ".join(f"{k} {v:.3f}" for k, v in w.items()) + f"; none {result['null_score']:.3f}; "
             f"unheld (lifts none) {result['unheld_weight']:.3f}; "
             f"CONFIDENT {result['confident']}; LIKELY {result['likely']}", "",
             "| block (dataset · titles · pool) | examples | document holds a clue | coverage (sure) | wrong among sure "
             "| top right | AUROC |", "|---|---|---|---|---|---|---|"]
    for r in result["blocks"]:
        wrong = "—" if r["wrong_sure"] is None else f"{100 * r['wrong_sure']:.1f} %"
        auroc = "—" if r["auroc"] is None else f"{r['auroc']:.3f}"
        lines.append(f"| {r['block']} | {r['examples']} | {100 * r['clue_share']:.1f} % | {100 * r['coverage']:.1f} % "
                     f"| {wrong} | {100 * r['top_right']:.1f} % | {auroc} |")
    return "\n".join(lines) + "\n"


def stored_fit(path: Any) -> tuple[np.ndarray, float, float, float]:
    stored = json.loads(open(path, encoding="utf-8").read())
    return (np.array([stored["weights"].get(f, 0.0) for f in targets.FEATURES]), stored["null_score"],
            stored.get("unheld_weight", 0.0), stored["confident"])


def compare(data: list[Example], args: argparse.Namespace) -> int:
    """Two stored fits on the same examples, block by block: bench/results/target-model-<split>-compare.json/.md."""
    fits = {"before": args.before, "now": RESULTS / "target-model-dev.json"}
    tables = {}
    for name, path in fits.items():
        w, b, u, confident = stored_fit(path)
        tables[name] = table(scored(data, w, b, u), confident)
    lines = [f"# Two target-model fits on the {args.split} split", "", f"before: `{args.before}`; now: "
             "`bench/results/target-model-dev.json`", "",
             "| block | examples | coverage before | coverage now | wrong among sure before | now | AUROC before | now |",
             "|---|---|---|---|---|---|---|---|"]

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f} %"

    for old, new in zip(tables["before"], tables["now"]):
        lines.append(f"| {old['block']} | {old['examples']} | {pct(old['coverage'])} | {pct(new['coverage'])} | "
                     f"{pct(old['wrong_sure'])} | {pct(new['wrong_sure'])} | {old['auroc'] or '—'} | {new['auroc'] or '—'} |")
    result = {"split": args.split, "fits": {k: str(v) for k, v in fits.items()}, "blocks": tables, "machine": machine(),
              "command": common.command_line("target_model.py", None)}
    write_results(f"target-model-{args.split}-compare", result, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


# The model's inputs, each variant without some of them, fitted on the same dev examples (``variants``).
VARIANTS = {
    "without the text start and the clue alone times ln N": frozenset({"text_start", "alone_ln_corpus"}),
    "without the text start": frozenset({"text_start"}),
    "without the clue alone times ln N": frozenset({"alone_ln_corpus"}),
    "all inputs (in use)": frozenset(),
}


def variants(data: list[Example], args: argparse.Namespace) -> int:
    """The model fitted on dev without some of its inputs (``VARIANTS``), each with its own CONFIDENT, block by block:
    bench/results/target-model-dev-variants.json/.md. The unheld count is the code's in every variant."""
    fits: dict[str, Any] = {}
    for name, dropped in VARIANTS.items():
        ex = [without(e, dropped) for e in data]
        w, b, u = fit(ex, dropped)
        rows = scored(ex, w, b, u)
        confident = choose_confident(rows)
        fits[name] = {"dropped": sorted(dropped), "weights": {f: round(float(v), 4) for f, v in zip(targets.FEATURES, w)},
                      "null_score": round(b, 4), "unheld_weight": round(u, 4), "confident": confident,
                      "blocks": table(rows, confident)}
        log(f"{name}: CONFIDENT {confident}")

    def pct(x: float | None) -> str:
        return "—" if x is None else f"{100 * x:.1f}"

    names_ = list(fits)
    lines = [f"# The target model without some of its inputs, {args.split} split", "",
             f"Command: `{common.command_line('target_model.py', None)}` · {machine()['date']}", "",
             "Each variant fitted on the same dev examples, with its own CONFIDENT (at most 1 % of the sure answers "
             "wrong over every block but the absent ones). Per block: coverage (sure) % / wrong among sure % / top "
             "candidate right %; for the absent blocks, coverage is the share answered for sure, all wrong.", "",
             *[f"- **{n}**: CONFIDENT {fits[n]['confident']}" for n in names_], "",
             "| block | examples | " + " | ".join(names_) + " |", "|---|---|" + "---|" * len(names_)]
    for i, r in enumerate(fits[names_[0]]["blocks"]):
        cells = [f"{pct(b['coverage'])} / {pct(b['wrong_sure'])} / {pct(b['top_right'])}"
                 for b in (fits[n]["blocks"][i] for n in names_)]
        lines.append(f"| {r['block']} | {r['examples']} | " + " | ".join(cells) + " |")
    result = {"split": args.split, "variants": fits, "machine": machine(),
              "command": common.command_line("target_model.py", None)}
    write_results(f"target-model-{args.split}-variants", result, "\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=["fit", "measure", "compare", "variants"])
    parser.add_argument("--before", help="compare: a stored fit (its json) to set beside the current one")
    parser.add_argument("--split", default="dev", choices=["dev", "test"])
    parser.add_argument("--datasets", default="cuad,contractnli")
    args = parser.parse_args(argv)
    if args.what == "fit" and args.split != "dev":
        raise SystemExit("the model is fitted on dev only")
    started = time.perf_counter()
    data = examples(args.split, args.datasets.split(","))
    if args.what == "compare":
        return compare(data, args)
    if args.what == "variants":
        if args.split != "dev":
            raise SystemExit("the variants are compared on dev only")
        return variants(data, args)
    if args.what == "fit":
        w, b, u = fit(data)
        confident = choose_confident(scored(data, w, b, u))
    else:
        stored = json.loads((RESULTS / "target-model-dev.json").read_text("utf-8"))
        w = np.array([stored["weights"][f] for f in targets.FEATURES])
        b, u, confident = stored["null_score"], stored["unheld_weight"], stored["confident"]
    rows = scored(data, w, b, u)
    result = {"split": args.split, "weights": {f: round(float(v), 4) for f, v in zip(targets.FEATURES, w)},
              "null_score": round(b, 4), "unheld_weight": round(u, 4), "confident": confident, "likely": targets.LIKELY,
              "max_holders": targets.MAX_HOLDERS, "max_share": targets.MAX_SHARE, "risk": RISK,
              "blocks": table(rows, confident), "machine": machine(),
              "command": common.command_line("target_model.py", argv), "seconds": round(time.perf_counter() - started)}
    write_results(f"target-model-{args.split}", result, markdown(result))
    print(markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
