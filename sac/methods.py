"""Retrieval methods as typed values, and the ``+option`` spelling users write them in.

A method is a ``MethodSpec``: an ``IndexRecipe`` (what is embedded with each chunk, so one index per distinct
recipe) and a ``SearchRecipe`` (how that index is searched). Users write it as a base and options joined by ``+``;
``parse_method`` reads that spelling once, and ``str(spec)`` writes it back in one normal form (options in
alphabetical order, numbers in their shortest spelling), so ``parse_method(str(spec)) == spec``.

Bases: ``baseline`` (chunks embedded alone) and ``sac-<strategy>`` (each chunk embedded after its document's
summary of that strategy: ``sac-generic``, ``sac-expert``, ``sac-generic-llm``, or any strategy a user adds).

Index options (their own index):

- ``+filename``: the document's file name is embedded after the summary, and the BM25s and ``+names`` read it with
  the text (metadata, not the text: off by default and reported apart from every text-only method).
- ``+merge<N>``: chunks under N characters (and whitespace-only ones) join a neighbour.
- ``+sections``: the heading path of each chunk's section is embedded after the summary.

Search options (sac.retrieval.pipeline applies them):

- ``+names``: squashed and camel-case company names in the question ("BELLRINGBRANDS,INC") are written as the
  corpus writes them before searching; with ``+docs<N>``, the documents the question names are searched first.
- ``+docs<N>``: documents are ranked first, and chunks come only from the top N.
- ``+docw<w>``: with ``+docs<N>``, the dense share of the document score (default 0.25).
- ``+inner``: with ``+docs<N>``, the chunks inside the chosen documents are ranked by the question without its
  "Consider the <title>;".
- ``+hybrid<w>``: dense and BM25 chunk scores fused, w the dense share.
- ``+rerank[N]``: a second stage (SAC_RERANKER) reorders the top N (default 50).

``recommended`` is an alias of the method chosen on the dev splits (``RECOMMENDED``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sac.errors import ConfigError

BASE_METHODS: tuple[str, ...] = ("baseline", "sac-generic", "sac-expert")

_STRATEGY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")

# Each option: (what it does, the kind of value it takes: "" none, "int" a whole number >= 1, "int?" an optional
# whole number, "share" a number in [0, 1]). Index options change the embedded text; search options do not.
INDEX_OPTIONS: dict[str, tuple[str, str]] = {
    "filename": ("embed the document's file name after the summary; BM25 and names read it with the text: "
                 "metadata, not text; off by default, and reported apart, since benchmark titles come from file names",
                 ""),
    "merge": ("merge<N>: merge chunks under N characters into a neighbour (sac.chunking.merge)", "int"),
    "sections": ("prepend the heading path of the chunk's section (sac.chunking.sections)", ""),
}
SEARCH_OPTIONS: dict[str, tuple[str, str]] = {
    "docs": ("docs<N>: rank documents first, then chunks inside the top N (sac.retrieval.document_ranking)", "int"),
    "docw": ("docw<w>: with docs<N>, the dense share of the document score (default 0.25)", "share"),
    "hybrid": ("hybrid<w>: dense + BM25, w = dense share, e.g. hybrid0.75 (sac.retrieval.hybrid)", "share"),
    "inner": ("inner: with docs<N>, the chunks inside the chosen documents are ranked by the question without its "
              "\"Consider the <title>;\" (the title chose the documents; inside them it only pulls toward the chunks "
              "that name the parties)", ""),
    "names": ("names: write squashed and camel-case company names in the question as the corpus's own words "
              "(sac.retrieval.names); with docs<N>, the documents the question names come first "
              "(sac.retrieval.targets)", ""),
    "rerank": ("rerank[N]: rerank the top N (default 50) with SAC_RERANKER (sac.retrieval.rerank)", "int?"),
}

# The method the project recommends, chosen on the dev splits (docs/methods.md); a run records what it resolved to.
RECOMMENDED = "sac-generic+docs1+hybrid0.75+inner+names"
# What Compare offers once a corpus has the ``sac-generic+filename`` index: the recommended method reading file
# names too (metadata, not text, so never ``recommended``), chosen on dev apart from it.
METADATA_METHOD = "sac-generic+docs1+filename+hybrid0.75+inner+names"
ALIASES: dict[str, str] = {"recommended": RECOMMENDED}
_CHOICES = (", ".join([*BASE_METHODS, *ALIASES]) + ", or sac-<strategy> for any summary strategy (lower-case letters, "
            "digits, '-', '_'), each with +options")


def _share(value: float, option: str) -> float:
    """A dense share as its one spelling reads back (four decimals at most), or a ConfigError."""
    if not 0.0 <= value <= 1.0:
        raise ConfigError(f"{option}<w> takes a dense share between 0 and 1, got {value:g}")
    return float(_share_text(value))


def _share_text(value: float) -> str:
    """``0.75`` -> ``"0.75"``, ``0.50`` -> ``"0.5"``, ``1.0`` -> ``"1"``: plain decimals, never an exponent."""
    return f"{value:.4f}".rstrip("0").rstrip(".")


def _whole(value: int, option: str) -> int:
    if isinstance(value, bool) or value < 1:
        raise ConfigError(f"{option}<N> takes a whole number >= 1, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class IndexRecipe:
    """What one index embeds with each chunk; one index per distinct recipe (its ``name`` keys the index)."""

    strategy: str | None = None  # summary strategy; None: the baseline, chunks embedded alone
    file_names: bool = False  # +filename
    merge: int | None = None  # +merge<N>
    sections: bool = False  # +sections

    def __post_init__(self) -> None:
        if self.strategy is not None and not _STRATEGY.match(self.strategy):
            raise ConfigError(f"Unknown summary strategy {self.strategy!r}: lower-case letters, digits, '-', '_'")
        if self.merge is not None:
            object.__setattr__(self, "merge", _whole(self.merge, "merge"))

    @property
    def base(self) -> str:
        """The method's base: ``baseline``, or ``sac-<strategy>`` for a summary strategy."""
        return "baseline" if self.strategy is None else f"sac-{self.strategy}"

    def tokens(self) -> list[str]:
        """The recipe's index options as written after a ``+`` (``merge25``), in alphabetical order."""
        return [t for t, on in (("filename", self.file_names), (f"merge{self.merge}", self.merge is not None),
                                ("sections", self.sections)) if on]

    @property
    def name(self) -> str:
        """The index's part of a method name (``sac-generic+merge25``): one index per distinct value."""
        return "+".join([self.base, *self.tokens()])

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class SearchRecipe:
    """How an index is searched; all defaults is the plain dense top-k."""

    docs: int | None = None  # +docs<N>: chunks only from the top N documents
    doc_dense_share: float | None = None  # +docw<w>; None: the document ranking's default
    hybrid: float | None = None  # +hybrid<w>: the dense share of the fused chunk score
    inner: bool = False  # +inner
    names: bool = False  # +names
    rerank: bool = False  # +rerank[N]
    rerank_candidates: int | None = None  # N of +rerank<N>; None: the reranking default

    def __post_init__(self) -> None:
        if self.docs is not None:
            object.__setattr__(self, "docs", _whole(self.docs, "docs"))
        if self.doc_dense_share is not None:
            object.__setattr__(self, "doc_dense_share", _share(self.doc_dense_share, "docw"))
        if self.hybrid is not None:
            object.__setattr__(self, "hybrid", _share(self.hybrid, "hybrid"))
        if self.rerank_candidates is not None:
            if not self.rerank:
                raise ConfigError("rerank_candidates needs rerank")
            object.__setattr__(self, "rerank_candidates", _whole(self.rerank_candidates, "rerank"))
        if self.inner and self.docs is None:
            raise ConfigError("inner ranks the chunks inside the documents docs<N> chose: add docs<N>")
        if self.doc_dense_share is not None and self.docs is None:
            raise ConfigError("docw<w> weighs the document stage of docs<N>: add docs<N>")

    @property
    def plain(self) -> bool:
        """No search option: the plain dense top-k of the index."""
        return self == SearchRecipe()

    def tokens(self) -> list[str]:
        """The recipe's search options as written after a ``+`` (``docs1``, ``hybrid0.75``), in alphabetical order."""
        rerank = "rerank" if self.rerank_candidates is None else f"rerank{self.rerank_candidates}"
        return [t for t, on in ((f"docs{self.docs}", self.docs is not None),
                                (f"docw{_share_text(self.doc_dense_share)}" if self.doc_dense_share is not None else "",
                                 self.doc_dense_share is not None),
                                (f"hybrid{_share_text(self.hybrid)}" if self.hybrid is not None else "", self.hybrid is not None),
                                ("inner", self.inner), ("names", self.names), (rerank, self.rerank)) if on]


