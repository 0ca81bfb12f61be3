"""docs/configuration.md, made from sac/config.py: one row per ``SacConfig`` field, its meaning the comment beside it.

    python docs/make_configuration.py            # print the page
    python docs/make_configuration.py --write    # write docs/configuration.md

The fields, their types and the comments are read from the source with ``ast`` and ``tokenize`` (a comment on the
field's own lines, or on comment lines right above it); the defaults from the dataclass itself. ``SacConfig.from_env``
reads ``SAC_<FIELD>`` for every field, and a few variables of other tools (``OPENAI_API_KEY``) into a field when its
``SAC_`` variable is unset: those are read from ``from_env``'s source too. ``NOTES`` adds what a user needs beyond
a field's comment. tests/test_docs.py fails when a field is missing from the page or the page differs from
``make()``.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import io
import sys
import tokenize
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

OUT = ROOT / "docs" / "configuration.md"
SOURCE = ROOT / "sac" / "config.py"
CLASS = "SacConfig"

# What a user needs beyond the comment in sac/config.py, by field (the README's former settings table).
NOTES: dict[str, str] = {
    "workspace": "Relative paths are taken from the directory the app or command starts in. With `SAC_ACCESS_FILE` "
                 "it is the deployment's root: each matter is a workspace under `<SAC_WORKSPACE>/matters/<matter>/` "
                 "([deploying.md](deploying.md)).",
    "chroma_url": "Unset: the embedded store, one folder in the workspace that one process writes at a time. A "
                  "server (`chroma run --path DIR --host 127.0.0.1 --port 8000`) has no authentication: keep it on "
                  "loopback or behind a tunnel.",
    "chroma_database": "Each matter sets its own, `sac-<matter>`, so equally named corpora of two matters never share "
                       "an index.",
    "access_file": "Turns matters on; needs sign-in ([deploying.md](deploying.md)). Read again on every page run.",
    "chunk_overlap": "Needs `SAC_CHUNKING=paper`: merged chunks tile the document, overlapping ones do not.",
    "chunking": "`merged`: the paper's splitter, then pieces with fewer than 25 non-space characters join a "
                "neighbour (no blank hits); `paper`: the paper's splitter exactly (reproduces its tables). The two "
                "keep separate indexes (`c500o0m25`, `c500o0`) and a run records which it used.",
    "embedder": "`minilm`, `minilm-onnx` (same vectors, faster), `minilm-onnx-int8` (its own indexes), any "
                "sentence-transformers name or path (e.g. `thenlper/gte-large`: downloads once, with internet), "
                "`openai:<model>` (OpenAI or any OpenAI-compatible embeddings server).",
    "embed_device": "A device named but missing is an error. The ONNX backends run on CUDA when onnxruntime offers "
                    "its CUDA provider (the `onnxruntime-gpu` wheel) and the setting is `auto` or `cuda`, else on "
                    "the CPU.",
    "embed_base_url": "e.g. `http://gpu-box:8000/v1`. Unset: embeddings go where the LLM goes (`SAC_LLM_BASE_URL`, "
                      "else api.openai.com) with `SAC_EMBED_API_KEY`, else `OPENAI_API_KEY`. Set: only "
                      "`SAC_EMBED_API_KEY` is sent there, never `OPENAI_API_KEY`.",
    "embed_max_retries": "Backoff is exponential and honours `Retry-After`; any other 4xx (unknown model, rejected "
                         "key) fails at once.",
    "reranker": "Used only by methods with `+rerank[N]`; no cross-encoder ships offline.",
    "llm_model": "The model the LLM summarizer asks (`--summarizer openai`).",
    "llm_concurrency": "Parallel LLM requests; 1 suits a local server that answers one at a time.",
    "llm_timeout_s": "Seconds per LLM request; at least 900 for a local server.",
    "max_file_mb": "The largest document, or member of an uploaded zip, that is read.",
    "hnsw_ef_search": "Chroma's HNSW search breadth (cosine space); top-64 agreement with exact search is tested to be "
                      "at least 0.99.",
    "hnsw_ef_construction": "Chroma's HNSW build breadth.",
    "hnsw_max_neighbors": "Chroma's HNSW links per element.",
}


@dataclass(frozen=True)
class Setting:
    """One environment variable the config reads."""

    variable: str
    field: str
    type: str
    default: str
    meaning: str  # the comment beside the field in sac/config.py
    notes: str  # NOTES


def _comments(source: str) -> dict[int, str]:
    """Every comment's text by line number."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string.lstrip("#").strip()
    return found


def _class(tree: ast.Module, name: str) -> ast.ClassDef:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return node
    raise SystemExit(f"no class {name} in {SOURCE}")


