"""Where local embedders run (SAC_EMBED_DEVICE): the choice given what PyTorch and onnxruntime report.

This machine has no GPU, so nothing here runs on CUDA: the choice logic is checked for every report a
runtime can give, and the real runtimes here are checked to resolve to what they report.
"""

from __future__ import annotations

import onnxruntime as ort
import pytest
import torch

from sac.config import SacConfig
from sac.embedding.devices import onnx_providers, resolve_torch_device, torch_device
from sac.embedding.models import SentenceTransformerEmbedder
from sac.errors import ConfigError, EmbedderError

CPU, CUDA = "CPUExecutionProvider", "CUDAExecutionProvider"
PLAIN_ORT = ["AzureExecutionProvider", CPU]  # what the onnxruntime wheel lists
GPU_ORT = ["TensorrtExecutionProvider", CUDA, CPU]  # what onnxruntime-gpu lists


@pytest.mark.parametrize(("setting", "cuda", "mps", "expected"), [
    ("auto", True, True, "cuda"),
    ("auto", False, True, "mps"),
    ("auto", False, False, "cpu"),
    ("cpu", True, True, "cpu"),
    ("cuda", True, False, "cuda"),
    ("cuda:1", True, False, "cuda:1"),
    ("mps", False, True, "mps"),
])
def test_torch_device_follows_the_setting_and_the_runtime(setting, cuda, mps, expected):
    assert resolve_torch_device(setting, cuda=cuda, mps=mps) == expected


@pytest.mark.parametrize(("setting", "missing"), [("cuda", "CUDA"), ("cuda:0", "CUDA"), ("mps", "MPS")])
def test_a_device_asked_for_must_be_there(setting, missing):
    with pytest.raises(EmbedderError, match=f"SAC_EMBED_DEVICE={setting} but PyTorch reports no {missing} device"):
        resolve_torch_device(setting, cuda=False, mps=False)


def test_unknown_device_settings_are_config_errors():
    for bad in ("gpu", "CUDA", "cuda:", "cuda:x", ""):
        with pytest.raises(ConfigError, match="Expected SAC_EMBED_DEVICE to be one of"):
            resolve_torch_device(bad, cuda=True, mps=True)
        with pytest.raises(ConfigError):
            SacConfig(embed_device=bad)


def test_this_machines_torch_resolves_to_what_it_reports():
    mps = torch.backends.mps.is_available()
    assert torch_device("auto") == ("cuda" if torch.cuda.is_available() else "mps" if mps else "cpu")
    assert torch_device("cpu") == "cpu"


@pytest.mark.slow
def test_sentence_transformers_load_on_the_configured_device():
    assert SentenceTransformerEmbedder(device="cpu").device == "cpu"
    if torch.cuda.is_available():
        assert SentenceTransformerEmbedder(device="cuda").device.startswith("cuda")
    else:  # the CPU-only torch here: asking for CUDA fails before any model is loaded
        with pytest.raises(EmbedderError, match="Install a CUDA build of torch"):
            SentenceTransformerEmbedder(device="cuda")


@pytest.mark.parametrize(("setting", "available", "expected"), [
    ("auto", PLAIN_ORT, [CPU]),
    ("auto", GPU_ORT, [CUDA, CPU]),
    ("cpu", GPU_ORT, [CPU]),
    ("cuda", GPU_ORT, [CUDA, CPU]),
    ("cuda:1", GPU_ORT, [(CUDA, {"device_id": 1}), CPU]),
])
def test_onnx_takes_cuda_when_onnxruntime_offers_it(setting, available, expected):
    assert onnx_providers(setting, available) == expected


def test_onnx_cuda_asked_for_without_the_gpu_runtime_says_what_to_install():
    with pytest.raises(EmbedderError, match="install onnxruntime-gpu"):
        onnx_providers("cuda", PLAIN_ORT)
    with pytest.raises(ConfigError, match="mps applies to sentence-transformers models"):
        onnx_providers("mps", GPU_ORT)


def test_this_machines_onnxruntime_offers_what_the_choice_assumes():
    # The onnxruntime wheel installed here lists no CUDA provider, so "auto" means the CPU.
    available = ort.get_available_providers()
    assert onnx_providers("auto", available) == ([CUDA, CPU] if CUDA in available else [CPU])
