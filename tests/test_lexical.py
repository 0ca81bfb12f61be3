"""The lexical index (sac.index.lexical): rank-bm25's Okapi scores from bm25s, on disk beside the Chroma store,
following the collection as documents and summaries change. Real demo documents, the real packaged model
(through the session's ``memo``), a real embedded Chroma store."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from sac.chunking.merge import index_chunks
from sac.config import SacConfig
from sac.index import lexical, snapshot
from sac.index.lexical import Lexicon, lexical_dir, lexical_indexes, query_words, tokenize
from sac.methods import parse_method, parse_methods
from sac.usecases.workbench import Workbench

CORPUS = "lexical-nli"


def _okapi(texts):
    """rank-bm25 as sac.retrieval.hybrid used it before: BM25Okapi over ``tokenize``, distinct query words."""
    model = BM25Okapi([tokenize(t) for t in texts])
    return lambda query: np.asarray(model.get_scores(query_words(query)), dtype=np.float64)


def _assert_same_scores(got, want):
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * max(1.0, float(np.abs(want).max())))
    if want.max() > 0:  # the same best row (ties: the same set of best rows)
        assert set(np.flatnonzero(got == got.max())) & set(np.flatnonzero(want >= want.max() - 1e-6 * want.max()))


@pytest.fixture(scope="module")
def nli(demo_datasets):
    return demo_datasets["contractnli"]


@pytest.mark.slow
def test_scores_equal_rank_bm25_on_the_demo_chunks_and_documents(demo_datasets):
    """Every demo chunk (ContractNLI and CUAD) and every whole document, every demo question: the same scores
    as rank-bm25's BM25Okapi to float32 rounding, words in more than half the rows (epsilon floor) included."""
    for ds in demo_datasets.values():
        chunk_texts = [c.text for d in ds.documents for c in index_chunks(d)]
        doc_texts = [d.text for d in ds.documents]
        for texts in (chunk_texts, doc_texts):
            lex = Lexicon.from_tokens([tokenize(t) for t in texts])
            want = _okapi(texts)
            for query in ds.queries[:60]:
                _assert_same_scores(lex.scores(query.text), want(query.text))
    # The floor is exercised: among the 5 NDAs "confidential" is in every document, so its raw idf is negative.
    nli_docs = [d.text for d in demo_datasets["contractnli"].documents]
    floored = BM25Okapi([tokenize(t) for t in nli_docs])
    assert all("confidential" in tokenize(t) for t in nli_docs) and floored.idf["confidential"] > 0
    lex = Lexicon.from_tokens([tokenize(t) for t in nli_docs])
    _assert_same_scores(lex.scores("confidential information"), _okapi(nli_docs)("confidential information"))


def test_hand_checked_small_corpus():
    # rank_bm25's own test corpus shape: 3 rows; "power" is in 2 of 3 (idf ln(1.5 / 2.5) < 0 -> floored).
    lex = Lexicon.from_tokens([["velco", "power"], ["power", "receiving", "party"], []])
    idf_velco = np.log(2.5 / 1.5)
    idf_mean = (3 * idf_velco + np.log(1.5 / 2.5)) / 4  # velco, receiving, party: ln(2.5 / 1.5); power: negative
    avgdl = 5 / 3
    tf_part = 2.5 / (1 + 1.5 * (0.25 + 0.75 * 2 / avgdl))
    scores = lex.scores("VELCO power")
    assert scores[0] == pytest.approx(idf_velco * tf_part + 0.25 * idf_mean * tf_part, rel=1e-6)
    assert scores[2] == 0.0 and scores[1] == pytest.approx(0.25 * idf_mean * 2.5 / (1 + 1.5 * (0.25 + 0.75 * 3 / avgdl)), rel=1e-6)
    assert list(Lexicon.from_tokens([[], []]).scores("anything")) == [0.0, 0.0]
    assert len(Lexicon.from_tokens([]).scores("anything")) == 0


@pytest.fixture
def workbench(tmp_path, memo):
    return Workbench(SacConfig(workspace=tmp_path / "workspace"), embedder=memo)


