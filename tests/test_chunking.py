"""Recursive splitter: exact spans that tile the text, LangChain-like merging."""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sac.chunking.split import DEFAULT_SEPARATORS, chunk_document, split_spans
from sac.errors import ConfigError
from sac.ingest.benchmark import load_benchmark
from sac.types import Document

DEMO = Path(__file__).parents[1] / "data" / "demo"

# Text made of the separators themselves, words and non-ASCII letters, so that every branch of the
# recursion (and long runs with no separator at all) shows up.
_pieces = st.sampled_from(["\n\n", "\n", "!", "?", ".", ":", ";", ",", " ", "\t", "a", "word", "é", "𝔘", "ß"])
texts = st.one_of(
    st.text(max_size=400),
    st.lists(_pieces, max_size=200).map("".join),
    st.text(alphabet=" \n\t\r", max_size=300),  # whitespace only
    st.integers(0, 3000).map(lambda n: "x" * n),  # long run with no separator
)


def assert_tiles(text: str, spans: list[tuple[int, int]], size: int) -> None:
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (_, e1), (s2, _) in pairwise(spans):
        assert e1 == s2
    assert all(0 < e - s <= size for s, e in spans)
    assert "".join(text[s:e] for s, e in spans) == text


@settings(max_examples=300, deadline=None)
@given(text=texts, size=st.integers(1, 120))
def test_spans_tile_any_text(text, size):
    assert_tiles(text, split_spans(text, chunk_size=size), size)


