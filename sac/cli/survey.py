"""``sac survey``: one question, every contract: the best span of each contract, one line per contract."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sac.cli.common import ProgressBars, one_corpus, workbench_of
from sac.errors import ConfigError
from sac.methods import method_label, parse_methods
from sac.types import check_query
from sac.usecases.survey import DEFAULT_METHOD, SurveyTable, survey, write_table

EXCERPT_CHARS = 90
SURVEY_DEFAULT = DEFAULT_METHOD


def cmd_survey(args: argparse.Namespace) -> int:
    """``sac survey``: build the methods' indexes, search the question inside every contract, print and write the rows.

    One line per contract (best first by the first method): score, display name, span, the span's text. With several
    methods, each contract's line is followed by one line per method."""
    text = check_query(args.question)  # before any index is built
    if args.out and Path(args.out).suffix.lower() not in (".csv", ".xlsx"):
        raise ConfigError(f"--out writes a .csv or .xlsx file, got {args.out!r}")
    wb = workbench_of(args)
    methods = parse_methods(args.methods)
    name, documents = one_corpus(wb, args)
    bars = ProgressBars(not args.quiet)
    wb.build(name, documents, methods, progress=bars)
    table = survey(wb, name, methods, text, documents=documents, per_document=args.k_per_contract, progress=bars,
                   answers=args.answers)
    print("\n".join(survey_lines(table)))
    if args.out:
        print(f"wrote {write_table(table, Path(args.out))}", file=sys.stderr)
    return 0


def survey_lines(table: SurveyTable) -> list[str]:
    """What ``sac survey`` prints: the options not applied, then one line per contract (and per method)."""
    lines = [f"note: {method_label(m)} searched without {', '.join(options)}: a survey searches inside every contract"
             for m, options in table.ignored.items() if options]
    lines += [f"note: {note}" for note in table.notes]
    several = len(table.methods) > 1
    width = max((len(method_label(m)) for m in table.methods), default=0)
    for row in table.rows:
        if several:
            lines.append(f"{row.name.name}  ({row.name.file_title})")
        for method in table.methods:
            hits = row.hits.get(method, ())
            if not hits:
                figures = f"{'—':>6} not in the index"
            else:
                excerpt = " ".join(hits[0].chunk.text.split())
                excerpt = excerpt if len(excerpt) <= EXCERPT_CHARS else excerpt[: EXCERPT_CHARS - 1] + "…"
                spans = ", ".join(f"[{h.span.start}, {h.span.end})" for h in hits)
                figures = f"{hits[0].score:6.3f} {spans}  {excerpt}"
            answer = row.answers.get(method)
            tail = f"\n{'':8}answer: {answer}" if answer else ""
            if several:
                lines.append(f"  {method_label(method):<{width}} {figures}{tail}")
            else:
                lines.append(f"{figures[:6]}  {row.name.name}  {figures[7:]}{tail}")
    lines.append(f"{len(table.rows)} contracts in {table.seconds:.1f} s")
    return lines