@dataclass(frozen=True, slots=True)
class MethodSpec:
    """One retrieval method: the index it reads and how it searches it.

    ``str(spec)`` is its normal spelling."""

    index: IndexRecipe = field(default_factory=IndexRecipe)
    search: SearchRecipe = field(default_factory=SearchRecipe)

    @property
    def name(self) -> str:
        """The normal spelling: the base, then every option in alphabetical order."""
        return "+".join([self.index.base, *sorted([*self.index.tokens(), *self.search.tokens()])])

    def __str__(self) -> str:
        return self.name

    @property
    def index_name(self) -> str:
        """The name of the index the method reads (``IndexRecipe.name``)."""
        return self.index.name

    @property
    def strategy(self) -> str | None:
        """The summary strategy embedded with each chunk; None for the baseline."""
        return self.index.strategy

    @property
    def reads_sections(self) -> bool:
        """Whether the index embeds each chunk's section heading path (``+sections``)."""
        return self.index.sections

    @property
    def reads_file_names(self) -> bool:
        """Whether the method reads file names (``+filename``): metadata, not the text."""
        return self.index.file_names

    @property
    def is_recommended(self) -> bool:
        """Whether this is the method the project recommends (``RECOMMENDED``)."""
        return self.name == RECOMMENDED


def parse_method(name: str) -> MethodSpec:
    """Read a method spelling such as ``sac-expert+docs3`` into a MethodSpec; a clear ConfigError otherwise."""
    written = name.strip().lower()  # every base, strategy and option is lower case: "Baseline" means baseline
    raw = ALIASES.get(written, written)
    if not raw:
        raise ConfigError("Empty method name. Choices are: " + _CHOICES)
    base, *opts = raw.split("+")
    if base in ALIASES:
        raise ConfigError(f"{base!r} names a whole method ({ALIASES[base]}) and takes no options: write that name "
                          f"with yours instead of {written!r}")
    if base == "baseline":
        strategy = None
    elif base.startswith("sac-") and _STRATEGY.match(base[4:]):
        strategy = base[4:]
    else:
        raise ConfigError(f"Unknown method {base!r}. Choices are: {_CHOICES}")
    known = {**INDEX_OPTIONS, **SEARCH_OPTIONS}
    values: dict[str, str] = {}
    for opt in opts:
        m = re.match(r"^([a-z]+)([0-9.]*)$", opt)
        if not m or m.group(1) not in known:
            raise ConfigError(f"Unknown option {opt!r} in method {raw!r}. Options are: {sorted(known)}")
        key = m.group(1)
        if key in values:
            raise ConfigError(f"An option appears twice in method {raw!r}")
        values[key] = _option_value(key, m.group(2), known[key][1], raw)
    try:
        return MethodSpec(
            IndexRecipe(strategy, file_names="filename" in values,
                        merge=int(values["merge"]) if "merge" in values else None, sections="sections" in values),
            SearchRecipe(
                docs=int(values["docs"]) if "docs" in values else None,
                doc_dense_share=float(values["docw"]) if "docw" in values else None,
                hybrid=float(values["hybrid"]) if "hybrid" in values else None,
                inner="inner" in values, names="names" in values, rerank="rerank" in values,
                rerank_candidates=int(values["rerank"]) if values.get("rerank") else None))
    except ConfigError as err:
        raise ConfigError(f"{err} in method {raw!r}") from None


