"""HTML for texts with highlighted spans: escape first, then mark.

Every piece of document text, summary, file name or query is passed through ``html.escape`` before it is
placed in HTML. The only markup emitted is this module's own ``<div>``, ``<mark>`` and ``<span>`` tags
with fixed classes and inline styles, so a document containing ``<script>`` shows as text. The output is
one line with no blank lines: Streamlit's markdown then treats it as a single raw HTML block and never
reads ``*``, ``#``, ``$`` or ``[..](..)`` inside document text as markdown.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from sac.types import Span

# Kinds of marks, in drawing priority (later styles win where marks overlap).
MARK_STYLES: dict[str, str] = {
    "chunk": "background:#e0ecff;",  # the retrieved chunk, in its document context
    "gold": "background:#ffe08a;border-bottom:2px solid #d49b00;",  # ground-truth overlap
    "selected": "background:#b7f0c1;border-bottom:2px solid #1f8a3b;",  # a span being marked as new ground truth
}
BADGE_STYLES: dict[str, str] = {
    "wrong": "background:#fde2e1;color:#a4141b;border:1px solid #e8a3a0;",
    "right": "background:#e3f5e6;color:#17692c;border:1px solid #9fd6aa;",
    "neutral": "background:#eef0f3;color:#39414d;border:1px solid #cfd4da;",
}
_BADGE_BASE = "display:inline-block;padding:0 6px;border-radius:4px;font-size:0.8em;font-weight:600;margin-right:4px;"
_TEXT_STYLE = (
    "white-space:pre-wrap;word-break:break-word;font-size:0.86em;line-height:1.5;"
)
_CARD_STYLE = "border:1px solid #d6dae0;border-radius:6px;padding:6px 8px;margin:0 0 6px 0;"
_WRONG_CARD_STYLE = "border:2px solid #d9534f;border-radius:6px;padding:6px 8px;margin:0 0 6px 0;background:#fffafa;"


@dataclass(frozen=True, slots=True)
class Mark:
    """A span to highlight, in the same coordinates as the ``offset`` given with the text."""

    start: int
    end: int
    kind: str = "gold"


def escape(text: str) -> str:
    """``html.escape`` with quotes, and newlines as ``<br>`` so the HTML stays on one line."""
    return html.escape(text, quote=True).replace("\r", "").replace("\n", "<br>")


def _compact(text: str) -> str:
    """Fewer blank lines and space runs (CUAD texts are full of them); display only."""
    text = re.sub(r"[ \t\f\v]*\n[ \t\f\v\n]*\n[ \t\f\v\n]*", "\n\n", text)
    return re.sub(r"[ \t\f\v]{3,}", "  ", text)


def render_text(
    text: str, marks: Iterable[Mark] = (), *, offset: int = 0, compact: bool = False,
) -> str:
    """``text`` as escaped HTML with ``marks`` highlighted.

    Args:
        text: untrusted text, e.g. a chunk or a window of a document.
        marks: spans in document coordinates; ``offset`` is where ``text`` starts in the document.
            Marks are clipped to the text; overlapping marks of different kinds combine their styles.
        compact: collapse runs of blank lines and spaces inside each piece (display only).
    """
    n = len(text)
    clipped = [
        (max(m.start - offset, 0), min(m.end - offset, n), m.kind)
        for m in marks
        if m.kind in MARK_STYLES and m.end - offset > 0 and m.start - offset < n and m.end > m.start
    ]
    cuts = sorted({0, n, *(s for s, _, _ in clipped), *(e for _, e, _ in clipped)})
    order = list(MARK_STYLES)
    parts: list[str] = []
    for a, b in zip(cuts, cuts[1:]):
        piece = text[a:b]
        if compact:
            piece = _compact(piece)
        body = escape(piece)
        kinds = sorted({k for s, e, k in clipped if s <= a and b <= e}, key=order.index)
        if kinds:
            style = "".join(MARK_STYLES[k] for k in kinds) + "padding:0;"
            classes = " ".join(f"sac-{k}" for k in kinds)
            body = f'<mark class="sac-mark {classes}" style="{style}">{body}</mark>'
        parts.append(body)
    return f'<div class="sac-text" style="{_TEXT_STYLE}">{"".join(parts)}</div>'


def render_badge(label: str, kind: str = "neutral") -> str:
    """A small coloured label as HTML; ``kind`` picks its colours from ``BADGE_STYLES`` (unknown kinds: neutral)."""
    style = BADGE_STYLES.get(kind, BADGE_STYLES["neutral"])
    return f'<span class="sac-badge sac-badge-{kind if kind in BADGE_STYLES else "neutral"}" ' \
        f'style="{_BADGE_BASE}{style}">{escape(label)}</span>'


def gold_marks(span: Span, gold: Sequence[Span], kind: str = "gold") -> list[Mark]:
    """The parts of ``gold`` that fall inside ``span`` (same document), as marks in document coordinates."""
    out = []
    for g in gold:
        if g.doc_id == span.doc_id and g.end > span.start and g.start < span.end:
            out.append(Mark(max(g.start, span.start), min(g.end, span.end), kind))
    return out


def render_hit(
    *,
    rank: int,
    title: str,
    score: float,
    text: str,
    span: Span,
    gold: Sequence[Span] = (),
    wrong: bool | None = None,
    extra_marks: Iterable[Mark] = (),
    compact: bool = True,
) -> str:
    """One retrieved chunk as an HTML card: rank, document, score, a right/wrong-document badge, highlighted text.

    The text has its ground-truth overlap highlighted. ``wrong`` is None when no target document is known."""
    badges = []
    if wrong is True:
        badges.append(render_badge("✗ wrong document", "wrong"))
    elif wrong is False:
        badges.append(render_badge("✓ right document", "right"))
    overlap = sum(m.end - m.start for m in gold_marks(span, gold))
    if overlap:
        badges.append(render_badge(f"{overlap} ground-truth chars", "neutral"))
    head = (
        f'<div class="sac-hit-head" style="font-size:0.85em;margin-bottom:3px;">'
        f"<b>#{int(rank)}</b> · <b>{escape(title)}</b> · score {float(score):.3f} "
        f'<span style="color:#6b7280;">[{int(span.start)}, {int(span.end)})</span><br>{"".join(badges)}</div>'
    )
    body = render_text(text, [*gold_marks(span, gold), *extra_marks], offset=span.start, compact=compact)
    card_class = "sac-hit sac-hit-wrong" if wrong else "sac-hit"
    style = _WRONG_CARD_STYLE if wrong else _CARD_STYLE
    return f'<div class="{card_class}" style="{style}">{head}{body}</div>'


def context_window(doc_text: str, start: int, end: int, margin: int = 700) -> tuple[str, int]:
    """The text around ``[start, end)`` and where it starts: ``margin`` characters each side."""
    lo = max(0, start - margin)
    hi = min(len(doc_text), end + margin)
    return doc_text[lo:hi], lo


def render_context(doc_text: str, span: Span, gold: Sequence[Span] = (), margin: int = 700) -> str:
    """The hit inside its document: the chunk shaded, ground truth highlighted on top."""
    window, lo = context_window(doc_text, span.start, span.end, margin)
    marks = [Mark(span.start, span.end, "chunk"), *(Mark(g.start, g.end, "gold") for g in gold if g.doc_id == span.doc_id)]
    prefix = "… " if lo > 0 else ""
    suffix = " …" if lo + len(window) < len(doc_text) else ""
    inner = render_text(window, marks, offset=lo, compact=True)
    return f'<div class="sac-context">{escape(prefix)}{inner}{escape(suffix)}</div>'


def render_plain(text: str, *, muted: bool = False) -> str:
    """Untrusted text (a summary, a file name list) as escaped HTML, without marks."""
    color = "color:#4b5563;" if muted else ""
    return f'<div class="sac-plain" style="font-size:0.85em;{color}white-space:pre-wrap;">{escape(text)}</div>'


def render_labelled(label: str, text: str) -> str:
    """``label: text`` with the label bold; both escaped."""
    return (
        f'<div class="sac-plain" style="font-size:0.85em;white-space:pre-wrap;">'
        f"<b>{escape(label)}</b> {escape(text)}</div>"
    )
