"""Benchmark builders on the real source datasets (../shared/data): small subsets, built into tmp_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sac.errors import ConfigError, CorpusError
from sac.ingest.builders import (
    CONTRACTNLI_QUESTIONS,
    CUAD_QUESTIONS,
    build_contractnli,
    build_cuad,
    contractnli_filename_title,
    cuad_filename_title,
    cuad_firstpage_title,
    hypothesis_question,
    merged_ranges,
    split_of,
)
from sac.ingest.identifiable import as_text, identifiable_names, occurs

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
SOURCES = DATA / "sources"
MINI = DATA / "legalbench-mini"
BELLRING = "BELLRINGBRANDS,INC_02_07_2020-EX-10.18-MASTER SUPPLY AGREEMENT.txt"



@pytest.fixture(autouse=True)
def _sources_present():
    """These tests read ../shared/data/sources beside the checkout; CI lays it there."""
    if not SOURCES.is_dir():
        pytest.fail(f"{SOURCES} is missing: the builder tests need ../shared/data beside the checkout")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _tests(root: Path) -> dict[str, list[dict]]:
    return {p.stem: json.loads(p.read_text("utf-8"))["tests"] for p in sorted((root / "benchmarks").glob("*.json"))}


def _mini_files(dataset: str) -> list[str]:
    return sorted(p.name for p in (MINI / "corpus" / dataset).glob("*.txt"))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, dict]:
    """cuad and contractnli, 8 documents each, first-page titles."""
    out = tmp_path_factory.mktemp("bench") / "firstpage"
    reports = {"cuad": build_cuad(SOURCES, out, titles="firstpage", limit=8),
               "contractnli": build_contractnli(SOURCES, out, titles="firstpage", limit=8)}
    return out, reports


def test_every_snippet_is_its_span_of_the_written_file(built):
    out, _ = built
    tests = _tests(out)
    assert sorted(tests) == ["contractnli-dev", "contractnli-test", "cuad-dev", "cuad-test"]
    for dataset, items in tests.items():
        for test in items:
            assert test["query"].startswith("Consider ") and test["snippets"]
            for snippet in test["snippets"]:
                assert snippet["file_path"].startswith(f"{dataset}/")
                text = (out / "corpus" / snippet["file_path"]).read_bytes().decode("utf-8")
                start, end = snippet["span"]
                assert 0 <= start < end <= len(text) and text[start:end] == snippet["answer"]


def test_the_project_loader_reads_the_splits(built):
    out, reports = built
    try:
        from sac.ingest.benchmark import load_benchmark
    except ImportError:  # before the restructuring
        from sac.corpus import load_benchmark  # type: ignore[no-redef]
    datasets = {d.name: d for d in load_benchmark(out, ["cuad-test", "contractnli-dev"])}
    assert len(datasets["cuad-test"].documents) == reports["cuad"].documents["test"]
    assert len(datasets["cuad-test"].queries) == reports["cuad"].questions["test"]
    assert len(datasets["contractnli-dev"].queries) == reports["contractnli"].questions["dev"]


def _oracle_scores(tests: list[dict]) -> list[tuple[float, float, float]]:
    """(precision, recall, DRM) per query when the gold snippets themselves are the retrieved hits."""
    try:
        from sac.evaluation.metrics import score_query
    except ImportError:
        try:
            from sac.metrics import score_query  # type: ignore[no-redef]
        except ImportError:
            score_query = None  # type: ignore[assignment]
    from sac.types import Span

    scores = []
    for test in tests:
        gold = [Span(s["file_path"], *s["span"]) for s in test["snippets"]]
        if score_query is not None:
            s = score_query(gold, gold)
            scores.append((s.precision, s.recall, s.drm))
            continue
        overlap = sum(r.overlap(g) for r in gold for g in gold)
        chars = sum(len(g) for g in gold)
        wrong = sum(r.doc_id not in {g.doc_id for g in gold} for r in gold)
        scores.append((overlap / chars, overlap / chars, wrong / len(gold)))
    return scores


def test_oracle_scores_perfectly(built):
    out, _ = built
    for items in _tests(out).values():
        assert all(score == (1.0, 1.0, 0.0) for score in _oracle_scores(items))


def test_two_builds_are_byte_identical(built, tmp_path):
    out, _ = built
    again = tmp_path / "again"
    build_cuad(SOURCES, again, titles="firstpage", limit=8)
    build_contractnli(SOURCES, again, titles="firstpage", limit=8)
    assert _tree(again) == _tree(out)


def test_splits_are_disjoint_stable_and_written_into_tests(built, tmp_path):
    out, _ = built
    for dataset in ("cuad", "contractnli"):
        dev = {p.read_text("utf-8") for p in (out / "corpus" / f"{dataset}-dev").iterdir()}
        test = {p.read_text("utf-8") for p in (out / "corpus" / f"{dataset}-test").iterdir()}
        assert dev and test and not dev & test
        assert {split_of(t) for t in dev} == {"dev"} and {split_of(t) for t in test} == {"test"}
    for name, items in _tests(out).items():
        split = name.rsplit("-", 1)[1]
        assert all(t["split"] == split and f"split:{split}" in t["tags"] for t in items)
    # A document keeps its split whatever else is built with it.
    small = tmp_path / "small"
    build_contractnli(SOURCES, small, titles="firstpage", limit=3)
    for split in ("dev", "test"):
        assert {p.name for p in (small / "corpus" / f"contractnli-{split}").iterdir()} <= \
            {p.name for p in (out / "corpus" / f"contractnli-{split}").iterdir()}
    assert split_of("") == "test"  # sha256("") starts with 0xe3: pins the rule


def test_tags_name_style_split_identifiability_and_category(built):
    out, _ = built
    for name, items in _tests(out).items():
        for test in items:
            tags = test["tags"]
            assert tags[0] == "titles:firstpage" and tags[2] in ("identifiable", "unidentifiable")
            assert tags[3].startswith("clause:" if name.startswith("cuad") else "hypothesis:")


def test_titles_of_a_known_contract_in_both_styles():
    import csv

    with (SOURCES / "cuad_v1" / "master_clauses.csv").open(encoding="utf-8", newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Filename"].startswith("BELLRINGBRANDS,INC_02_07_2020"))
    text = (SOURCES / "cuad_v1" / "full_contract_txt" / BELLRING).read_text("utf-8")
    assert cuad_firstpage_title(row, text).text == \
        "the Master Supply Agreement between Premier Nutrition Company, LLC and Fonterra (USA) Inc."
    assert cuad_filename_title(BELLRING).text == "the Master Supply Agreement of BELLRINGBRANDS,INC"


def test_built_queries_use_each_title_style(tmp_path):
    for titles, expected in (("firstpage", "Consider the Master Supply Agreement between Premier Nutrition"),
                             ("filename", "Consider the Master Supply Agreement of BELLRINGBRANDS,INC; ")):
        build_cuad(SOURCES, tmp_path / titles, titles=titles, files=[BELLRING])
        queries = [t["query"] for items in _tests(tmp_path / titles).values() for t in items]
        assert queries and all(q.startswith(expected) for q in queries)
        assert all("identifiable" in t["tags"] for items in _tests(tmp_path / titles).values() for t in items)


def test_contractnli_file_name_titles_follow_legalbench_rag():
    mini = json.loads((MINI / "benchmarks" / "contractnli.json").read_text("utf-8"))["tests"]
    queries = {t["snippets"][0]["file_path"].split("/", 1)[1]: t["query"] for t in mini}
    for name in ("NDA_ResConnect.txt", "AGProjects-NDA.txt", "VELCO%20NDA%20rev0%20Dec%2014%202015.txt"):
        assert queries[name].startswith(f"Consider {contractnli_filename_title(name).text}; ")
    assert contractnli_filename_title("768384_0000912057-00-018619_document_8.txt").names == ()


def test_questions_are_legalbench_rags():
    for dataset, table in (("cuad", CUAD_QUESTIONS), ("contractnli", CONTRACTNLI_QUESTIONS)):
        mini = json.loads((MINI / "benchmarks" / f"{dataset}.json").read_text("utf-8"))["tests"]
        assert {t["query"].split("; ", 1)[1] for t in mini} <= set(table.values())
    assert hypothesis_question("Receiving Party may keep copies.") == \
        "Does the document state that receiving Party may keep copies?"


@pytest.mark.parametrize("dataset", ["cuad", "contractnli"])
def test_reproduces_the_mini_benchmark_ground_truth(dataset, tmp_path):
    build = build_cuad if dataset == "cuad" else build_contractnli
    build(SOURCES, tmp_path, titles="filename", files=_mini_files(dataset))
    built = {(s["file_path"].split("/", 1)[1], t["query"].split("; ", 1)[1]): [s["span"] for s in t["snippets"]]
             for items in _tests(tmp_path).values() for t in items for s in t["snippets"][:1]}
    mini = json.loads((MINI / "benchmarks" / f"{dataset}.json").read_text("utf-8"))["tests"]
    for test in mini:
        key = (test["snippets"][0]["file_path"].split("/", 1)[1], test["query"].split("; ", 1)[1])
        assert built[key] == [s["span"] for s in test["snippets"]], key


def test_drops_are_counted_and_written_to_the_manifest(tmp_path):
    omitted = "ADAPTIMMUNETHERAPEUTICSPLC_04_06_2017-EX-10.11-STRATEGIC ALLIANCE AGREEMENT.txt"
    report = build_cuad(SOURCES, tmp_path, titles="filename", files=[omitted])
    assert report.quotes_not_found > 0 and report.questions_dropped > 0  # "<omitted>" quotes are not text
    assert report.duplicates_dropped == 1 and report.ambiguous_dropped > 0
    partial = build_cuad(SOURCES, tmp_path / "partial", titles="filename", files=[omitted], keep_partial=True)
    assert sum(partial.questions.values()) > sum(report.questions.values())
    nli = build_contractnli(SOURCES, tmp_path, titles="filename", limit=2)
    manifest = json.loads((tmp_path / "manifest.json").read_text("utf-8"))
    assert manifest["titles"] == "filename"
    assert manifest["builds"] == {"cuad": report.as_dict(), "contractnli": nli.as_dict()}
    assert nli.duplicates_dropped == 1 and "contractnli/test.json" in nli.sources


def test_refuses_bad_arguments_and_mixed_title_styles(tmp_path):
    with pytest.raises(ConfigError):
        build_contractnli(SOURCES, tmp_path, titles="both")
    with pytest.raises(ConfigError):
        build_contractnli(SOURCES, tmp_path, titles="filename", limit=0)
    with pytest.raises(CorpusError):
        build_contractnli(SOURCES, tmp_path, titles="filename", files=["no-such-file.txt"])
    build_contractnli(SOURCES, tmp_path, titles="filename", limit=1)
    with pytest.raises(ConfigError):
        build_contractnli(SOURCES, tmp_path, titles="firstpage", limit=1)


def test_a_filer_the_text_writes_apart_makes_its_questions_identifiable(tmp_path):
    # "GOCALLINC" is "Go Call, Inc." in its text, "ReedsInc" "REED'S, INC.", "AzulSa" "Azul S.A.": too short to
    # be matched squashed inside words, found as a run of whole words.
    files = ["GOCALLINC_03_30_2000-EX-10.7-Promotion Agreement.txt",
             "ReedsInc_20191113_10-Q_EX-10.4_11888303_EX-10.4_Development Agreement.txt",
             "AzulSa_20170303_F-1A_EX-10.3_9943903_EX-10.3_Maintenance Agreement1.txt"]
    build_cuad(SOURCES, tmp_path, titles="filename", files=files)
    tests = [t for items in _tests(tmp_path).values() for t in items]
    assert {t["query"].split("; ")[0].rsplit(" ", 1)[1] for t in tests} == {"GOCALLINC", "ReedsInc", "AzulSa"}
    assert all("identifiable" in t["tags"] for t in tests)


def test_a_filer_named_with_digits_makes_its_questions_identifiable(tmp_path):
    # "N2KINC" is "N2K Inc." in its text: read without its digit, the name was "kinc", found nowhere.
    build_cuad(SOURCES, tmp_path, titles="filename", files=["N2KINC_10_16_1997-EX-10.16-SPONSORSHIP AGREEMENT.txt"])
    tests = [t for items in _tests(tmp_path).values() for t in items]
    assert tests and all(t["query"].startswith("Consider the Sponsorship Agreement of N2KINC;") for t in tests)
    assert all("identifiable" in t["tags"] for t in tests)


@pytest.mark.parametrize("file_name, names, found", [
    # a name whose words are common keeps them together, its article and connectors included
    ("JOINTCORP_09_19_2014-EX-10.15-FRANCHISE AGREEMENT.txt", ["JOINTCORP"], "jointcorp"),
    ("Reinsurance Group of America, Incorporated - A_R REMARKETING  AGREEMENT.txt",
     ["Reinsurance Group of America, Incorporated"], "reinsurancegroupofamerica"),
    # EDGAR's suffixes on a filer name ("/CT/", "/NEW/") are not words of the company's name
    ("PHLVARIABLEINSURANCECOCT_08_17_2009-EX-10.1-STRATEGIC ALLIANCE AGREEMENT.txt", ["PHLVARIABLEINSURANCECOCT"],
     "phlvariableinsurance"),
    ("URSCORPNEW_03_17_2014-EX-99-COOPERATION AGREEMENT.txt", ["URSCORPNEW"], "urs"),
])
def test_the_tagger_finds_the_names_a_text_writes(file_name, names, found):
    text = as_text((SOURCES / "cuad_v1" / "full_contract_txt" / file_name).read_text(encoding="utf-8"))
    assert found in identifiable_names(names) and occurs(found, text)


def test_a_squashed_name_matches_whole_words_only():
    """"iPayment" is not in "(ii) payment", nor is a glued legal form ("BIOFRONTERAAG") part of the name."""
    assert not occurs("ipayment", as_text("payments under clause (ii) payment of fees")) and occurs(
        "ipayment", as_text("iPAYMENT, INC. and the Bank"))
    assert "biofrontera" in identifiable_names(["BIOFRONTERAAG"]) and "siemens" in identifiable_names(["SiemensAG"])
    assert occurs("bellringbrands", as_text("BellRing Brands, Inc.")) and not occurs("ringbrand", as_text(
        "BellRing Brands, Inc."))


def test_small_rules():
    assert merged_ranges([(10, 20), (0, 5), (6, 8), (21, 30)]) == [(0, 8), (10, 30)]  # gaps of 1 bridge
    assert merged_ranges([(0, 5), (7, 9)]) == [(0, 5), (7, 9)]  # a 2-character gap stays
    assert "papajohnsinternational" in identifiable_names(["PapaJohnsInternationalInc"])
    assert identifiable_names(["Acme Widgets, Inc."]) == ["acme", "acmewidgets", "acmewidgetsinc", "widgets"]
    assert {"n2k", "on2", "on2technologies"} <= set(identifiable_names(["N2KINC", "On2 Technologies, Inc."]))
    assert identifiable_names(["April 1st", "Trust 2006"]) == ["april", "aprilst", "trust"]  # numbers name no one
    text = as_text("Go Call, Inc. and Intellectual Ventures agree, as of April 1st, 2000.")
    assert occurs("gocall", text) and occurs("intellectualventures", text) and occurs("april", text)
    assert not occurs("intel", text) and not occurs("aprilst", text) and not occurs("callin", text)


def test_cli_builds_both_title_styles_that_the_loader_reads(tmp_path, capsys):
    from sac.cli.main import main
    from sac.ingest.benchmark import load_benchmark

    out = tmp_path / "full"
    assert main(["benchmark", "build", "contractnli", "--out", str(out), "--limit", "4"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert sorted(report) == ["filename/contractnli", "firstpage/contractnli"]
    for style in ("firstpage", "filename"):
        datasets = {d.name: d for d in load_benchmark(out / style)}
        assert sorted(datasets) == ["contractnli-dev", "contractnli-test"]
        assert sum(len(d.documents) for d in datasets.values()) == 4
        assert all(q.gold for d in datasets.values() for q in d.queries)
