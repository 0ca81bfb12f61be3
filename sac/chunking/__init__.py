"""Chunking: the recursive splitter with exact spans, heading paths and small-chunk merging.

Also what an index recipe embeds beside each chunk (file and section lines).

Import the modules themselves (``from sac.chunking import split``): this package exports nothing.
"""
