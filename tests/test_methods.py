"""The methods beyond the paper (hybrid, document-first, section context, small-chunk merging, reranking)
on the demo data with the real packaged model and a real chromadb."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sac.chunking.context import context_lines
from sac.chunking.merge import index_chunks, is_small, merge_small_chunks, short_hit_share
from sac.chunking.sections import find_headings, heading_path
from sac.chunking.split import chunk_document
from sac.config import DEFAULT_K_VALUES, SacConfig
from sac.errors import ConfigError
from sac.index import snapshot
from sac.index.lexical import lexical_indexes
from sac.methods import (
    METADATA_METHOD,
    RECOMMENDED,
    IndexRecipe,
    MethodSpec,
    SearchRecipe,
    parse_method,
    parse_methods,
    searchable_methods,
    suggested_methods,
)
from sac.protocols import Reranker
from sac.retrieval.hybrid import BM25Index, fuse, minmax, tokenize
from sac.retrieval.rerank import LexicalReranker, make_reranker
from sac.types import Chunk, Document, Span
from sac.usecases.evaluate import evaluate
from sac.usecases.workbench import Workbench

ROOT = Path(__file__).resolve().parents[1]
CORPUS = "demo-contractnli"
BUILT = "baseline,sac-generic,sac-generic+merge25,sac-generic+sections"
# The combination bench/README.md reports as the one that beats generic SAC (section "Methods beyond the paper").
WINNER = "sac-generic+docs1"


@pytest.fixture(scope="module")
def nli(demo_datasets):
    return demo_datasets["contractnli"]


@pytest.fixture(scope="module")
def built(tmp_path_factory, memo, nli):
    """One embedded store with the demo NDAs indexed for the plain and the index-option methods (through the
    session's ``memo``: texts other tests embedded already are not embedded again)."""
    wb = Workbench(SacConfig(workspace=tmp_path_factory.mktemp("methods") / "workspace"), embedder=memo)
    wb.build(CORPUS, nli.documents, parse_methods(BUILT))
    return wb


def _search(wb, nli, names, k=16):
    methods = parse_methods(names)
    return wb.search(CORPUS, methods, [q.text for q in nli.queries], k)


# -- names ------------------------------------------------------------------------------------------------
def test_method_names_parse_normalise_and_keep_their_index():
    m = parse_method("sac-expert+hybrid0.50+docs3")
    assert m.name == "sac-expert+docs3+hybrid0.5" and m.index_name == "sac-expert"
    assert m.search == SearchRecipe(docs=3, hybrid=0.5) and m.index == IndexRecipe("expert")
    assert parse_method("sac-generic+sections+merge25").index_name == "sac-generic+merge25+sections"
    assert parse_method("baseline+rerank").search == SearchRecipe(rerank=True)
    assert parse_method("baseline+rerank20").search == SearchRecipe(rerank=True, rerank_candidates=20)
    for name in suggested_methods():
        assert parse_method(name).name == name
    assert {"sac-generic+hybrid0.75", "sac-generic+docs1", "sac-generic+sections", "sac-generic+merge25",
            "sac-generic+rerank", WINNER} <= set(suggested_methods())


def test_searchable_methods_are_the_built_indexes_then_the_options_that_run_on_one_of_them():
    built = ["baseline", "sac-generic"]
    offered = searchable_methods(built)
    assert offered[:2] == built and len(offered) == len(set(offered))
    assert {parse_method("recommended").name, "baseline+hybrid0.5", "sac-generic+docs1"} <= set(offered)
    assert all(parse_method(m).index_name in built for m in offered)  # nothing whose index is missing
    assert not any(m.startswith("sac-expert") or "filename" in m for m in offered)
    with_names = searchable_methods([*built, "sac-generic+filename"])
    assert METADATA_METHOD in with_names  # the metadata method, once its index exists


def _recipes(draw):
    strategy = draw(st.sampled_from([None, "generic", "expert", "generic-llm", "my_set.v2"]))
    index = IndexRecipe(strategy, file_names=draw(st.booleans()), merge=draw(st.none() | st.integers(1, 5000)),
                        sections=draw(st.booleans()))
    docs = draw(st.none() | st.integers(1, 50))
    rerank = draw(st.booleans())
    share = st.floats(0, 1, allow_nan=False)
    search = SearchRecipe(
        docs=docs, doc_dense_share=draw(st.none() | share) if docs else None, hybrid=draw(st.none() | share),
        inner=draw(st.booleans()) if docs else False, names=draw(st.booleans()), rerank=rerank,
        rerank_candidates=draw(st.none() | st.integers(1, 500)) if rerank else None)
    return MethodSpec(index, search)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.composite(_recipes)(), st.randoms())
def test_a_method_spec_round_trips_through_its_spelling(spec, random):
    """``parse_method(str(spec)) == spec`` for every spec, and the spelling is one normal form: its options in any
    order and case, and shares written with trailing zeros, read as the same spec."""
    name = str(spec)
    assert parse_method(name) == spec and str(parse_method(name)) == name == spec.name
    base, *options = name.split("+")
    random.shuffle(options)
    written = "+".join([base.upper(), *(o + "0" if o[-1].isdigit() and "." in o else o for o in options)])
    assert parse_method(written) == spec
    assert spec.index_name == str(spec.index) and parse_method(spec.index_name) == MethodSpec(spec.index)


def test_a_spec_made_in_code_is_checked_as_its_spelling_is():
    with pytest.raises(ConfigError, match="docs<N>"):
        SearchRecipe(inner=True)
    with pytest.raises(ConfigError, match="between 0 and 1"):
        SearchRecipe(hybrid=1.5)
    with pytest.raises(ConfigError, match=">= 1"):
        IndexRecipe("generic", merge=0)
    assert str(MethodSpec(IndexRecipe("generic"), SearchRecipe(docs=1, hybrid=0.750, inner=True, names=True))) == (
        RECOMMENDED)


@pytest.mark.parametrize("bad, words", [
    ("sac-generic+hybrid1.5", "between 0 and 1"), ("sac-generic+docs0", ">= 1"), ("sac-generic+docs", "needs a number"),
    ("sac-generic+sections2", "takes no value"), ("sac-generic+merge2.5", "whole number"),
    ("sac-generic+docs1+docs2", "twice"), ("sac-generic+fancy", "Unknown option"),
])
def test_bad_method_options_are_clear_config_errors(bad, words):
    with pytest.raises(ConfigError, match=words):
        parse_method(bad)


