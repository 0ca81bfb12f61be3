"""Reading documents, archives, benchmarks and pools: real generated files, real demo data."""

from __future__ import annotations

import io
import json
import logging
import os
import shutil
import struct
import subprocess
import sys
import tracemalloc
import uuid
import zipfile
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image, ImageDraw
from pypdf import PdfReader, PdfWriter

from sac.errors import CorpusError, NotABenchmarkError
from sac.ingest.archives import read_zip
from sac.ingest.benchmark import load_benchmark, load_benchmark_zip
from sac.ingest.pools import attach_pool, load_pool
from sac.ingest.readers import SUPPORTED_SUFFIXES, merge_documents, read_document_bytes, read_folder, read_path
from sac.types import Document
from tests.conftest import ROOT

DEMO = Path(__file__).parents[1] / "data" / "demo"
# The shared data folder sits beside the repository (for developers and in CI alike).
SOURCES = Path(os.environ.get("SAC_DATA_SOURCES", Path(__file__).resolve().parents[2] / "shared" / "data" / "sources"))

CONTRACT = (
    "This Supply Agreement is made between Acme Corp. and Widget Ltd.\n"
    "1. Term. The agreement runs for two years.\n"
    "2. Governing law. The laws of Delaware govern this agreement."
)


# ---------------------------------------------------------------- generated files


def make_pdf(pages: list[str]) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    return bytes(pdf.output())


def make_scanned_pdf() -> bytes:
    """A page that only holds a picture of text, like a scan."""
    image = Image.new("RGB", (600, 200), "white")
    ImageDraw.Draw(image).text((20, 80), "CONFIDENTIALITY AGREEMENT (scanned)", fill="black")
    pdf = FPDF()
    pdf.add_page()
    pdf.image(image, x=10, y=10, w=180)
    return bytes(pdf.output())


