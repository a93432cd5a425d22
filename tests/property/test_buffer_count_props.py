"""Property: `TiktokenTokenizer.count` (ranks read from one buffer) is ``len(encode(text))``.

The count asks tiktoken for the ids as a buffer with no special token allowed, instead of the
list `encode_ordinary` returns; whatever the text (special-token text, lone surrogates, any
script, long or short), the number of ids must be the same.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from compaction.tokens import BUNDLED_ENCODINGS, TiktokenTokenizer

SPECIAL = ("<|endoftext|>", "<|endofprompt|>", "<|fim_prefix|>", "<|", "|>")

texts = st.lists(
    st.one_of(
        st.text(max_size=60),
        st.sampled_from(SPECIAL),
        st.text(alphabet="ab \n\t<|>", max_size=30),
        st.integers(0, 0x10FFFF).map(chr),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts, st.sampled_from(BUNDLED_ENCODINGS))
def test_count_is_the_number_of_ordinary_ids(text: str, encoding: str) -> None:
    tok = TiktokenTokenizer(encoding)
    assert tok.count(text) == len(tok.encode(text))
    long = text * 40  # a text the memo remembers: counted once, then recalled
    assert tok.count(long) == len(tok.encode(long)) == tok.count(long)
