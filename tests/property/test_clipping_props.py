"""Clipping an oversized tool output: head and tail of the text, within the cap, deterministic."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import clip_texts

from compaction import Message, get_tokenizer
from compaction.views.clipping import NOTE_TOKENS, clip_tool_output, shown_message

TOK = get_tokenizer()


@given(clip_texts, st.integers(1, 3_000), st.integers(1, 10**6))
def test_clip_keeps_a_prefix_and_a_suffix_within_the_cap(text: str, cap: int, seq: int) -> None:
    """At or under the cap nothing changes; over it, head and tail fit the cap beside the note."""
    message = Message(role="tool", tool_call_id="c", content=text)
    clipped = clip_tool_output(message, TOK, cap)
    total = TOK.count(text)
    if total <= cap:
        assert clipped is message
        assert shown_message(clipped, seq) == message
        return
    clip = clipped.clip
    assert clip is not None
    assert clipped.content == text  # the log keeps it whole
    head, tail = text[: clip.head_chars], text[len(text) - clip.tail_chars :]
    assert clip.head_chars + clip.tail_chars < len(text)
    assert TOK.count(head) + TOK.count(tail) <= max(0, cap - NOTE_TOKENS)
    assert clip.omitted_tokens == total - TOK.count(head) - TOK.count(tail)
    shown = shown_message(clipped, seq).text()
    assert shown.startswith(head)
    assert shown.endswith(tail)
    assert f"--seq {seq}`" in shown
    assert clip_tool_output(message, TOK, cap) == clipped  # same input, same decision
