"""Escape-then-mark HTML: untrusted text never becomes markup, marks land on the right characters."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from sac.render.highlight import Mark, context_window, escape, gold_marks, render_context, render_hit, render_text
from sac.types import Span

EVIL = (
    'Clause 1 <script>window.__pwned = 1</script> and <img src=x onerror="window.__pwned=2"> '
    '<a href="javascript:alert(1)">click</a> & "quotes" \'single\''
)
OWN_TAGS = {"div", "mark", "span", "b", "br"}


class _Tags(HTMLParser):
    """Collects start tags, their attributes and the text as a browser would see it."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "br":
            self.text.append("\n")

    def handle_data(self, data):
        self.text.append(data)


def _parse(markup: str) -> _Tags:
    parser = _Tags()
    parser.feed(markup)
    parser.close()
    return parser


def _marked(markup: str) -> list[str]:
    """The text inside each <mark>, in order."""
    return ["".join(_parse(m).text) for m in re.findall(r"<mark[^>]*>(.*?)</mark>", markup)]


def test_hostile_text_renders_as_text_with_only_our_tags():
    markup = render_text(EVIL, [Mark(0, 8)])
    parsed = _parse(markup)
    assert {tag for tag, _ in parsed.tags} <= OWN_TAGS
    assert all(not any(k.startswith("on") or k == "href" for k in attrs) for _, attrs in parsed.tags)
    assert "".join(parsed.text) == EVIL
    assert "<script" not in markup and "&lt;script&gt;" in markup


def test_marks_cover_exactly_the_span_in_document_coordinates():
    doc = "0123456789abcdefghij"
    markup = render_text(doc[5:15], [Mark(8, 12), Mark(0, 6)], offset=5)
    assert _marked(markup) == ["5", "89ab"]


def test_overlapping_marks_of_two_kinds_combine():
    markup = render_text("abcdefgh", [Mark(0, 6, "chunk"), Mark(4, 8, "gold")])
    assert 'class="sac-mark sac-chunk"' in markup
    assert 'class="sac-mark sac-chunk sac-gold"' in markup
    assert _marked(markup) == ["abcd", "ef", "gh"]


def test_output_is_one_line_so_markdown_never_parses_document_text():
    text = "# Heading\n\n* bullet *emph* $x$ [link](http://x)\n\n\n    code"
    markup = render_text(text, [Mark(2, 9)])
    assert "\n" not in markup
    assert "".join(_parse(markup).text) == text


def test_gold_marks_clip_to_the_hit_and_ignore_other_documents():
    span = Span("A", 100, 200)
    gold = [Span("A", 50, 120), Span("A", 190, 400), Span("B", 100, 200), Span("A", 300, 400)]
    assert [(m.start, m.end) for m in gold_marks(span, gold)] == [(100, 120), (190, 200)]


def test_hit_card_flags_wrong_document_and_escapes_the_title():
    card = render_hit(rank=1, title='<img src=x onerror="x()">.txt', score=0.5, text="body",
                      span=Span("B", 0, 4), gold=[Span("A", 0, 4)], wrong=True)
    assert "sac-hit-wrong" in card and "wrong document" in card
    assert "<img" not in card and "&lt;img" in card
    right = render_hit(rank=2, title="a.txt", score=0.5, text="body text", span=Span("A", 0, 9),
                       gold=[Span("A", 5, 9)], wrong=False)
    assert "right document" in right and _marked(right) == ["text"]
    neutral = render_hit(rank=3, title="a.txt", score=0.1, text="x", span=Span("A", 0, 1))
    assert "wrong document" not in neutral and "right document" not in neutral


def test_context_shows_the_hit_inside_its_document():
    doc = "x" * 1000 + "HIT TEXT" + "y" * 1000
    window, lo = context_window(doc, 1000, 1008, margin=10)
    assert window == "x" * 10 + "HIT TEXT" + "y" * 10 and lo == 990
    markup = render_context(doc, Span("A", 1000, 1008), [Span("A", 1004, 1008)], margin=10)
    assert _marked(markup) == ["HIT ", "TEXT"]
    assert markup.count("…") == 2


@given(st.text(max_size=200), st.lists(st.tuples(st.integers(0, 220), st.integers(0, 220)), max_size=5))
def test_any_text_round_trips_and_emits_only_our_tags(text, pairs):
    marks = [Mark(min(a, b), max(a, b)) for a, b in pairs]
    markup = render_text(text, marks)
    parsed = _parse(markup)
    assert {tag for tag, _ in parsed.tags} <= OWN_TAGS
    assert "".join(parsed.text) == text.replace("\r", "")


def test_escape_quotes_and_newlines():
    assert escape('a<b>&"c\'\nd') == "a&lt;b&gt;&amp;&quot;c&#x27;<br>d"
