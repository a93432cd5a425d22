"""Contracts of the SQL stores' one reader (`paged_events`), pinned by mutation testing.

Each test states behaviour `scripts/mutate --group stores-core` found untested: the first page
is asked from seq 0 by default, each next page after the last seq read, until a short page; a
row that is not an event is refused with the session, its seq, the reason and a fix that fits
a database (no row is ever skipped, so the log's advice to skip it would not help).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import LogFormatError, Message
from compaction.events import Event, dump_event, dump_event_bytes, make_event
from compaction.stores import SqliteStore
from compaction.stores import _paging as paging
from compaction.stores._paging import Rows, paged_events

WHERE = "sqlite:///s.db#a"
ROW_FIX = "A database row is never skipped: correct that row, or restore the store from a backup."


def event(seq: int) -> Event:
    return make_event(seq, Message(role="user", content=f"m{seq}"))


class Pages:
    """A `fetch` over events 1..n that records the seq each page was asked after."""

    def __init__(self, n: int, page: int) -> None:
        self.rows = [(seq, dump_event_bytes(event(seq))) for seq in range(1, n + 1)]
        self.page = page
        self.asked: list[int] = []

    def __call__(self, after: int) -> Rows:
        self.asked.append(after)
        return [r for r in self.rows if r[0] > after][: self.page]


def test_the_first_page_starts_after_seq_0_by_default() -> None:
    fetch = Pages(3, paging.PAGE)
    got = list(paged_events(fetch, WHERE))
    assert [(e.seq, e.data) for e in got] == [(s, event(s).data) for s in (1, 2, 3)]
    assert fetch.asked == [0]


@pytest.mark.parametrize(("n", "asked"), [(5, [1, 3, 5]), (4, [1, 3]), (1, [1]), (7, [1, 3, 5, 7])])
def test_pages_follow_the_last_seq_read_until_a_short_one(
    monkeypatch: pytest.MonkeyPatch, n: int, asked: list[int]
) -> None:
    """With pages of two rows, each next page is asked after the last seq yielded."""
    monkeypatch.setattr(paging, "PAGE", 2)
    fetch = Pages(n, 2)
    assert [e.seq for e in paged_events(fetch, WHERE, after=1)] == list(range(2, n + 1))
    assert fetch.asked == asked


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"not json", "not JSON: expected ident at line 1 column 2"),
        ("not json", "not JSON: expected ident at line 1 column 2"),
        (b'{"seq": 2}', "invalid event: line: Unable to extract tag using discriminator 'type'"),
    ],
)
def test_a_row_that_is_not_an_event_is_refused_with_a_database_fix(
    body: bytes | str, reason: str
) -> None:
    """The error names the session and the row's seq as its line, says why, and how to fix."""
    rows: Rows = [(1, dump_event(event(1))), (2, body), (3, dump_event_bytes(event(3)))]
    read = paged_events(lambda after: rows, WHERE)
    assert next(read).seq == 1
    with pytest.raises(LogFormatError) as caught:
        next(read)
    err = caught.value
    assert (err.path, err.line, err.reason) == (WHERE, 2, reason)
    assert str(err) == f"{WHERE}:2: {reason}. {ROW_FIX}"
    assert err.__cause__ is None
    assert err.__suppress_context__ is True


def test_the_command_line_gives_a_damaged_row_the_database_fix(tmp_path: Path) -> None:
    """`harness log` on a damaged SQLite row exits 2 without sending the user to --skip-bad.

    --skip-bad skips nothing in a database store: it was the advice, and then the same error.
    """
    store = SqliteStore(tmp_path / "s.db")
    store.append("a", [Message(role="user", content="fine"), Message(role="user", content="x")])
    store.close()
    with sqlite3.connect(tmp_path / "s.db") as db:
        db.execute("UPDATE events SET body = 'not json' WHERE session = 'a' AND seq = 2")
    db.close()
    for extra in ([], ["--skip-bad"]):
        done = run_cli("log", f"sqlite:///{tmp_path / 's.db'}", "--session", "a", *extra)
        assert done.returncode == 2
        assert done.stderr == (
            f"harness log: {tmp_path / 's.db'}#a:2: not JSON: expected ident at line 1 column 2."
            f" {ROW_FIX}\n"
        )
