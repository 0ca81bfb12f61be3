"""Embedding: the packaged MiniLM, any sentence-transformers model, OpenAI-compatible servers, shipped vectors.

The packaged MiniLM runs on PyTorch or ONNX; shipped vectors come with a benchmark.

Import the modules themselves (``from sac.embedding import models``): this package exports nothing.
"""