def _reference(wb, method_name):
    """rank-bm25 over what the index's records embedded and over summary + whole text of each document, rows in
    the order of the in-memory snapshot (the pre-lexical-index code path)."""
    method = parse_method(method_name)
    snap = snapshot.snapshot(wb.client, wb.index(CORPUS, method))
    texts = snapshot.embedded_texts(snap, method, wb.summary_store)
    summaries = snapshot.summary_texts(snap, method, wb.summary_store)
    docs = [f"{summaries.get(d, '')}\n{snap.document_text(d)}" for d in snap.documents]
    return snap, _okapi(texts), _okapi(docs)


def _check_against_reference(wb, method_name, queries):
    method = parse_method(method_name)
    lex = lexical_indexes(wb.index(CORPUS, method), wb.summary_store, strategy=method.strategy)
    snap, chunk_ref, doc_ref = _reference(wb, method_name)
    assert lex["chunks"].ids == snap.ids and lex["documents"].ids == snap.documents
    assert lex["documents"].document_texts() == [snap.document_text(d) for d in snap.documents]  # for +names
    for query in queries:
        _assert_same_scores(lex["chunks"].scores(query), chunk_ref(query))
        _assert_same_scores(lex["documents"].scores(query), doc_ref(query))
    return lex


@pytest.mark.slow
def test_build_writes_the_lexical_index_beside_the_store_and_it_reopens_identically(workbench, nli):
    wb = workbench
    wb.build(CORPUS, nli.documents[:3], parse_methods("sac-generic"))
    index = wb.index(CORPUS, parse_method("sac-generic"))
    folder = lexical_dir(index)
    assert folder == wb.config.workspace / "lexical" / index.key.collection_name
    current = json.loads((folder / "current.json").read_text())
    assert current["fingerprint"] == index.fingerprint() != "" and current["count"] == index.count()
    for kind in ("chunks", "documents"):
        assert (folder / current["generation"] / kind / "data.csc.index.npy").is_file()
    queries = [q.text for q in nli.queries[:20]]
    lex = _check_against_reference(wb, "sac-generic", queries)
    before = {q: (lex["chunks"].scores(q), lex["documents"].scores(q)) for q in queries}
    lexical.forget(index)  # a new process: read from disk
    again = lexical_indexes(index, wb.summary_store, strategy="generic")
    assert again is not lex and again["chunks"].ids == lex["chunks"].ids
    assert (folder / "current.json").read_text() == json.dumps(current, indent=1)  # nothing was rebuilt
    for q in queries:
        assert np.array_equal(again["chunks"].scores(q), before[q][0])
        assert np.array_equal(again["documents"].scores(q), before[q][1])


@pytest.mark.slow
def test_adding_and_removing_documents_updates_the_lexical_index(workbench, nli):
    wb = workbench
    method = parse_method("baseline")
    first, *rest = nli.documents[:3]
    wb.build(CORPUS, [first, rest[0]], [method])
    index = wb.index(CORPUS, method)
    lex = lexical_indexes(index, wb.summary_store, strategy=None)
    assert set(lex["documents"].ids) == {first.doc_id, rest[0].doc_id}
    tokens_first = [lex["chunks"].lexicon.row_words(r) for r in lex["chunks"].rows([first.doc_id])]

    wb.build(CORPUS, [first, *rest], [method])  # one document added: the sync adds its chunks
    grown = lexical_indexes(index, wb.summary_store, strategy=None)
    assert grown is not lex and set(grown["documents"].ids) == {d.doc_id for d in [first, *rest]}
    assert [grown["chunks"].lexicon.row_words(r) for r in grown["chunks"].rows([first.doc_id])] == tokens_first
    queries = [q.text for q in nli.queries[:15]]
    _check_against_reference(wb, "baseline", queries)

    assert wb.remove_documents(CORPUS, [first.doc_id]) > 0  # the fingerprint is cleared: found stale at search
    snapshot.forget(wb.client, index.key.collection_name)
    shrunk = _check_against_reference(wb, "baseline", queries)
    assert first.doc_id not in shrunk["documents"].ids and len(shrunk["chunks"]) == index.count()
    assert not any(d == first.doc_id for d in shrunk["chunks"].doc_ids)
    # The incremental result is the one a build from nothing gives.
    shutil.rmtree(lexical_dir(index))
    lexical.forget(index)
    scratch = lexical_indexes(index, wb.summary_store, strategy=None)
    for q in queries:
        assert np.array_equal(scratch["chunks"].scores(q), shrunk["chunks"].scores(q))
        assert np.array_equal(scratch["documents"].scores(q), shrunk["documents"].scores(q))