# -- hybrid ------------------------------------------------------------------------------------------------
def test_bm25_tokens_and_scores_hand_checked():
    assert tokenize("The AG Projects' NDA, 2015") == ["ag", "projects", "nda", "2015", "agprojects", "projectsnda"]
    bm25 = BM25Index(["velco power company", "power of the receiving party", ""])
    scores = bm25.scores("VELCO?")
    assert scores[0] > 0 and scores[1] == 0 and scores[2] == 0
    assert list(minmax(np.array([2.0, 4.0, 3.0]))) == [0.0, 1.0, 0.5]
    assert list(minmax(np.array([1.0, 1.0]))) == [0.0, 0.0]


def test_fusion_hand_checked():
    # Three candidates: the query is closest to a@0-1 (dense), BM25 favours b@0-1; order = rows (document, start).
    ids, dense, lexical, order = ["a@0-1", "a@1-2", "b@0-1"], np.array([1.0, 0.8, 0.0]), np.array([0.0, 1.0, 3.0]), [0, 1, 2]
    assert [c for c, _ in fuse(ids, dense, lexical, order, 1.0, 3)] == ["a@0-1", "a@1-2", "b@0-1"]
    assert [c for c, _ in fuse(ids, dense, lexical, order, 0.0, 3)] == ["b@0-1", "a@1-2", "a@0-1"]
    # dense [1, .8, 0] and BM25 [0, 1/3, 1] after min-max; fused: a@0-1 .5, a@1-2 .4 + 1/6, b@0-1 .5 (tie: dense wins)
    half = fuse(ids, dense, lexical, order, 0.5, 3)
    assert [c for c, _ in half] == ["a@1-2", "a@0-1", "b@0-1"]
    assert half[0][1] == pytest.approx(0.4 + 1 / 6) and half[1][1] == half[2][1] == pytest.approx(0.5)
    # A tie in both scores goes to the earlier row.
    assert [c for c, _ in fuse(["x", "y"], np.array([0.5, 0.5]), np.array([1.0, 1.0]), [7, 3], 0.5, 2)] == ["y", "x"]
    assert fuse([], np.zeros(0), np.zeros(0), [], 0.5, 3) == []


@pytest.mark.slow
def test_hybrid_weight_one_ranks_like_dense(built, nli):
    got = _search(built, nli, "sac-generic,sac-generic+hybrid1")
    for dense, hybrid in zip(got["sac-generic"], got["sac-generic+hybrid1"]):
        assert [h.rank for h in hybrid] == list(range(1, 17))
        for d, h in zip(dense, hybrid):
            # The same chunk at every rank, or two chunks with the same cosine (identical whitespace chunks
            # tie, and the store orders ties its own way).
            assert d.chunk.chunk_id == h.chunk.chunk_id or d.chunk.text == h.chunk.text, (d, h)


