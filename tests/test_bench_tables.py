"""README.md's results table holds exactly what bench/headline.py makes of the stored selection runs, whose
identifiable tags are the ones the benchmark builder gives now; a run stores a command that reruns its methods.
(bench/RESULTS.md, which holds every headline row, is checked against bench/results_doc.py in tests/test_docs.py.)"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import common  # noqa: E402
import headline  # noqa: E402
import legalbench_titles  # noqa: E402
import retag  # noqa: E402
import selection  # noqa: E402

sys.path.remove(str(BENCH))

from sac.ingest.benchmark import load_benchmark  # noqa: E402
from sac.ingest.builders import SPLITS, split_of  # noqa: E402
from sac.methods import RECOMMENDED  # noqa: E402


@pytest.fixture(scope="module")
def made() -> list[str]:
    return headline.readme_rows()


def test_the_headline_rows_cover_both_splits_datasets_title_styles_and_methods():
    every = [row for split in headline.SPLITS for row in headline.rows(split)]
    blocks = {tuple(headline.key(row)[:2]) for row in every}
    assert len(every) == 4 * len(headline.METHODS) * 2 and len(blocks) == 8  # 2 splits x 2 datasets x 2 title styles
    assert all(row.count(" | ") == len(headline.COLUMNS) - 1 for row in every)


def test_every_row_of_the_readme_results_table_is_a_stored_runs(made):
    assert len(made) == 2 * 2 * len(headline.METHODS)  # the test split: 2 datasets x 2 title styles
    assert all(" · test · " in row and row.count(" | ") == headline.SHORT - 1 for row in made)
    text = headline.README.read_text("utf-8")
    assert headline.write(text, made, "README.md") == text, "README.md: run python bench/headline.py --write"
    # the table is one block: its header, then exactly the made rows
    lines = text.split("\n")
    start = lines.index(headline.SHORT_HEADER)
    assert lines[start + 2:start + 2 + len(made)] == made and not lines[start + 2 + len(made)].startswith("|")


def test_a_changed_figure_or_a_missing_row_is_caught(made):
    text = headline.README.read_text("utf-8")
    row = made[0]
    assert row in text
    edited = text.replace(row, row.replace(" | 2", " | 3", 1))  # the question count of the first row
    assert edited != text and headline.write(edited, made, "README.md") == text
    with pytest.raises(SystemExit, match="README.md has no row for: cuad · test"):
        headline.write(text.replace(row + "\n", ""), made, "README.md")


@pytest.mark.slow
def test_the_headline_runs_carry_the_identifiable_tags_the_builder_gives_now(tmp_path):
    """A change to the builder's identifiable rule must come with `python bench/retag.py` on these runs."""
    from sac.usecases.benchmarks import dev_documents

    hash_only = retag.current_tags(set(headline.DATASETS), tmp_path / "hash-only")
    demo_in_dev = retag.current_tags(set(headline.DATASETS), tmp_path / "demo-in-dev", dev_documents(common.DEMO))
    for name in headline.run_names():
        stored = retag.stored_tags(name)
        current = "benchmark_version" in headline.read_run(headline.RESULTS, name)  # made with the demo in dev
        tags = demo_in_dev if current else hash_only
        sizes = (2 * 2174, 2 * 2009, 2 * 898, 2 * 902) if current else (2 * 2047, 2 * 2136, 2 * 859, 2 * 941)
        assert len(stored) in sizes, name  # both title styles, every question
        differ = [key for key, identifiable in stored.items() if tags[key] != identifiable]
        assert differ == [], f"{name}: {len(differ)} tags differ, e.g. {differ[:1]}: run bench/retag.py"


def test_a_stored_command_names_the_methods_that_ran_not_the_alias():
    """`recommended` moves when a better method is chosen; a command stored with a run must still rerun that run."""
    made = common.command_line("selection.py", ["--split", "dev", "--methods", "baseline,recommended", "--out", "x"])
    assert made == f"python bench/selection.py --split dev --methods baseline,{RECOMMENDED} --out x"
    made = common.command_line("paired.py", ["a", "b", "--method=recommended", "--after-method", "recommended",
                                             "--out", "recommended"])
    assert made == f"python bench/paired.py a b --method={RECOMMENDED} --after-method {RECOMMENDED} --out recommended"


