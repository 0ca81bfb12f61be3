"""``sac query``: one question against every method, each method's hits with what its search decided."""

from __future__ import annotations

import argparse

from sac.cli.common import ProgressBars, one_corpus, workbench_of
from sac.methods import method_label, parse_methods
from sac.render.trace import trace_notes
from sac.types import check_k, check_query
from sac.usecases.compare import search_question
from sac.usecases.names import display_names


def cmd_query(args: argparse.Namespace) -> int:
    """``sac query``: build the methods' indexes, then print each method's hits and what its search decided.

    With ``--target-doc``, hits from other documents are flagged ``WRONG-DOC``. What the search decided names contracts
    by their parties (``sac.usecases.names``), the file title beside.
    """
    text, k = check_query(args.text), check_k(args.k)  # before any index is built
    wb = workbench_of(args)
    methods = parse_methods(args.methods)
    name, documents = one_corpus(wb, args)
    wb.build(name, documents, methods, progress=ProgressBars(not args.quiet))
    found = search_question(wb, name, methods, text, k)
    pinned = frozenset([args.target_doc] if args.target_doc else [])
    titles = {doc_id: name.label for doc_id, name in display_names(documents).items()}  # contracts by their parties
    for method in methods:
        result = found[method.name]
        print(f"== {method_label(method.name)}")
        for label, note in trace_notes(result.trace, text, pinned, titles):
            print(f"   {label} {note}")
        for hit in result.hits:
            flag = ""
            if args.target_doc:
                flag = "  " if hit.span.doc_id == args.target_doc else "WRONG-DOC "
            chunk = " ".join(hit.chunk.text.split())
            print(f"{flag}{hit.rank:>3} {hit.score:.3f} {hit.span.doc_id} [{hit.span.start}, {hit.span.end}) {chunk[:100]}")
    return 0