@pytest.mark.slow
def test_a_summary_edit_reaches_the_lexical_index(workbench, nli):
    wb = workbench
    method = parse_method("sac-generic")
    docs = nli.documents[:3]  # with 2 documents a word in one of them has idf ln(1.5 / 1.5) = 0
    wb.build(CORPUS, docs, [method])
    index = wb.index(CORPUS, method)
    word = "zanzibarquartz"
    assert lexical_indexes(index, wb.summary_store, strategy="generic")["documents"].scores(word).max() == 0
    wb.summary_store.save_edit(docs[1], "generic", f"NDA of the {word} company about its mining data.")
    report = wb.build(CORPUS, docs, [method])["sac-generic"]
    assert report.documents_changed == 1
    lex = lexical_indexes(index, wb.summary_store, strategy="generic")
    doc_scores = lex["documents"].scores(word)
    assert doc_scores[lex["documents"].row_of[docs[1].doc_id]] > 0 == doc_scores[lex["documents"].row_of[docs[0].doc_id]]
    chunk_scores = lex["chunks"].scores(word)
    assert set(np.flatnonzero(chunk_scores > 0)) == set(lex["chunks"].rows([docs[1].doc_id]))
    _check_against_reference(wb, "sac-generic", [word, *(q.text for q in nli.queries[:10])])


# -- the document-level collection and routing without every vector (sac.index.documents, sac.retrieval.document_ranking) --
@pytest.mark.slow
def test_document_collection_mirrors_the_summaries_through_edits_and_removals(workbench, nli, memo):
    from sac.index.documents import DocumentIndex, document_index, drop_index
    from sac.index.records import summary_hash

    wb = workbench
    docs = nli.documents[:3]
    wb.build(CORPUS, docs, parse_methods("baseline,sac-generic"))
    index = wb.index(CORPUS, parse_method("sac-generic"))
    assert document_index(wb.index(CORPUS, parse_method("baseline")), wb.summary_store, strategy=None, embedder=memo) is None
    names = [c if isinstance(c, str) else c.name for c in wb.client.list_collections()]
    assert sum(n.startswith("sacdoc_") for n in names) == 1  # one for sac-generic, none for the baseline

    def stored():
        got = DocumentIndex(index)._open().get(include=["embeddings", "metadatas"])
        return {d: (np.asarray(v), m) for d, v, m in zip(got["ids"], got["embeddings"], got["metadatas"])}

    def check(expected_docs):
        records = stored()
        assert set(records) == {d.doc_id for d in expected_docs}
        for doc in expected_docs:
            summary = wb.summary_store.current(doc, "generic").text
            vector, meta = records[doc.doc_id]
            assert meta["summary_hash"] == summary_hash(summary) and meta["doc_hash"] == doc.content_hash
            assert float(vector @ memo.embed_documents([summary])[0]) > 0.9999
        assert DocumentIndex(index).is_fresh()

    check(docs)
    q = memo.embed_documents([nli.queries[0].text])[0]
    scores = DocumentIndex(index).summary_scores(q, len(docs))
    for doc in docs:
        summary_vector = memo.embed_documents([wb.summary_store.current(doc, "generic").text])[0]
        assert scores[doc.doc_id] == pytest.approx(float(summary_vector @ q), abs=1e-5)

    wb.summary_store.save_edit(docs[1], "generic", "Mutual NDA of the Zanzibar quartz mining company.")
    wb.build(CORPUS, docs, parse_methods("sac-generic"))
    check(docs)
    assert wb.remove_documents(CORPUS, [docs[0].doc_id]) > 0
    assert not DocumentIndex(index).is_fresh()
    document_index(index, wb.summary_store, strategy="generic", embedder=memo)  # what a search does first
    check(docs[1:])
    DocumentIndex(index).drop()  # gone (another process dropped it): reading whether it is fresh creates nothing
    assert not DocumentIndex(index).is_fresh() and not DocumentIndex(index).exists()
    document_index(index, wb.summary_store, strategy="generic", embedder=memo)
    check(docs[1:])
    assert lexical_dir(index).is_dir()
    drop_index(index)  # the chunk collection, its document collection and its lexical indexes
    names = [c if isinstance(c, str) else c.name for c in wb.client.list_collections()]
    assert not any(n.startswith("sacdoc_") for n in names) and not lexical_dir(index).exists(), names


