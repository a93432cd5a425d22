"""The count memo and the error-line fast path give exactly what the slow way gives."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import error_scan_texts

from compaction import get_tokenizer
from compaction.summarizers._base import SummaryInput
from compaction.summarizers._failures import (
    _CODE_LINE,
    _FAILURE_HEADER,
    ERROR_MARK,
    LINE_CHARS,
    error_lines,
)
from compaction.tokens import CountMemo

WORDS = st.sampled_from(["error: ", "FAIL", "ok ", "x.go:3:5: ", "E   bad", "\n", "a", " ", "é"])
TEXTS = st.lists(WORDS, max_size=80).map("".join)


class Calls:
    """A counter that records each text it is asked to count (the length is its count)."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def __call__(self, text: str) -> int:
        self.texts.append(text)
        return len(text)


@given(st.lists(TEXTS, max_size=40), st.integers(1, 64), st.integers(0, 8), st.integers(0, 80))
def test_memo_returns_the_counters_answer_within_its_bound(
    texts: list[str], max_chars: int, min_chars: int, max_text: int
) -> None:
    """Every count equals the counter's; what is remembered never exceeds `max_chars`."""
    memo = CountMemo(max_chars=max_chars, min_chars=min_chars, max_text=max_text)
    counter = Calls()
    for text in texts:
        assert memo.count(text, counter) == len(text)
        assert memo.chars <= max_chars


def test_memo_counts_a_text_once_and_forgets_the_least_recent() -> None:
    """A repeat is answered from memory; past the bound the least recently used text goes."""
    memo, counter = CountMemo(max_chars=80, min_chars=4), Calls()
    a, b, c = "a" * 10, "b" * 10, "c" * 10
    for text in (a, b, a, a):
        memo.count(text, counter)
    assert counter.texts == [a, b]
    assert memo.chars == 20
    memo.count("x" * 3, counter)  # under min_chars: counted every time, never kept
    memo.count("x" * 3, counter)
    assert counter.texts[-2:] == ["xxx", "xxx"]
    assert memo.chars == 20
    memo.count("y" * 11, counter)  # over max_chars // 8 = 10: never kept
    assert memo.chars == 20
    memo = CountMemo(max_chars=25, min_chars=4, max_text=10)
    counter = Calls()
    for text in (a, b, a, c):  # c pushes out b, the least recently used
        memo.count(text, counter)
    assert memo.chars == 20
    memo.count(a, counter)
    memo.count(b, counter)
    assert counter.texts == [a, b, c, b]


def test_memo_is_shared_safely_by_threads() -> None:
    """Eight threads counting the same texts all get the right counts; the bound holds."""
    memo = CountMemo(max_chars=400, min_chars=1)
    texts = [chr(97 + i % 26) * (10 + i % 40) for i in range(200)]
    wrong: list[str] = []

    def work() -> None:
        for text in texts * 3:
            if memo.count(text, len) != len(text):
                wrong.append(text)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert memo.chars <= 400


@settings(max_examples=25)
@given(
    st.lists(st.sampled_from(["def f(x):\n", "hello world ", "🎉 ", "Error: no\n"]), max_size=300)
)
def test_tokenizer_counts_equal_a_fresh_encoding(parts: list[str]) -> None:
    """The remembered count of a text is its encoding's length, asked for once or many times."""
    tokenizer = get_tokenizer()
    text = "".join(parts)
    fresh = len(tokenizer.encode(text))
    assert tokenizer.count(text) == fresh
    assert tokenizer.count(text) == fresh


def reference_error_lines(text: str) -> list[str]:
    """The rule written line by line, each line searched on its own (no whole-text pass)."""
    lines = text.split("\n")
    out: list[str] = []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or _CODE_LINE.match(line) or not ERROR_MARK.search(raw):
            continue
        if _FAILURE_HEADER.match(line):
            message = next((m.strip() for m in lines[i + 1 : i + 4] if m.strip()), "")
            if message and not ERROR_MARK.search(message):
                line = f"{line} {message}"
        out.append(line[:LINE_CHARS])
    return out


MARKS = "error: |Error[E0308]: |FAILED|1 failed|--- FAIL: T|FAIL|fatal: |-fatal: |panic: "
MARKS += "|x.go:3:5: |E   bad|Exit code 2|_____ test_x _____|raise KeyError: "
MARKED = st.sampled_from(MARKS.split("|"))
OUTPUTS = st.lists(st.one_of(WORDS, MARKED, st.text(max_size=5)), max_size=60).map("".join)


@given(OUTPUTS)
def test_error_lines_equal_the_line_by_line_rule(text: str) -> None:
    """The one-pass search finds exactly the lines, headers and messages the slow way does."""
    assert error_lines(text) == reference_error_lines(text)


@given(error_scan_texts)
def test_error_lines_prefilter_misses_no_mark(text: str) -> None:
    """The literal prefilter keeps every line the plain rule marks, near misses included."""
    assert error_lines(text) == reference_error_lines(text)


def test_span_facts_are_read_once() -> None:
    """A summarizer and the settling read the same facts: the span is read on the first call."""
    span = SummaryInput(messages=(), seqs=(), previous=None, todos=(), budget_tokens=100)
    assert span.facts() is span.facts()
