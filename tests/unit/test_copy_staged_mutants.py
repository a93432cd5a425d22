"""Contracts of `compaction.stores.copy` into SQL stores, pinned by mutation (`--group copy`).

The staged copy (its failure messages, its count before the rename, a conflicting writer, a
caller's refusal), `copy_session`'s resume, a damaged or missing source, and a store without
rename (written in one transaction). The file and replace cases are in `test_copy_mutants.py`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import pytest

from compaction import LogError, Message
from compaction.events import Event, EventData, make_event
from compaction.stores import (
    SqliteStore,
    copy_session,
    write_new_session,
)
from compaction.stores.copy import CHUNK, STAGING, checked_seqs
from compaction.stores.protocol import EventStore, SessionInfo


def _contents(n: int, tag: str) -> list[Event]:
    return [make_event(i + 1, Message(role="user", content=f"{tag}{i}")) for i in range(n)]


def test_a_failed_staged_copy_names_the_destination_session(tmp_path: Path) -> None:
    """Into SQL, the message starts with the store and the destination session's id."""
    store = SqliteStore(tmp_path / "s.db")

    def failing() -> Iterator[Event]:
        yield from _contents(CHUNK + 1, "m")
        raise LogError("the source went away")

    with pytest.raises(LogError) as info:
        write_new_session(store, "dest", failing())
    assert str(info.value).startswith(
        f"{store.url}#dest: the copy stopped after {CHUNK} events and the destination was not "
        "created (the source went away)"
    )
    assert str(info.value).endswith(
        f"{CHUNK} events wait in the staging session dest{STAGING}: rerun the copy to start "
        "over, or pass --resume to continue"
    )
    assert (store.last_seq("dest"), store.last_seq(f"dest{STAGING}")) == (0, CHUNK)
    store.close()


def test_a_staged_copy_reports_its_count_before_the_rename(tmp_path: Path) -> None:
    """`before_commit` gets the count while the events are still staged."""
    store = SqliteStore(tmp_path / "s.db")
    seen: list[tuple[int, int, int]] = []

    def check(count: int) -> None:
        seen.append((count, store.last_seq("dest"), store.last_seq(f"dest{STAGING}")))

    assert write_new_session(store, "dest", _contents(CHUNK + 2, "m"), before_commit=check) == (
        CHUNK + 2
    )
    assert seen == [(CHUNK + 2, 0, CHUNK + 2)]
    assert (store.last_seq("dest"), store.last_seq(f"dest{STAGING}")) == (CHUNK + 2, 0)
    store.close()


def test_another_writer_on_the_staging_session_stops_the_copy(tmp_path: Path) -> None:
    """An append to the staging session during the copy is a conflict: nothing is created."""
    store = SqliteStore(tmp_path / "s.db")

    def interfering() -> Iterator[Event]:
        events = _contents(CHUNK + 3, "m")
        yield from events[: CHUNK + 1]
        store.append(f"dest{STAGING}", [Message(role="user", content="intruder")])
        yield from events[CHUNK + 1 :]

    with pytest.raises(LogError) as info:
        write_new_session(store, "dest", interfering())
    assert str(info.value).startswith(
        f"{store.url}#dest: another writer appended to the staging session dest{STAGING} "
        "during the copy ("
    )
    assert str(info.value).endswith("); the destination was not created")
    assert store.last_seq("dest") == 0
    store.close()


class _Refused(Exception):
    """A caller's own refusal, raised from `before_commit`."""


class _StickyStaging(SqliteStore):
    """A SQLite store whose deletes fail once `fail_with` is set."""

    fail_with: type[Exception] | None = None

    def delete(self, session: str) -> bool:
        if self.fail_with is not None:
            raise self.fail_with("cannot delete")
        return super().delete(session)


@pytest.mark.parametrize("error", [None, LogError, OSError])
def test_a_callers_refusal_drops_the_staging_session_or_tries_to(
    tmp_path: Path, error: type[Exception] | None
) -> None:
    """The caller's refusal propagates as raised; the staging session is deleted if it can be."""
    store = _StickyStaging(tmp_path / "s.db")

    def refuse(count: int) -> None:
        store.fail_with = error
        raise _Refused(f"refused {count}")

    with pytest.raises(_Refused, match="refused 3"):
        write_new_session(store, "dest", _contents(3, "m"), before_commit=refuse)
    store.fail_with = None
    assert store.last_seq("dest") == 0
    assert store.last_seq(f"dest{STAGING}") == (0 if error is None else 3)
    store.close()