@pytest.fixture(scope="module")
def routed_wb(tmp_path_factory, memo, nli):
    wb = Workbench(SacConfig(workspace=tmp_path_factory.mktemp("routing") / "workspace"), embedder=memo)
    wb.build(CORPUS, nli.documents, parse_methods("sac-generic"))
    return wb


def _exact_docs1(wb, nli, k):
    """The pre-issue-14 +docs1 from every chunk vector in memory: document scores over all chunks and embedded
    summaries, then the exact top k inside the chosen document (ids, and per question the scored documents)."""
    from sac.retrieval.document_ranking import document_scores

    method = parse_method("sac-generic")
    snap = snapshot.snapshot(wb.client, wb.index(CORPUS, method))
    summaries = snapshot.summary_texts(snap, method, wb.summary_store)
    docs = snap.documents
    svec = wb.embedder.embed_documents([summaries[d] for d in docs])
    doc_bm25 = _okapi([f"{summaries.get(d, '')}\n{snap.document_text(d)}" for d in docs])
    bounds = snap.doc_bounds
    out = []
    for query in nli.queries:
        q = wb.embedder.embed_documents([query.text])[0]
        cos = snap.vectors @ q
        best = np.asarray([cos[slice(*bounds[d])].max() for d in docs])
        scored = document_scores(docs, best, summary=np.asarray(svec @ q), lexical=doc_bm25(query.text))
        chosen = scored[0][0]
        rows = np.arange(*bounds[chosen])
        order = sorted(rows, key=lambda r: (-cos[r], r))[:k]
        out.append(([snap.ids[r] for r in order], scored))
    return snap, out


@pytest.mark.slow
def test_docs1_routes_from_the_stores_and_returns_what_scoring_every_chunk_returns(routed_wb, nli):
    """+docs1 (and +docs1 with few nearest chunks, so that documents are scored on the bound and then exactly)
    gives the chunks the in-memory version gave, and neither it, +hybrid nor +names reads every record."""
    from sac.index.documents import document_index
    from sac.retrieval import document_ranking

    wb = Workbench(routed_wb.config, embedder=routed_wb.embedder)  # a new store client: nothing cached
    got = wb.search(CORPUS, parse_methods("sac-generic+docs1,sac-generic+hybrid0.75,sac-generic+docs1+names"),
                    [q.text for q in nli.queries], 16)
    assert not snapshot._snapshots.get(wb.client)  # no snapshot (no vector, no chunk text) was read for any option
    snap, exact = _exact_docs1(routed_wb, nli, 16)
    texts = dict(zip(snap.ids, snap.texts))
    for hits, (want, _) in zip(got["sac-generic+docs1"], exact):
        assert len(hits) == len(want)
        for h, cid in zip(hits, want):  # the same chunk, or one with the same text and cosine (identical chunks tie)
            assert h.chunk.chunk_id == cid or h.chunk.text == texts[cid]

    index = wb.index(CORPUS, parse_method("sac-generic"))
    lex = lexical_indexes(index, wb.summary_store, strategy="generic")
    summaries = document_index(index, wb.summary_store, strategy="generic", embedder=wb.embedder)
    agree = 0
    for query, (_, scored) in zip(nli.queries, exact):
        q = wb.embedder.embed_documents([query.text])[0]
        routed = document_ranking.rank_documents(index, lex, summaries, query.text, q, 1, nearest=8)
        chosen = routed.documents[0]
        assert list(routed.scores) == [chosen] and 0.0 <= routed.scores[chosen] <= 1.0  # its fused score, min-max
        agree += chosen == scored[0][0]
        known = [routed.cosines[cid] for cid in (lex["chunks"].ids[r] for r in lex["chunks"].rows([chosen]))
                 if cid in routed.cosines]
        exact_best = float((snap.vectors[np.arange(*snap.doc_bounds[chosen])] @ q).max())
        assert max(known) == pytest.approx(exact_best, abs=1e-5)  # the chosen document was scored exactly
    assert agree >= len(nli.queries) - 2  # the bound moves the min-max scaling of the others a little


