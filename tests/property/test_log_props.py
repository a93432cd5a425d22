"""Properties of the log's tail, checked against plain-Python references.

- `_last_line` finds the same line as splitting the whole file on newlines and taking the last
  line that is not blank, for files whose lines straddle its 4 KiB read chunks.
- An append to any log a crash or a person could leave (blank lines between and after events,
  a last event without its newline, a torn last line, a blank last line without its newline)
  destroys no byte and writes none twice: the file before it is a prefix of the file after it
  (the torn tail excepted, which is saved beside the log byte for byte), the new event's seq
  follows the last one, and the reader reads every event once, in order.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from compaction import Message, SessionLog, read_events
from compaction.events import dump_event, make_event
from compaction.stores._log_tail import last_line as _last_line

WHITESPACE = b" \t\r\x0b\x0c"


def reference_last_line(data: bytes) -> tuple[int, bytes] | None:
    """Split on newlines; the last line whose `strip()` is not empty, and where it begins."""
    lines = data.split(b"\n")
    offsets, pos = [], 0
    for i, line in enumerate(lines):
        offsets.append(pos)
        pos += len(line) + (i < len(lines) - 1)
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip():
            ending = b"\n" if i < len(lines) - 1 else b""
            return offsets[i], lines[i] + ending
    return None


blank_lines = st.binary(min_size=0, max_size=6).map(
    lambda b: bytes(WHITESPACE[x % len(WHITESPACE)] for x in b)
)
text_lines = st.tuples(
    st.integers(0, 9000), st.sampled_from([b"x", b"\xc3\xa9", b" a", b"\r"]), blank_lines
).map(lambda t: b"{" + (t[1] * t[0])[: t[0]] + t[2])
files = st.tuples(st.lists(st.one_of(blank_lines, text_lines), max_size=6), st.booleans()).map(
    lambda t: b"\n".join(t[0]) + (b"\n" if t[1] and t[0] else b"")
)


@given(data=files)
def test_last_line_matches_the_reference(data: bytes) -> None:
    with tempfile.TemporaryFile() as fh:
        fh.write(data)
        fh.flush()
        assert _last_line(fh.fileno(), len(data)) == reference_last_line(data)


def event_line(seq: int, content: str) -> bytes:
    return dump_event(make_event(seq, Message(role="user", content=content))).encode()


@st.composite
def damaged_logs(draw: st.DrawFn) -> tuple[bytes, int, bytes]:
    """Return (file bytes, events in it, torn tail at its end or b"")."""
    n = draw(st.integers(0, 4))
    contents = draw(st.lists(st.text(max_size=30), min_size=n + 1, max_size=n + 1))
    parts = []
    for seq in range(1, n + 1):
        parts.append(event_line(seq, contents[seq - 1]) + b"\n")
        parts.extend(draw(blank_lines) + b"\n" for _ in range(draw(st.integers(0, 2))))
    data = b"".join(parts)
    ending = draw(st.sampled_from(["whole", "open", "torn", "blank"]))
    torn = b""
    if ending == "open" and data:
        data = data[:-1]  # the last line's newline never landed
    elif ending == "torn":
        whole = event_line(n + 1, contents[n])
        torn = whole[: draw(st.integers(1, len(whole) - 1))]
        data += torn
    elif ending == "blank":
        data += draw(blank_lines.filter(bool))  # a blank last line without its newline
    return data, n, torn


@given(log=damaged_logs())
def test_an_append_keeps_every_byte_and_follows_the_last_seq(
    log: tuple[bytes, int, bytes],
) -> None:
    data, n, torn = log
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.jsonl"
        path.write_bytes(data)
        with SessionLog(path) as session_log:
            event = session_log.append(Message(role="user", content="appended"))
            repairs = session_log.repairs
        after = path.read_bytes()
        kept = data[: len(data) - len(torn)]
        assert event.seq == n + 1
        assert after.startswith(kept)
        added = after[len(kept) :]
        assert added.lstrip(b"\n") == event_line(n + 1, "appended") + b"\n"
        assert added.startswith(b"\n") == (bool(kept) and not kept.endswith(b"\n"))
        if torn:
            assert [(r.offset, r.saved_to.read_bytes()) for r in repairs] == [(len(kept), torn)]
        else:
            assert repairs == []
            assert sorted(os.listdir(folder)) == ["s.jsonl"]
        assert [e.seq for e in read_events(path)] == list(range(1, n + 2))
