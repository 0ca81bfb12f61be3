"""Summaries: prompts, the built-in extractive summarizer, the OpenAI-compatible one, the store, runs.

Import the modules themselves (``from sac.index import store``): this package exports nothing.
"""
