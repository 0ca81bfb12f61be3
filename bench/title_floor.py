"""How much DRM a title leaves to chance: the look-alike floor of DRM@1 beside a method's DRM@1.

A question the builder tags ``unidentifiable`` names nothing that its document's text holds and few other
documents do ("the Sponsorship Agreement of GSVINC", where GSV Inc. never appears; "the Mutual Non-Disclosure
Agreement"). All a text-only method can take from such a title is what is left once its names are gone: the
document type. A title's **confirmable words** are its words as ``+names`` reads them
(``sac.retrieval.targets.title_words``), less any with a digit, that its own document's text holds:
"Sponsorship Agreement of GSVINC" -> {sponsorship, agreement}; a file-name code or a filer the text never writes
drops out. The **look-alike floor** is the DRM@1 of a reader that gets every identifiable question right and,
for an unidentifiable one, picks at random among the split's documents whose title has the same confirmable
words (``1 - 1/n`` for n such documents). It is a reference, not a strict bound: the question's wording (the
clause it asks about) could narrow the look-alikes (the cosine of its best chunk to it does not, on dev:
bench/clause_signal.py), and titles that name a party other documents share ("between FRANCHISOR and FRANCHISEE")
count as having no look-alike, which keeps the floor low.

    python bench/title_floor.py      # the built benchmarks (bench/selection.py) and the recommended method's runs

Beside it, the method's DRM@1 on all, identifiable and unidentifiable questions, from the runs of the README's
tables (``RUNS``, as bench/headline.py reads them; the recommended method by default). Writes
bench/results/title_floor.json and .md.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import headline
import selection
from common import RESULTS, write_results

from sac.index.lexical import WORD
from sac.ingest.builders import TITLE_STYLES
from sac.retrieval.targets import title_words

# The runs of the README's headline tables (bench/headline.py): the recommended method's rows are its runs'.
RUNS = tuple(f"{name}.json" for name in headline.run_names())


def confirmable(query: str, text_words: set[str]) -> frozenset[str]:
    """The words of a "Consider <title>; <question>" title that its document's text holds."""
    return frozenset(w for w in title_words(query) if w in text_words and not any(c.isdigit() for c in w))


def floor(tests: list[dict[str, Any]], corpus: Path) -> dict[str, Any]:
    words: dict[str, set[str]] = {}
    for t in tests:
        path = t["snippets"][0]["file_path"]
        if path not in words:
            words[path] = set(WORD.findall((corpus / path).read_text(encoding="utf-8").lower()))
    key = {t["query"]: confirmable(t["query"], words[t["snippets"][0]["file_path"]]) for t in tests}
    docs = defaultdict(set)
    for t in tests:
        docs[key[t["query"]]].add(t["snippets"][0]["file_path"])
    blind = [t for t in tests if "identifiable" not in t["tags"]]
    lookalikes = sorted(len(docs[key[t["query"]]]) for t in blind)
    return {"questions": len(tests), "unidentifiable": len(blind),
            "lookalikes_median": lookalikes[len(lookalikes) // 2] if lookalikes else 0,
            "floor_drm@1": round(100 * sum(1 - 1 / n for n in lookalikes) / len(tests), 1)}


def method_rows(method: str) -> dict[tuple[str, str, str], dict[str, float]]:
    """(dataset, split, titles) -> DRM@1 on all / identifiable / unidentifiable questions, full pools only."""
    out = {}
    for name in RUNS:
        result = json.loads((RESULTS / name).read_text(encoding="utf-8"))
        for block in result["blocks"]:
            rows = {r["subset"]: r for r in block["rows"] if r["method"] == method}
            if set(rows) >= {"all", "identifiable", "unidentifiable"}:
                out[(block["dataset"], block["split"], block["titles"])] = {
                    **{subset: rows[subset]["drm@1"] for subset in ("all", "identifiable", "unidentifiable")},
                    "source": name}
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--method", default=headline.METHODS[-1], help="the method whose runs to set beside the floor")
    args = p.parse_args(argv)
    selection.ensure_benchmarks()
    got = method_rows(args.method)
    rows = []
    for dataset in ("cuad", "contractnli"):
        for split in ("dev", "test"):
            for style in TITLE_STYLES:
                path = selection.FULL / style / "benchmarks" / f"{dataset}-{split}.json"
                row = {"dataset": dataset, "split": split, "titles": style,
                       **floor(json.loads(path.read_text(encoding="utf-8"))["tests"], selection.FULL / style / "corpus")}
                row[args.method] = got.get((dataset, split, style))
                rows.append(row)
    lines = ["# Look-alike floor of DRM@1 (bench/title_floor.py)", "",
             f"DRM@1 in %. Method: `{args.method}`, built-in summaries, minilm-onnx, paper chunking, full pools.", "",
             "| dataset | split | titles | questions | unidentifiable | look-alikes (median) | look-alike floor | "
             "method: all | identifiable | unidentifiable |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        m = r[args.method] or {}
        got = " | ".join(f"{m[k]:.1f}" if k in m else "—" for k in ("all", "identifiable", "unidentifiable"))
        lines.append(f"| {r['dataset']} | {r['split']} | {r['titles']} | {r['questions']} | {r['unidentifiable']} | "
                     f"{r['lookalikes_median']} | {r['floor_drm@1']:.1f} | {got} |")
    write_results("title_floor", {"method": args.method, "rows": rows}, "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
