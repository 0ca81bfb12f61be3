r"""``sac`` (or ``python -m sac``): everything the app does, scriptable.

Examples:
  sac eval --benchmark data/demo --methods baseline,sac-generic,sac-expert
  sac eval --datasets contractnli --pool ../shared/data/sources/contractnli/test.json
  sac eval --corpus mine        # the ground truth marked on the app's Review page for corpus "mine"
  sac ingest --benchmark data/demo --methods baseline,sac-expert
  sac ingest --docs contracts/ --corpus mine --methods baseline,sac-generic
  sac ingest --datasets cuad --chroma-url http://127.0.0.1:8000 --shard 1/2   # 2/2 on another machine
  sac summarize --datasets cuad,contractnli --strategy generic-llm,expert-llm --summarizer openai \
      --model qwen2.5-coder-1.5b-instruct --base-url http://127.0.0.1:8089/v1 --concurrency 1 \
      --context-chars 4000 --out 'data/demo/summaries/{strategy}.json'
  sac query "What is the governing law?" --benchmark data/demo --dataset cuad --k 8
  sac survey "Which law governs the agreement?" --dataset cuad --out governing-law.xlsx   # every contract
  sac eval --datasets contractnli --embedder openai:text-embedding-3-small \
      --embed-base-url http://127.0.0.1:8000/v1 --methods baseline
  sac benchmark build all --out bench/.workspace/full --titles both
  sac runs list
  sac runs compare RUN_A RUN_B
  sac runs mismatch RUN --k 8          # which documents take the wrong-document hits
  sac remove --corpus mine contract-7.pdf      # --all: the whole corpus
  sac remove --matter acme-v-beta              # a whole matter (SAC_WORKSPACE: the deployment's root)
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from sac.cli.build import cmd_benchmark_build, cmd_ingest, cmd_vectors
from sac.cli.common import DEMO_BENCHMARK
from sac.cli.evaluate import cmd_eval, cmd_runs
from sac.cli.query import cmd_query
from sac.cli.remove import cmd_remove
from sac.cli.summarize import cmd_summarize
from sac.cli.survey import SURVEY_DEFAULT, cmd_survey
from sac.config import DEFAULT_K_VALUES
from sac.errors import SacError
from sac.methods import BASE_METHODS, RECOMMENDED


def build_parser() -> argparse.ArgumentParser:
    """The whole command line in one place.

    Long because it is a declaration (one line per option), which reads best as one table."""
    parser = argparse.ArgumentParser(
        prog="sac", description="Summary-Augmented Chunking workbench.", epilog=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", help="workspace folder (default ./workspace, or SAC_WORKSPACE)")
    common.add_argument("--chroma-url", help="Chroma server, e.g. http://127.0.0.1:8000 (or SAC_CHROMA_URL)")
    common.add_argument("--chunk-size", type=int)
    common.add_argument("--chunk-overlap", type=int, help="needs --chunking paper")
    common.add_argument("--chunking", choices=["merged", "paper"],
                        help="merged (default): pieces with fewer than 25 non-space characters join a neighbour; "
                        "paper: the paper's splitter exactly, to reproduce its tables (or SAC_CHUNKING)")
    common.add_argument("--summary-chars", type=int, help="target summary length (default 150)")
    common.add_argument("--embedder", help="minilm (default), minilm-onnx, a sentence-transformers name, openai:<model>")
    common.add_argument("--embed-device", help="where a local embedder runs: auto (default: cuda, else mps, else cpu), "
                        "cpu, cuda, cuda:N, mps (or SAC_EMBED_DEVICE)")
    common.add_argument("--embed-base-url", help="OpenAI-compatible embeddings server for openai:<model>, e.g. "
                        "http://127.0.0.1:8000/v1 (or SAC_EMBED_BASE_URL); its key from SAC_EMBED_API_KEY")
    common.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    source = argparse.ArgumentParser(add_help=False)
    source.add_argument("--benchmark", default=str(DEMO_BENCHMARK), help="LegalBench-RAG folder (default data/demo)")
    source.add_argument("--datasets", "--dataset", dest="datasets", help="comma-separated, e.g. cuad,contractnli")
    source.add_argument("--pool", nargs="+", help="distractor documents: folders or ContractNLI JSON files")
    source.add_argument("--corpus", help="a workspace corpus instead of a benchmark dataset (eval: scored on the ground "
                        "truth marked for it on the app's Review page)")
    methods_help = (f"comma-separated; e.g. {','.join(BASE_METHODS)},recommended (= {RECOMMENDED}); options after a +: "
                    "sac-expert+docs3, sac-generic+hybrid0.75")

    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("eval", parents=[common, source], help="evaluate methods on a benchmark",
                       description="Retrieve top max(k) once per query and method; print and save DRM, precision, recall.")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--k", default=",".join(map(str, DEFAULT_K_VALUES)))
    p.add_argument("--label", default="eval", help="name part of the run folder")
    p.add_argument("--out", help="also write metrics.csv here")
    p.add_argument("--reference", help="print each method's paired difference to this method, with its 95 %% "
                   "interval (default: baseline, when evaluated)")
    p.add_argument("--resample", choices=["question", "document"], default="question",
                   help="what the bootstrap draws: questions (default), or documents with all their questions, "
                   "the honest unit when questions about one contract succeed or fail together")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("benchmark", help="build full-size benchmarks from the source datasets")
    bench_sub = p.add_subparsers(dest="benchmark_command", required=True)
    p = bench_sub.add_parser(
        "build", help="cuad-full / contractnli-full with dev and test splits, LegalBench-RAG's construction",
        description="Write OUT/corpus/<dataset>-{dev,test}/ and OUT/benchmarks/<dataset>-{dev,test}.json: one "
        "question per (contract, answered CUAD clause category) or (NDA, ContractNLI hypothesis with evidence); "
        "documents split in halves by a hash of their text. With --titles both, OUT/firstpage and OUT/filename.",
    )
    p.add_argument("dataset", choices=["cuad", "contractnli", "all"])
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--sources", help="the source datasets (default SAC_SOURCES, else ../shared/data/sources beside the checkout)")
    p.add_argument("--dev-documents", default=str(DEMO_BENCHMARK),
                   help="a benchmark folder whose documents always go to the dev split (default data/demo: rules are "
                        "written on the demo, so it is never test data)")
    p.add_argument("--no-dev-documents", action="store_true", help="split every document by its hash alone")
    p.add_argument("--titles", choices=["firstpage", "filename", "both"], default="both",
                   help="how a question names its document: as its first page does, or as its file name does")
    p.add_argument("--limit", type=int, help="only the first N documents (by text hash): a small subset")
    p.add_argument("--keep-partial", action="store_true",
                   help="cuad: keep a question when some of its quotes are missing or repeated (LegalBench-RAG drops it)")
    p.set_defaults(func=cmd_benchmark_build)

    p = sub.add_parser("ingest", parents=[common, source], help="build or update indexes")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--docs", nargs="+", help="files or folders to add to --corpus")
    p.add_argument("--shard", metavar="I/N",
                   help="index only shard I of N (1-based; a document's shard is a hash of its id), so N processes "
                   "on N machines fill one Chroma server (--chroma-url); the index is complete when all N are")
    p.add_argument("--shipped-vectors", action="store_true",
                   help="with --benchmark: copy the vectors the folder ships (BENCHMARK/vectors, as `sac vectors` "
                   "wrote them) for the texts they hold instead of embedding them; used only with the packaged model "
                   "they were made with (the demo's CUAD part is float16: the same top 8, near-ties in low ranks may "
                   "swap)")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser(
        "vectors", parents=[common, source], help="record the vectors of a benchmark's texts, to ship with it",
        description="Build the methods' indexes of the benchmark's datasets in a temporary workspace with the packaged "
        "model, and write every text embedded, with its vector, to BENCHMARK/vectors/<model>.npz. A workbench told to "
        "use them (the app's, for the demo) copies those vectors for the texts they hold instead of embedding them "
        "again; any other text is embedded as before.",
    )
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--part", default="", metavar="NAME",
                   help="write BENCHMARK/vectors/<model>.NAME.npz, read together with the main file (e.g. one per dataset)")
    p.add_argument("--float16", action="store_true", help="store the vectors as float16: half the size")
    p.set_defaults(func=cmd_vectors)

    p = sub.add_parser(
        "summarize", parents=[common, source], help="generate summaries for one or more strategies",
        description="Summarize every document of the named datasets (all by default) or of --corpus. Finished "
        "summaries are stored at once: after Ctrl-C or a failure, the same command continues where it stopped.",
        epilog="example (a local llama.cpp server, both LLM strategies, one set file per strategy):\n"
        "  python -m sac summarize --datasets cuad,contractnli --strategy generic-llm,expert-llm \\\n"
        "      --summarizer openai --model qwen2.5-coder-1.5b-instruct --base-url http://127.0.0.1:8089/v1 \\\n"
        "      --concurrency 1 --context-chars 5000 --out 'data/demo/summaries/{strategy}.json'",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--strategy", required=True,
                   help="comma-separated: generic, expert, generic-llm, expert-llm, or your own names")
    p.add_argument("--summarizer", default="builtin", help="builtin (offline) or openai (any OpenAI-compatible server)")
    p.add_argument("--model", help="LLM model name (SAC_LLM_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible base URL (SAC_LLM_BASE_URL); key from OPENAI_API_KEY")
    p.add_argument("--prompt-file", help="use this prompt template instead of the built-in one (one strategy)")
    p.add_argument("--concurrency", type=int,
                   help="parallel LLM requests (default 4); 1 suits a local server that answers one at a time")
    p.add_argument("--timeout", type=float,
                   help="seconds to wait for one answer (default 120; at least 900 for a local server)")
    p.add_argument("--context-chars", type=int,
                   help="longest document text sent; longer ones are sent as head and tail (default 24000)")
    p.add_argument("--max-attempts", type=int, help="requests per summary before a too-long reply is cut (default 3)")
    p.add_argument("--out", help="write a summary set JSON file; with several strategies 'DIR/{strategy}.json' or DIR")
    p.add_argument("--meta", action="append", metavar="KEY=VALUE", help="provenance to record in the set (repeatable)")
    p.add_argument("-y", "--yes", action="store_true",
                   help="do not ask before sending requests to a remote API (never asked without a terminal)")
    p.set_defaults(func=cmd_summarize)

    p = sub.add_parser("query", parents=[common, source], help="run one query against every method")
    p.add_argument("text")
    p.add_argument("--methods", default=",".join(BASE_METHODS), help=methods_help)
    p.add_argument("--k", type=int, default=8)
    p.add_argument("--target-doc", help="document id the question is about: flags hits from other documents")
    p.set_defaults(func=cmd_query)

    p = sub.add_parser(
        "survey", parents=[common, source], help="one question, every contract: the best span of each contract",
        description="Search the question inside every contract of --corpus or of one --dataset (no hit from another "
        "document, by construction) and print one line per contract, best first: score, the contract by its parties, "
        "span, text. Options that choose documents (+docs<N>, +names) and +rerank do not apply: every contract is "
        "searched. With --answers, an OpenAI-compatible LLM (--base-url, --model) answers each row from its spans.",
    )
    p.add_argument("question")
    p.add_argument("--methods", default=SURVEY_DEFAULT, help=f"{methods_help} (default {SURVEY_DEFAULT}: inside one "
                   "contract the chunks' own words rank best; a summary, the same on every chunk, does not help)")
    p.add_argument("--k-per-contract", type=int, default=1, help="spans per contract and method (default 1)")
    p.add_argument("--out", help="also write the table: a .csv or .xlsx file")
    p.add_argument("--answers", action="store_true", help="a short answer per contract quoting its spans, from the LLM")
    p.add_argument("--model", help="LLM model name for --answers (SAC_LLM_MODEL)")
    p.add_argument("--base-url", help="OpenAI-compatible base URL for --answers (SAC_LLM_BASE_URL); key from OPENAI_API_KEY")
    p.set_defaults(func=cmd_survey)

    p = sub.add_parser("runs", parents=[common], help="list, show or compare saved runs")
    p.add_argument("action", choices=["list", "show", "compare", "mismatch"],
                   help="mismatch: where a run's wrong-document hits go, per dataset and method")
    p.add_argument("run_ids", nargs="*")
    p.add_argument("--k", type=int, help="mismatch: at this k (default 8)")
    p.add_argument("--top", type=int, default=10, help="mismatch: rows per table (default 10)")
    p.add_argument("--reference", help="show: each method's paired difference to this one (default: baseline, if run)")
    p.add_argument("--resample", choices=["question", "document"], default="question",
                   help="show: what the bootstrap draws (as for eval)")
    p.set_defaults(func=cmd_runs)

    p = sub.add_parser(
        "remove", parents=[common], help="remove documents or a whole corpus, leaving none of their text on disk",
        description="Remove documents of an uploaded corpus (or a whole corpus, --all) with their index records, "
        "summaries, review labels and spans, and the saved runs that hold them; then compact the Chroma store.",
    )
    p.add_argument("--corpus", help="the corpus name (as the Corpus page lists it)")
    p.add_argument("--matter", help="remove this whole matter (its folder under <workspace>/matters/, and its database "
                   "on a Chroma server); --workspace is the deployment's root")
    p.add_argument("doc_ids", nargs="*", metavar="DOC_ID", help="documents to remove")
    p.add_argument("--all", action="store_true", help="remove the whole corpus")
    p.set_defaults(func=cmd_remove)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``sac`` command and return its exit status.

    0 on success; 1 with one line on a SacError; 130 after Ctrl-C (finished work is kept); 141 when the reader of
    the output went away (``| head``).
    """
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args))
        sys.stdout.flush()  # here, where a closed pipe is caught below, not at exit
        return code
    except SacError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted: finished work is kept; run the same command again to continue", file=sys.stderr)
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as other command-line tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error when Python flushes at exit
        return 141