def test_hybrid_bm25_reads_the_embedded_text(built, nli):
    method = parse_method("sac-generic")
    snap = snapshot.snapshot(built.client, built.index(CORPUS, method))
    texts = snapshot.embedded_texts(snap, method, built.summary_store)
    summaries = snapshot.summary_texts(snap, method, built.summary_store)
    assert len(texts) == len(snap) == len(built.index(CORPUS, method).records())
    assert set(summaries) == {d.doc_id for d in nli.documents}
    for row in (0, len(snap) // 2, len(snap) - 1):
        assert texts[row] == f"{summaries[snap.doc_ids[row]]}\n\n{snap.texts[row]}"
    # Weight 0 is pure BM25 over those texts: the top hit is the BM25 argmax (within the candidates).
    got = _search(built, nli, "sac-generic+hybrid0", k=1)["sac-generic+hybrid0"]
    bm25 = BM25Index(texts)
    for query, hits in zip(nli.queries[:10], got[:10]):
        scores = bm25.scores(query.text)
        assert scores[snap.row_of[hits[0].chunk.chunk_id]] == pytest.approx(scores.max())


def test_hybrid_snapshot_is_cached_per_collection_and_count(built):
    index = built.index(CORPUS, parse_method("baseline"))
    assert snapshot.snapshot(built.client, index) is snapshot.snapshot(built.client, index)
    snapshot.forget(built.client, index.key.collection_name)
    fresh = snapshot.snapshot(built.client, index)
    assert fresh is snapshot.snapshot(built.client, index) and len(fresh) == index.count()


# -- document-first -----------------------------------------------------------------------------------------
@pytest.mark.slow
def test_docs1_returns_hits_from_one_document_only(built, nli):
    got = _search(built, nli, "sac-generic+docs1,sac-generic+docs2,baseline+docs1+hybrid0.5", k=64)
    docs = {d.doc_id: len(index_chunks(d)) for d in nli.documents}
    for hits in got["sac-generic+docs1"]:
        assert len({h.span.doc_id for h in hits}) == 1
        assert len(hits) == min(64, docs[hits[0].span.doc_id])  # fewer than k when the document is short
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    for hits in got["sac-generic+docs2"]:
        assert len({h.span.doc_id for h in hits}) == 2
    for hits in got["baseline+docs1+hybrid0.5"]:
        assert len({h.span.doc_id for h in hits}) == 1


def test_document_scores_fuse_dense_and_whole_document_bm25():
    from sac.retrieval.document_ranking import document_scores

    # Document a: the closer best chunk; document b: the one whose text names what the query names.
    docs, best = ["a", "b"], np.array([1.0, 0.6])
    assert [d for d, _ in document_scores(docs, best)] == ["a", "b"]  # dense only: best chunk cosine
    lexical = np.array([0.0, 2.0])
    assert [d for d, _ in document_scores(docs, best, lexical=lexical)] == ["b", "a"]  # 0.25 dense + 0.75 BM25
    assert [d for d, _ in document_scores(docs, best, lexical=lexical, weight=1.0)] == ["a", "b"]
    summary = np.array([np.nan, 1.0])  # b's summary matches the query exactly; a has no summary
    scored = dict(document_scores(docs, best, summary=summary))
    assert scored["b"] == pytest.approx((0.6 + 1.0) / 2) and scored["a"] == pytest.approx(1.0)
    assert [d for d, _ in document_scores(docs, best, lexical=lexical, named={"a": 0.3})] == ["a", "b"]


@pytest.mark.slow
def test_docs_first_top_hit_is_the_top_hit_inside_the_chosen_document(built, nli):
    got = _search(built, nli, "sac-generic,sac-generic+docs5", k=64)
    # With every document allowed the document filter changes nothing.
    for plain, first in zip(got["sac-generic"], got["sac-generic+docs5"]):
        assert [h.chunk.chunk_id for h in plain] == [h.chunk.chunk_id for h in first]


# -- section context ------------------------------------------------------------------------------------------
def test_sections_detected_on_a_real_cuad_contract(demo_datasets):
    doc = next(d for d in demo_datasets["cuad"].documents if "KINGPHARMACEUTICALS" in d.doc_id)
    labels = [h.label for h in find_headings(doc.text)]
    assert "ARTICLE II GRANT" in labels and "Section 2.1 Grant of Promotion Rights" in labels
    start = doc.text.index("Section 2.2")
    path = [h.label for h in heading_path(find_headings(doc.text), start + 5)]
    assert path[-2:] == ["ARTICLE II GRANT", "Section 2.2 Sublicense"]
    chunks = chunk_document(doc)
    lines = context_lines(doc.doc_id, doc.text, [(c.span.start, c.span.end) for c in chunks], sections=True,
                          filename=False)
    prefixes = {c.chunk_id: line for c, line in zip(chunks, lines) if line}
    inside = next(c for c in chunks if c.span.start <= start < c.span.end)
    assert "ARTICLE II GRANT" in prefixes[inside.chunk_id] and prefixes[inside.chunk_id].startswith("Section: ")
    assert len(prefixes) > 0.8 * len(chunks)
    # Numbered clauses that are sentences are not headings.
    assert not any(label.startswith("1.1 This") for label in labels)


def test_sections_index_keeps_exact_spans_and_embeds_the_heading_path(built, nli):
    plain = built.index(CORPUS, parse_method("sac-generic")).records()
    with_sections = built.index(CORPUS, parse_method("sac-generic+sections")).records()
    assert set(plain) == set(with_sections)  # same chunks, same spans
    assert sum(bool(m["prefix_hash"]) for m in with_sections.values()) > len(with_sections) // 2
    method = parse_method("sac-generic+sections")
    snap = snapshot.snapshot(built.client, built.index(CORPUS, method))
    texts = snapshot.embedded_texts(snap, method, built.summary_store)
    assert sum("\nSection: " in t for t in texts) > len(texts) // 2
    by_doc = {d.doc_id: d.text for d in nli.documents}
    for row in range(len(snap)):
        assert snap.texts[row] == by_doc[snap.doc_ids[row]][snap.starts[row]:snap.ends[row]]


# -- small chunks ------------------------------------------------------------------------------------------------
def test_merge_keeps_spans_tiling_and_removes_small_chunks(demo_datasets):
    for ds in demo_datasets.values():
        small_before = 0
        for doc in ds.documents:
            chunks = chunk_document(doc)
            small_before += sum(is_small(c.text, 25) for c in chunks)
            merged = merge_small_chunks(doc, chunks, 25, 500)
            assert "".join(c.text for c in merged) == doc.text
            assert merged[0].span.start == 0 and merged[-1].span.end == len(doc.text)
            assert all(a.span.end == b.span.start for a, b in zip(merged, merged[1:]))
            assert all(c.text == doc.text[c.span.start:c.span.end] for c in merged)
            assert not any(is_small(c.text, 25) for c in merged)
            assert max(len(c.text) for c in merged) <= 500 + 25  # on the demo every small run finds room
        assert small_before > 0


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab \n.", max_size=400), st.integers(5, 60), st.integers(1, 20))
@example("aaaaaaa a      .      aa", 5, 3)  # found by CI: two small leftovers now join each other, not the first chunk
@example("aaaa    aaaaaaaaa  aaa   a", 5, 5)  # a threshold as large as the chunk size: every piece is small
def test_merge_property_spans_tile_and_stay_bounded(text, size, threshold):
    doc = Document("d", text)
    chunks = chunk_document(doc, size)
    merged = merge_small_chunks(doc, chunks, threshold, size)
    assert "".join(c.text for c in merged) == text
    assert all(a.span.end == b.span.start for a, b in zip(merged, merged[1:]))
    assert len(merged) == 1 or not any(is_small(c.text, threshold) for c in merged)  # never a blank chunk
    if 2 * threshold <= size:  # the bound the module states (the default: 25 against 500)
        roomy = [c for c in merged if len(c.text) > size + threshold]  # only where no neighbour had room
        assert all(len(c.text) <= 4 * size + threshold for c in roomy)
    assert merge_small_chunks(doc, merged, threshold, size) == merged  # merging twice changes nothing


@pytest.mark.slow
def test_default_chunking_has_no_small_chunk_or_hit_where_the_papers_splitter_has_many(built, nli, memo):
    paper = Workbench(dataclasses.replace(built.config, chunking="paper"), embedder=memo, client=built.client)
    paper.build(CORPUS, nli.documents, parse_methods("sac-generic"))
    texts = {d.doc_id: d.text for d in nli.documents}

    def small(wb, name):
        records = wb.index(CORPUS, parse_method(name)).records().values()
        return sum(is_small(texts[m["doc_id"]][m["start"]:m["end"]], 25) for m in records), len(records)

    assert small(built, "sac-generic")[0] == 0
    assert small(paper, "sac-generic")[0] > 0 and small(paper, "sac-generic")[1] > small(built, "sac-generic")[1]
    got = _search(built, nli, "sac-generic", k=8)["sac-generic"]
    got_paper = _search(paper, nli, "sac-generic", k=8)["sac-generic"]
    assert short_hit_share(got) == 0.0 <= short_hit_share(got_paper)
    # +merge25 on top of the default finds nothing left to merge.
    merged_again = built.index(CORPUS, parse_method("sac-generic+merge25")).records()
    assert merged_again.keys() == built.index(CORPUS, parse_method("sac-generic")).records().keys()


# -- reranking ---------------------------------------------------------------------------------------------------
def test_rerank_without_a_configured_model_is_a_clear_error(built, nli):
    with pytest.raises(ConfigError, match="SAC_RERANKER") as err:
        _search(built, nli, "sac-generic+rerank", k=8)
    assert "none is configured" in str(err.value) and "lexical" in str(err.value)


def test_lexical_reranker_hand_checked():
    reranker = LexicalReranker()
    assert isinstance(reranker, Reranker)
    chunks = [Chunk(Span("a", 0, 5), "the receiving party"), Chunk(Span("a", 5, 9), "governing law of Vermont"),
              Chunk(Span("b", 0, 4), "Vermont law")]
    ranked = reranker.rerank("Which law governs? Vermont", chunks, 3)
    assert [c.span for c, _ in ranked] == [chunks[1].span, chunks[2].span, chunks[0].span]
    assert ranked[0][1] == ranked[1][1] and ranked[2][1] == 0.0  # a tie keeps the first stage's order


def test_lexical_rerank_reorders_the_first_stage(built, nli):
    wb = Workbench(SacConfig(workspace=built.config.workspace, reranker="lexical"), embedder=built.embedder,
                   client=built.client)
    assert make_reranker(wb.config).name == "lexical"
    got = wb.search(CORPUS, parse_methods("sac-generic,sac-generic+rerank20"), [q.text for q in nli.queries], 20)
    changed = 0
    for first, reranked in zip(got["sac-generic"], got["sac-generic+rerank20"]):
        assert {h.chunk.chunk_id for h in reranked} == {h.chunk.chunk_id for h in first}
        assert [h.score for h in reranked] == sorted((h.score for h in reranked), reverse=True)
        changed += [h.chunk.chunk_id for h in reranked] != [h.chunk.chunk_id for h in first]
    assert changed > len(nli.queries) // 2


def test_unknown_cross_encoder_is_a_config_error_offline():
    with pytest.raises(ConfigError, match="Cannot load the CrossEncoder reranker"):
        make_reranker(SacConfig(reranker=str(ROOT / "no-such-cross-encoder")))


# -- the claims in bench/README.md -------------------------------------------------------------------------------
def _mean_over_k(wb, ds, names):
    frame = evaluate(wb, [ds], parse_methods(names), DEFAULT_K_VALUES).frame()
    return frame[frame["k"] == "mean"].set_index("method")


@pytest.mark.slow
def test_winning_combination_beats_generic_sac_on_the_demo(store_config, memo, nli):
    """bench/README.md: on the 5 demo NDAs the winner's DRM (mean over k) is at or below generic SAC's
    (its recall is lower there: the README says so), and hybrid0.75 raises recall at SAC's DRM level."""
    wb = Workbench(store_config, embedder=memo)
    mean = _mean_over_k(wb, nli, f"sac-generic,{WINNER},sac-generic+hybrid0.75")
    assert mean.loc[WINNER, "drm"] <= mean.loc["sac-generic", "drm"]
    assert mean.loc["sac-generic+hybrid0.75", "recall"] > mean.loc["sac-generic", "recall"]
    reported = json.loads((ROOT / "bench" / "results" / "methods.json").read_text())
    assert reported["winner"] == WINNER
    demo = {r["method"]: r for r in reported["settings"]["demo-nli"]["rows"]}
    assert demo[WINNER]["drm@mean"] == pytest.approx(100 * mean.loc[WINNER, "drm"], abs=0.5)
    assert reported["settings"]["nli-pool"]["verdict"]["met"] is True


@pytest.mark.large
@pytest.mark.slow
def test_winning_combination_cuts_drm_by_a_third_against_the_nda_pool(tmp_path, embedder, nli):
    """The acceptance claim, rerun from scratch: the demo questions against all 183 ContractNLI NDAs
    (about an hour of indexing on 2 cores)."""
    from sac.ingest.pools import load_pool
    from sac.types import Dataset

    sources = ROOT.parent / "shared" / "data" / "sources" / "contractnli"
    pool = load_pool([sources / "test.json", sources / "dev.json"], exclude=nli.documents)
    ds = Dataset(nli.name, nli.documents, nli.queries, tuple(pool))
    mean = _mean_over_k(Workbench(SacConfig(workspace=tmp_path / "ws"), embedder=embedder), ds, f"sac-generic,{WINNER}")
    assert mean.loc[WINNER, "drm"] <= (2 / 3) * mean.loc["sac-generic", "drm"]
    assert mean.loc[WINNER, "recall"] >= mean.loc["sac-generic", "recall"]


# -- company names in the question (+names) and the recommended method -----------------------------------
def test_recommended_is_one_name_for_the_method_chosen_on_dev():
    from sac.methods import RECOMMENDED

    resolved = parse_method("recommended")
    assert resolved.name == parse_method(RECOMMENDED).name and resolved.index_name == "sac-generic"
    assert [m.name for m in parse_methods("baseline,recommended")] == ["baseline", resolved.name]
    assert [m.name for m in parse_methods(" Recommended , SAC-Generic+Docs1 ")] == [resolved.name, "sac-generic+docs1"]
    # The alias is a whole method: options after it are an error that names what it stands for.
    with pytest.raises(ConfigError, match=rf"^'recommended' names a whole method \({re.escape(RECOMMENDED)}\) and takes no"):
        parse_method("recommended+docs2")
    with pytest.raises(ConfigError, match=r"^Unknown method 'bm25'\. Choices are: baseline, sac-generic, sac-expert, recommended, "):
        parse_method("bm25")


def test_names_option_rewrites_squashed_names_and_finds_their_contract(built, nli):
    """A question that names its NDA by a squashed filer form reaches it once the name is rewritten."""
    target = next(d for d in nli.documents if "Inventor-Product" in d.doc_id)
    question = ("Consider the Non-Disclosure Agreement of INVENTORPRODUCTDEVELOPMENTEXPERTSINC; "
                "Who may receive Confidential Information?")
    plain, named = parse_methods("sac-generic,sac-generic+names")
    hits = built.search(CORPUS, [plain, named], [question], 8)
    share = {m.name: sum(h.span.doc_id == target.doc_id for h in hits[m.name][0]) / 8 for m in (plain, named)}
    assert share[named.name] >= share[plain.name] + 0.25  # measured: 3 of 8 hits before, 7 of 8 after
    # Questions without such names search exactly as without the option.
    plain_q = [q.text for q in nli.queries if "AGProjects" not in q.text and "VELCO's" not in q.text
               and "ResConnect's" not in q.text][:5]
    both = built.search(CORPUS, [plain, named], plain_q, 8)
    assert [[h.chunk.chunk_id for h in q] for q in both[plain.name]] == \
        [[h.chunk.chunk_id for h in q] for q in both[named.name]]


def test_filename_option_embeds_the_file_name_as_its_own_index(nli):
    """+filename is metadata, not text: its own index, the file name after the summary, spans unchanged."""
    from sac.chunking.recipe import index_inputs
    from sac.index.records import embedding_text

    method = parse_method("sac-generic+filename+sections")
    assert method.index_name == "sac-generic+filename+sections" and parse_method("sac-generic").index_name == "sac-generic"
    doc = next(d for d in nli.documents if d.doc_id.endswith("NDA_ResConnect.txt"))
    chunks, prefixes = index_inputs(method.index, [doc], lambda d: chunk_document(d, 500), 500)
    assert chunks == chunk_document(doc, 500) and "".join(c.text for c in chunks) == doc.text
    assert all(prefixes[c.chunk_id].startswith("File: NDA_ResConnect") for c in chunks)
    text = embedding_text(chunks[0], "NDA between ResRequest and a partner.", prefixes[chunks[0].chunk_id])
    assert text.startswith("NDA between ResRequest and a partner.\nFile: NDA_ResConnect") and text.endswith(chunks[0].text)
    _, plain = index_inputs(parse_method("sac-generic").index, [doc], lambda d: chunk_document(d, 500), 500)
    assert plain == {}


@pytest.mark.slow
def test_filename_is_read_by_bm25_and_names_with_its_document_and_by_no_text_only_method(tmp_path, memo, nli):
    """+filename puts the file name where a text-only method never looks: the chunk BM25 reads the records'
    embedded text with the file line, the document BM25 and +names read it with the document's text. On the demo
    NDAs "ResConnect" is a word of one file name and of no text ("NDA_ResConnect.txt" is ResRequest's NDA): the
    benchmark's ResConnect questions then route to their NDA with +filename, and the text-only index never holds
    the word."""
    from sac.chunking.context import file_line
    from sac.index import lexical
    from sac.render.trace import trace_notes

    wb = Workbench(SacConfig(workspace=tmp_path / "workspace"), embedder=memo)
    plain, filed = parse_methods("sac-generic+docs1+names,sac-generic+docs1+filename+names")
    wb.build(CORPUS, nli.documents, [plain, filed])
    target = next(d for d in nli.documents if d.doc_id.endswith("NDA_ResConnect.txt"))
    lex = lexical.for_method(wb.index(CORPUS, filed), wb.summary_store, filed)
    text_only = lexical.for_method(wb.index(CORPUS, plain), wb.summary_store, plain)
    assert lex["documents"].ids_with("resconnect") == [target.doc_id] and text_only["documents"].ids_with("resconnect") == []
    texts = dict(zip(lex["documents"].ids, lex["documents"].document_texts()))
    assert texts[target.doc_id] == f"File: NDA_ResConnect\n{target.text}"
    snap = snapshot.snapshot(wb.client, wb.index(CORPUS, filed))
    embedded = snapshot.embedded_texts(snap, filed, wb.summary_store)  # rebuilt from the records, hashes checked
    assert all(f"\n{file_line(snap.doc_ids[r])}\n" in embedded[r] for r in range(len(snap)))
    hit = lex["chunks"].scores("ResConnect") > 0  # the chunk BM25 reads the file line of every record
    assert hit.any() and all(snap.doc_ids[snap.row_of[cid]] == target.doc_id
                             for cid, yes in zip(lex["chunks"].ids, hit) if yes)
    assert not (text_only["chunks"].scores("ResConnect") > 0).any()
    questions = [q.text for q in nli.queries if q.text.startswith("Consider ResConnect's")]
    assert len(questions) >= 5
    suggested = parse_method(METADATA_METHOD)  # what Compare offers: the same index
    assert suggested.name in suggested_methods() and suggested.index_name == filed.index_name
    hits = wb.search(CORPUS, [plain, filed, suggested], questions, 8)
    assert all(len(q) == 8 and all(h.span.doc_id == target.doc_id for h in q) for q in hits[filed.name])
    assert all(len(q) == 8 and all(h.span.doc_id == target.doc_id for h in q) for q in hits[suggested.name])
    # Text only, the same questions go elsewhere (all to the Inventor NDA when this was written).
    assert sum(h.span.doc_id == target.doc_id for q in hits[plain.name] for h in q) < 4 * len(questions)
    # What Compare and `sac query` say: the name was found in the file name or the text, not in the text alone.
    [traced] = wb.search_traced(CORPUS, [filed], questions[:1], 8)[filed.name]
    named = dict(trace_notes(traced.trace, questions[0]))["Named:"]
    assert named.startswith("NDA_ResConnect (") and "sure): its file name or text writes the company name" in named


@pytest.mark.slow
def test_names_route_documents_first_to_the_contract_the_file_name_names(built, nli):
    """Documents first with +names: the NDA whose own text holds the squashed name comes first."""
    target = next(d for d in nli.documents if "Inventor-Product" in d.doc_id)
    questions = ["Consider the Non-Disclosure Agreement of INVENTORPRODUCTDEVELOPMENTEXPERTSINC; What is the term?",
                 "Consider the Mutual NDA of InventorProductDevelopmentExperts; Who may receive it?"]
    plain, named = parse_methods("sac-generic+docs1,sac-generic+docs1+names")
    hits = built.search(CORPUS, [plain, named], questions, 8)
    assert all(h.span.doc_id == target.doc_id for q in hits[named.name] for h in q)
    assert sum(h.span.doc_id == target.doc_id for q in hits[plain.name] for h in q) < 16


@pytest.fixture(scope="module")
def demo_pool(nli, demo_datasets):
    """The documents lexical index of the 34 demo contracts (NDAs and CUAD), built from their texts."""
    from sac.index.lexical import LexicalIndex, Lexicon, tokenize

    contracts = [*nli.documents, *demo_datasets["cuad"].documents]
    return LexicalIndex("documents", [d.doc_id for d in contracts], [d.doc_id for d in contracts],
                        [d.content_hash for d in contracts], Lexicon.from_tokens([tokenize(d.text) for d in contracts]),
                        texts=[d.text for d in contracts])


def _resolved(documents, question):
    from sac.retrieval.targets import resolve_targets

    return resolve_targets(documents, question, 1, file_names=False)


@pytest.mark.slow
def test_names_resolve_the_contract_a_question_names_on_the_demo_contracts(built, nli, demo_datasets, demo_pool):
    """+names: which contract a question means, and how sure (sac.retrieval.targets), on the 34 demo contracts (the
    lexical index built from their texts) and on the 5 demo NDAs alone. A word one contract writes ("VELCO's"), a
    squashed company name, a party, a title's initials spelled out ("GBRP": "Gordon Brothers Retail Partners") name
    it for sure; a word two contracts write offers both ("Which contract did you mean?"); words that say what kind of
    contract or party ("Non-Disclosure Agreement", "LLC", "the Agreement"), and a question's lower-case words, name
    none, and a question without a title that names none is searched in every document."""
    from sac.retrieval.targets import name_words, title_words

    pool = demo_pool
    velco = next(d.doc_id for d in nli.documents if "VELCO" in d.doc_id)
    ceii = next(d.doc_id for d in nli.documents if d.doc_id.endswith("ceii-and-nda.txt"))
    cuad = demo_datasets["cuad"].documents
    flotek = next(d.doc_id for d in cuad if "FLOTEK" in d.doc_id.upper())
    bonton = next(d.doc_id for d in cuad if "BONTON" in d.doc_id)
    papa = next(d.doc_id for d in cuad if "PapaJohns" in d.doc_id)

    def sure(documents, question):
        resolved = _resolved(documents, question)
        return resolved.target.doc_id if resolved.target is not None else None

    def first(documents, question):  # the most probable candidate, where it is likely enough to be offered
        resolved = _resolved(documents, question)
        return resolved.likely[0] if resolved.likely else None

    question = "Consider VELCO's Non-Disclosure Agreement; What is the term?"
    assert title_words(question) == ["velco", "non", "disclosure", "agreement"]
    # One word of 34 contracts: the most probable by far, searched inside alone, though not sure on its own.
    assert first(pool, question) == velco and first(pool, "What does VELCO's NDA say about the term?") == velco
    assert _resolved(pool, question).search_inside == 1
    two = _resolved(pool, "Consider the CEII Non-Disclosure Agreement; Q?")  # both NDAs write CEII
    assert not two.confident and {c.doc_id for c in two.candidates[:2]} == {velco, ceii}
    assert abs(two.candidates[0].probability - two.candidates[1].probability) < 1e-9
    assert sure(pool, "Consider the Supply Agreement between Florida Chemical Company, LLC and Flotek Chemistry, LLC "
                      "for Terpene Products; What is the term?") == flotek
    gbrp = _resolved(pool, "Consider the Agency Agreement of GBRP; What is the fee?")
    assert gbrp.target is not None and gbrp.target.doc_id == bonton
    assert ("GBRP", "Gordon Brothers Retail Partners") in {(m.word, m.found) for m in gbrp.target.matches
                                                           if m.kind == "initials"}
    assert first(pool, "Consider the GBRP Agreement of Papa; Q?") == papa  # a word the text writes beats initials
    heading = _resolved(pool, "Consider the Confidential Information Non-Disclosure Agreement; Who may receive it?")
    assert heading.likely[:1] == (velco,)  # VELCO's heading, whole: the most probable, though words of it are common
    for vague in ("Consider the Non-Disclosure Agreement; Who may receive it?", "Consider the IWW Agreement; Q?",
                  "Consider THE Agreement; Q?"):
        assert not _resolved(pool, vague).confident, vague
    for untitled in ("what does velco's nda say about the term?",  # lower case: what it asks, not whom
                     "What does the Agreement say about Confidential Information?", "Does the Sponsor have exclusive rights?"):
        resolved = _resolved(pool, untitled)
        assert resolved.likely == () and resolved.search_inside == 0, untitled
    # a sentence's first word counts only with capitals inside it or a possessive
    assert name_words("Summarize what VELCO's NDA says. Highlight the Term; Glamis may end it.") == ["velco", "nda", "term"]
    assert name_words("VELCO's NDA: is GluMobile a party?") == ["velco", "nda", "glumobile"]

    five = lexical_indexes(built.index(CORPUS, parse_method("sac-generic")), built.summary_store,
                           strategy="generic")["documents"]
    ag = next(d.doc_id for d in nli.documents if "AGProjects" in d.doc_id)
    assert len(five.ids) == 5 and sure(five, question) == velco
    assert sure(five, "Consider the Non-Disclosure Agreement of AGPROJECTS; Who may receive it?") == ag
    # The Flotek contract is not among the five: its words of kind ("LLC", "Company", "Agreement") name none of them.
    assert sure(five, "Consider the Supply Agreement between Florida Chemical Company, LLC and Flotek Chemistry, LLC "
                      "for Terpene Products; What is the term?") is None
    assert not _resolved(five, "Consider the Non-Disclosure Agreement; Who may receive it?").likely


@pytest.mark.slow
def test_names_route_by_the_title_alone_when_it_names_no_document(built, nli, monkeypatch):
    """+names with +docs<N>: where the title names no document, the document BM25 reads the title alone (the
    question's clause words are every NDA's and would lift the short ones full of them); where it names
    documents, and where there is no title, it reads the whole question (the rewritten one); the dense part
    reads the whole question either way. A question without a title that names no document is not routed: its
    hits are those of the method without +docs1, from every NDA. Checked on what reaches the documents' BM25 in a
    real search of the 5 demo NDAs, and on the routing rule itself."""
    from sac.index.lexical import LexicalIndex
    from sac.retrieval.document_ranking import lexical_query

    assert lexical_query("Consider the Mutual Non-Disclosure Agreement; Does it cover oral disclosures?",
                         frozenset()) == "Mutual Non-Disclosure Agreement"
    assert lexical_query("Consider the Mutual Non-Disclosure Agreement; Q?", frozenset({"a.txt"})) == (
        "Consider the Mutual Non-Disclosure Agreement; Q?")
    assert lexical_query("Does the NDA cover oral disclosures?", frozenset()) == "Does the NDA cover oral disclosures?"

    read: list[tuple[str, str]] = []
    scores = LexicalIndex.scores

    def spy(self: LexicalIndex, query: str):
        read.append((self.kind, query))
        return scores(self, query)

    monkeypatch.setattr(LexicalIndex, "scores", spy)
    unnamed = "Consider the Non-Disclosure Agreement; Does the agreement allow the Receiving Party to retain copies?"
    heading = "Consider the Confidential Information Non-Disclosure Agreement; Who may receive it?"  # VELCO's
    plain = "Which agreement lets the Receiving Party retain copies?"
    method, unrouted = parse_methods("sac-generic+docs1+names,sac-generic+names")
    hits = built.search(CORPUS, [method], [unnamed, heading, plain], 4)[method.name]
    assert [q for kind, q in read if kind == "documents"] == ["Non-Disclosure Agreement", heading]
    velco = next(d.doc_id for d in nli.documents if "VELCO" in d.doc_id)
    assert {h.span.doc_id for h in hits[1]} == {velco}
    assert all(len({h.span.doc_id for h in q}) == 1 for q in hits[:2])  # one document each (+docs1)
    [searched] = built.search(CORPUS, [unrouted], [plain], 4)[unrouted.name]
    assert [h.chunk.chunk_id for h in hits[2]] == [h.chunk.chunk_id for h in searched]
    assert len({h.span.doc_id for h in hits[2]}) > 1


def test_compare_is_told_what_the_title_names_and_which_documents_were_searched(built, nli):
    """The trace a search returns, as the Compare page words it under a +names / +docs<N> method: the question as
    searched, which contract it names, how sure and by what clues, and the documents searched inside, the very ones
    the hits come from. On the 5 demo NDAs: VELCO's heading, quoted, makes VELCO's NDA the most probable but not
    sure, and the page asks which contract was meant; a title 6 NDAs share names none (a look-alike may win, and
    the page says whether it did); a question with no title names nothing, and every NDA is searched; a squashed
    name is written as the text writes it and names its NDA for sure."""
    from sac.render.trace import trace_notes
    from sac.retrieval.trace import DocumentsRanked, NamesRewritten, TargetsResolved

    velco = next(d.doc_id for d in nli.documents if "VELCO" in d.doc_id)
    ag = next(d.doc_id for d in nli.documents if "AGProjects" in d.doc_id)
    heading = "Consider the Confidential Information Non-Disclosure Agreement; Who may receive it?"
    unnamed = "Consider the Non-Disclosure Agreement; Does the agreement allow the Receiving Party to retain copies?"
    plain = "Which agreement lets the Receiving Party retain copies?"
    squashed = "Consider the Non-Disclosure Agreement of AGPROJECTS; Who may receive it?"
    questions = [heading, unnamed, plain, squashed]
    [method] = parse_methods("sac-generic+docs1+names")
    results = built.search_traced(CORPUS, [method], questions, 4)[method.name]
    ranked = [r.trace.find(DocumentsRanked) for r in results]
    assert [r.documents if r else () for r in ranked] == [
        () if q == plain else tuple(dict.fromkeys(h.span.doc_id for h in got.hits)) for q, got in zip(questions, results)]
    assert len({h.span.doc_id for h in results[2].hits}) > 1
    resolved = [r.trace.find(TargetsResolved) for r in results]
    assert [(t.likely[:1], t.confident) for t in resolved] == [((velco,), False), ((), False), ((), False),
                                                                ((ag,), True)]
    assert [t.search_inside for t in resolved] == [1, 1, 0, 1] and ranked[0].documents == (velco,)
    assert ranked[3].documents == (ag,)

    notes = [dict(trace_notes(r.trace, q, frozenset({velco}))) for r, q in zip(results, questions)]
    velco_p = resolved[0].probability_of[velco]
    assert notes[0] == {"Named:": f"not sure which contract: VELCO NDA rev0 Dec 14 2015 {velco_p:.0%} (its text has the "
                                  "heading “Confidential Information Non-Disclosure Agreement” (no other document writes "
                                  "it)); searched inside the most probable. Which contract did you mean?",
                        "Searched inside:": "VELCO NDA rev0 Dec 14 2015"}
    assert notes[1]["Named:"].startswith("no document for sure: nothing in the title names one document")
    assert notes[1]["Searched inside:"].endswith("(not the question's document)") == (velco not in ranked[1].documents)
    assert notes[2]["Named:"].startswith("nothing: no company name") and "Searched inside:" not in notes[2]
    assert notes[2]["Named:"].endswith("so every document was searched.")
    assert "AGPROJECTS" not in notes[3]["Searched as:"]
    assert notes[3]["Named:"] == (f"AGProjects-NDA ({resolved[3].target.probability:.0%} sure): its text writes the "
                                  "company name “agprojects” (letters and digits compared) (no other document writes it).")
    assert notes[3]["Searched inside:"] == "AGProjects-NDA (not the question's document)"  # VELCO given as the target
    titles = {ag: "AG Projects / Example, NDA"}  # a display name, where the page has one, in place of the file's
    assert dict(trace_notes(results[3].trace, squashed, titles=titles))["Searched inside:"] == "AG Projects / Example, NDA"

    [dense] = built.search_traced(CORPUS, [parse_method("sac-generic")], [heading], 4)["sac-generic"]
    assert trace_notes(dense.trace, heading) == []  # the plain top-k: nothing to say
    [names_only] = parse_methods("sac-generic+names")
    [rewritten] = built.search_traced(CORPUS, [names_only], [squashed], 4)[names_only.name]
    assert rewritten.trace.find(NamesRewritten) == results[3].trace.find(NamesRewritten)
    assert rewritten.trace.find(TargetsResolved) is None and rewritten.trace.find(DocumentsRanked) is None


def test_inner_ranks_the_chosen_documents_chunks_by_the_question_without_its_title(built, nli):
    """``+inner``: the documents are chosen as without it (from the whole question), and inside them the chunks
    come in the order of their cosine to the question proper ("Consider the <title>;" dropped), embedded on its
    own; a question without a title (here naming no document: not routed) is searched as before. At k = 64 every
    chunk of a demo NDA is a hit, so the two methods return the same chunks, in another order."""
    from sac.render.trace import trace_notes
    from sac.retrieval.names import split_title
    from sac.retrieval.pipeline import question_proper
    from sac.retrieval.trace import ChunksRanked

    with pytest.raises(ConfigError, match="docs<N>"):
        parse_method("sac-generic+inner")
    plain, inner = parse_methods("sac-generic+docs1+names,sac-generic+docs1+inner+names")
    untitled = "Which agreement lets the Receiving Party retain copies?"
    questions = [q.text for q in nli.queries[::5]]
    got = built.search(CORPUS, [plain, inner], questions + [untitled], 64)
    index = built.index(CORPUS, inner)
    reordered = 0
    for question, before, after in zip(questions, got[plain.name], got[inner.name]):
        ids = [h.chunk.chunk_id for h in after]
        assert sorted(ids) == sorted(h.chunk.chunk_id for h in before) and len({h.span.doc_id for h in after}) == 1
        vector = built.embed_queries([split_title(question)[1]])[0]
        scores = [h.score for h in after]
        assert np.allclose(scores, index.vectors_of(ids) @ vector, atol=1e-5) and scores == sorted(scores, reverse=True)
        reordered += ids != [h.chunk.chunk_id for h in before]
    assert reordered >= len(questions) // 2  # the title moved most orders
    assert [h.chunk.chunk_id for h in got[inner.name][-1]] == [h.chunk.chunk_id for h in got[plain.name][-1]]

    def ranked(method, question):
        [result] = built.search_traced(CORPUS, [method], [question], 8)[method.name]
        return result.trace

    trace = ranked(inner, questions[0])
    assert trace.find(ChunksRanked).without_title and trace.find(ChunksRanked).ranked_by == split_title(questions[0])[1]
    assert dict(trace_notes(trace, questions[0]))["Ranked inside by:"] == (
        f"the question without its title: “{split_title(questions[0])[1]}”")
    assert not ranked(inner, untitled).find(ChunksRanked).without_title  # nothing dropped, nothing said
    assert "Ranked inside by:" not in dict(trace_notes(ranked(inner, untitled), untitled))
    assert question_proper("Consider the NDA of Munt;  ") == "" and question_proper(untitled) == ""  # nothing to rank by
    assert question_proper("Consider Munt's NDA; Who may receive it?") == "Who may receive it?"
    assert not ranked(plain, questions[0]).find(ChunksRanked).without_title


@pytest.mark.slow
def test_recommended_ranks_inside_the_routed_contract_by_meaning_and_words(built, nli):
    """``+hybrid0.75`` with ``+inner``: the same document and chunks as ranking by the embedding alone (at k = 64
    every chunk of a demo NDA is a hit), ordered by the fused dense and BM25 score, which moves most orders. A
    question without a title that names no NDA is searched across all five, as ``sac-generic+hybrid0.75`` does."""
    inner, recommended = parse_methods(f"sac-generic+docs1+inner+names,{RECOMMENDED}")
    assert recommended.search.hybrid == 0.75 and recommended.search.inner
    questions = [q.text for q in nli.queries[::5]]
    got = built.search(CORPUS, [inner, recommended], questions, 64)
    reordered = 0
    for dense, fused in zip(got[inner.name], got[recommended.name]):
        ids = [h.chunk.chunk_id for h in fused]
        assert sorted(ids) == sorted(h.chunk.chunk_id for h in dense)
        scores = [h.score for h in fused]
        assert scores == sorted(scores, reverse=True) and 0.0 <= scores[-1] <= scores[0] <= 1.0
        reordered += ids != [h.chunk.chunk_id for h in dense]
    assert reordered >= len(questions) // 2

    untitled = "Which agreement lets the Receiving Party retain copies?"
    hybrid = parse_method("sac-generic+hybrid0.75")
    across = built.search(CORPUS, [recommended, hybrid], [untitled], 8)
    assert [(h.chunk.chunk_id, h.score) for h in across[recommended.name][0]] == [
        (h.chunk.chunk_id, h.score) for h in across[hybrid.name][0]]
    assert len({h.span.doc_id for h in across[recommended.name][0]}) > 1

    # A question without a title is searched inside every likely candidate; a title's question inside one.
    from sac.render.trace import trace_notes
    from sac.retrieval.trace import DocumentsRanked, TargetsResolved

    velco = next(d.doc_id for d in nli.documents if "VELCO" in d.doc_id)
    ceii = next(d.doc_id for d in nli.documents if d.doc_id.endswith("ceii-and-nda.txt"))
    asked = "Who may receive CriticalEnergyInfrastructureInformation?"  # squashed: both NDAs write it out
    titled = "Consider the NDA on CriticalEnergyInfrastructureInformation; Who may receive it?"
    both, one = (r.trace for r in built.search_traced(CORPUS, [recommended], [asked, titled], 8)[recommended.name])
    assert set(both.find(TargetsResolved).likely) == set(one.find(TargetsResolved).likely) == {velco, ceii}
    assert not both.find(TargetsResolved).confident
    assert all(m.kind == "name" for c in both.find(TargetsResolved).candidates for m in c.matches if m.kind != "text")
    assert set(both.find(DocumentsRanked).documents) == {velco, ceii} and len(one.find(DocumentsRanked).documents) == 1
    hits = built.search(CORPUS, [recommended], [asked], 8)[recommended.name][0]
    assert {h.span.doc_id for h in hits} <= {velco, ceii} and len(hits) == 8
    assert dict(trace_notes(both, asked))["Named:"].endswith(
        "; a question without a title is searched inside each. Which contract did you mean?")
    assert dict(trace_notes(one, titled))["Named:"].endswith(
        "; searched inside the most probable. Which contract did you mean?")


@pytest.mark.slow
def test_search_answers_hundreds_of_questions_at_k_64_in_one_call(built):
    """Hundreds of questions at k = 64 exceed SQLite's variable limit in one chromadb call: searched in batches."""
    index = built.index(CORPUS, parse_method("baseline"))
    vectors = np.random.default_rng(0).normal(size=(600, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    hits = index.search(vectors, 64)
    assert len(hits) == 600 and all(len(h) == 64 for h in hits)
    assert [h.chunk.chunk_id for h in hits[599]] == [h.chunk.chunk_id for h in index.search(vectors[599:], 64)[0]]


@pytest.mark.slow
def test_no_blank_hit_for_a_question_that_names_its_contract(tmp_path, memo, demo_datasets):
    """The question that showed the problem on the demo: under the paper's splitter, SAC's whitespace-only chunks
    of the named contract embed as its summary alone and fill the top 8; the default chunking has none."""
    cuad = demo_datasets["cuad"]
    alco = next(d for d in cuad.documents if "ALCOSTORES" in d.doc_id)
    docs = [alco, *[d for d in cuad.documents if d is not alco][:3]]
    question = "Governing law of the agency agreement between GE Capital and Duckwall-Alco"
    shares = {}
    for chunking in ("paper", "merged"):
        wb = Workbench(SacConfig(workspace=tmp_path / "ws", chunking=chunking), embedder=memo)
        wb.build("alco", docs, parse_methods("sac-generic"))
        hits = wb.search("alco", parse_methods("sac-generic"), [question], 8)["sac-generic"]
        assert all(h.chunk.text == alco.text[h.span.start:h.span.end] for h in hits[0] if h.span.doc_id == alco.doc_id)
        shares[chunking] = short_hit_share(hits)
    assert shares["paper"] > 0 and shares["merged"] == 0.0  # paper: 3 of the top 8 when measured


@pytest.mark.slow
def test_cli_query_names_the_recommended_method_and_what_it_read(built, cli):
    """``sac query --methods recommended`` heads its hits as Compare heads its column, then says what the title named."""
    code, out, err = cli("query", "Consider the Non-Disclosure Agreement of INVENTORPRODUCTDEVELOPMENTEXPERTSINC; "
                         "Who may receive Confidential Information?", "--workspace", str(built.config.workspace),
                         "--datasets", "contractnli", "--methods", "Recommended", "--k", "2", "-q")
    assert code == 0, err
    target = "contractnli/Mutual-Non-Disclosure-Agreement-Inventor-Product-Development-Experts-Inc..txt"
    lines = out.splitlines()
    assert lines[0] == f"== recommended ({RECOMMENDED})"
    assert lines[1] == ("   Searched as: Consider the Non-Disclosure Agreement of Inventor Product Development Experts Inc; "
                        "Who may receive Confidential Information?")
    # The title's squashed name spells "Inventor" before the party the text writes ("Product Development Experts,
    # Inc."); the NDA's head writes "Inventor", the name's start, and no other NDA does: a candidate, not a sure pick
    # (the name's other words are written nowhere), offered and searched.
    assert lines[2].startswith("   Named: not sure which contract: Product Development Experts · Mutual Non-Disclosure "
                               "Agreement — ")
    assert "writes “Inventor”, the start of the company name asked" in lines[2]
    assert lines[2].endswith("searched inside the most probable. Which contract did you mean?")
    assert lines[3] == ("   Searched inside: Product Development Experts · Mutual Non-Disclosure Agreement — "
                        f"{Path(target).stem}")
    assert lines[4] == ("   Ranked inside by: the question without its title: “Who may receive Confidential Information?”; "
                        "its meaning and its words, fused (75 % embedding, 25 % BM25)")  # +hybrid0.75
    assert len(lines) == 7 and all(f" {target} [" in line for line in lines[5:])