def _option_value(key: str, value: str, kind: str, raw: str) -> str:
    """The option's value as written, checked (``""`` for an option without one), or a ConfigError."""
    if kind == "" or (kind == "int?" and value == ""):
        if value:
            raise ConfigError(f"Option {key!r} takes no value, got {key + value!r} in method {raw!r}")
        return ""
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(f"Option {key!r} needs a number, e.g. {key}{'0.5' if kind == 'share' else '3'}; "
                          f"got {key + value!r} in method {raw!r}") from None
    if kind == "share":
        if not 0.0 <= number <= 1.0:
            raise ConfigError(f"{key}<w> takes a dense share between 0 and 1, got {value!r} in method {raw!r}")
        return value
    if number != int(number) or number < 1:
        raise ConfigError(f"{key}<N> takes a whole number >= 1, got {value!r} in method {raw!r}")
    return str(int(number))


def parse_methods(text: str) -> list[MethodSpec]:
    """Comma-separated method spellings, order kept, duplicates dropped."""
    seen: dict[str, MethodSpec] = {}
    for part in text.split(","):
        if part.strip():
            m = parse_method(part)
            seen.setdefault(m.name, m)
    if not seen:
        raise ConfigError("No methods given. Choices are: " + _CHOICES)
    return list(seen.values())


def suggested_methods(strategies: Sequence[str] = ("generic", "expert")) -> list[str]:
    """Method names worth offering in a list: the paper's three, then each option on each SAC strategy."""
    names = ["baseline", *(f"sac-{s}" for s in strategies), RECOMMENDED]
    for s in strategies:
        base = f"sac-{s}"
        names += [f"{base}+hybrid{w}" for w in ("0.75", "0.5", "0.25")]
        names += [f"{base}+docs1", f"{base}+docs3", f"{base}+sections", f"{base}+merge25", f"{base}+rerank"]
        names += [f"{base}+docs1+merge25", f"{base}+docs2+merge25", f"{base}+docs1+hybrid0.75+merge25"]
    names += ["baseline+hybrid0.5", "baseline+merge25"]
    names += ["sac-generic+filename", METADATA_METHOD]  # metadata, not text: labelled so
    return [parse_method(n).name for n in dict.fromkeys(names)]


def searchable_methods(built: Sequence[str]) -> list[str]:
    """What a corpus can be searched with: its built indexes, then the suggested methods that run on one of them.

    The suggested methods add search options (routing, hybrid, reranking, ``recommended``) to a built index."""
    return [*built, *(m for m in suggested_methods() if m not in built and parse_method(m).index_name in built)]


def method_label(name: str) -> str:
    """How a method is shown in a list: the recommended one says so, and one that reads file names says that.

    Reading file names (``+filename``) reads metadata, not the text."""
    if name == RECOMMENDED:
        return f"recommended ({name})"
    return f"{name} (reads file names)" if parse_method(name).reads_file_names else name
