"""Where a run's wrong-document hits go, and whose questions they come from.

DRM says how many hits come from another document; fixing it takes knowing which documents. Three tables per
(dataset, method) at one k, read from a saved run (``retrieved.jsonl`` for the hits, ``per_query.csv`` for each
question's gold documents):

- ``takers``: every document that took a wrong hit (a hit for a question about another document): how many,
  for how many questions, how many of those were the question's first hit, and its share of the method's wrong
  hits. A few documents taking most of them are look-alikes of the asked-about contracts or attractors (a short
  template full of the words every question uses).
- ``asked``: per document asked about, its questions, their DRM at k (pooled over their hits, as
  ``metrics.csv`` pools a dataset's) and how many had a wrong first hit.
- ``pairs``: the pairs behind both, (document asked about, document that took its hits), most wrong hits first:
  which contract a method mistakes for which.

All three sum back to the run's own figures: the takers' wrong hits and the pairs' are the method's wrong hits
at k, and the pooled DRM over every row of ``asked`` is the run's DRM at k.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any, NamedTuple

import pandas as pd

from sac.errors import ConfigError
from sac.evaluation.runs import RunFolder

TAKER_COLUMNS = ["document", "wrong hits", "questions", "first hits", "share of wrong hits"]
ASKED_COLUMNS = ["document", "questions", "hits", "wrong hits", "drm", "wrong first hit"]
PAIR_COLUMNS = ["asked about", "took the hits", "wrong hits", "questions", "first hits"]


class Mismatch(NamedTuple):
    """The three tables of one (dataset, method) of a run at one k (module docstring; shares and DRM as fractions)."""

    takers: pd.DataFrame  # TAKER_COLUMNS, most wrong hits first
    asked: pd.DataFrame  # ASKED_COLUMNS, worst DRM first; several gold documents count under their "|"-joined names
    pairs: pd.DataFrame  # PAIR_COLUMNS, most wrong hits first


def _rows(
    run: RunFolder, dataset: str, method: str, k: int, *, per_query: pd.DataFrame | None = None,
    retrieved: list[dict[str, Any]] | None = None,
) -> list[tuple[list[str], frozenset[str]]]:
    """Per question of (dataset, method): its top-k hit documents in rank order and its gold documents.

    ``per_query``: the run's file, when already read; ``retrieved``: its hit rows, or those of this dataset and
    method."""
    per_query = run.per_query() if per_query is None else per_query
    if "document" not in per_query.columns:
        raise ConfigError(f"Run {run.run_id} was saved before runs recorded each question's document: run it again "
                          "to see where its wrong hits go.")
    mine = per_query[(per_query["dataset"] == dataset) & (per_query["method"] == method)]
    if mine.empty:
        raise ConfigError(f"Run {run.run_id} has no rows for dataset {dataset!r} and method {method!r}.")
    largest = int(mine["k"].max())
    if not 1 <= k <= largest:
        raise ConfigError(f"k={k} is outside this run: it retrieved the top {largest} hits per question, so k can be "
                          f"1 to {largest}.")
    gold = {str(q): frozenset(str(d).split("|")) for q, d in zip(mine["query_id"], mine["document"])}
    out = []
    for row in run.retrieved() if retrieved is None else retrieved:
        if row.get("dataset") == dataset and row.get("method") == method and str(row.get("query_id")) in gold:
            hits = [str(h["file_path"]) for h in row.get("retrieved", [])[:k]]
            out.append((hits, gold[str(row["query_id"])]))
    return out


def mismatch_tables(run: RunFolder, dataset: str, method: str, k: int) -> Mismatch:
    """The three tables of (dataset, method) at k, from one read of the run."""
    return _tables(_rows(run, dataset, method, k))


def every_mismatch_table(run: RunFolder, k: int) -> dict[tuple[str, str], Mismatch]:
    """``mismatch_tables`` of every (dataset, method) of the run, in the run's order, its files read once."""
    per_query = run.per_query()
    retrieved: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in run.retrieved():
        retrieved[(str(row.get("dataset")), str(row.get("method")))].append(row)
    return {(dataset, method): _tables(_rows(run, dataset, method, k, per_query=per_query,
                                             retrieved=retrieved[(dataset, method)]))
            for dataset, method in dict.fromkeys(zip(per_query["dataset"], per_query["method"]))}


def _tables(rows: list[tuple[list[str], frozenset[str]]]) -> Mismatch:
    return Mismatch(_takers(rows), _asked(rows), _pairs(rows))


def _takers(rows: list[tuple[list[str], frozenset[str]]]) -> pd.DataFrame:
    hits: Counter[str] = Counter()
    questions: Counter[str] = Counter()
    firsts: Counter[str] = Counter()
    for ranked, gold in rows:
        wrong = [d for d in ranked if d not in gold]
        hits.update(wrong)
        questions.update(set(wrong))
        if ranked and ranked[0] not in gold:
            firsts[ranked[0]] += 1
    total = sum(hits.values())
    order = sorted(hits, key=lambda doc: (-hits[doc], -firsts[doc], doc))
    table = [[doc, hits[doc], questions[doc], firsts[doc], hits[doc] / total] for doc in order]
    return pd.DataFrame(table, columns=TAKER_COLUMNS)


def _asked(rows: list[tuple[list[str], frozenset[str]]]) -> pd.DataFrame:
    tally: dict[str, Any] = defaultdict(lambda: [0, 0, 0, 0])  # questions, hits, wrong hits, wrong first hits
    for ranked, gold in rows:
        row = tally["|".join(sorted(gold))]
        wrong = sum(d not in gold for d in ranked)
        row[0] += 1
        row[1] += len(ranked)
        row[2] += wrong
        row[3] += bool(ranked) and ranked[0] not in gold
    table = sorted(([doc, q, n, w, (w / n if n else 0.0), f] for doc, (q, n, w, f) in tally.items()),
                   key=lambda r: (-r[4], -r[1], r[0]))
    return pd.DataFrame(table, columns=ASKED_COLUMNS)


def _pairs(rows: list[tuple[list[str], frozenset[str]]]) -> pd.DataFrame:
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0])  # wrong hits, questions, first hits
    for ranked, gold in rows:
        asked = "|".join(sorted(gold))
        wrong = [d for d in ranked if d not in gold]
        for doc in wrong:
            tally[(asked, doc)][0] += 1
        for doc in set(wrong):
            tally[(asked, doc)][1] += 1
        if ranked and ranked[0] not in gold:
            tally[(asked, ranked[0])][2] += 1
    order = sorted(tally, key=lambda pair: (-tally[pair][0], -tally[pair][2], pair))
    return pd.DataFrame([[*pair, *tally[pair]] for pair in order], columns=PAIR_COLUMNS)