def encrypt_pdf(data: bytes, user_password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password="owner-secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx() -> bytes:
    document = docx.Document()
    document.add_heading("Mutual Non-Disclosure Agreement", level=1)
    document.add_paragraph("Between Alpha GmbH and Beta LLC.")
    table = document.add_table(rows=2, cols=2)
    table.cell(0, 0).text = "Term"
    table.cell(0, 1).text = "3 years"
    table.cell(1, 0).text = "Governing law"
    table.cell(1, 1).text = "Germany"
    document.add_paragraph("Signed in Berlin.")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def make_zip(members: list[tuple[str, bytes]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, payload in members:
            archive.writestr(zipfile.ZipInfo(name), payload, compress_type=zipfile.ZIP_DEFLATED)
    return out.getvalue()


@pytest.fixture(scope="module")
def bomb_zip() -> bytes:
    """A good member and 200 MB of zeros deflated to about 200 KB, built without holding 200 MB."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        archive.writestr("good.txt", CONTRACT)
        with archive.open("bomb.txt", "w") as handle:
            block = bytes(1 << 20)
            for _ in range(200):
                handle.write(block)
    return out.getvalue()


def lie_about_size(data: bytes, member: str, size: int) -> bytes:
    """Rewrite a member's uncompressed size in its local header and central directory entry."""
    raw = bytearray(data)
    info = zipfile.ZipFile(io.BytesIO(data)).getinfo(member)
    struct.pack_into("<I", raw, info.header_offset + 22, size)
    central = raw.find(b"PK\x01\x02" + raw[info.header_offset + 4: info.header_offset + 6])
    while raw[central + 46: central + 46 + len(member)] != member.encode():
        central = raw.find(b"PK\x01\x02", central + 4)
    struct.pack_into("<I", raw, central + 24, size)
    return bytes(raw)


# ---------------------------------------------------------------- formats


def test_pdf_text_layer_pages_joined_by_blank_line():
    doc = read_document_bytes("contract.pdf", make_pdf(["First page: the Supplier.", "Second page: the Buyer."]))
    assert doc.doc_id == "contract.pdf"
    assert doc.text == "First page: the Supplier.\n\nSecond page: the Buyer."


def test_docx_paragraphs_and_table_cells_in_order():
    doc = read_document_bytes("nda.docx", make_docx())
    assert doc.text == (
        "Mutual Non-Disclosure Agreement\nBetween Alpha GmbH and Beta LLC.\n"
        "Term\n3 years\nGoverning law\nGermany\nSigned in Berlin."
    )


def test_html_drops_script_and_style():
    html = (
        "<html><head><title>NDA</title><style>p { color: red }</style>"
        "<script>var secret = 'tracking';</script></head>"
        "<body><h1>Agreement</h1><p>The parties agree.</p><script>alert(1)</script></body></html>"
    )
    text = read_document_bytes("page.html", html.encode()).text
    assert "Agreement" in text and "The parties agree." in text
    assert "tracking" not in text and "alert" not in text and "color" not in text
    assert read_document_bytes("page.htm", html.encode()).text == text


def test_markdown_is_read_as_text():
    assert read_document_bytes("notes.md", b"# Title\n\n- item one\n").text == "# Title\n\n- item one\n"


def test_latin1_text_is_detected():
    text = (
        "Contrat de fourniture entre la Société Générale et la société Dupont.\n"
        "Article 5 : le débiteur doit payer à l'échéance ; à défaut, des intérêts courent.\n"
        "Fait à Paris, le 3 février, en deux exemplaires originaux. Größe: ½ page, © 2020.\n"
    )
    assert read_document_bytes("contrat.txt", text.encode("latin-1")).text == text


def test_utf8_bom_is_dropped_and_utf16_read():
    assert read_document_bytes("bom.txt", b"\xef\xbb\xbfClause 1.").text == "Clause 1."
    assert read_document_bytes("wide.txt", "Clause 1 — €5".encode("utf-16")).text == "Clause 1 — €5"


def test_line_breaks_are_normalised():
    doc = read_document_bytes("crlf.txt", b"line one\r\nline two\rline three\n")
    assert doc.text == "line one\nline two\nline three\n"


def test_read_path_and_folder(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_bytes(CONTRACT.encode())
    (tmp_path / "sub" / "b.pdf").write_bytes(make_pdf(["Page B"]))
    (tmp_path / "sub" / "broken.pdf").write_bytes(b"%PDF-1.7 nothing else")
    (tmp_path / "table.xlsx").write_bytes(b"PK\x03\x04")
    (tmp_path / ".DS_Store").write_bytes(b"\x00\x01")
    (tmp_path / "__MACOSX").mkdir()
    (tmp_path / "__MACOSX" / "._a.txt").write_bytes(b"\x00\x05")

    assert read_path(tmp_path / "a.txt").doc_id == "a.txt"
    documents, errors = read_folder(tmp_path)
    assert [d.doc_id for d in documents] == ["a.txt", "sub/b.pdf"]
    assert documents[1].text == "Page B" and documents[1].source == str(tmp_path / "sub" / "b.pdf")
    messages = sorted(str(e) for e in errors)
    assert len(messages) == 2
    assert "broken.pdf" in messages[0] and "truncated or corrupt" in messages[0]
    assert "table.xlsx" in messages[1] and ".txt, .md, .pdf, .docx, .html, .htm" in messages[1]
    flat, _ = read_folder(tmp_path, recursive=False)
    assert [d.doc_id for d in flat] == ["a.txt"]


# ---------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("data", [b"", b"  \n\t\r\n "])
def test_empty_file(data):
    with pytest.raises(CorpusError, match=r"^empty\.txt: is empty"):
        read_document_bytes("empty.txt", data)


def test_binary_file_named_txt():
    with pytest.raises(CorpusError, match=r"report\.txt: looks binary"):
        read_document_bytes("report.txt", make_docx())
    # A single NUL byte is enough: text files never hold one.
    with pytest.raises(CorpusError, match=r"dump\.txt: looks binary"):
        read_document_bytes("dump.txt", CONTRACT.encode() * 20 + b"\x00")


def test_undecodable_utf8_names_the_offset():
    data = "Clause 1: price in € only.".encode() + b"\xff\xfe trailing"
    with pytest.raises(CorpusError, match=r"price\.txt: .*byte offset 28"):
        read_document_bytes("price.txt", data)


def test_pdf_without_text_layer():
    with pytest.raises(CorpusError, match=r"scan\.pdf: has no text layer \(scanned\?\) — run OCR first"):
        read_document_bytes("scan.pdf", make_scanned_pdf())


def test_encrypted_pdf():
    locked = encrypt_pdf(make_pdf([CONTRACT]), user_password="secret")
    with pytest.raises(CorpusError, match=r"locked\.pdf: is encrypted"):
        read_document_bytes("locked.pdf", locked)
    # Only an owner password (restrictions, no password to open): the empty password opens it.
    restricted = encrypt_pdf(make_pdf([CONTRACT]), user_password="")
    assert "Acme Corp." in read_document_bytes("restricted.pdf", restricted).text


def test_truncated_pdf():
    data = make_pdf([CONTRACT, CONTRACT])
    with pytest.raises(CorpusError, match=r"cut\.pdf: cannot be read as a PDF, it may be truncated"):
        read_document_bytes("cut.pdf", data[: len(data) * 2 // 3])


_READ_A_BROKEN_PDF = """
import logging, sys
from sac.errors import CorpusError
from sac.ingest.readers import read_document_bytes
try:
    read_document_bytes("noise.pdf", bytes(range(256)) * 12)
except CorpusError as err:
    print(err)
print(logging.getLogger("pypdf").level)
"""


def test_a_broken_pdf_gives_one_clear_error_and_nothing_else_on_stderr():
    """pypdf logs its repair attempts ("invalid pdf header", "EOF marker not found") as warnings, which Python prints
    to stderr when the program configured no logging, as the CLI does not; the reader keeps them quiet and puts the
    logger's level back."""
    done = subprocess.run([sys.executable, "-c", _READ_A_BROKEN_PDF], cwd=ROOT, capture_output=True, text=True,
                          timeout=120, check=True)
    assert done.stdout.startswith("noise.pdf: cannot be read as a PDF, it may be truncated or corrupt")
    assert done.stdout.splitlines()[-1] == str(logging.NOTSET) and done.stderr == ""


def test_corrupt_docx():
    data = bytearray(make_docx())
    data[len(data) // 2: len(data) // 2 + 200] = b"\x00" * 200  # damage the middle of the zip
    with pytest.raises(CorpusError, match=r"bad\.docx: cannot be read as a \.docx file"):
        read_document_bytes("bad.docx", bytes(data))
    with pytest.raises(CorpusError, match=r"plain\.docx: cannot be read as a \.docx file"):
        read_document_bytes("plain.docx", b"just some text, not a zip")


def test_over_size_file(tmp_path):
    with pytest.raises(CorpusError, match=r"big\.txt: 2,000 bytes is over the limit of 1,000 bytes"):
        read_document_bytes("big.txt", b"a" * 2000, max_bytes=1000)
    path = tmp_path / "big.txt"
    path.write_bytes(b"a" * 2000)
    with pytest.raises(CorpusError, match=r"big\.txt: 2,000 bytes is over the limit of 1,000"):
        read_path(path, max_bytes=1000)


def test_unsupported_suffix_lists_supported_ones():
    with pytest.raises(CorpusError, match=r"sheet\.xlsx: unsupported file type '\.xlsx'; supported: \.txt, \.md"):
        read_document_bytes("sheet.xlsx", b"data")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=3000), suffix=st.sampled_from(SUPPORTED_SUFFIXES))
def test_random_bytes_give_a_document_or_corpus_error(data, suffix):
    try:
        document = read_document_bytes(f"random{suffix}", data)
    except CorpusError as exc:
        assert f"random{suffix}" in str(exc)
    else:
        assert document.text.strip() and "\r" not in document.text


# ---------------------------------------------------------------- zip archives


def test_zip_reads_documents_in_memory_and_rejects_unsafe_names(tmp_path, monkeypatch):
    absolute = f"/tmp/sac-evil-{uuid.uuid4().hex}.txt"
    data = make_zip([
        ("contracts/a.txt", CONTRACT.encode()),
        ("contracts/b.pdf", make_pdf(["Page B"])),
        ("../evil.txt", b"escape"),
        ("contracts/../../evil2.txt", b"escape"),
        (absolute, b"absolute"),
        ("C:/evil.txt", b"drive"),
        ("..\\evil.txt", b"backslash"),
        ("contracts/", b""),
        ("__MACOSX/contracts/._a.txt", b"\x00\x05\x16\x07"),
        ("contracts/.DS_Store", b"\x00\x00\x00\x01Bud1"),
        ("contracts/sheet.xlsx", b"PK"),
    ])
    monkeypatch.chdir(tmp_path)
    documents, errors = read_zip(data, "upload.zip")
    assert [(d.doc_id, d.source) for d in documents] == [
        ("contracts/a.txt", "upload.zip:contracts/a.txt"),
        ("contracts/b.pdf", "upload.zip:contracts/b.pdf"),
    ]
    assert documents[0].text == CONTRACT
    messages = [str(e) for e in errors]
    for member, reason in [
        ("../evil.txt", "'..' in the path"),
        ("contracts/../../evil2.txt", "'..' in the path"),
        (absolute, "absolute path"),
        ("C:/evil.txt", "drive letter"),
        ("..\\evil.txt", "backslash"),
    ]:
        assert any(m.startswith(f"upload.zip:{member}: skipped, unsafe member name ({reason}") for m in messages)
    assert any("sheet.xlsx: unsupported file type" in m for m in messages)
    assert len(messages) == 6
    # Nothing was extracted anywhere.
    assert list(tmp_path.iterdir()) == []
    assert not Path(absolute).exists() and not (tmp_path.parent / "evil.txt").exists()


def test_zip_bomb_is_stopped_by_declared_size(bomb_zip):
    tracemalloc.start()
    documents, errors = read_zip(bomb_zip, "bomb.zip")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20  # bytes held, not seconds: nothing near the 200 MB it would inflate to
    assert [d.doc_id for d in documents] == ["good.txt"]
    assert [str(e) for e in errors] == [
        "bomb.zip:bomb.txt: 209,715,200 bytes uncompressed is over the limit of 52,428,800 bytes"
    ]
    # With a generous size limit the compression ratio still gives it away.
    _, errors = read_zip(bomb_zip, "bomb.zip", max_bytes=300 * 2**20)
    assert "compression ratio" in str(errors[0]) and "zip bomb" in str(errors[0])
    total = 200 * 2**20 + len(CONTRACT)
    expected = rf"bomb\.zip: would expand to {total:,} bytes, over the limit of 104,857,600"
    with pytest.raises(CorpusError, match=expected):
        read_zip(bomb_zip, "bomb.zip", max_total_bytes=100 * 2**20)


def test_zip_bomb_lying_about_its_size_is_stopped_while_reading(bomb_zip):
    liar = lie_about_size(bomb_zip, "bomb.txt", 1000)
    assert zipfile.ZipFile(io.BytesIO(liar)).getinfo("bomb.txt").file_size == 1000
    tracemalloc.start()
    documents, errors = read_zip(liar, "liar.zip")
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 20 * 2**20  # stopped while reading: nowhere near inflating 200 MB
    assert [d.doc_id for d in documents] == ["good.txt"]
    assert len(errors) == 1 and str(errors[0]).startswith("liar.zip:bomb.txt: cannot be read from the archive")


def test_zip_limits_on_members_and_compression_method():
    with pytest.raises(CorpusError, match=r"many\.zip: has 3 entries, over the limit of 2"):
        read_zip(make_zip([("a.txt", b"a"), ("b.txt", b"b"), ("c.txt", b"c")]), "many.zip", max_members=2)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_BZIP2) as archive:
        archive.writestr("a.txt", CONTRACT)
    _, errors = read_zip(out.getvalue(), "bz.zip")
    assert "unsupported compression method" in str(errors[0])
    with pytest.raises(CorpusError, match=r"not\.zip: is not a readable zip archive"):
        read_zip(b"plain text", "not.zip")


def test_duplicate_document_ids():
    with pytest.warns(UserWarning, match="Duplicate name"):
        data = make_zip([("a.txt", b"first text"), ("a.txt", b"first text"), ("a.txt", b"other text")])
    documents, errors = read_zip(data, "dup.zip")
    assert [(d.doc_id, d.text) for d in documents] == [("a.txt", "first text")]
    assert len(errors) == 1 and "duplicate document id 'a.txt'" in str(errors[0])
    # The same name in two uploads: identical text is the same document, different text is an error.
    merged, errors = merge_documents(
        [Document("nda.txt", "v1", "upload1"), Document("x.txt", "x", "upload1")],
        [Document("nda.txt", "v1", "upload2")],
        [Document("nda.txt", "v2", "upload3")],
    )
    assert [d.doc_id for d in merged] == ["nda.txt", "x.txt"]
    assert [str(e) for e in errors] == [
        "upload3: duplicate document id 'nda.txt' with different text (already read from upload1); rename one of them"
    ]


# ---------------------------------------------------------------- benchmarks


def test_demo_benchmark_loads_and_checks():
    datasets = {d.name: d for d in load_benchmark(DEMO)}
    assert sorted(datasets) == ["contractnli", "cuad"]
    cuad, nli = datasets["cuad"], datasets["contractnli"]
    assert (len(cuad.queries), len(cuad.documents)) == (194, 29)
    assert (len(nli.queries), len(nli.documents)) == (52, 5)
    assert cuad.queries[0].query_id == "cuad-0000" and cuad.queries[-1].query_id == "cuad-0193"
    assert all(q.dataset == "cuad" for q in cuad.queries)
    texts = {d.doc_id: d.text for d in cuad.documents}
    raw = json.loads((DEMO / "benchmarks" / "cuad.json").read_text(encoding="utf-8"))
    for query, test in zip(cuad.queries, raw["tests"]):
        assert query.text == test["query"]
        for span, snippet in zip(query.gold, test["snippets"], strict=True):
            assert texts[span.doc_id][span.start:span.end] == snippet["answer"]
    # Corpus files are exact: same characters as on disk, no newline translation.
    first = cuad.documents[0]
    assert first.text == (DEMO / "corpus" / first.doc_id).read_bytes().decode("utf-8")
    assert [d.name for d in load_benchmark(DEMO, datasets=["contractnli"])] == ["contractnli"]


def test_unknown_dataset_lists_available():
    with pytest.raises(CorpusError, match=r"unknown dataset\(s\) 'maud'; available: contractnli, cuad"):
        load_benchmark(DEMO, datasets=["maud"])


@pytest.fixture
def demo_copy(tmp_path) -> Path:
    root = tmp_path / "bench"
    shutil.copytree(DEMO, root)
    return root


def edit_tests(root: Path, dataset: str, edit) -> None:
    path = root / "benchmarks" / f"{dataset}.json"
    payload = json.loads(path.read_text(encoding="utf-8"))
    edit(payload)
    path.write_text(json.dumps(payload), encoding="utf-8")


def test_tampered_span_names_test_and_file(demo_copy):
    def shift(payload):
        snippet = payload["tests"][7]["snippets"][0]
        snippet["span"] = [snippet["span"][0] + 1, snippet["span"][1] + 1]

    edit_tests(demo_copy, "cuad", shift)
    raw = json.loads((demo_copy / "benchmarks" / "cuad.json").read_text(encoding="utf-8"))
    file_path = raw["tests"][7]["snippets"][0]["file_path"]
    with pytest.raises(CorpusError) as info:
        load_benchmark(demo_copy)
    message = str(info.value)
    assert "dataset 'cuad', test 7" in message and repr(file_path) in message
    assert raw["tests"][7]["query"][:40] in message and "does not match the answer" in message


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda p: p.pop("tests"), r"missing the top-level \"tests\" list"),
        (lambda p: p["tests"][3].pop("query"), r"test 3: missing \"query\""),
        (lambda p: p["tests"][4]["snippets"][0].pop("span"), r"test 4 .*snippet 0 in .*missing \"span\""),
        (lambda p: p["tests"][5]["snippets"][0].update(span=[10, 5]), r"test 5 .*span \[10, 5\] is outside"),
        (lambda p: p["tests"][6]["snippets"][0].update(file_path="contractnli/nope.txt"),
         r"test 6 .*file 'contractnli/nope\.txt' is not in the corpus"),
        (lambda p: p["tests"][8].update(snippets=[]), r"test 8 .*missing \"snippets\""),
    ],
)
def test_malformed_benchmark_fields(demo_copy, edit, expected):
    edit_tests(demo_copy, "contractnli", edit)
    with pytest.raises(CorpusError, match=r"contractnli\.json: .*" + expected):
        load_benchmark(demo_copy, datasets=["contractnli"])


def test_malformed_json_and_missing_folders(demo_copy, tmp_path):
    (demo_copy / "benchmarks" / "cuad.json").write_text('{"tests": [', encoding="utf-8")
    with pytest.raises(CorpusError, match=r"cuad\.json: is not valid JSON \(Expecting value at line 1"):
        load_benchmark(demo_copy)
    shutil.rmtree(demo_copy / "corpus" / "contractnli")
    with pytest.raises(CorpusError, match=r"has no corpus/contractnli/ folder"):
        load_benchmark(demo_copy, datasets=["contractnli"])
    with pytest.raises(CorpusError, match=r"has no benchmarks/ folder"):
        load_benchmark(tmp_path / "nowhere")


def zip_folder(root: Path, prefix: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, prefix + path.relative_to(root).as_posix())
    return out.getvalue()


@pytest.mark.parametrize("prefix", ["", "legalbench-mini/"])
def test_benchmark_zip_matches_folder(prefix):
    data = zip_folder(DEMO, prefix)
    from_zip = load_benchmark_zip(data, "demo.zip")
    from_folder = load_benchmark(DEMO)
    assert [d.name for d in from_zip] == [d.name for d in from_folder]
    for a, b in zip(from_zip, from_folder):
        assert [(d.doc_id, d.text) for d in a.documents] == [(d.doc_id, d.text) for d in b.documents]
        assert a.queries == b.queries
    # As a plain upload, the JSON files are not documents and doc ids match the benchmark's file paths.
    documents, errors = read_zip(data, "demo.zip")
    assert [e for e in errors if "README.md" not in str(e)] == []
    corpus_ids = sorted(d.doc_id for ds in from_folder for d in ds.documents)
    assert sorted(d.doc_id for d in documents if d.doc_id != f"{prefix}README.md") == corpus_ids


def test_benchmark_zip_checks_spans_too(demo_copy):
    edit_tests(demo_copy, "contractnli", lambda p: p["tests"][2]["snippets"][0].update(answer="wrong"))
    with pytest.raises(CorpusError, match=r"dataset 'contractnli', test 2 .*does not match the answer"):
        load_benchmark_zip(zip_folder(demo_copy, ""), "bench.zip")
    with pytest.raises(NotABenchmarkError, match=r"plain\.zip: is not a LegalBench-RAG archive"):
        load_benchmark_zip(make_zip([("a.txt", b"text")]), "plain.zip")


# ---------------------------------------------------------------- pools


def test_nda_pool_drops_the_benchmark_documents():
    nli = load_benchmark(DEMO, datasets=["contractnli"])[0]
    sources = [SOURCES / "contractnli" / "test.json", SOURCES / "contractnli" / "dev.json"]
    # 123 + 61 = 184 NDAs hold 183 distinct texts (CBP...October2018.txt and dhs-nda.txt are the same
    # text); the 5 demo NDAs are among them, which leaves 178 distractors.
    assert len(load_pool(sources)) == 183
    pool = load_pool(sources, exclude=nli.documents)
    assert len(pool) == 178
    ids = [d.doc_id for d in pool]
    assert ids == sorted(ids) and all(i.startswith("pool/contractnli/") for i in ids)
    assert "pool/contractnli/064-19 Non Disclosure Agreement 2019.txt" in ids  # file name stripped
    assert "pool/contractnli/CBP%20Non-Disclosure%20Form_October2018.txt" in ids
    assert "pool/contractnli/dhs-nda.txt" not in ids
    assert not {d.text for d in pool} & {d.text for d in nli.documents}
    # The CLI and the Evaluate page add a pool through attach_pool: every dataset gets the same 178.
    [with_pool] = attach_pool([nli], sources)
    assert with_pool.distractors == tuple(pool) and with_pool.queries == nli.queries
    assert attach_pool([nli], []) == [nli]


def test_cuad_pool_drops_the_benchmark_documents():
    cuad = load_benchmark(DEMO, datasets=["cuad"])[0]
    folder = SOURCES / "cuad_v1" / "full_contract_txt"
    pool = load_pool([folder], exclude=cuad.documents)
    # 510 contracts, one byte-identical pair (ADUROBIOTECH ... CONSULTING AGREEMENT and its "(1)" copy),
    # and the 29 demo contracts are copies of files there: 510 - 1 - 29 = 480.
    assert len(pool) == 480
    assert all(d.doc_id.startswith("pool/full_contract_txt/") for d in pool)
    assert not {d.text for d in pool} & {d.text for d in cuad.documents}


def test_pool_from_folder_and_contractnli_json(tmp_path):
    folder = tmp_path / "ndas"
    folder.mkdir()
    (folder / "one.txt").write_text("NDA one.", encoding="utf-8")
    (folder / "two.txt").write_bytes(b"NDA two.\r\n")
    (folder / "copy.txt").write_text("NDA one.", encoding="utf-8")
    nli = tmp_path / "nli.json"
    nli.write_text(json.dumps({"documents": [
        {"file_name": " three.txt", "text": "NDA three."},
        {"file_name": "two-again.txt", "text": "NDA two.\n"},
        {"file_name": "target.txt", "text": "The benchmark NDA."},
    ]}), encoding="utf-8")
    pool = load_pool([folder, nli], exclude=[Document("contractnli/target.txt", "The benchmark NDA.")])
    assert [d.doc_id for d in pool] == [
        "pool/contractnli/three.txt", "pool/contractnli/two-again.txt", "pool/ndas/copy.txt",
    ]
    # "copy.txt" sorts before "one.txt" and keeps the text; "two.txt" normalises to "two-again.txt"'s text.
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"documents": [{"text": "no name"}]}), encoding="utf-8")
    with pytest.raises(CorpusError, match=r"bad\.json: document 0 is missing \"file_name\""):
        load_pool([bad])