def test_small_pools_split_the_documents_and_keep_each_question_with_its_answers():
    """`selection.py --pools-of N`: disjoint pools of N documents by text hash, the shorter remainder left out, each
    question in the pool that holds all its answers (on the demo's 5 NDAs and 52 questions)."""
    [ds] = load_benchmark(BENCH.parent / "data" / "demo", ["contractnli"])
    pools = selection.small_pools(ds, 2)
    by_hash = sorted(ds.documents, key=lambda d: d.content_hash)
    assert [sorted(d.doc_id for d in p.documents) for p in pools] == [
        sorted(d.doc_id for d in by_hash[0:2]), sorted(d.doc_id for d in by_hash[2:4])]
    assert [p.name for p in pools] == ["contractnli-of2-01", "contractnli-of2-02"]
    for pool in pools:
        held = {d.doc_id for d in pool.documents}
        assert pool.queries and all(q.gold_doc_ids <= held for q in pool.queries)
    left_out = by_hash[4].doc_id
    kept = [q for p in pools for q in p.queries]
    assert len(kept) == sum(1 for q in ds.queries if left_out not in q.gold_doc_ids)


def test_legalbench_titles_keep_each_mini_question_whole_in_the_split_of_its_document(tmp_path):
    """`selection.py --titles legalbench`: the bundled mini benchmark's questions, word for word, each in the split
    its document's text falls in, its spans moved onto the split's file of the same text (here the split folders
    hold the demo's documents under other names, as a built benchmark names them its own way)."""
    demo = BENCH.parent / "data" / "demo"
    minis = {ds.name: ds for ds in load_benchmark(demo, ["cuad", "contractnli"])}
    for name, ds in minis.items():
        for split in SPLITS:
            (tmp_path / "firstpage" / "corpus" / f"{name}-{split}").mkdir(parents=True)
        for doc in ds.documents:
            folder = tmp_path / "firstpage" / "corpus" / f"{name}-{split_of(doc.text)}"
            (folder / f"renamed-{len(list(folder.iterdir()))}.txt").write_text(doc.text, encoding="utf-8")
    counts = legalbench_titles.build(demo, tmp_path)
    built = {ds.name: ds for ds in load_benchmark(tmp_path / "legalbench")}  # every span checked again
    for name, mini in minis.items():
        asked = sorted(q.text for q in mini.queries)
        assert sorted(q.text for split in SPLITS for q in built[f"{name}-{split}"].queries) == asked
        texts = {d.doc_id: d.text for d in mini.documents}
        for split in SPLITS:
            ds = built[f"{name}-{split}"]
            held = {d.doc_id: d.text for d in ds.documents}
            for q in ds.queries:
                [doc] = q.gold_doc_ids
                assert split_of(held[doc]) == split and doc.split("/", 1)[1].startswith("renamed-")
                [original] = [o for o in mini.queries if o.text == q.text and
                              [(s.start, s.end) for s in o.gold] == [(s.start, s.end) for s in q.gold]]
                assert texts[next(iter(original.gold_doc_ids))] == held[doc]
    assert sum(c["questions"] for name, c in counts.items()) == 194 + 52
    # ResConnect never appears in its NDA's text; CEII, in two of the demo's NDAs, still names few enough
    assert sum(c["questions"] - c["identifiable"] for c in counts.values()) == 9
    assert legalbench_titles.title_names("ResConnect's Non-Disclosure Agreement") == ["ResConnect"]
    assert legalbench_titles.title_names(
        "the Marketing and Transportation Services Agreement between Purolator Courier Ltd. and Parcelway Courier "
        "Systems Canada Ltd. (Dynamex Inc.) for Courier Services") == [
        "Purolator Courier Ltd", "Parcelway Courier Systems Canada Ltd", "Dynamex Inc"]


def test_named_pool_keeps_the_ndas_whose_file_name_names_a_party_with_their_questions():
    """`selection.py --named-pool`: LegalBench-RAG drops an NDA whose file name names no party, with its questions
    (on the demo's 5 NDAs and 52 questions, two of them given nameless file names)."""
    [ds] = load_benchmark(BENCH.parent / "data" / "demo", ["contractnli"])
    ds = selection._file_ids(ds, "contractnli/")
    nameless = {"NDA_ResConnect.txt": "NDA V3.txt",
                "AGProjects-NDA.txt": "1001113_0000950134-07-005231_f27921orexv99wxdyx3y.htm.txt"}
    renamed = dataclasses.replace(ds, documents=tuple(dataclasses.replace(d, doc_id=nameless.get(d.doc_id, d.doc_id))
                                                      for d in ds.documents),
                                  queries=tuple(dataclasses.replace(q, gold=tuple(
                                      dataclasses.replace(s, doc_id=nameless.get(s.doc_id, s.doc_id)) for s in q.gold))
                                      for q in ds.queries))
    kept = selection.named_pool(renamed)
    assert kept.name == "contractnli-named"
    assert sorted(d.doc_id for d in kept.documents) == sorted(set(d.doc_id for d in ds.documents) - set(nameless))
    assert len(kept.queries) == sum(1 for q in ds.queries if not q.gold_doc_ids & set(nameless)) < len(ds.queries)
    assert all(q.gold_doc_ids <= {d.doc_id for d in kept.documents} for q in kept.queries)