def test_a_source_out_of_seq_is_refused_with_the_way_out() -> None:
    """A gap or a repeat names the place, the seq held there, and what the user can do."""
    events = [*_contents(2, "m"), make_event(5, Message(role="user", content="late"))]
    with pytest.raises(LogError) as info:
        list(checked_seqs(events, "src#s"))
    assert str(info.value) == (
        "src#s: the source is damaged: event 3 holds seq 5; nothing was copied from it "
        "(repair it, or copy its readable part with harness log --json)"
    )
    assert [e.seq for e in checked_seqs(_contents(3, "m")[1:], "w", start=2)] == [2, 3]


def test_copy_session_starts_over_unless_told_to_resume(tmp_path: Path) -> None:
    """A staging session left by a failed copy is dropped by default, continued on resume."""
    src = SqliteStore(tmp_path / "src.db")
    src.append("s", [e.data for e in _contents(4, "src")])
    for resume, first in ((False, "src0"), (True, "staged0")):
        dst = SqliteStore(tmp_path / f"dst-{resume}.db")
        dst.append(f"s{STAGING}", [e.data for e in _contents(2, "staged")])
        assert copy_session(src, "s", dst, resume=resume) == 4
        got = [e.data for e in dst.read("s")]
        assert len(got) == 4
        assert got[0] == Message(role="user", content=first)
        assert got[2:] == [e.data for e in _contents(4, "src")][2:]
        assert dst.last_seq(f"s{STAGING}") == 0
        dst.close()
    dst = SqliteStore(tmp_path / "dst-default.db")
    dst.append(f"s{STAGING}", [e.data for e in _contents(2, "staged")])
    copy_session(src, "s", dst)
    assert [e.data for e in dst.read("s")] == [e.data for e in _contents(4, "src")]
    dst.close()
    src.close()


def test_copying_a_missing_session_names_it(tmp_path: Path) -> None:
    """The refusal names the source store and the session asked for."""
    src = SqliteStore(tmp_path / "src.db")
    dst = SqliteStore(tmp_path / "dst.db")
    with pytest.raises(LogError) as info:
        copy_session(src, "missing", dst)
    assert str(info.value) == f"{src.url}#missing: no such session (it holds no events)"
    assert dst.sessions() == []
    src.close()
    dst.close()


def test_a_damaged_source_is_named_by_the_destination_it_was_going_to(tmp_path: Path) -> None:
    """write_new_session checks the seqs it is given; the refusal names the destination."""
    store = SqliteStore(tmp_path / "s.db")
    events = [*_contents(2, "m"), make_event(5, Message(role="user", content="late"))]
    with pytest.raises(LogError) as info:
        write_new_session(store, "s", events)
    assert str(info.value).startswith(
        f"{store.url}#s: the copy stopped after 0 events and the destination was not created "
        f"({store.url}#s: the source is damaged: event 3 holds seq 5;"
    )
    assert store.last_seq("s") == 0
    store.close()


def test_write_new_session_starts_a_staged_write_over_by_default(tmp_path: Path) -> None:
    """Without resume, a staging session left behind is dropped, not continued."""
    store = SqliteStore(tmp_path / "s.db")
    store.append(f"s{STAGING}", [e.data for e in _contents(2, "staged")])
    assert write_new_session(store, "s", _contents(3, "new")) == 3
    assert [e.data for e in store.read("s")] == [e.data for e in _contents(3, "new")]
    store.close()


class _PlainStore:
    """An `EventStore` of another kind: no files and no rename (a SQLite store behind it)."""

    def __init__(self, path: Path) -> None:
        self.inner = SqliteStore(path)
        self.url = "plain://store"

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        return self.inner.append(session, items, expected_seq=expected_seq)

    def read(self, session: str, *, after: int = 0) -> Iterator[Event]:
        return self.inner.read(session, after=after)

    def last_seq(self, session: str) -> int:
        return self.inner.last_seq(session)

    def transaction(self, session: str) -> AbstractContextManager[None]:
        return self.inner.transaction(session)

    def sessions(self) -> list[SessionInfo]:
        return self.inner.sessions()

    def delete(self, session: str) -> bool:
        return self.inner.delete(session)

    def close(self) -> None:
        self.inner.close()


def test_a_store_without_rename_is_written_in_one_transaction(tmp_path: Path) -> None:
    """No staging session there: the events go straight in, under one transaction."""
    store = _PlainStore(tmp_path / "s.db")
    assert isinstance(store, EventStore)
    counts: list[int] = []
    n = CHUNK + 2
    assert write_new_session(store, "s", _contents(n, "m"), before_commit=counts.append) == n
    assert counts == [n]
    assert [e.data for e in store.read("s")] == [e.data for e in _contents(n, "m")]
    assert [i.session for i in store.sessions()] == ["s"]

    def refuse(count: int) -> None:
        raise LogError(f"refused {count}")

    with pytest.raises(LogError, match="refused 3"):
        write_new_session(store, "t", _contents(3, "m"), before_commit=refuse)
    assert store.last_seq("t") == 0
    store.close()
