"""Three small hand-written contracts (each several chunks long, each with its own governing-law clause) indexed with
the real packaged model, for the survey, display-name and Reader tests: small enough to build in seconds."""

from __future__ import annotations

from pathlib import Path

from sac.config import SacConfig
from sac.methods import parse_methods
from sac.types import Document

CORPUS = "three-contracts"
METHODS = "baseline,sac-generic"
LAWS = {"accuray.txt": "the State of California", "flotek.txt": "the State of Texas", "venture.txt": "England and Wales"}

_CLAUSES = (
    "{n}. Term. This Agreement commences on the Effective Date and continues for {years} years, unless terminated "
    "earlier. Either party may renew it by written notice given ninety days before it expires.",
    "{n}. Payment. The {buyer} shall pay each invoice within thirty days of receipt. Late payments bear interest at one "
    "percent per month. All prices exclude taxes, which the {buyer} shall bear.",
    "{n}. Confidentiality. Each party shall keep the other party's confidential information secret and use it only to "
    "perform this Agreement, during its term and for five years after it ends.",
    "{n}. Governing Law. This Agreement shall be governed by and construed in accordance with the laws of {law}, "
    "without regard to its conflict of laws principles, and the courts there have exclusive jurisdiction.",
    "{n}. Notices. Notices shall be in writing and delivered by hand or by courier to the addresses given above; a "
    "notice is received on the day it is delivered.",
    "{n}. Assignment. Neither party may assign this Agreement without the prior written consent of the other party, "
    "which shall not be unreasonably withheld.",
)


def contract(title: str, opening: str, buyer: str, law: str, years: int) -> str:
    """A short contract: a title, the clause naming the parties, then six clauses of a few hundred characters."""
    body = "\n\n".join(c.format(n=i, years=years, buyer=buyer, law=law) for i, c in enumerate(_CLAUSES, start=1))
    return f"{title}\n\n{opening}\n\n{body}\n"


def documents() -> list[Document]:
    """The three contracts, ids as an upload names them."""
    texts = {
        "accuray.txt": contract(
            "DISTRIBUTOR AGREEMENT",
            'This Distributor Agreement is made on 1 May 2010 between Accuray Incorporated, a Delaware corporation '
            '("Accuray"), and Siemens AG, a German company ("Siemens").', "Distributor", LAWS["accuray.txt"], 3),
        "flotek.txt": contract(
            "SUPPLY AGREEMENT",
            'This Supply Agreement is entered into on 28 February 2019 by and between Florida Chemical Company, LLC '
            '("FCC") and Flotek Chemistry, LLC ("Flotek").', "Buyer", LAWS["flotek.txt"], 5),
        "venture.txt": contract(
            "JOINT VENTURE AGREEMENT",
            'This Joint Venture Agreement is dated 18 March 2003 and made between Tate & Lyle Fermentation Products '
            'Ltd. ("Tate") and Igene Biotechnology, Inc. ("Igene").', "Venture", LAWS["venture.txt"], 10),
    }
    return [Document(name, text) for name, text in texts.items()]


def build(workspace: Path, embedder: object) -> list[Document]:
    """The three contracts added to ``workspace`` as corpus ``CORPUS`` and indexed with ``METHODS``."""
    from sac.usecases.workbench import Workbench
    from sac.workspace import Workspace

    docs = Workspace(workspace).add_documents(CORPUS, documents())
    Workbench(SacConfig(workspace=workspace), embedder=embedder).build(CORPUS, docs, parse_methods(METHODS))
    return docs
