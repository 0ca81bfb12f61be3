"""Shared file idioms of the workspace: one lock for threads and processes, JSON lines that survive a crash,
progress lines with a time estimate, and one display name per document."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

from sac.files import append_jsonl, file_lock, read_jsonl
from sac.progress import StageClock
from sac.summaries.store import SummaryStore
from sac.types import Document, document_title

DOC = Document("nda/Acme NDA.txt", "Mutual Non-Disclosure Agreement between Acme Corp and Beta LLC.")


ROOT = Path(__file__).resolve().parents[1]
EDIT_MANY = """
import sys
from pathlib import Path
from sac.summaries.store import SummaryStore
from sac.types import Document
doc = Document("nda/Acme NDA.txt", "Mutual Non-Disclosure Agreement between Acme Corp and Beta LLC.")
store = SummaryStore(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.save_edit(doc, "generic", f"edit {i} from process {sys.argv[2]}")
"""


def test_summary_edits_from_two_processes_at_once_lose_no_version(tmp_path):
    """Each edit reads the versions file, adds one and rewrites it: without a lock across processes two
    CLI runs (or app servers) on one workspace overwrite each other's versions."""
    root = tmp_path / "summaries"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [subprocess.Popen([sys.executable, "-c", EDIT_MANY, str(root), str(w), "25"], cwd=ROOT, env=env,
                              stderr=subprocess.PIPE, text=True) for w in range(2)]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    versions = SummaryStore(root)._versions(DOC.content_hash, "generic")
    assert sorted(v.version for v in versions) == list(range(1, 51))
    assert {v.text for v in versions} == {f"edit {i} from process {w}" for i in range(25) for w in range(2)}


def test_file_lock_excludes_threads_of_one_process(tmp_path):
    inside, most = [0], [0]

    def work() -> None:
        for _ in range(50):
            with file_lock(tmp_path / "x.lock"):
                inside[0] += 1
                most[0] = max(most[0], inside[0])
                threading.Event().wait(0.0005)
                inside[0] -= 1

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert most[0] == 1


def test_json_lines_append_and_skip_a_line_cut_short(tmp_path):
    path = tmp_path / "rows.jsonl"
    assert read_jsonl(path) == []
    append_jsonl(path, [{"a": 1}, {"b": "ü"}])
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('{"cut": ')  # a crash mid-line
    append_jsonl(path, [{"c": 3}])
    assert read_jsonl(path) == [{"a": 1}, {"b": "ü"}, {"c": 3}]


def test_stage_clock_estimates_time_left_from_the_rate_so_far():
    now = [100.0]
    clock = StageClock("chunks", clock=lambda: now[0])
    assert clock.update("embedding and indexing baseline", 200, 1200).text == "embedding and indexing baseline: 200 / 1,200"
    now[0] += 10  # 300 more chunks in 10 s: 30 chunks/s, 700 left
    status = clock.update("embedding and indexing baseline", 500, 1200)
    assert status.text.endswith("500 / 1,200 · 30 chunks/s · about 23 s left") and not status.finished
    assert status.fraction == 500 / 1200
    now[0] += 100
    done = clock.update("embedding and indexing baseline", 1200, 1200)
    assert done.finished and done.text.endswith("done in 1 min 50 s")


def test_one_display_name_per_document():
    assert document_title("cuad/VELCO%20NDA.txt") == "VELCO NDA"
    assert document_title("uploads/Master Services Agreement.docx") == "Master Services Agreement"
    assert document_title("contractnli/CEII and NDA") == "CEII and NDA"
    assert document_title("x/v1.2 terms") == "v1.2 terms"  # "2 terms" is no extension
    assert Document("cuad/VELCO%20NDA.txt", "text").title == "VELCO NDA"
