"""``sac remove``: remove documents, a corpus or a whole matter, leaving none of their text on disk."""

from __future__ import annotations

import argparse

from sac.cli.common import config_of, workbench_of
from sac.errors import ConfigError
from sac.usecases.matters import erase_matter
from sac.usecases.remove import remove_corpus, remove_documents


def cmd_remove(args: argparse.Namespace) -> int:
    """``sac remove``: remove documents of a corpus, a whole corpus (``--all``) or a whole matter (``--matter``)."""
    if args.matter:
        if args.corpus or args.doc_ids or args.all:
            raise ConfigError("--matter removes a whole matter: give it alone, without --corpus, DOC_ID or --all")
        done = erase_matter(config_of(args), args.matter)
        print(f"Removed matter {args.matter!r}: {done['files']:,} files"
              + (", and its database on the Chroma server" if done["server_database_dropped"] else "") + ".")
        return 0
    if not args.corpus:
        raise ConfigError("Name the corpus (--corpus NAME), or a whole matter (--matter NAME)")
    if args.all == bool(args.doc_ids):
        raise ConfigError("Name the documents to remove (DOC_ID ...) or give --all for the whole corpus, not both")
    wb = workbench_of(args)
    report = remove_corpus(wb, args.corpus) if args.all else remove_documents(wb, args.corpus, args.doc_ids)
    print(report.message())
    return 0
