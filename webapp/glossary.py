"""The page list, the glossary, and ``page_setup``: every page's first call."""

from __future__ import annotations

import streamlit as st

from sac.errors import SacError
from sac.usecases.workbench import preload
from webapp.jobs import job_panel
from webapp.matters import matter_gate, matter_param
from webapp.settings import root_config
from webapp.signin import sign_in_gate, signed_in_panel

PAGES = (
    ("app.py", "Home", ":material/home:"),
    ("pages/1_Corpus.py", "Corpus", ":material/upload_file:"),
    ("pages/2_Summaries.py", "Summaries", ":material/edit_note:"),
    ("pages/3_Compare.py", "Compare", ":material/compare:"),
    ("pages/4_Evaluate.py", "Evaluate", ":material/monitoring:"),
    ("pages/5_Review.py", "Review", ":material/rate_review:"),
    ("pages/6_Embedding_map.py", "Embedding map", ":material/scatter_plot:"),
    ("pages/7_Audit_trail.py", "Audit trail", ":material/history:"),
    ("pages/8_Survey.py", "Survey", ":material/table_view:"),
    ("pages/9_Reader.py", "Reader", ":material/menu_book:"),
)
GLOSSARY = """
**DRM** (document-level retrieval mismatch): the share of retrieved chunks that come from a document other
than the question's. Lower is better.

**k**: how many chunks a method retrieves for a question (its top k). Figures are given at k = 1 … 64 and as
their mean over k.

**SAC** (summary-augmented chunking): one short summary per document is put in front of each of its chunks
before embedding; the chunk still points at its exact characters in the original text.
**baseline**: no summary. **sac-generic**: a generic summary. **sac-expert**: an expert-guided summary
(document type, then a legal template). **-llm**: the summaries come from a language model.

**precision / recall**: the share of retrieved characters that lie inside the answer / the share of the
answer's characters that were retrieved. "—": not measurable (no known answer).

**score** (on a hit): the cosine similarity of the chunk's embedded text to the question; under `+hybrid<w>`
(`recommended` among them) the fused score `w × cosine + (1 − w) × BM25`, each scaled to 0…1 over the candidates,
so it ranks hits within one column and is not comparable across columns.

**chunking**: *merged* (default) splits like the paper, then joins pieces with fewer than 25 non-space
characters to a neighbour; *paper* is the paper's splitter exactly. Index key `c500o0m25` = chunks of 500
characters, overlap 0, merged at 25 (`c500o0`: the paper's splitter).

**silhouette**: how clearly a method's chunk embeddings fall into one cluster per document, from −1 to 1;
higher means documents sit further apart (fewer wrong-document hits).

**wrong-document neighbours**: the share of a chunk's 8 nearest chunks that belong to another document.
"""


def page_setup(title: str | None, icon: str) -> None:
    """Set up a page: every page's first call.

    The browser tab, the sign-in and matter gates, the embedding model's libraries importing in the background
    (``preload``), the sidebar navigation (Home, not the file name), the glossary and the build panel.
    """
    st.set_page_config(page_title=f"{title} · SAC Workbench" if title else "SAC Workbench", page_icon=icon,
                       layout="wide")
    sign_in_gate()
    matter_gate()
    try:
        preload(root_config().embedder)  # the model's libraries import while the user reads the page (once a process)
    except SacError:
        pass  # a bad setting: the page's own config() call shows it where the page can say what to fix
    with st.sidebar:
        for path, label, nav_icon in PAGES:
            st.page_link(path, label=label, icon=nav_icon, query_params=matter_param())
        with st.expander("Glossary", icon=":material/help:"):
            st.markdown(GLOSSARY)
        job_panel()
        signed_in_panel()
