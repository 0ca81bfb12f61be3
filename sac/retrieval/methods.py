"""Retrieval methods and how their names are read.

A method name is a base and optional options joined by ``+``:

- ``baseline``: chunks embedded alone.
- ``sac-<strategy>``: chunks embedded after their document's summary of that strategy
  (``sac-generic``, ``sac-expert``, ``sac-generic-llm``, or any strategy a user adds).

Options change either what is embedded (and so get their own index) or only how the index is searched:

- ``+sections``: the heading path of each chunk's section is embedded after the summary.
- ``+filename``: the document's file name is embedded after the summary, and the BM25s and ``+names`` read it with
  the document's text (sac.chunking.context; metadata, not the text: off by default and reported apart from every
  text-only method).
- ``+merge<N>``: chunks under N characters (and whitespace-only ones) join a neighbour.
- ``+hybrid<w>``: dense and BM25 scores fused, w = the dense share (``hybrid0.75``).
- ``+docs<N>``: documents ranked first; chunks come only from the top N documents.
- ``+rerank``: a second stage (SAC_RERANKER: a CrossEncoder name, or ``lexical``) reorders the top 50.
- ``+names``: squashed and camel-case company names in the question ("BELLRINGBRANDS,INC", "GluMobileInc")
  are rewritten into the words the corpus uses ("BellRing Brands, Inc", "Glu Mobile Inc") before searching;
  with ``+docs<N>``, the documents the title names (the title quoted whole, else its squashed names, else its
  words few documents hold: "Munt" in "Consider Munt's Non-Disclosure Agreement") are ranked first; where it
  names none, the document ranking's BM25 reads the title alone. A question without a title that names no
  document (by a company name or a capitalised rare word) is not routed: every document is searched.
- ``+inner``: with ``+docs<N>``, the chunks inside the chosen documents are ranked by the question without its
  "Consider the <title>;": the title chose the documents, and inside them it only pulls toward the chunks that
  name the parties.

``recommended`` is an alias of the method chosen on the dev splits (``RECOMMENDED``).

``sac-generic+docs1+hybrid0.75+merge25`` combines them; options are written in alphabetical order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sac.errors import ConfigError, QueryError

BASE_METHODS: tuple[str, ...] = ("baseline", "sac-generic", "sac-expert")
MAX_QUERY_CHARS = 8000  # far beyond any question; longer input is almost surely a pasted document
MAX_K = 1000

_STRATEGY = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,39}$")

# Options that change the embedded text (part of the index key) and options applied at search time.
# Each maps to (what it does, its value: "" none, "int" a whole number >= 1, "share" a number in [0, 1]).
INDEX_OPTIONS: dict[str, tuple[str, str]] = {
    "filename": ("embed the document's file name after the summary; BM25 and names read it with the text: "
                 "metadata, not text; off by default, and reported apart, since benchmark titles come from file names",
                 ""),
    "sections": ("prepend the heading path of the chunk's section (sac.chunking.sections)", ""),
    "merge": ("merge<N>: merge chunks under N characters into a neighbour (sac.chunking.merge)", "int"),
}
SEARCH_OPTIONS: dict[str, tuple[str, str]] = {
    "hybrid": ("hybrid<w>: dense + BM25, w = dense share, e.g. hybrid0.75 (sac.retrieval.hybrid)", "share"),
    "docs": ("docs<N>: rank documents first, then chunks inside the top N (sac.retrieval.docfirst)", "int"),
    "docw": ("docw<w>: with docs<N>, the dense share of the document score (default 0.25)", "share"),
    "rerank": ("rerank[N]: rerank the top N (default 50) with SAC_RERANKER (sac.retrieval.rerank)", "int?"),
    "names": ("names: write squashed and camel-case company names in the question as the corpus's own words "
              "(sac.retrieval.names); with docs<N>, the documents the title names come first (a title naming none: the "
              "document BM25 reads the title alone; a question without a title naming none: not routed, every "
              "document searched)", ""),
    "inner": ("inner: with docs<N>, the chunks inside the chosen documents are ranked by the question without its "
              "\"Consider the <title>;\" (the title chose the documents; inside them it only pulls toward the chunks "
              "that name the parties)", ""),
}

# One name for the method the project recommends, chosen on the dev splits (bench/README.md, "Method selection");
# a run records what it resolved to.
RECOMMENDED = "sac-generic+docs1+hybrid0.75+inner+names"
# What Compare offers once a corpus has the ``sac-generic+filename`` index: the recommended method reading file names
# too (metadata, not text, so never ``recommended``), chosen on dev apart from it (bench/README.md, "File names").
METADATA_METHOD = "sac-generic+docs1+filename+hybrid0.75+inner+names"
ALIASES: dict[str, str] = {"recommended": RECOMMENDED}
_CHOICES = (", ".join([*BASE_METHODS, *ALIASES]) + ", or sac-<strategy> for any summary strategy (lower-case letters, "
            "digits, '-', '_'), each with +options")


@dataclass(frozen=True, slots=True)
class Method:
    name: str  # the full name as the user wrote it, normalised
    strategy: str | None  # summary strategy; None for the baseline
    options: tuple[tuple[str, str], ...] = field(default=())  # (option, value) in a fixed order

    @property
    def index_name(self) -> str:
        """The part of the name that decides the embedded text: one index per distinct value."""
        base = "baseline" if self.strategy is None else f"sac-{self.strategy}"
        extra = [f"{k}{v}" if v else k for k, v in self.options if k in INDEX_OPTIONS]
        return "+".join([base, *extra])

    def option(self, key: str) -> str | None:
        return dict(self.options).get(key)

    @property
    def reads_sections(self) -> bool:
        """Whether each chunk's heading path is embedded after the summary (``+sections``)."""
        return self.option("sections") is not None

    @property
    def reads_file_names(self) -> bool:
        """Whether the method reads each document's file name as well as its text (``+filename``)."""
        return self.option("filename") is not None

    @property
    def search_options(self) -> dict[str, str]:
        """The options applied at query time (none: a plain dense top-k)."""
        return {k: v for k, v in self.options if k in SEARCH_OPTIONS}