@pytest.mark.slow
def test_the_substring_index_finds_exactly_the_texts_that_hold_a_string(demo_datasets):
    """``+names`` asks which documents' squashed texts hold a title or a name; the index reads only the texts whose
    signature can hold it and must answer as reading them all would."""
    import random

    from sac.index.substrings import SubstringIndex
    from sac.retrieval import names

    docs = [d for ds in demo_datasets.values() for d in ds.documents]
    texts = [names.squash(d.text) for d in docs] + ["laboratóriossa", "", "ab"]
    index = SubstringIndex(texts)
    keys = {k for ds in demo_datasets.values() for q in ds.queries
            for k in [names.squash(names.split_title(q.text)[0]), *names.squashed_names(q.text)]}
    rng = random.Random(7)
    for _ in range(300):  # pieces of the texts (held by one or several), and the same pieces changed a little
        text = rng.choice(texts[:-3])
        start = rng.randrange(len(text) - 40)
        piece = text[start:start + rng.randint(1, 40)]
        keys |= {piece, piece[:-1] + "q", piece + "zz"}
    keys |= {"tório", "laboratórios", "xyzzyq", ""}
    found = 0
    for key in sorted(keys):
        want = [i for i, text in enumerate(texts) if key in text]
        assert index.holding(key) == want, key
        found += 0 < len(want) < len(texts)
    assert found > 300  # most keys are held by some texts and not others: the signatures had to tell them apart


@pytest.mark.slow
def test_a_new_generation_derives_the_names_data_only_for_the_documents_that_changed(tmp_path, memo, nli, monkeypatch):
    """Adding a document makes a new lexical generation; its squashed text, substring signature and initials are
    made for that document alone, the others' taken from the generation it replaced (``LexicalIndex.previous``),
    and its words counted into that generation's vocabulary; the kept files are byte for byte what making them all
    anew gives (the vocabulary: the same, read back; its words in the order they were counted). On the 5 demo NDAs,
    4 built first."""
    from sac.retrieval import names, targets

    wb = Workbench(SacConfig(workspace=tmp_path / "workspace"), embedder=memo)
    methods = parse_methods("sac-generic")
    wb.build(CORPUS, nli.documents[:4], methods)
    read: list[str] = []
    for name in ("squash", "initials", "_tally"):
        real = getattr(names, name)
        monkeypatch.setattr(names, name, lambda text, real=real, name=name: read.append(name) or real(text))
    wb.build(CORPUS, nli.documents, methods)
    assert sorted(read) == ["_tally", "initials", "squash"]  # the fifth NDA's, once each
    monkeypatch.undo()

    index = wb.index(CORPUS, methods[0])
    current = json.loads((lexical_dir(index) / "current.json").read_text())
    documents = lexical_dir(index) / current["generation"] / "documents"
    kept = {p.name: p.read_bytes() for p in (documents / "derived").iterdir()}
    assert {name.rsplit("-", 1)[0] for name in kept} == {"evidence", "initials", "names_vocabulary",
                                                          "squashed_signatures", "squashed_texts"}
    assert not (documents / "previous").exists()  # what the generation before handed over, dropped once used
    shutil.rmtree(documents / "derived")
    lexical.forget(index)
    targets.prepare(lexical.for_method(index, wb.summary_store, methods[0]))  # all five made anew
    anew = {p.name: p.read_bytes() for p in (documents / "derived").iterdir()}
    assert anew.keys() == kept.keys()
    for name in kept:
        if name.startswith("names_vocabulary"):
            assert names.NameVocabulary.from_json(anew[name].decode()) == names.NameVocabulary.from_json(kept[name].decode())
        else:
            assert anew[name] == kept[name], name


