"""Counting a text in parts: the parts' counts add up to tiktoken's count of the whole.

`split_count` cuts a text where tiktoken's pre-tokenizer splits it in any context; these
properties check the cut rule against tiktoken itself, on text built to sit near every cut
(line ends after letters, digits and punctuation, indents, slashes, carriage returns, marks).
"""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from compaction.tokens import count_joined, get_tokenizer, split_count

PIECES = [
    "a", "Z", "9", "123", "\n", "\r\n", "\r", " ", "  ", "\t", ".", "{", ";", "/", "//", "'s",
    "'", "-", "(", ")", "é", "\u0301", "中", "→", "\u00a0", "x\n", "}\n", "\n\n", "  \n", "\n/",
]  # fmt: skip
texts = st.lists(st.sampled_from(PIECES), max_size=60).map("".join)
encodings = st.sampled_from(["o200k_base", "cl100k_base"])


@given(encodings, texts, texts, texts)
def test_parts_count_as_the_whole_in_any_context(
    encoding: str, text: str, before: str, after: str
) -> None:
    """The text alone, and the text between any neighbours, count as tiktoken counts them."""
    tok = get_tokenizer(encoding)
    parts = split_count(tok, text)
    assert count_joined(tok, [parts]) == len(tok.encode(text))
    assert count_joined(tok, [before, parts, after]) == len(tok.encode(before + text + after))


@given(encodings, texts, texts, texts)
def test_two_counted_texts_joined(encoding: str, one: str, between: str, two: str) -> None:
    """Two counted texts with text between them count as their concatenation (a clip's shape)."""
    tok = get_tokenizer(encoding)
    joined = count_joined(tok, [split_count(tok, one), between, split_count(tok, two)])
    assert joined == len(tok.encode(one + between + two))


@given(texts)
def test_the_parts_hold_the_text(text: str) -> None:
    """The head starts the text and the tail ends it; without a cut the head is all of it."""
    parts = split_count(get_tokenizer(), text)
    assert text.startswith(parts.head)
    assert text.endswith(parts.tail)
    if not parts.tail:
        assert parts.head == text
        assert parts.middle_tokens == 0