def parse_method(name: str) -> Method:
    """Read a method name such as ``sac-expert`` into a Method; a clear ConfigError otherwise."""
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
    options: list[tuple[str, str]] = []
    for opt in opts:
        m = re.match(r"^([a-z]+)([0-9.]*)$", opt)
        known = {**INDEX_OPTIONS, **SEARCH_OPTIONS}
        if not m or m.group(1) not in known:
            raise ConfigError(f"Unknown option {opt!r} in method {raw!r}. Options are: {sorted(known) or 'none'}")
        options.append((m.group(1), _option_value(m.group(1), m.group(2), known[m.group(1)][1], raw)))
    if len({k for k, _ in options}) != len(options):
        raise ConfigError(f"An option appears twice in method {raw!r}")
    if any(k == "inner" for k, _ in options) and not any(k == "docs" for k, _ in options):
        raise ConfigError(f"inner ranks the chunks inside the documents docs<N> chose: add docs<N> to method {raw!r}")
    if any(k == "docw" for k, _ in options) and not any(k == "docs" for k, _ in options):
        raise ConfigError(f"docw<w> weighs the document stage of docs<N>: add docs<N> to method {raw!r}")
    options.sort()
    normalised = "+".join([base] + [f"{k}{v}" for k, v in options])
    return Method(name=normalised, strategy=strategy, options=tuple(options))


def _option_value(key: str, value: str, kind: str, raw: str) -> str:
    """The option's value in one spelling (``hybrid0.50`` -> ``hybrid0.5``), or a ConfigError."""
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
        return f"{number:g}"
    if number != int(number) or number < 1:
        raise ConfigError(f"{key}<N> takes a whole number >= 1, got {value!r} in method {raw!r}")
    return str(int(number))


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
    """What a corpus can be searched with: its built indexes, then the suggested search options (routing, hybrid,
    reranking, ``recommended``) that run on one of them."""
    return [*built, *(m for m in suggested_methods() if m not in built and parse_method(m).index_name in built)]


def method_label(name: str) -> str:
    """How a method is shown in a list: the recommended one says so, and one that reads file names (``+filename``:
    metadata, not the text) says that."""
    if name == parse_method(RECOMMENDED).name:
        return f"recommended ({name})"
    return f"{name} (reads file names)" if parse_method(name).reads_file_names else name


def parse_methods(text: str) -> list[Method]:
    """Comma-separated method names, order kept, duplicates dropped."""
    seen: dict[str, Method] = {}
    for part in text.split(","):
        if part.strip():
            m = parse_method(part)
            seen.setdefault(m.name, m)
    if not seen:
        raise ConfigError("No methods given. Choices are: " + _CHOICES)
    return list(seen.values())


def check_query(text: str) -> str:
    """The query stripped, or a QueryError for an empty, over-long or content-free query."""
    stripped = text.strip()
    if not stripped:
        raise QueryError("The query is empty: type a question about the documents.")
    if len(stripped) > MAX_QUERY_CHARS:
        raise QueryError(
            f"The query has {len(stripped):,} characters; the limit is {MAX_QUERY_CHARS:,}. "
            "Ask a question rather than pasting a document."
        )
    if not any(ch.isalnum() for ch in stripped):
        raise QueryError("The query has no letters or digits: it cannot match anything meaningful.")
    return stripped


def check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise QueryError(f"k must be a whole number >= 1, got {k!r}")
    if k > MAX_K:
        raise QueryError(f"k must be at most {MAX_K}, got {k}")
    return k

