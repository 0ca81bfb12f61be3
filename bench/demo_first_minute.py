"""The first minute of a new user: load the demo from an empty workspace, then the first Compare answer.

Drives the real pages in this process (Streamlit's AppTest, the packaged model, an embedded Chroma store in a
fresh temporary workspace) exactly as the README's first visit does:
1. Home: choose the datasets and click **Load the demo corpus**. The build runs in the background (``sac.usecases.jobs``):
   the three paper methods of each dataset first, then the two built from the shipped LLM summary sets
   (unless ``--no-llm``).
2. Compare, as soon as ContractNLI's baseline, sac-generic and sac-expert indexes are complete: the first
   benchmark question, three methods, k = 8. Timed from the click to the answer ("useful"), while the rest
   of the demo is still building.
3. The whole build: timed from the click until the job ends.
Prints the times, the chunks embedded, and the machine's load before and after (rerun when it is above 2).

Every page starts importing the embedding model's libraries when it opens (``sac.embedding.models.preload``), so
what a user spends reading Home before the click overlaps that import: ``--read S`` waits S seconds between
Home's first showing and the click (default 0: the click comes at once, as in the runs before the preload). The
clock starts at the click either way.

    python bench/demo_first_minute.py                    # ContractNLI only
    python bench/demo_first_minute.py --datasets both    # ContractNLI and CUAD
    python bench/demo_first_minute.py --read 10          # the user reads Home for 10 s before clicking
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from common import RESULTS, write_json  # noqa: E402

from sac.config import SacConfig  # noqa: E402
from sac.index.client import make_client  # noqa: E402
from sac.index.store import list_indexes  # noqa: E402
from sac.usecases.job_board import board  # noqa: E402

PAPER = {"baseline", "sac-generic", "sac-expert"}


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", choices=["contractnli", "both"], default="contractnli")
    parser.add_argument("--no-llm", action="store_true", help="the three paper methods only")
    parser.add_argument("--read", type=float, default=0.0, help="seconds on Home before the click (default 0)")
    args = parser.parse_args()
    from streamlit.testing.v1 import AppTest

    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SAC_WORKSPACE"] = str(Path(tmp) / "workspace")
        home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=3600).run()
        home.radio(key="home_demo_datasets").set_value(args.datasets)
        home.checkbox(key="home_demo_llm").set_value(not args.no_llm)
        time.sleep(args.read)
        started = time.perf_counter()
        home.button(key="home_load_demo").click().run()
        client = make_client(SacConfig.from_env())
        while not PAPER <= {i.method for i in list_indexes(client) if i.corpus == "demo-contractnli" and i.complete}:
            if not board(os.environ["SAC_WORKSPACE"]).running():
                break
            time.sleep(0.2)
        compare = home.switch_page("pages/3_Compare.py")
        opened = time.perf_counter()
        compare.run()
        first_answer = time.perf_counter() - started
        answer_s = time.perf_counter() - opened
        hits = sum('class="sac-hit' in m.value for m in compare.markdown)
        if compare.exception or hits != 24:
            print(f"unexpected Compare page: {hits} hits, {compare.exception}", file=sys.stderr)
            return 1
        board(os.environ["SAC_WORKSPACE"]).wait_idle()
        loaded = time.perf_counter() - started
        status = board(os.environ["SAC_WORKSPACE"]).latest().status()
        if status.state != "done":
            print("the demo did not load:", status.messages, file=sys.stderr)
            return 1
        embedded = [text for kind, text in status.messages if kind == "info"]
    after = load()
    result = {"datasets": args.datasets, "llm_indexes": not args.no_llm, "read_s": args.read, "load_demo_s": round(loaded, 1),
              "click_to_first_compare_answer_s": round(first_answer, 1), "compare_page_s": round(answer_s, 2),
              "embedded": embedded,
              "load_before": before, "load_after": after}
    print(f"demo ({args.datasets}, {'5' if not args.no_llm else '3'} methods, {args.read:g} s on Home before the "
          f"click): first Compare answer (three paper "
          f"methods on ContractNLI) {first_answer:.1f} s after the click (the page itself {answer_s:.2f} s); whole demo "
          f"built {loaded:.1f} s after the click; load {before} -> {after}")
    for line in embedded:
        print("  " + line)
    write_json(RESULTS / f"demo-first-minute-{args.datasets}{f'-read{args.read:g}' if args.read else ''}.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