def field_comments(source: str, class_name: str = CLASS) -> dict[str, tuple[str, str]]:
    """``{field: (annotation, comment)}`` for every annotated field of the class, in source order. A field's comment
    is the one on its own lines, else the comment lines right above it (joined), else ``""``."""
    comments = _comments(source)
    lines = source.splitlines()
    out: dict[str, tuple[str, str]] = {}
    for node in _class(ast.parse(source), class_name).body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        end = node.end_lineno or node.lineno
        beside = [comments[n] for n in range(node.lineno, end + 1) if n in comments]
        above: list[str] = []
        n = node.lineno - 1
        while n >= 1 and lines[n - 1].strip().startswith("#"):
            above.insert(0, comments[n])
            n -= 1
        out[node.target.id] = (ast.unparse(node.annotation), " ".join(beside or above))
    return out


def other_variables(source: str, class_name: str = CLASS) -> dict[str, str]:
    """``{VARIABLE: field}`` for each ``values["field"] = environ["VARIABLE"]`` in ``from_env``."""
    found = {}
    for node in _class(ast.parse(source), class_name).body:
        if isinstance(node, ast.FunctionDef) and node.name == "from_env":
            for sub in ast.walk(node):
                if (isinstance(sub, ast.Assign) and len(sub.targets) == 1 and isinstance(sub.targets[0], ast.Subscript)
                        and isinstance(sub.value, ast.Subscript)
                        and isinstance(sub.targets[0].slice, ast.Constant)
                        and isinstance(sub.value.slice, ast.Constant)):
                    found[sub.value.slice.value] = sub.targets[0].slice.value
    return found


def _default(f: dataclasses.Field[Any]) -> str:
    if f.default is dataclasses.MISSING:
        return "—"
    value = f.default
    if value is None:
        return "unset"
    return f"`{value}`"


def settings(source: str | None = None, config: type | None = None) -> list[Setting]:
    """Every variable the config reads: ``SAC_<FIELD>`` per field, then the other tools' variables."""
    if config is None:
        from sac.config import SacConfig as config  # noqa: N813
    text = SOURCE.read_text("utf-8") if source is None else source
    comments = field_comments(text)
    out = []
    for f in dataclasses.fields(config):
        annotation, comment = comments.get(f.name, (str(f.type), ""))
        out.append(Setting(f"SAC_{f.name.upper()}", f.name, annotation, _default(f), comment or "—",
                           NOTES.get(f.name, "")))
    by_field = {s.field: s for s in out}
    for variable, name in other_variables(text).items():
        field = by_field[name]
        out.append(Setting(variable, name, field.type, field.default,
                           f"read into `{name}` when `{field.variable}` is unset", ""))
    return out


def _cell(text: str) -> str:
    """A table cell: pipes escaped, and angle brackets outside code spans, which Markdown would read as HTML."""
    parts = text.replace("|", "\\|").split("`")
    return "`".join(p if i % 2 else p.replace("<", "&lt;").replace(">", "&gt;") for i, p in enumerate(parts))


def make(source: str | None = None, config: type | None = None) -> str:
    rows = [f"| `{s.variable}` | {_cell(s.default)} | `{_cell(s.type)}` | {_cell(s.meaning)} | {_cell(s.notes)} |"
            for s in settings(source, config)]
    return "\n".join([
        "# Configuration",
        "",
        "<!-- Generated by docs/make_configuration.py from sac/config.py: do not edit. Regenerate with "
        "`python docs/make_configuration.py --write`. -->",
        "",
        "Every setting is a field of `SacConfig` (`sac/config.py`) and an environment variable: `SAC_` and the field's "
        "name in capitals. `SacConfig.from_env` reads them when the app or a command starts; a command's flag, where "
        "it has one (`sac eval --help` lists them: `--workspace`, `--chroma-url`, `--chunking`, `--embedder`, ...), "
        "wins over the variable, and the Corpus page's settings win for the browser session. An empty variable counts "
        "as unset. Secrets (`SAC_OPENAI_API_KEY` / `OPENAI_API_KEY`, `SAC_EMBED_API_KEY`) are never printed or written "
        "anywhere.",
        "",
        "| variable | default | type | meaning (the comment in sac/config.py) | notes |",
        "|---|---|---|---|---|",
        *rows,
        "",
        "Also read, by the libraries underneath: `ORT_DISABLE_TELEMETRY=1` stops onnxruntime (pulled in by chromadb) "
        "from starting DNS lookups, and `HF_HUB_OFFLINE=1` keeps the Hugging Face libraries off the network (CI and the "
        "benchmark scripts set both). Sign-in is configured in `.streamlit/secrets.toml`, not here "
        "([deploying.md](deploying.md)).",
        "",
    ])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--write", action="store_true", help=f"write {OUT.relative_to(ROOT)}")
    args = p.parse_args(argv)
    text = make()
    if args.write:
        OUT.write_text(text, "utf-8")
        print(f"wrote {OUT.relative_to(ROOT)}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
