"""The word-break prices of squashed company names, chosen on the dev split's CUAD filer names, reported on test.

``sac.retrieval.names.segment`` breaks a squashed name ("AMERICANPHYSICIANSCAPITALINC") into words by their
frequency in the corpus, minus three prices: per word (``WORD_PENALTY``), per 2-letter word that is no company form
(``SHORT_PENALTY``) and per character of a piece the corpus lacks (``UNKNOWN_CHAR``). Each split's CUAD contracts
are the corpus; every contract whose filer token (its file name's first field) is squashed is a case. A break is
right when each word it gives, legal forms aside, is written in that contract's own text (``names_ok``);
``all_ok`` counts the legal forms too. The grid's best setting on dev replaces the shipped values only when, case
by case, it fixes more breaks than it spoils beyond a two-sided sign test at 5 %; the test split is reported
beside, never chosen on.

    python bench/word_break.py            # writes bench/results/word-break.json and .md
"""

from __future__ import annotations

import argparse
import itertools
import math
import re
import time
from collections.abc import Iterable
from typing import Any

import selection
from common import command_line, log, machine, write_results

from sac.retrieval import names
from sac.retrieval.names import LEGAL_SUFFIXES, NameVocabulary, rewrite_query

SQUASHED = re.compile(r"[A-Z0-9]{8,}(?:,[A-Z]+)?|(?:[A-Z][a-z0-9]+){2,}")  # "AMERICANPHYSICIANSCAPITALINC", "GluMobileInc"
WORD = re.compile(r"[^\W_]+")
GRID = {"WORD_PENALTY": (2.0, 3.0, 4.0, 5.0, 6.0), "SHORT_PENALTY": (3.0, 4.5, 6.0, 8.0),
        "UNKNOWN_CHAR": (2.5, 3.5, 4.5, 5.5)}
KNOBS = tuple(GRID)


def cases(split: str) -> tuple[NameVocabulary, list[tuple[str, set[str]]]]:
    """The split's vocabulary (all its CUAD contracts) and, per contract with a squashed filer, (filer, own words)."""
    folder = selection.FULL / "filename" / "corpus" / f"cuad-{split}"
    files = sorted(folder.glob("*.txt"))
    texts = {f.name: f.read_text(encoding="utf-8") for f in files}
    vocab = NameVocabulary.from_texts(texts.values())
    out = [(name.split("_")[0], {w.lower() for w in WORD.findall(text)})
           for name, text in texts.items() if SQUASHED.fullmatch(name.split("_")[0])]
    return vocab, out


def score(vocab: NameVocabulary, items: Iterable[tuple[str, set[str]]], setting: dict[str, float]) -> dict[str, Any]:
    """Shares of breaks whose words (legal forms aside, and with them) the contract's own text writes, and which
    cases were right (``right``, in order)."""
    shipped = {k: getattr(names, k) for k in KNOBS}
    try:
        for k, v in setting.items():
            setattr(names, k, v)
        n = names_ok = all_ok = 0
        right = []
        for filer, own in items:
            words = [w.lower() for w in WORD.findall(rewrite_query(filer, vocab))]
            n += 1
            right.append(all(w in own for w in words if w not in LEGAL_SUFFIXES))
            names_ok += right[-1]
            all_ok += all(w in own for w in words)
    finally:
        for k, v in shipped.items():
            setattr(names, k, v)
    return {"cases": n, "names_ok": round(100 * names_ok / n, 2), "all_ok": round(100 * all_ok / n, 2),
            "right": right}


