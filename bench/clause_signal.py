"""Does the clause a question asks about tell apart the look-alikes its title cannot? (Tried on dev; not adopted.)

A benchmark question exists only where its contract answers it (a CUAD clause category with an answer, a
ContractNLI hypothesis with evidence), so "the Distributor Agreement of XYZCORP; ... Non-Compete ..." hints that
the contract holds a non-compete clause. bench/title_floor.py leaves that open ("the question's wording can narrow
the look-alikes"). This script measures it for the recommended method's routing: each question is routed as
``sac-generic+docs1+hybrid0.75+inner+names`` routes it, its top ``CANDIDATES`` documents are kept with their fused
scores, and each candidate gets the cosine of its best chunk to the question without its title (what ``+inner``
ranks by; read from the candidate's own vectors). The first document is then chosen by

    fused score + lam * best clause cosine        (lam = 0: the method as it is)

among the top 3 or all ``CANDIDATES``. Reported: DRM@1 (the first document is a wrong one) per title style, for
all questions, those whose title names no document (``+names`` found none: where a tie-break could act) and the
builder's unidentifiable ones, with the paired change against lam = 0 and its 95 % interval, documents resampled.

    python bench/clause_signal.py --split dev        # about 20 minutes on 2 cores, the indexes of bench/selection.py

Writes bench/results/clause-signal-<split>.json and .md. Needs the indexes that ``bench/selection.py --split
<split>`` built (paper chunking, minilm-onnx).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

import common
import numpy as np
import pandas as pd
import selection
from common import log, machine, write_results

from sac.config import SacConfig
from sac.evaluation.uncertainty import compare_to_reference
from sac.index import documents as document_index
from sac.index import lexical
from sac.ingest.catalog import corpus_name
from sac.methods import RECOMMENDED, parse_method
from sac.retrieval import document_ranking, names, pipeline, targets
from sac.usecases.workbench import Workbench

CANDIDATES = 10
LAMBDAS = (0.25, 0.5, 1.0, 2.0)
WITHIN = (3, CANDIDATES)
SUBSETS = ("all", "unnamed", "unidentifiable")


def route_questions(wb: Workbench, ds: Any, tags: dict[str, list[str]]) -> list[dict[str, Any]]:
    """Each question's top CANDIDATES documents as the recommended method routes it, their fused scores and the
    cosine of each one's best chunk to the question without its title."""
    method = parse_method(RECOMMENDED)
    index = wb.index(corpus_name("full", ds), method)
    lex = lexical.for_method(index, wb.summary_store, method)
    summaries = document_index.document_index(index, wb.summary_store, strategy=method.strategy, embedder=wb.embedder)
    vocabulary = targets.name_vocabulary(lex["documents"])
    asked = [q.text for q in ds.queries]
    searched = [names.rewrite_query(q, vocabulary) for q in asked]
    vectors = wb.embed_queries(searched)
    proper = [pipeline.question_proper(q) or q for q in searched]
    clause_vectors = wb.embed_queries(proper)
    out = []
    for i, q in enumerate(ds.queries):
        naming = targets.named_targets(lex["documents"], asked[i])
        query = document_ranking.lexical_query(searched[i], naming.documents)
        routed = document_ranking.rank_documents(index, lex, summaries, query, np.asarray(vectors[i], np.float32), CANDIDATES,
                                named=naming.documents)
        cosines = document_ranking.chunk_cosines(index, lex["chunks"], routed.documents,
                                         np.asarray(clause_vectors[i], np.float32))
        best = dict.fromkeys(routed.documents, -1.0)
        for cid, cos in cosines.items():
            d = lex["chunks"].doc_ids[lex["chunks"].row_of[cid]]
            best[d] = max(best[d], cos)
        out.append({"query_id": q.query_id, "gold": sorted(q.gold_doc_ids), "named": naming.evidence != "",
                    "identifiable": "identifiable" in tags[q.query_id], "candidates": routed.documents,
                    "fused": [routed.scores[d] for d in routed.documents],
                    "clause": [best[d] for d in routed.documents]})
    return out


