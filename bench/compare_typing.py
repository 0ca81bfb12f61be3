"""Compare in a real browser: the time from typing a question (Enter) to its answer, with and without a build running.

A real `streamlit run app.py` on a copy of a workspace where the CUAD demo is indexed, driven by Playwright on
Debian's Chromium. One browser session types N of CUAD's benchmark questions into Compare ("Your own question",
three paper methods, k = 8); each is timed from Enter until the page shows hits that differ from the previous
question's and nothing in the page is stale (greyed), and after each answer the box is cleared (emptied, Enter) and
timed until the page shows no hits and nothing greyed. Then the same with a build running: a second browser session
clicks Home's **Load the demo corpus** (both datasets, with the LLM indexes: CUAD's LLM indexes are embedded for
minutes), and the first types N other questions meanwhile. Also samples, while the build runs and nobody types,
how often the Compare page shows stale (greyed) elements: a build's progress must not rerun another page.

    python bench/compare_typing.py --workspace /tmp/ws-with-cuad          # writes bench/results/compare-typing.json
    python bench/compare_typing.py --workspace /tmp/ws --runs 10 --no-build
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path
from typing import Any

from common import RESULTS, ROOT, machine, write_json

sys.path.insert(0, str(ROOT))
from tests.test_browser import CHROMIUM, CHROMIUM_ARGS, _open, _settle, streamlit_server  # noqa: E402

ANSWERED = """(prev) => {
  const main = document.querySelector('[data-testid=stMain]');
  if (!main || main.querySelector('[data-stale=true]')) return false;
  const hits = [...main.querySelectorAll('.sac-hit')].map(e => e.innerText).join('|');
  return hits.length > 0 && hits !== prev;
}"""
HITS = "() => [...document.querySelectorAll('[data-testid=stMain] .sac-hit')].map(e => e.innerText).join('|')"
CLEARED = """() => {
  const main = document.querySelector('[data-testid=stMain]');
  return !!main && !main.querySelector('[data-stale=true]') && main.querySelectorAll('.sac-hit').length === 0;
}"""
STALE = "() => document.querySelectorAll('[data-testid=stMain] [data-stale=true]').length"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def type_questions(page: Any, url: str, questions: list[str]) -> tuple[list[float], list[float]]:
    """Seconds from Enter to the answer, per question; and from clearing the box (emptied, Enter) to a page with no
    hits and nothing greyed, after each answer."""
    _open(page, f"{url}/Compare?cmp_corpus=demo-cuad")
    page.get_by_text("Your own question", exact=True).click()
    _settle(page)
    box = page.get_by_role("textbox", name="Your question")
    seconds, clearing = [], []
    for question in questions:
        previous = page.evaluate(HITS)
        box.fill(question)
        started = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(ANSWERED, arg=previous, timeout=120_000, polling=20)
        seconds.append(time.perf_counter() - started)
        box.fill("")
        started = time.perf_counter()
        box.press("Enter")
        page.wait_for_function(CLEARED, timeout=120_000, polling=20)
        clearing.append(time.perf_counter() - started)
    return seconds, clearing


def stale_share(page: Any, seconds: float) -> dict[str, Any]:
    """How often, sampled every 50 ms for ``seconds``, the idle Compare page shows stale (greyed) elements."""
    samples = stale = 0
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        samples += 1
        stale += page.evaluate(STALE) > 0
        time.sleep(0.05)
    return {"samples": samples, "stale_samples": stale, "seconds": seconds}


def figures(seconds: list[float]) -> dict[str, Any]:
    ordered = sorted(seconds)
    return {"median_s": round(statistics.median(ordered), 3), "p90_s": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
            "max_s": round(ordered[-1], 3), "n": len(ordered)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workspace", required=True, help="a workspace where demo-cuad's three paper methods are indexed")
    parser.add_argument("--runs", type=int, default=20, help="questions typed per condition (default 20)")
    parser.add_argument("--no-build", action="store_true", help="only the condition without a build")
    parser.add_argument("--out", default="compare-typing.json")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from sac.ingest.benchmark import load_benchmark

    questions = [q.text for q in load_benchmark(ROOT / "data" / "demo", ["cuad"])[0].queries]
    questions = list(dict.fromkeys(questions))[: 2 * args.runs]
    result: dict[str, Any] = {"what": "Compare, three paper methods, k = 8, CUAD demo: Enter to answer in Chromium",
                              "machine": machine()}
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "workspace"
        shutil.copytree(args.workspace, workspace)
        with streamlit_server(workspace, "streamlit-compare-typing.log") as url, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            typist = browser.new_context(viewport={"width": 1500, "height": 1100}).new_page()
            type_questions(typist, url, questions[:2])  # the model loaded, the page warm: not timed
            before = load()
            quiet, cleared = type_questions(typist, url, questions[: args.runs])
            result["without_build"] = {**figures(quiet), "clearing": figures(cleared), "load_before": before,
                                       "load_after": load()}
            print(f"without a build: {result['without_build']}")
            if not args.no_build:
                builder = browser.new_context(viewport={"width": 1500, "height": 1100}).new_page()
                _open(builder, url)
                builder.get_by_text("ContractNLI and CUAD", exact=False).click()
                _settle(builder)
                builder.get_by_role("button", name="Load the demo corpus").click()
                builder.locator("[data-testid=stSidebar]").get_by_text("Demo: ", exact=False).first.wait_for(timeout=120_000)
                _open(typist, f"{url}/Compare?{urllib.parse.urlencode({'cmp_corpus': 'demo-cuad'})}")
                before = load()
                result["greyed_while_idle_during_build"] = stale_share(typist, 20.0)
                busy, cleared = type_questions(typist, url, questions[args.runs: 2 * args.runs])
                building = builder.locator("[data-testid=stSidebar]").get_by_text("Demo: ", exact=False).first.inner_text()
                result["with_build"] = {**figures(busy), "clearing": figures(cleared), "load_before": before,
                                        "load_after": load(),
                                        "build_line_after": building}
                print(f"with a build: {result['with_build']}; greyed while idle: "
                      f"{result['greyed_while_idle_during_build']}")
            browser.close()
    write_json(RESULTS / args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
