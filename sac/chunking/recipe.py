"""What an index recipe holds: its chunks, and the context lines it embeds between the summary and each chunk."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sac.chunking.context import context_lines
from sac.chunking.merge import merge_small_chunks
from sac.methods import IndexRecipe
from sac.types import Chunk, Document


def index_inputs(
    recipe: IndexRecipe, documents: Sequence[Document], chunks_of: Callable[[Document], list[Chunk]], chunk_size: int,
) -> tuple[list[Chunk], dict[str, str]]:
    """The chunks this recipe's index holds, and the context it embeds between the summary and each chunk.

    Under ``+merge<N>`` small chunks are joined to a neighbour. The context maps a chunk id to its file and section
    lines (sac.chunking.context); most recipes have none."""
    sections, filename = recipe.sections, recipe.file_names
    chunks: list[Chunk] = []
    prefixes: dict[str, str] = {}
    for doc in documents:
        own = chunks_of(doc)
        own = merge_small_chunks(doc, own, recipe.merge, chunk_size) if recipe.merge else own
        chunks.extend(own)
        if sections or filename:
            lines = context_lines(doc.doc_id, doc.text, [(c.span.start, c.span.end) for c in own],
                                  sections=sections, filename=filename)
            prefixes.update((c.chunk_id, line) for c, line in zip(own, lines) if line)
    return chunks, prefixes
