"""The receipt's search of a span: one joined search finds what testing each message finds.

`compaction.compactor._receipt` lists, for each item
a Checkpoint left out, the seqs of the first messages
that hold its head (flattened). It searches all the span's texts at once, as UTF-8; these
properties hold it to the obvious reference (flatten each message, test each in turn) on text
built of wide characters, line breaks, runs of spaces and near-repeats of the head.
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compaction.compactor._receipt import HEAD, MAX_SEQS, _flat, _Haystacks
from compaction.events import Message
from compaction.summarizers import SummaryInput

PIECES = ["ab", "b", "a b", "\n", "  ", "\t", "é", "中", "😀", "\u00a0", "\u2028", "x", "ab a"]
texts = st.lists(st.sampled_from(PIECES), max_size=12).map("".join)


def reference(head: str, messages: list[Message], seqs: list[int]) -> tuple[int, ...]:
    """Flatten each message's text and its calls' arguments; test each message in turn."""
    hits = []
    for seq, m in zip(seqs, messages, strict=False):
        calls = " ".join(c.function.arguments for c in m.tool_calls or ())
        if head in _flat(f"{m.text()} {calls}"):
            hits.append(seq)
    return tuple(hits[:MAX_SEQS])


def span_of(contents: list[str]) -> tuple[SummaryInput, list[Message], list[int]]:
    messages = [Message(role="user", content=c) for c in contents]
    seqs = [3 * i + 2 for i in range(len(messages))]
    span = SummaryInput(
        messages=tuple(messages), seqs=tuple(seqs), previous=None, todos=(), budget_tokens=100
    )
    return span, messages, seqs


@given(st.lists(texts, max_size=14), texts)
def test_joined_search_finds_what_each_message_holds(contents: list[str], item: str) -> None:
    """The seqs found are the first `MAX_SEQS` whose flattened text holds the head, in order."""
    head = _flat(item)[:HEAD]
    span, messages, seqs = span_of(contents)
    if head:
        assert _Haystacks(span).seqs_of(head) == reference(head, messages, seqs)


@given(st.lists(texts, min_size=1, max_size=14))
def test_a_head_spanning_two_messages_is_in_neither(contents: list[str]) -> None:
    """The end of one message and the start of the next are never taken for one text."""
    span, messages, seqs = span_of([*contents, "tail"])
    head = _flat(f"{_flat(contents[-1])[-3:]} tail").strip()
    assert _Haystacks(span).seqs_of(head) == reference(head, messages, seqs)
