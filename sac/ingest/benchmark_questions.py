"""Question wording of the benchmark builders (``sac.ingest.builders``).

The wording is LegalBench-RAG's (Pipitone and Alami, 2024; code MIT): ``generate_cuad.py`` and
``generate_contractnli.py`` of its generator, so that questions built from the full source datasets read
exactly like the mini benchmark's. Source Code Escrow and Liquidated Damages, which LegalBench-RAG leaves
out, are worded the same way here.
"""

from __future__ import annotations

# master_clauses.csv category -> question; the order (the csv's column order) is the test order.
CUAD_QUESTIONS: dict[str, str] = {
    "Expiration Date": "What is the expiration date of this contract?",
    "Renewal Term": "What is the renewal term for this contract?",
    "Notice Period To Terminate Renewal": "What is the notice period required to terminate the renewal?",
    "Governing Law": "What is the governing law for this contract?",
    "Most Favored Nation": "Is there a most favored nation clause in this contract?",
    "Competitive Restriction Exception": "Are there any exceptions to competitive restrictions in this contract?",
    "Non-Compete": "Is there a non-compete clause in this contract?",
    "Exclusivity": "Does this contract include an exclusivity agreement?",
    "No-Solicit Of Customers": "Is there a clause preventing the solicitation of customers in this contract?",
    "No-Solicit Of Employees": "Is there a clause preventing the solicitation of employees in this contract?",
    "Non-Disparagement": "Is there a non-disparagement clause in this contract?",
    "Termination For Convenience": "Can this contract be terminated for convenience, and under what conditions?",
    "Rofr/Rofo/Rofn": "Does this contract include any right of first refusal, right of first offer, or right of "
                      "first negotiation?",
    "Change Of Control": "What happens in the event of a change of control of one of the parties in this contract?",
    "Anti-Assignment": "Is there an anti-assignment clause in this contract?",
    "Revenue/Profit Sharing": "Does this contract include any revenue or profit-sharing arrangements?",
    "Price Restrictions": "Are there any price restrictions or controls specified in this contract?",
    "Minimum Commitment": "Is there a minimum commitment required under this contract?",
    "Volume Restriction": "Does this contract include any volume restrictions?",
    "Ip Ownership Assignment": "How is intellectual property ownership assigned in this contract?",
    "Joint Ip Ownership": "Does this contract provide for joint intellectual property ownership?",
    "License Grant": "What licenses are granted under this contract?",
    "Non-Transferable License": "Are the licenses granted under this contract non-transferable?",
    "Affiliate License-Licensor": "Does the licensor's affiliates have any licensing rights under this contract?",
    "Affiliate License-Licensee": "Does the licensee's affiliates have any licensing rights under this contract?",
    "Unlimited/All-You-Can-Eat-License": "Does this contract include an unlimited or all-you-can-eat license?",
    "Irrevocable Or Perpetual License": "Are any of the licenses granted under this contract irrevocable or perpetual?",
    "Source Code Escrow": "Is there a source code escrow clause in this contract?",
    "Post-Termination Services": "Are there any services to be provided after the termination of this contract?",
    "Audit Rights": "What are the audit rights under this contract?",
    "Uncapped Liability": "Is there uncapped liability under this contract?",
    "Cap On Liability": "Is there a cap on liability under this contract?",
    "Liquidated Damages": "Is there a liquidated damages clause in this contract?",
    "Warranty Duration": "What is the duration of any warranties provided in this contract?",
    "Insurance": "What are the insurance requirements under this contract?",
    "Covenant Not To Sue": "Is there a covenant not to sue included in this contract?",
    "Third Party Beneficiary": "Are there any third-party beneficiaries designated in this contract?",
}

# ContractNLI hypothesis id -> question; builders.hypothesis_question() words an unknown id.
CONTRACTNLI_QUESTIONS: dict[str, str] = {
    "nda-1": "Does the document require that all Confidential Information be expressly identified by the "
             "Disclosing Party?",
    "nda-2": "Does the document state that Confidential Information shall only include technical information?",
    "nda-3": "Does the document allow verbally conveyed information to be considered as Confidential Information?",
    "nda-4": "Does the document restrict the use of Confidential Information to the purposes stated in the Agreement?",
    "nda-5": "Does the document allow the Receiving Party to share some Confidential Information with their "
             "employees?",
    "nda-7": "Does the document allow the Receiving Party to share some Confidential Information with third parties, "
             "including consultants, agents, and professional advisors?",
    "nda-8": "Does the document require the Receiving Party to notify the Disclosing Party if they are required by "
             "law, regulation, or judicial process to disclose any Confidential Information?",
    "nda-10": "Does the document include a clause that prevents the Receiving Party from disclosing the fact that the "
              "Agreement was agreed upon or negotiated?",
    "nda-11": "Does the document mention whether or not the Receiving Party is allowed to reverse engineer any "
              "objects which embody the Disclosing Party's Confidential Information?",
    "nda-12": "Does the document allow the Receiving Party to independently develop information that is similar to "
              "the Confidential Information?",
    "nda-13": "Does the document allow the Receiving Party to acquire information similar to the Confidential "
              "Information from a third party?",
    "nda-15": "Does the document indicate that the Agreement does not grant the Receiving Party any rights to the "
              "Confidential Information?",
    "nda-16": "Does the document specify whether the Receiving Party is required to destroy or return Confidential "
              "Information upon the termination of the Agreement?",
    "nda-17": "Does the document permit the Receiving Party to create a copy of some Confidential Information under "
              "certain circumstances?",
    "nda-18": "Does the document include a clause that prohibits the Receiving Party from soliciting some of the "
              "Disclosing Party's representatives?",
    "nda-19": "Does the document mention that some obligations of the Agreement may survive the termination of the "
              "Agreement?",
    "nda-20": "Does the document permit the Receiving Party to retain some Confidential Information even after its "
              "return or destruction?",
}
