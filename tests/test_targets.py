"""Target resolution (sac.retrieval.targets): which contract a question means, how sure, from what clues, in a corpus
of any size; on real contracts, through the documents' lexical index as a search builds it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from sac.index.lexical import LexicalIndex, Lexicon, tokenize
from sac.ingest.benchmark import load_benchmark
from sac.render import trace as render_trace
from sac.retrieval import targets
from sac.summaries import facts
from sac.types import Document

ROOT = Path(__file__).resolve().parents[1]
CUAD = ROOT.parent / "shared" / "data" / "sources" / "cuad_v1" / "full_contract_txt"
# Six distributor, supply and licence agreements; only Accuray's writes "Siemens".
SIX = ["ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT.txt",
       "BIOFRONTERAAG_04_29_2019-EX-4.17-SUPPLY AGREEMENT.txt",
       "IPAYMENT,INC_05_14_2007-EX-10.1-SPONSORSHIP AGREEMENT.txt",
       "JOINTCORP_09_19_2014-EX-10.15-FRANCHISE AGREEMENT.txt",
       "URSCORPNEW_03_17_2014-EX-99-COOPERATION AGREEMENT.txt",
       "PHLVARIABLEINSURANCECOCT_08_17_2009-EX-10.1-STRATEGIC ALLIANCE AGREEMENT.txt"]


def corpus(documents: list[Document]) -> LexicalIndex:
    """The documents lexical index of a corpus, in memory, as a build makes it."""
    return LexicalIndex("documents", [d.doc_id for d in documents], [d.doc_id for d in documents],
                        [d.content_hash for d in documents], Lexicon.from_tokens([tokenize(d.text) for d in documents]),
                        texts=[d.text for d in documents])


@pytest.fixture(scope="module")
def six() -> LexicalIndex:
    if not CUAD.is_dir():
        pytest.fail(f"CUAD sources not found at {CUAD}: these tests need ../shared/data beside the checkout")
    return corpus([Document(name, (CUAD / name).read_text(encoding="utf-8")) for name in SIX])


@pytest.fixture(scope="module")
def ndas() -> LexicalIndex:
    [ds] = load_benchmark(ROOT / "data" / "demo", ["contractnli"])
    return corpus(list(ds.documents))


def test_a_party_one_of_six_contracts_writes_names_it_for_sure(six):
    """The user's corpus of six: "Siemens" is written in one of them, so that one is the target, with confidence,
    and the question is searched inside it alone."""
    resolved = targets.resolve_targets(six, "Which law governs the Siemens distributor agreement?", 1, file_names=False)
    assert resolved.confident and resolved.target is not None and resolved.target.doc_id == SIX[0]
    assert resolved.search_inside == 1 and resolved.likely == (SIX[0],)
    clue = next(m for m in resolved.target.matches if m.word == "siemens")
    assert clue.holders == 1 and six.document_texts()[0][clue.at:clue.at + 7].lower() == "siemens"


def test_a_question_that_names_no_contract_is_searched_across_all(six):
    """Type and role words ("distributor", "agreement", "governing law") say what kind of contract, not which."""
    resolved = targets.resolve_targets(six, "Which law governs the distributor agreement?", 1, file_names=False)
    assert not resolved.likely and resolved.search_inside == 0 and not resolved.confident


def test_two_contracts_that_write_the_same_name_are_candidates_not_a_silent_pick(ndas):
    """Both the VELCO and the CEII NDAs write "Critical Energy Infrastructure Information": neither is sure, both are
    offered and searched (a question without a title is searched inside each likely candidate)."""
    resolved = targets.resolve_targets(ndas, "Who may receive CriticalEnergyInfrastructureInformation?", 1,
                                       file_names=False)
    assert not resolved.confident and len(resolved.likely) == 2 and resolved.search_inside == 2
    assert {c.doc_id.rsplit("/", 1)[-1] for c in resolved.candidates[:2]} == {"VELCO%20NDA%20rev0%20Dec%2014%202015.txt",
                                                                            "ceii-and-nda.txt"}
    assert abs(resolved.candidates[0].probability - resolved.candidates[1].probability) < 0.2


def test_the_same_clue_is_less_sure_in_a_larger_corpus():
    """A word three documents share gives each a third of what one document holding it alone gets."""
    w = targets.WEIGHTS["text"]
    alone, _ = targets.probabilities(np.array([w + targets.WEIGHTS["alone"]]), 6, targets.NULL_SCORE)
    shared, _ = targets.probabilities(np.array([w, w, w]), 6, targets.NULL_SCORE)
    assert alone[0] > shared[0] and shared.sum() < 1 and np.allclose(shared, shared[0])
    small, _ = targets.probabilities(np.array([w]), 6, targets.NULL_SCORE)
    large, _ = targets.probabilities(np.array([w]), 10_000, targets.NULL_SCORE)
    assert small[0] > large[0]


def test_a_clue_no_other_document_holds_is_no_less_sure_in_a_larger_corpus():
    """Every document starts equally likely, so the one clue that points to one document of 250 must outweigh 249
    others: ``alone_ln_corpus`` grows with the corpus, and the same clue held alone is at least as sure among 250
    contracts as among 6 (without it, a word only one of 251 CUAD contracts writes gave its contract 22 %)."""
    from sac.retrieval.trace import Match

    clue = [Match("azul", "text", "Azul", 0, 1)]
    sure = {}
    for n in (6, 250, 10_000):
        x = targets.features(clue, n)
        assert x["alone"] == 1 and x["alone_ln_corpus"] == pytest.approx(np.log(n))
        score = sum(targets.WEIGHTS[f] * v for f, v in x.items())
        sure[n] = targets.probabilities(np.array([score]), n, targets.NULL_SCORE)[0][0]
    assert sure[6] <= sure[250] <= sure[10_000] and sure[250] >= targets.CONFIDENT


def test_the_model_holds_the_fit_stored_from_the_dev_split():
    """The weights, the none option (and its lift per unheld word) and the sure threshold are the stored dev fit
    (bench/target_model.py fit)."""
    stored = json.loads((ROOT / "bench" / "results" / "target-model-dev.json").read_text(encoding="utf-8"))
    assert stored["split"] == "dev"
    assert targets.WEIGHTS == stored["weights"] and targets.NULL_SCORE == stored["null_score"]
    assert targets.UNHELD_WEIGHT == stored["unheld_weight"]
    assert targets.CONFIDENT == stored["confident"] and targets.LIKELY == stored["likely"]


def test_a_party_that_starts_a_squashed_filer_name_points_to_its_contract():
    """FLOTEKINDUSTRIESINCCN is written nowhere whole; Flotek's supply agreement names its party "Flotek Chemistry,
    LLC", whose first word starts the filer's name. "European" starts EUROPEANMICROHOLDINGSINC and Accuray's
    distributor agreement writes it, but as no party's name and not in its head ("Europe" is there, a shorter start
    and another word): no clue, and no sure pick of a contract not in the corpus."""
    flotek = "FLOTEKINDUSTRIESINCCN_05_09_2019-EX-10.1-SUPPLY AGREEMENT.txt"
    seven = corpus([Document(name, (CUAD / name).read_text(encoding="utf-8")) for name in [*SIX, flotek]])
    resolved = targets.resolve_targets(seven, f"Consider {flotek[:-4]}; what is the term?", 1, file_names=True)
    top = resolved.candidates[0]
    [start] = [m for m in top.matches if m.kind == "start"]
    assert top.doc_id == flotek and (start.word, start.found, start.holders) == ("flotek", "Flotek Chemistry, LLC", 1)
    assert seven.document_texts()[-1][start.at:start.at + len(start.found)] == start.found
    assert "its party “Flotek Chemistry, LLC” starts the company name asked" in render_trace._clues(top)
    absent = targets.resolve_targets(
        seven, "Consider EUROPEANMICROHOLDINGSINC_01_01_2000-EX-10-DISTRIBUTOR AGREEMENT; who pays?", 1, file_names=True)
    assert "european" in seven.document_texts()[0].casefold()
    assert not absent.confident and not any(m.kind in ("start", "text_start")
                                            for c in absent.candidates for m in c.matches)
    assert "europe" in seven.document_texts()[0][:facts.HEAD_CHARS].casefold()
    whole = targets.evidence(seven, "Consider ACCURAYINC_09_01_2010-EX-10.31-DISTRIBUTOR AGREEMENT; who pays?")
    assert {m.kind for m in whole[SIX[0]]} >= {"name"} and not any(m.kind == "start" for m in whole[SIX[0]])


def test_a_start_of_the_filer_name_written_in_a_contracts_head_points_to_it(six):
    """RUBIOSRESTAURANTSINC is written nowhere whole, and Rubio's sponsorship agreement names its sponsor in a form
    layout ("SPONSOR: Name: Rubio's Fresh Mexican Grill") that no party extraction reads; its head writes the name's
    start "Rubio's" as words, which no other of seven contracts writes: the contract is found, for sure, from that."""
    rubios = "RUBIOSRESTAURANTSINC_03_31_2008-EX-10.75-SPONSORSHIP AGREEMENT.txt"
    seven = corpus([*(Document(d, t) for d, t in zip(six.ids, six.document_texts())),
                    Document(rubios, (CUAD / rubios).read_text(encoding="utf-8"))])
    resolved = targets.resolve_targets(seven, f"Consider {rubios[:-4]}; what is the term?", 1, file_names=True)
    top = resolved.candidates[0]
    assert top.doc_id == rubios and resolved.confident
    assert not any(m.kind == "start" for m in top.matches)  # no party of it starts the name
    [start] = [m for m in top.matches if m.kind == "text_start"]
    assert (start.word, start.found, start.holders) == ("rubios", "Rubio's", 1)
    assert seven.document_texts()[-1][start.at:start.at + len(start.found)] == "Rubio's" and start.at < facts.HEAD_CHARS
    assert "writes “Rubio's”, the start of the company name asked" in render_trace._clues(top, file_names=True)
    assert targets.unheld(seven, f"Consider {rubios[:-4]}; what is the term?") == 0


def test_a_start_of_type_words_alone_is_no_start(six, ndas):
    """A file name that opens with the document's type ("NonDisclosureAgreementNDASAMITT20190002v2"), asked of six
    CUAD contracts and one NDA: the NDA's head writes that name's start "Non-Disclosure Agreement" as words, and so
    does one franchise agreement's, but type words say what kind of document, not which: no clue from it, and no
    sure pick."""
    [nda] = [d for d in ndas.ids if d.endswith("AGProjects-NDA.txt")]
    seven = corpus([*(Document(d, t) for d, t in zip(six.ids, six.document_texts())),
                    Document(nda, ndas.document_texts()[ndas.ids.index(nda)])])
    asked = "Consider the NonDisclosureAgreementNDASAMITT20190002v2; who may receive it?"
    heads = [text[:facts.HEAD_CHARS].casefold() for text in seven.document_texts()]
    writers = [i for i, head in enumerate(heads) if "non-disclosure agreement" in head]
    assert 6 in writers and len(writers) <= targets.MAX_SHARE * len(heads)  # few enough to be a clue, were it one
    clues = targets.evidence(seven, asked)
    assert not any(m.kind == "text_start" for found in clues.values() for m in found)
    assert not targets.resolve_targets(seven, asked, 1, file_names=True).confident