def sign_test(before: list[bool], after: list[bool]) -> dict[str, Any]:
    """Cases fixed and spoilt going from ``before`` to ``after``, with the two-sided sign test's p-value."""
    fixed = sum(a and not b for b, a in zip(before, after))
    spoilt = sum(b and not a for b, a in zip(before, after))
    n, low = fixed + spoilt, min(fixed, spoilt)
    p = min(1.0, 2 * sum(math.comb(n, i) for i in range(low + 1)) / 2**n) if n else 1.0
    return {"fixed": fixed, "spoilt": spoilt, "p": round(p, 4)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="word-break")
    args = parser.parse_args(argv)
    if not (selection.FULL / "filename" / "corpus" / "cuad-dev").is_dir():
        selection.ensure_benchmarks(("filename",))
    started = time.perf_counter()
    shipped = {k: float(getattr(names, k)) for k in KNOBS}
    vocab, dev = cases("dev")
    log(f"dev: {len(dev)} squashed filer names; {len(list(itertools.product(*GRID.values())))} settings")
    grid = []
    for values in itertools.product(*GRID.values()):
        setting = dict(zip(KNOBS, values))
        grid.append({**setting, **score(vocab, dev, setting)})
    shipped_dev = next(g for g in grid if all(g[k] == shipped[k] for k in KNOBS))
    best = max(grid, key=lambda g: (g["names_ok"], g["all_ok"], all(g[k] == shipped[k] for k in KNOBS)))
    versus = sign_test(shipped_dev["right"], best["right"])
    best_setting = {k: best[k] for k in KNOBS}
    chosen_setting = best_setting if versus["fixed"] > versus["spoilt"] and versus["p"] < 0.05 else shipped
    test_vocab, test = cases("test")
    figures = ("cases", "names_ok", "all_ok")
    test_best = score(test_vocab, test, best_setting)
    test_shipped = score(test_vocab, test, shipped)
    result = {
        "command": command_line("word_break.py", argv), "machine": machine(),
        "grid": [{k: g[k] for k in (*KNOBS, *figures)} for g in grid], "shipped": shipped,
        "best_on_dev": best_setting, "chosen": chosen_setting, "dev_best_vs_shipped": versus,
        "dev": {"shipped": {k: shipped_dev[k] for k in figures}, "best": {k: best[k] for k in figures}},
        "test": {"shipped": {k: test_shipped[k] for k in figures}, "best": {k: test_best[k] for k in figures}},
        "test_best_vs_shipped": sign_test(test_shipped["right"], test_best["right"]),
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_results(args.out, result, markdown(result))
    print(markdown(result))
    return 0


def markdown(result: dict[str, Any]) -> str:
    lines = ["# Word-break prices of squashed company names", "",
             f"Command: `{result['command']}` · {result['machine']['date']} · no timing", "",
             "Cases: each split's CUAD contracts whose filer token is squashed, broken against that split's corpus. "
             "*names ok*: every word of the break but legal forms is written in the contract's own text; *all ok*: "
             f"every word. The best of {len(result['grid'])} settings on dev against the shipped values, case by case: "
             f"{_versus(result['dev_best_vs_shipped'])}; it would replace them only beyond a sign test at 5 % "
             "(a rule written after this script's first run, which printed the test rows too). In use: "
             f"{'the best' if result['chosen'] != result['shipped'] else 'the shipped values'}. On test: "
             f"{_versus(result['test_best_vs_shipped'])}.", "",
             "| split | setting | " + " | ".join(KNOBS) + " | cases | names ok % | all ok % |",
             "|---" * (5 + len(KNOBS)) + "|"]
    for split in ("dev", "test"):
        for which in ("shipped", "best"):
            setting = result["shipped"] if which == "shipped" else result["best_on_dev"]
            figures = result[split][which]
            lines.append(f"| {split} | {which} | " + " | ".join(f"{setting[k]:g}" for k in KNOBS)
                         + f" | {figures['cases']} | {figures['names_ok']:.1f} | {figures['all_ok']:.1f} |")
    return "\n".join(lines) + "\n"


def _versus(test: dict[str, Any]) -> str:
    return f"fixes {test['fixed']}, spoils {test['spoilt']} (p = {test['p']:.2f})"


if __name__ == "__main__":
    raise SystemExit(main())