@settings(max_examples=300, deadline=None)
@given(text=texts, size=st.integers(2, 120), data=st.data())
def test_overlapping_spans_cover_text_within_size(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    spans = split_spans(text, chunk_size=size, chunk_overlap=overlap)
    if not text:
        assert spans == []
        return
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    for (s1, e1), (s2, e2) in pairwise(spans):
        assert s1 < s2 and e1 < e2  # strictly moving forward
        assert s2 <= e1  # no gap: the union covers the text
        assert e1 - s2 <= overlap  # never more overlap than asked for
    assert all(0 < e - s <= size for s, e in spans)


@settings(max_examples=100, deadline=None)
@given(text=texts, size=st.integers(1, 60))
def test_custom_separators_without_empty_string_still_respect_size(text, size):
    assert_tiles(text, split_spans(text, chunk_size=size, separators=(".", " ")), size)


def test_hand_checked_example():
    text = "Alpha beta.\n\nGamma delta epsilon zeta eta theta.\nIota."
    # "\n\n" splits into "Alpha beta.\n\n" (13) and the rest (40); the rest is too long for 20 and is
    # split on "\n": "Gamma delta epsilon zeta eta theta.\n" (36, still too long) and "Iota." (5).
    # The 36 characters hold no "!" or "?" but a "." at their end, so they split on "." into the
    # sentence (35) + "\n" (1); the sentence splits on " " and words merge greedily up to 20.
    assert [text[s:e] for s, e in split_spans(text, chunk_size=20)] == [
        "Alpha beta.\n\n",
        "Gamma delta epsilon ",
        "zeta eta theta.",
        "\n",
        "Iota.",
    ]


def test_hand_checked_overlap_example():
    text = "one two three four five six"
    # Words of 4-6 characters merge up to 14; the next chunk keeps trailing words of at most 6 characters.
    assert [text[s:e] for s, e in split_spans(text, chunk_size=14, chunk_overlap=6)] == [
        "one two three ",
        "three four ",
        "four five six",
    ]


def test_no_separator_falls_back_to_fixed_windows():
    assert split_spans("abcdefghij", chunk_size=4) == [(0, 4), (4, 8), (8, 10)]
    assert split_spans("abcdefghij", chunk_size=4, chunk_overlap=1) == [(0, 4), (3, 7), (6, 10)]


def test_default_separators_are_the_papers():
    assert DEFAULT_SEPARATORS == ("\n\n", "\n", "!", "?", ".", ":", ";", ",", " ", "")


@pytest.mark.parametrize(("size", "overlap"), [(0, 0), (-5, 0), (10, 10), (10, -1), (10, 11)])
def test_invalid_sizes_raise_config_error(size, overlap):
    with pytest.raises(ConfigError):
        split_spans("some text", chunk_size=size, chunk_overlap=overlap)


def test_chunk_document_carries_spans_and_exact_text():
    document = Document("demo/a.txt", "First sentence. Second sentence!\n\nThird paragraph.")
    # At size 20 the first paragraph (34) splits on "\n" into its sentences + "\n" (33) and "\n"; the 33
    # split on "!" (sentences 32 + "\n"), the 32 on "." (15 + 17). Pieces that were split at a deeper level
    # are never merged with their neighbours, hence the two one-character chunks (as in LangChain).
    chunks = chunk_document(document, chunk_size=20)
    assert [c.text for c in chunks] == ["First sentence.", " Second sentence!", "\n", "\n", "Third paragraph."]
    assert all(c.doc_id == "demo/a.txt" and document.text[c.span.start:c.span.end] == c.text for c in chunks)
    assert chunks[1].chunk_id == "demo/a.txt@15-32"
    assert [c.text for c in chunk_document(document, chunk_size=40)] == [
        "First sentence. Second sentence!\n\n",
        "Third paragraph.",
    ]


def test_demo_corpus_tiles_at_paper_setting():
    datasets = load_benchmark(DEMO)
    n_chunks = 0
    for dataset in datasets:
        for document in dataset.documents:
            chunks = chunk_document(document, chunk_size=500)
            assert "".join(c.text for c in chunks) == document.text
            assert all(0 < len(c.text) <= 500 for c in chunks)
            n_chunks += len(chunks)
    # 1,260,740 characters in 500-character chunks need at least 2,522 of them; separators cut earlier.
    assert n_chunks > 2522


# -- the default chunking: no blank chunks, exact spans, the paper's splitter one switch away ----------------------
@settings(max_examples=300, deadline=None)
@given(texts, st.integers(5, 80))
def test_default_chunking_tiles_with_no_blank_chunk(text, size):
    from sac.chunking.merge import index_chunks, is_small

    doc = Document("d", text)
    chunks = index_chunks(doc, size)
    if not text:
        assert chunks == []
        return
    assert "".join(c.text for c in chunks) == text
    assert chunks[0].span.start == 0 and chunks[-1].span.end == len(text)
    assert all(a.span.end == b.span.start for a, b in pairwise(chunks))
    assert all(c.text == text[c.span.start:c.span.end] for c in chunks)
    assert len(chunks) == 1 or not any(is_small(c.text, 25) for c in chunks)
    assert index_chunks(doc, size, chunking="paper") == chunk_document(doc, size)


def test_default_chunking_on_the_demo_joins_every_whitespace_and_tiny_piece():
    from sac.chunking.merge import index_chunks, is_small

    docs = [d for ds in load_benchmark(DEMO) for d in ds.documents]
    paper = [c for d in docs for c in chunk_document(d)]
    merged = [c for d in docs for c in index_chunks(d)]
    assert sum(is_small(c.text, 25) for c in paper) > 0.1 * len(paper)  # the paper's splitter leaves many
    assert sum(is_small(c.text, 25) for c in merged) == 0
    assert len(merged) < len(paper)
    assert max(len(c.text) for c in merged) <= 500 + 25


def test_chunking_setting_keys_indexes_apart_and_checks_overlap(monkeypatch):
    from sac.config import SacConfig

    assert SacConfig().chunking == "merged" and SacConfig().chunking_key == "c500o0m25"
    assert SacConfig(chunking="paper").chunking_key == "c500o0"
    monkeypatch.setenv("SAC_CHUNKING", "paper")
    assert SacConfig.from_env().chunking == "paper"
    with pytest.raises(ConfigError, match="'merged' .* or 'paper'"):
        SacConfig(chunking="fancy")
    with pytest.raises(ConfigError, match="chunk_overlap 50 needs chunking 'paper'"):
        SacConfig(chunk_overlap=50)
    assert SacConfig(chunk_overlap=50, chunking="paper").chunking_key == "c500o50"
