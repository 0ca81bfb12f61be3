"""Where a local embedding model runs: ``SAC_EMBED_DEVICE`` resolved for PyTorch and for onnxruntime.

``auto`` takes CUDA when the runtime reports it, then Apple's MPS (PyTorch only), else the CPU. A device
named explicitly must be there: asking for ``cuda`` on a machine or build without it is an error, not a
quiet run on the CPU. The choice is made from what the runtime reports (``torch.cuda.is_available()``,
``onnxruntime.get_available_providers()``), in pure functions the tests call with any report.
"""

from __future__ import annotations

from collections.abc import Sequence

from sac.config import check_embed_device
from sac.errors import ConfigError, EmbedderError

CUDA_PROVIDER = "CUDAExecutionProvider"
CPU_PROVIDER = "CPUExecutionProvider"
# An onnxruntime provider: its name, or its name with options ("device_id").
Provider = str | tuple[str, dict[str, int]]


def resolve_torch_device(device: str, *, cuda: bool, mps: bool) -> str:
    """The PyTorch device for the setting ``device``, given whether CUDA and MPS are available."""
    check_embed_device(device)
    if device == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if device.startswith("cuda") and not cuda:
        raise EmbedderError(
            f"SAC_EMBED_DEVICE={device} but PyTorch reports no CUDA device (a CPU-only torch build, or no GPU "
            "driver). Install a CUDA build of torch, or set SAC_EMBED_DEVICE=auto or cpu."
        )
    if device == "mps" and not mps:
        raise EmbedderError(
            "SAC_EMBED_DEVICE=mps but PyTorch reports no MPS device (Apple silicon with macOS 12.3 or later). "
            "Set SAC_EMBED_DEVICE=auto or cpu."
        )
    return device


def torch_device(device: str) -> str:
    """The PyTorch device for the setting ``device`` on this machine."""
    import torch  # heavy: loaded when a local model is first placed, so `import sac` stays quick

    mps_backend = getattr(torch.backends, "mps", None)
    mps = bool(mps_backend is not None and mps_backend.is_available())
    return resolve_torch_device(device, cuda=bool(torch.cuda.is_available()), mps=mps)


def onnx_providers(device: str, available: Sequence[str]) -> list[Provider]:
    """The onnxruntime execution providers for the setting ``device``, given the runtime's available ones.

    CUDA comes first when chosen, with the CPU after it for the operators CUDA lacks (onnxruntime places
    each node on the first provider that runs it). ``onnxruntime-gpu`` lists the CUDA provider; the plain
    ``onnxruntime`` wheel does not.
    """
    check_embed_device(device)
    has_cuda = CUDA_PROVIDER in available
    if device == "cpu" or (device == "auto" and not has_cuda):
        return [CPU_PROVIDER]
    if device == "mps":
        raise ConfigError(
            "SAC_EMBED_DEVICE=mps applies to sentence-transformers models; the ONNX backend runs on cuda or cpu"
        )
    if not has_cuda:
        raise EmbedderError(
            f"SAC_EMBED_DEVICE={device} but onnxruntime offers only {list(available)}: install onnxruntime-gpu "
            "(with CUDA and cuDNN), or set SAC_EMBED_DEVICE=auto or cpu."
        )
    _, _, index = device.partition(":")
    cuda: Provider = (CUDA_PROVIDER, {"device_id": int(index)}) if index else CUDA_PROVIDER
    return [cuda, CPU_PROVIDER]
