"""Issue 42, item 6: a token count read from a log is untrusted input.

A checkpoint records the context's count so that a reopen needs no tokenizer
(`compaction.session._recorded_count`). A hostile or broken writer can put any figure there. A
figure the schema refuses (not an integer, negative, past `MAX_INT`, a name too long or empty, a
field of its own) makes the line malformed, reported with the file and line like any other bad
field; a well-formed record that names another tokenizer or disagrees with the checkpoint's own
`tokens_after` is ignored and the session counts. Only a record consistent with its checkpoint
is read, as the log's word, like the checkpoint's other figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compaction import CompactionPolicy, LogFormatError, Message, Session, compact
from compaction.contract import MAX_INT, MAX_TOKENIZER_NAME_CHARS
from compaction.tokens import TiktokenTokenizer


def write(log: Path) -> int:
    with Session(log) as s:
        s.append_many(
            Message(role="user", content=f"step {i}: " + "words " * 40) for i in range(30)
        )
        compact(s, CompactionPolicy(), force=True)
        return s.context_tokens


def forge(log: Path, counted: Any, tokens_after: int | None = None) -> int:
    """Replace the checkpoint's record (and `tokens_after`); return the checkpoint's line."""
    lines = log.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        event = json.loads(line)
        if event["type"] == "compaction/checkpoint":
            event["data"]["counted"] = counted
            if tokens_after is not None:
                event["data"]["tokens_after"] = tokens_after
            lines[i] = json.dumps(event)
            found = i + 1
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return found


def reopened_count(log: Path) -> tuple[int, bool]:
    """Return a lazy reopen's `context_tokens` and whether it loaded the tokenizer for it."""
    with Session(log) as s:
        tokens = s.context_tokens
        return tokens, s._usage_p is not None


def counted_from_every_event(log: Path) -> int:
    with Session(log, tokenizer=TiktokenTokenizer()) as s:
        return s.context_tokens


NAME = "tiktoken:o200k_base"


@pytest.mark.parametrize(
    ("counted", "why"),
    [
        ({"tokenizer": NAME, "tokens": -1}, "negative"),
        ({"tokenizer": NAME, "tokens": MAX_INT + 1}, "past MAX_INT"),
        ({"tokenizer": NAME, "tokens": "12"}, "a string"),
        ({"tokenizer": NAME, "tokens": 1.5}, "a fraction"),
        ({"tokenizer": NAME, "tokens": 12.0}, "a float"),
        ({"tokenizer": NAME, "tokens": True}, "a boolean"),
        ({"tokenizer": 7, "tokens": 12}, "a name that is a number"),
        ({"tokenizer": NAME}, "no count"),
        ({"tokenizer": "", "tokens": 12}, "no name"),
        ({"tokenizer": "x" * (MAX_TOKENIZER_NAME_CHARS + 1), "tokens": 12}, "a name too long"),
        ({"tokenizer": NAME, "tokens": 12, "trust": True}, "a field of its own"),
        ([NAME, 12], "not an object"),
    ],
)
def test_a_record_the_schema_refuses_is_a_bad_line(tmp_path: Path, counted: Any, why: str) -> None:
    """A malformed record is refused with the file and line, never read as a count."""
    log = tmp_path / "s.jsonl"
    write(log)
    line = forge(log, counted)
    with pytest.raises(LogFormatError) as caught:
        reopened_count(log)
    assert (caught.value.path, caught.value.line) == (str(log), line), why
    assert "skip" in str(caught.value)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"tokens": 1}, "far below tokens_after"),
        ({"tokens": MAX_INT}, "far above tokens_after"),
        ({"tokenizer": "tiktoken:cl100k_base"}, "another tokenizer"),
        ({"tokenizer": "deepseek"}, "another tokenizer family"),
        ({"tokenizer": "tiktoken:o200k_base "}, "a name that only looks the same"),
    ],
)
def test_a_record_that_does_not_hold_together_is_ignored(
    tmp_path: Path, change: dict[str, Any], why: str
) -> None:
    """The session counts instead, and gets the count of every event."""
    log = tmp_path / "s.jsonl"
    tokens = write(log)
    forge(log, {"tokenizer": NAME, "tokens": tokens} | change)
    assert reopened_count(log) == (counted_from_every_event(log), True), why


def test_an_off_by_one_record_is_ignored(tmp_path: Path) -> None:
    """A record one token off its checkpoint's `tokens_after` is not read (exactly at the edge)."""
    log = tmp_path / "s.jsonl"
    tokens = write(log)
    for off in (-1, 1):
        forge(log, {"tokenizer": NAME, "tokens": tokens + off})
        assert reopened_count(log) == (tokens, True)
    forge(log, {"tokenizer": NAME, "tokens": tokens})
    assert reopened_count(log) == (tokens, False)


def test_a_consistent_forgery_is_the_logs_word_until_the_next_compaction(tmp_path: Path) -> None:
    """A record and `tokens_after` forged alike are read (as a forged message would be) ...

    ... until a compaction: it counts every event, and its record (the true count) disagrees
    with its `tokens_after` (which the forged figure fed), so the next reopen counts; after a
    second compaction the records hold together again.
    """
    log = tmp_path / "s.jsonl"
    tokens = write(log)
    forge(log, {"tokenizer": NAME, "tokens": 5}, tokens_after=5)
    assert reopened_count(log) == (5, False)
    for loaded in (True, False):
        with Session(log) as s:
            s.append(Message(role="user", content="and now?"))
            compact(s, CompactionPolicy(), force=True)
            healed = s.context_tokens
        assert reopened_count(log) == (healed, loaded)
        assert healed == counted_from_every_event(log) > tokens // 2
