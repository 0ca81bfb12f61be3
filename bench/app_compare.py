"""How long the Compare page takes: one question, three methods, k=8, on the indexed demo.

Prints median and p95 over N questions for
- search: ``Workbench.search`` alone (the question embedded once, three Chroma queries), no app cache,
  on a worker thread as Streamlit runs it;
- page, cold: the whole Compare page run (AppTest) on a question it has not seen: search + rendering;
- page, cached: the same questions again, as when a user goes back to a question or changes a display
  option (the search comes from ``st.cache_data``).
The demo dataset is indexed first if needed (not timed). Target: under 1 second per comparison.

    python bench/app_compare.py                      # cuad (29 contracts), 30 questions
    python bench/app_compare.py --dataset contractnli --runs 20 --workspace /tmp/ws
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sac.config import SacConfig  # noqa: E402
from sac.ingest.benchmark import load_benchmark  # noqa: E402
from sac.ingest.catalog import (  # noqa: E402
    DEMO_DIR,
    DEMO_NAME,
    corpus_name,  # noqa: E402
)
from sac.methods import BASE_METHODS, parse_methods  # noqa: E402
from sac.usecases.workbench import Workbench  # noqa: E402


def _figures(name: str, seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (f"{name:<14} median {statistics.median(ordered) * 1000:7.1f} ms   p95 {p95 * 1000:7.1f} ms   "
            f"max {ordered[-1] * 1000:7.1f} ms   (n={len(ordered)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="cuad", help="demo dataset: cuad (default) or contractnli")
    parser.add_argument("--runs", type=int, default=30, help="questions timed (default 30)")
    parser.add_argument("--workspace", help="workspace folder (default SAC_WORKSPACE or ./workspace)")
    parser.add_argument("--k", type=int, default=8)
    args = parser.parse_args()
    if args.workspace:
        os.environ["SAC_WORKSPACE"] = args.workspace

    config = SacConfig.from_env()
    wb = Workbench(config)
    [dataset] = load_benchmark(DEMO_DIR, [args.dataset])
    corpus = corpus_name(DEMO_NAME, dataset)
    methods = parse_methods(",".join(BASE_METHODS))
    started = time.perf_counter()
    reports = wb.build(corpus, dataset.documents, methods)
    added = sum(r.added for r in reports.values())
    print(f"{corpus}: {sum(r.kept + r.added for r in reports.values()):,} chunks in 3 indexes "
          f"({added:,} embedded now, {time.perf_counter() - started:.1f} s); workspace {config.workspace}")
    questions = list(dataset.queries[: args.runs])

    def time_searches() -> None:
        wb.search(corpus, methods, [questions[0].text], args.k)  # model and collections loaded once
        for q in questions:
            t0 = time.perf_counter()
            wb.search(corpus, methods, [q.text], args.k)
            search.append(time.perf_counter() - t0)

    # Streamlit runs page scripts in worker threads; time the bare search there too. (On a busy machine
    # torch's intra-op pool makes a one-query embedding far slower on the main thread than on a worker.)
    search: list[float] = []
    worker = threading.Thread(target=time_searches)
    worker.start()
    worker.join()

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600).switch_page("pages/3_Compare.py")
    at.run()
    at.selectbox(key="cmp_corpus").set_value(corpus).run()
    if at.exception:
        print(at.exception[0].value, file=sys.stderr)
        return 1
    timings: dict[str, list[float]] = {"page, cold": [], "page, cached": []}
    for label in timings:
        for q in questions:
            at.selectbox(key="cmp_query_pick").set_value(q.query_id)
            t0 = time.perf_counter()
            at.run()
            timings[label].append(time.perf_counter() - t0)
            cards = sum('class="sac-hit' in m.value for m in at.markdown)
            if at.exception or cards != 3 * args.k:
                print(f"unexpected page state for {q.query_id}: {cards} hits, {at.exception}", file=sys.stderr)
                return 1

    print(f"three methods ({', '.join(m.name for m in methods)}), k={args.k}, {len(questions)} questions, "
          f"{os.cpu_count()} CPUs")
    print(_figures("search", search))
    for label, seconds in timings.items():
        print(_figures(label, seconds))
    worst = max(statistics.median(s) for s in timings.values())
    print("target (< 1 s median per comparison):", "met" if worst < 1.0 else "NOT met")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
