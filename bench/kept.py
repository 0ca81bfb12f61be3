"""What ``+names`` derives from a corpus's texts: made, against read back from where the index keeps it.

The first ``+names`` question of a process needs the corpus's name vocabulary, its squashed texts and their
substring signatures, and its initials (sac.retrieval.targets.name_vocabulary, sac.retrieval.targets.squashed_texts,
sac.retrieval.targets.initials_texts). They are kept
beside the lexical generation (sac.index.derived); this script times making each one against reading it back, on
every distinct CUAD v1 contract (no index needed: the texts stand in for a documents index's), ``--repeats``
times alternating, and prints the medians and the kept sizes; then, once per repeat, making each in a new
generation after one that held every contract but the last (``LexicalIndex.previous``; the vocabulary is grown from
that generation's: ``NameVocabulary.grown``).

    python bench/kept.py --out kept-cuad
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time
from pathlib import Path

from common import POOL_DIR, command_line, machine, median, table, write_results

from sac.index import lexical
from sac.index.lexical import LexicalIndex, Lexicon
from sac.retrieval import targets


def documents_index(texts: list[str], folder: Path) -> LexicalIndex:
    """A documents index holding ``texts`` whose derived data are kept in ``folder`` (nothing of BM25 is read)."""
    ids = [f"d{i}" for i in range(len(texts))]
    return LexicalIndex("documents", ids, ids, ids, Lexicon.from_tokens([["x"] for _ in texts]), texts=texts,
                        folder=folder)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--out", default="kept-cuad")
    args = p.parse_args(argv)
    texts = list({hashlib.sha256(t.encode()).hexdigest(): t for t in
                  (f.read_text(encoding="utf-8") for f in sorted(POOL_DIR.glob("*.txt")))}.values())
    made: dict[str, list[float]] = {"vocabulary": [], "squashed texts and signatures": [], "initials": []}
    read: dict[str, list[float]] = {k: [] for k in made}
    added: dict[str, list[float]] = {k: [] for k in made}
    steps = {"vocabulary": targets.name_vocabulary, "squashed texts and signatures": targets.squashed_texts,
             "initials": targets.initials_texts}
    sizes: dict[str, int] = {}
    for _ in range(args.repeats):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            for name, step in steps.items():
                t0 = time.perf_counter()
                step(documents_index(texts, folder))  # nothing kept yet: made, then written
                made[name].append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                step(documents_index(texts, folder))  # a new process: read back
                read[name].append(time.perf_counter() - t0)
            sizes = {f.name.rsplit("-", 1)[0]: f.stat().st_size for f in (folder / "derived").iterdir()}
        with tempfile.TemporaryDirectory() as tmp:  # one document added: a new generation after one of all but it
            (Path(tmp) / "old").mkdir()
            old = documents_index(texts[:-1], Path(tmp) / "old")
            for step in steps.values():
                step(old)
            (Path(tmp) / "new").mkdir()
            lexical._hand_over(old, Path(tmp) / "new")
            new = documents_index(texts, Path(tmp) / "new")
            for name, step in steps.items():
                t0 = time.perf_counter()
                step(new)
                added[name].append(time.perf_counter() - t0)
    rows = [{"what": name, "made (s)": round(median(made[name]), 3), "read back (s)": round(median(read[name]), 3),
             "ratio": round(median(made[name]) / median(read[name]), 1),
             "one document added (s)": round(median(added[name]), 3)} for name in steps]
    text = (f"{len(texts)} distinct CUAD contracts, {sum(map(len, texts)) / 1e6:.1f} M characters; medians of "
            f"{args.repeats}; load {os.getloadavg()[0]:.2f}\n\n" + table(rows, list(rows[0]))
            + "\n\nkept: " + ", ".join(f"{k} {v / 1e6:.1f} MB" for k, v in sorted(sizes.items())))
    write_results(args.out, {"command": command_line("kept.py", argv), "machine": machine(), "args": vars(args),
                             "documents": len(texts), "rows": rows, "sizes": sizes, "made_s": made, "read_s": read,
                              "added_s": added},
                  text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