@pytest.mark.slow
def test_the_names_data_are_kept_beside_the_generation_and_a_new_process_reads_them_back(routed_wb, nli, monkeypatch):
    """``Workbench.build`` makes what ``+names`` reads of every document (the vocabulary, the squashed texts and their
    substring signatures, the initials, each one's parties and title) and keeps it beside the lexical generation
    (sac.index.derived). A new process searches from those files without deriving any of it again, with the hits of
    making them anew; a damaged file is made again, and a file that other code kept (another version) is never read,
    and goes when this code keeps its own."""
    from sac.index import derived
    from sac.retrieval import names, targets

    method = parse_method("sac-generic+docs1+hybrid0.75+inner+names")
    queries = [q.text for q in nli.queries]
    index = routed_wb.index(CORPUS, method)
    current = json.loads((lexical_dir(index) / "current.json").read_text())
    kept = lexical_dir(index) / current["generation"] / "documents" / "derived"
    files = {p.name.rsplit("-", 1)[0]: p for p in kept.iterdir()}
    assert sorted(files) == ["evidence", "initials", "names_vocabulary", "squashed_signatures", "squashed_texts"]

    def search() -> list[list[str]]:
        lexical.forget(index)  # a new process: nothing derived in memory
        wb = Workbench(routed_wb.config, embedder=routed_wb.embedder)
        return [[h.chunk.chunk_id for h in hits] for hits in wb.search(CORPUS, [method], queries, 8)[method.name]]

    made = {name: path.read_bytes() for name, path in files.items()}
    with monkeypatch.context() as m:
        for owner, name in ((targets, "_evidence_line"), (names, "initials"), (names, "_tally")):
            m.setattr(owner, name, lambda *a, name=name: pytest.fail(f"{name} derived again"))
        from_files = search()
    shutil.rmtree(kept)  # made again, as a search of an index built before this was kept does
    assert search() == from_files
    again = {p.name.rsplit("-", 1)[0]: p.read_bytes() for p in kept.iterdir()}
    # The same bytes again; the initials only once a title needs them (none of these questions does).
    assert again == {name: data for name, data in made.items() if name != "initials"}

    files["names_vocabulary"].write_bytes(made["names_vocabulary"][:1000])  # cut short: made again
    np.save(kept / "spare.npy", np.zeros((2, 3), dtype=np.uint8))
    (kept / "spare.npy").replace(files["squashed_signatures"])  # signatures that fit no text: made again
    assert search() == from_files
    assert files["names_vocabulary"].read_bytes() == made["names_vocabulary"]
    assert files["squashed_signatures"].read_bytes() == made["squashed_signatures"]

    version = files["squashed_texts"].name.rsplit("-", 1)[1]
    other = kept / f"squashed_texts-{'0' * len(version)}"
    other.write_text("\n".join("x" for _ in range(len(nli.documents))))  # another version's texts: never read
    files["squashed_texts"].unlink()
    assert search() == from_files and files["squashed_texts"].read_bytes() == made["squashed_texts"]
    assert not other.exists()  # removed once this version's texts were kept again
    assert derived.code_version(derived) != version != "0" * len(version)

    import types  # code whose source cannot be read keeps nothing: it could not tell its own files from others'
    frozen = derived.Keep(derived.code_version(types.ModuleType("frozen")), write=pytest.fail, read=pytest.fail)
    assert frozen.version == "" and derived.kept(kept, "frozen", lambda: 7, frozen) == 7
    assert not list(kept.glob("frozen*"))