def first_wrong(rows: list[dict[str, Any]], lam: float, within: int) -> list[float]:
    """Per question, 1.0 where the first document chosen by fused + lam * clause among the top ``within`` is wrong."""
    wrong = []
    for r in rows:
        score = np.asarray(r["fused"][:within]) + lam * np.asarray(r["clause"][:within])
        wrong.append(float(r["candidates"][int(np.argmax(score))] not in r["gold"]))
    return wrong


def variant(lam: float, within: int) -> str:
    return "as it is" if lam == 0 else f"lam {lam}, top {within}"


def block_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per subset, DRM@1 as the method is and each variant's paired change, documents resampled (the project's
    sac.evaluation.uncertainty, as every other table: the first document chosen is one hit at k = 1)."""
    out = []
    for subset in SUBSETS:
        chosen = [r for r in rows if subset == "all" or (subset == "unnamed" and not r["named"])
                  or (subset == "unidentifiable" and not r["identifiable"])]
        if not chosen:
            continue
        frames = []
        for lam, within in [(0.0, CANDIDATES), *((lam, w) for w in WITHIN for lam in LAMBDAS)]:
            wrong = first_wrong(chosen, lam, within)
            frames.append(pd.DataFrame({
                "dataset": subset, "query_id": [r["query_id"] for r in chosen], "method": variant(lam, within), "k": 1,
                "precision": 0.0, "recall": 0.0, "drm": wrong, "wrong": wrong, "retrieved": 1,
                "document": ["|".join(r["gold"]) for r in chosen]}))
        per_query = pd.concat(frames, ignore_index=True)
        diffs = compare_to_reference(per_query, variant(0.0, CANDIDATES), metric="drm", k=1, resample="document")
        base = float(np.mean(frames[0]["drm"]))
        by_variant = diffs.set_index("method_b")
        out.append({"subset": subset, "questions": len(chosen), "drm_at_1": 100 * base, "variants": [
            {"lam": lam, "within": within,
             "delta": [100 * float(by_variant.loc[variant(lam, within), c]) for c in ("estimate", "low", "high")]}
            for within in WITHIN for lam in LAMBDAS]})
    return out


def markdown(result: dict[str, Any]) -> str:
    heads = [f"λ {v['lam']}, top {v['within']}" for v in result["blocks"][0]["rows"][0]["variants"]]
    lines = [f"# The clause as a document tie-break ({result['split']} split, {result['method']})", "",
             f"DRM@1 in % with the method as it is, then the change in points with the clause cosine added "
             f"(95 % interval, documents resampled). {result['command']}", "",
             "| dataset · titles | questions | DRM@1 % | " + " | ".join(heads) + " |",
             "|---" * (3 + len(heads)) + "|"]
    for block in result["blocks"]:
        for row in block["rows"]:
            cells = [f"{d:+.1f} [{lo:+.1f}, {hi:+.1f}]" for d, lo, hi in (v["delta"] for v in row["variants"])]
            lines.append(f"| {block['dataset']} · {block['documents']} docs · {block['titles']} · {row['subset']} | "
                         f"{row['questions']} | {row['drm_at_1']:.1f} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", choices=["dev", "test"], default="dev")
    parser.add_argument("--datasets", default="cuad,contractnli")
    parser.add_argument("--workspace", default=str(selection.WORKSPACE))
    args = parser.parse_args(argv)
    wb = Workbench(SacConfig(workspace=common.prepare_workspace(Path(args.workspace)), embedder="minilm-onnx",
                             chunking="paper"))
    result: dict[str, Any] = {"split": args.split, "method": RECOMMENDED, "machine": machine(), "blocks": [],
                              "command": common.command_line("clause_signal.py", argv)}
    for dataset in args.datasets.split(","):
        for style, (ds, tags) in selection.load_split(dataset, args.split).items():
            started = time.perf_counter()
            rows = route_questions(wb, ds, tags)
            log(f"{ds.name} ({style}): {len(rows)} questions routed in {time.perf_counter() - started:.0f} s")
            result["blocks"].append({"dataset": dataset, "titles": style, "documents": len(ds.documents),
                                     "rows": block_rows(rows)})
    write_results(f"clause-signal-{args.split}", result, markdown(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
