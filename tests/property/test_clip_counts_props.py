"""A text counted at cuts: any head and any tail of it count as tiktoken counts them.

`compaction.views._clip_counts` counts a long tool result once, in
segments between cuts, and derives the
counts of the heads and tails the clip check tries from those segments. These properties check
each derived count against tiktoken itself, on text built to sit near every cut (the pieces of
`test_split_count_props`), with a small step so that a text has many cuts, and beside any
neighbours (the note and the message's affixes).
"""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from compaction import Message
from compaction.tokens import count_joined, count_message, get_tokenizer
from compaction.views._clip_counts import cut_counts
from compaction.views.clipping import clip_and_count, shown_message

PIECES = [
    "a", "Z", "9", "123", "\n", "\r\n", "\r", " ", "  ", "\t", ".", "{", ";", "/", "//", "'s",
    "'", "-", "(", ")", "é", "\u0301", "中", "→", "\u00a0", "x\n", "}\n", "\n\n", "  \n", "\n/",
    "line 1\n", "  ok\n", "err: x\n",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=120).map("".join)
small = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
encodings = st.sampled_from(["o200k_base", "cl100k_base"])


@given(encodings, texts, st.integers(0, 40), small, small, st.integers(0, 10**4))
# Issue 39: a head ending just past a cut ("line 1\n") was counted with that cut as its last, so
# a line break after it (joining the head's last one in one pre-token) was counted one too many.
@example("o200k_base", "a" * 24 + "  //x\n" + "line 1\n" * 3 + "a", 0, "", "\n", 51)
def test_every_head_and_tail_counts_as_tiktoken_counts_it(
    encoding: str, text: str, step: int, before: str, after: str, drawn: int
) -> None:
    """The whole, a head and a tail of any length, alone and between neighbours, count exactly."""
    tok = get_tokenizer(encoding)
    counted = cut_counts(tok, text, step)
    if counted is None:
        return
    assert counted.total == len(tok.encode(text))
    assert count_joined(tok, [counted.whole()]) == counted.total
    chars = drawn % (len(text) + 1)
    head, head_tokens = counted.head(tok, chars)
    assert head_tokens == len(tok.encode(text[:chars]))
    want = len(tok.encode(before + text[:chars] + after))
    assert count_joined(tok, [before, head, after]) == want
    tail, tail_tokens = counted.tail(tok, chars)
    tail_text = text[len(text) - chars :]
    assert tail_tokens == len(tok.encode(tail_text))
    assert count_joined(tok, [before, tail, after]) == len(tok.encode(before + tail_text + after))


@given(st.integers(50, 400), st.integers(1, 400), st.integers(1, 10**6))
def test_the_clip_check_counts_the_shown_message_exactly(lines: int, cap: int, seq: int) -> None:
    """A clipped result's count (from the cut counts) is the count of the message shown."""
    tok = get_tokenizer()
    text = "".join(f"line {i}: {'x' * (i % 37)} done\n" for i in range(lines))
    message = Message(role="tool", tool_call_id="c", content=text)
    clipped, shown = clip_and_count(message, tok, cap)
    assert shown is not None
    assert shown.tokens(tok, seq) == count_message(tok, shown_message(clipped, seq))
