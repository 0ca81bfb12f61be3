"""The first minute of a new user: load the demo from an empty workspace, then the first Compare answer.

Drives the real pages in this process (Streamlit's AppTest, the packaged model, an embedded Chroma store in a
fresh temporary workspace) exactly as the README's first visit does:
1. Home: choose the datasets and click **Load the demo corpus** (the three paper methods, and the two
   built from the shipped LLM summary sets unless ``--no-llm``); timed from the click until "Demo loaded".
2. Compare: the first benchmark question of the dataset, three methods, k = 8; timed from opening the page
   to the answer (the model is already loaded by step 1, as it is in the app).
Prints both, the chunks embedded, and the machine's load before and after (rerun when it is above 2).

    python bench/demo_first_minute.py                    # ContractNLI only
    python bench/demo_first_minute.py --datasets both    # ContractNLI and CUAD (the Home page's default)
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


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", choices=["contractnli", "both"], default="contractnli")
    parser.add_argument("--no-llm", action="store_true", help="the three paper methods only")
    args = parser.parse_args()
    from streamlit.testing.v1 import AppTest

    before = load()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["SAC_WORKSPACE"] = str(Path(tmp) / "workspace")
        home = AppTest.from_file(str(ROOT / "app.py"), default_timeout=3600).run()
        home.radio(key="home_demo_datasets").set_value(args.datasets)
        home.checkbox(key="home_demo_llm").set_value(not args.no_llm)
        started = time.perf_counter()
        home.button(key="home_load_demo").click().run()
        loaded = time.perf_counter() - started
        if home.exception or not any("Demo loaded" in s.value for s in home.success):
            print("the demo did not load:", [e.value for e in home.exception], file=sys.stderr)
            return 1
        embedded = [i.value for i in home.info]
        compare = home.switch_page("pages/3_Compare.py")
        started = time.perf_counter()
        compare.run()
        first_answer = time.perf_counter() - started
        hits = sum('class="sac-hit' in m.value for m in compare.markdown)
        if compare.exception or hits != 24:
            print(f"unexpected Compare page: {hits} hits, {compare.exception}", file=sys.stderr)
            return 1
    after = load()
    result = {"datasets": args.datasets, "llm_indexes": not args.no_llm, "load_demo_s": round(loaded, 1),
              "first_compare_answer_s": round(first_answer, 2), "embedded": embedded,
              "load_before": before, "load_after": after}
    print(f"demo ({args.datasets}, {'5' if not args.no_llm else '3'} methods): loaded in {loaded:.1f} s "
          f"from the click; first Compare answer {first_answer:.2f} s after; load {before} -> {after}")
    for line in embedded:
        print("  " + line)
    write_json(RESULTS / f"demo-first-minute-{args.datasets}.json", result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
