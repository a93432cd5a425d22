"""Contracts of `compaction.stores._copy`, pinned by mutation (`scripts/mutate --group copy`).

Each test states behaviour the copy tests left untested: a session replaced inside one
transaction (its chunks, its count, `before_commit`, the rollback), the refusal of a file that
already holds bytes, and a new JSONL folder under a symlinked parent (refused as "outside the
folder" before the fix this test came with).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from fsync_calls import count_fsyncs

from compaction import LogError, Message
from compaction.events import Event, EventData, make_event
from compaction.stores import FileStore, SqliteStore, copy_session, write_new_session
from compaction.stores._copy import CHUNK, STAGING, checked_seqs
from compaction.stores.jsonl import JsonlStore
from compaction.stores.protocol import EventStore, SessionInfo


def _events(n: int) -> list[Event]:
    return [make_event(i + 1, Message(role="user", content=f"m{i}")) for i in range(n)]


class _CountingStore(SqliteStore):
    """A SQLite store that records the size of every append."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.appends: list[int] = []

    def append(
        self, session: str, items: Sequence[EventData], *, expected_seq: int | None = None
    ) -> list[Event]:
        self.appends.append(len(items))
        return super().append(session, items, expected_seq=expected_seq)


def test_a_replaced_session_is_written_anew_in_chunks(tmp_path: Path) -> None:
    """replace=True deletes the old events and appends the new ones CHUNK at a time."""
    store = _CountingStore(tmp_path / "s.db")
    store.append("s", [Message(role="user", content="old")] * 3)
    store.append("other", [Message(role="user", content="kept")])
    store.appends.clear()
    counts: list[int] = []
    n = 2 * CHUNK + 500
    assert write_new_session(store, "s", _events(n), replace=True, before_commit=counts.append) == n
    assert store.appends == [CHUNK, CHUNK, 500]
    assert counts == [n]
    assert [e.data for e in store.read("s")] == [e.data for e in _events(n)]
    assert store.last_seq("other") == 1
    store.close()


def test_a_replace_refused_before_commit_keeps_the_old_session(tmp_path: Path) -> None:
    """`before_commit` raising undoes the delete and the writes: the old session stays."""
    store = SqliteStore(tmp_path / "s.db")
    old = store.append("s", [Message(role="user", content="old")] * 2)

    def refuse(count: int) -> None:
        raise LogError(f"refused after {count}")

    with pytest.raises(LogError, match="refused after 5"):
        write_new_session(store, "s", _events(5), replace=True, before_commit=refuse)
    assert list(store.read("s")) == old
    store.close()


def test_a_replace_into_an_empty_session_writes_it(tmp_path: Path) -> None:
    """Nothing to delete: the session is simply written, seqs from 1."""
    store = SqliteStore(tmp_path / "s.db")
    assert write_new_session(store, "new", _events(3), replace=True) == 3
    assert [e.seq for e in store.read("new")] == [1, 2, 3]
    store.close()


def test_a_file_holding_bytes_is_refused_by_its_size(tmp_path: Path) -> None:
    """A destination file with bytes in it is refused before anything is written."""
    folder = JsonlStore(tmp_path / "dst")
    target = folder.path_of("s")
    target.parent.mkdir()
    target.write_bytes(b"x" * 17)
    with pytest.raises(LogError) as info:
        write_new_session(folder, "s", _events(2))
    assert str(info.value) == (
        f"{folder.url}#s: the session already holds 17 bytes; choose another session id, or delete "
        "that session first"
    )
    assert target.read_bytes() == b"x" * 17
    assert sorted(p.name for p in target.parent.iterdir()) == ["s.jsonl"]


def test_an_sql_session_holding_events_is_refused_by_its_count(tmp_path: Path) -> None:
    """The refusal names the events held and how to go on."""
    store = SqliteStore(tmp_path / "s.db")
    store.append("s", [Message(role="user", content="old")] * 4)
    with pytest.raises(LogError) as info:
        write_new_session(store, "s", _events(2))
    assert str(info.value) == (
        f"{store.url}#s: the session already holds 4 events; choose another session id, or "
        "delete that session first"
    )
    assert store.last_seq("s") == 4
    store.close()


@pytest.mark.parametrize("folder", ["link", "link/new", "link/new/deeper"])
def test_a_new_folder_under_a_symlinked_parent_is_inside(tmp_path: Path, folder: str) -> None:
    """A JSONL folder reached through a symlink (existing or not yet made) takes the copy."""
    (tmp_path / "real").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "real")
    store = JsonlStore(tmp_path / folder)
    assert write_new_session(store, "s", _events(3)) == 3
    held = tmp_path / "real" / folder.removeprefix("link").lstrip("/") / "s.jsonl"
    assert [e.seq for e in JsonlStore(held.parent).read("s")] == [1, 2, 3]


def _contents(n: int, tag: str) -> list[Event]:
    return [make_event(i + 1, Message(role="user", content=f"{tag}{i}")) for i in range(n)]


def test_a_file_replaced_in_place_is_read_anew_by_its_store(tmp_path: Path) -> None:
    """replace=True moves the new file over the old; the store reads the new events only."""
    store = FileStore(tmp_path / "s.jsonl")
    store.append("s", [e.data for e in _contents(4, "old")])
    assert len(list(store.read("s"))) == 4
    counts: list[int] = []
    new = _contents(2, "new")
    assert write_new_session(store, "s", new, replace=True, before_commit=counts.append) == 2
    assert counts == [2]
    assert list(store.read("s")) == new
    assert store.last_seq("s") == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.jsonl"]


def test_an_empty_destination_file_takes_the_copy(tmp_path: Path) -> None:
    """A file of 0 bytes holds no session: the copy is moved over it."""
    path = tmp_path / "s.jsonl"
    path.touch()
    assert write_new_session(FileStore(path), "s", _contents(3, "m")) == 3
    assert [e.seq for e in FileStore(path).read("s")] == [1, 2, 3]


def test_a_destination_in_folders_not_made_yet_is_written(tmp_path: Path) -> None:
    """The folders above the destination file are created."""
    path = tmp_path / "a" / "b" / "s.jsonl"
    assert write_new_session(FileStore(path), "s", _contents(2, "m")) == 2
    assert [e.seq for e in FileStore(path).read("s")] == [1, 2]


def test_a_failed_replace_says_the_file_was_not_changed(tmp_path: Path) -> None:
    """A source failing part-way leaves the old file byte for byte, and the message says so."""
    path = tmp_path / "s.jsonl"
    store = FileStore(path)
    store.append("s", [e.data for e in _contents(3, "old")])
    before = path.read_bytes()

    def failing() -> Iterator[Event]:
        yield from _contents(CHUNK + 5, "new")
        raise LogError("the source went away")

    with pytest.raises(LogError) as info:
        write_new_session(store, "s", failing(), replace=True)
    assert str(info.value) == (
        f"{path}: the write stopped after {CHUNK} events (the source went away); the "
        "destination was not changed"
    )
    assert path.read_bytes() == before


def test_a_failed_move_into_place_names_its_cause_and_what_is_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An OSError moving the copy into place: its text, the count, no destination, no part file."""
    path = tmp_path / "s.jsonl"

    def no_space(src: object, dst: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "link", no_space)
    with pytest.raises(LogError) as info:
        write_new_session(FileStore(path), "s", _contents(3, "m"))
    assert str(info.value) == (
        f"{path}: the write failed after 3 events (No space left on device); the destination "
        "was not created"
    )
    assert isinstance(info.value.__cause__, OSError)
    assert list(tmp_path.iterdir()) == []


def test_a_session_created_during_the_write_is_not_clobbered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When another writer's file appears first, the link fails and the message says so."""
    path = tmp_path / "s.jsonl"

    def taken(src: object, dst: object) -> None:
        raise FileExistsError(errno.EEXIST, "File exists")

    monkeypatch.setattr(os, "link", taken)
    with pytest.raises(LogError) as info:
        write_new_session(FileStore(path), "s", _contents(2, "m"))
    assert str(info.value) == (
        f"{path}: another writer created the session during the write; nothing was written"
    )


def test_a_file_copy_is_fsynced_once_not_per_chunk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The temporary file is written as one batch: its fsyncs do not grow with the chunks."""
    calls = count_fsyncs(monkeypatch)
    write_new_session(FileStore(tmp_path / "s.jsonl"), "s", _contents(3 * CHUNK, "m"))
    assert len(calls) <= 2


def test_a_write_failing_on_disk_stays_an_io_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed write of the temporary file keeps its OSError as the cause (exit class I/O)."""
    path = tmp_path / "s.jsonl"

    def full(fd: int, data: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", full)
    with pytest.raises(LogError) as info:
        write_new_session(FileStore(path), "s", _contents(2, "m"))
    monkeypatch.undo()
    assert str(info.value).startswith(f"{path}: the write stopped after 0 events (")
    assert str(info.value).endswith("the destination was not created")
    assert isinstance(info.value.__cause__, OSError)
    assert info.value.__cause__.errno == errno.ENOSPC
    assert list(tmp_path.iterdir()) == []


def test_a_source_failure_is_not_made_an_io_error(tmp_path: Path) -> None:
    """A failing source whose error has another cause gives a LogError without a cause."""

    def failing() -> Iterator[Event]:
        yield from _contents(2, "m")
        raise LogError("bad source") from ValueError("not I/O")

    with pytest.raises(LogError) as info:
        write_new_session(FileStore(tmp_path / "s.jsonl"), "s", failing())
    assert "the write stopped after 0 events (bad source)" in str(info.value)  # a chunk
    assert info.value.__cause__ is None


# Pinned by mutation testing (folded in from tests/unit/compaction/stores/test_copy.py):
# Contracts of `compaction.stores._copy` into SQL stores, pinned by mutation (`--group copy`).
#
# The staged copy (its failure messages, its count before the rename, a conflicting writer, a
# caller's refusal), `copy_session`'s resume, a damaged or missing source, and a store without
# rename (written in one transaction). The file and replace cases are in `test_copy_mutants.py`.


def _sql_contents(n: int, tag: str) -> list[Event]:
    return [make_event(i + 1, Message(role="user", content=f"{tag}{i}")) for i in range(n)]


def test_a_failed_staged_copy_names_the_destination_session(tmp_path: Path) -> None:
    """Into SQL, the message starts with the store and the destination session's id."""
    store = SqliteStore(tmp_path / "s.db")

    def failing() -> Iterator[Event]:
        yield from _sql_contents(CHUNK + 1, "m")
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

    assert write_new_session(store, "dest", _sql_contents(CHUNK + 2, "m"), before_commit=check) == (
        CHUNK + 2
    )
    assert seen == [(CHUNK + 2, 0, CHUNK + 2)]
    assert (store.last_seq("dest"), store.last_seq(f"dest{STAGING}")) == (CHUNK + 2, 0)
    store.close()


def test_another_writer_on_the_staging_session_stops_the_copy(tmp_path: Path) -> None:
    """An append to the staging session during the copy is a conflict: nothing is created."""
    store = SqliteStore(tmp_path / "s.db")

    def interfering() -> Iterator[Event]:
        events = _sql_contents(CHUNK + 3, "m")
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
        write_new_session(store, "dest", _sql_contents(3, "m"), before_commit=refuse)
    store.fail_with = None
    assert store.last_seq("dest") == 0
    assert store.last_seq(f"dest{STAGING}") == (0 if error is None else 3)
    store.close()


def test_a_source_out_of_seq_is_refused_with_the_way_out() -> None:
    """A gap or a repeat names the place, the seq held there, and what the user can do."""
    events = [*_sql_contents(2, "m"), make_event(5, Message(role="user", content="late"))]
    with pytest.raises(LogError) as info:
        list(checked_seqs(events, "src#s"))
    assert str(info.value) == (
        "src#s: the source is damaged: event 3 holds seq 5; nothing was copied from it "
        "(repair it, or copy its readable part with harness log --json)"
    )
    assert [e.seq for e in checked_seqs(_sql_contents(3, "m")[1:], "w", start=2)] == [2, 3]


def test_copy_session_starts_over_unless_told_to_resume(tmp_path: Path) -> None:
    """A staging session left by a failed copy is dropped by default, continued on resume."""
    src = SqliteStore(tmp_path / "src.db")
    src.append("s", [e.data for e in _sql_contents(4, "src")])
    for resume, first in ((False, "src0"), (True, "staged0")):
        dst = SqliteStore(tmp_path / f"dst-{resume}.db")
        dst.append(f"s{STAGING}", [e.data for e in _sql_contents(2, "staged")])
        assert copy_session(src, "s", dst, resume=resume) == 4
        got = [e.data for e in dst.read("s")]
        assert len(got) == 4
        assert got[0] == Message(role="user", content=first)
        assert got[2:] == [e.data for e in _sql_contents(4, "src")][2:]
        assert dst.last_seq(f"s{STAGING}") == 0
        dst.close()
    dst = SqliteStore(tmp_path / "dst-default.db")
    dst.append(f"s{STAGING}", [e.data for e in _sql_contents(2, "staged")])
    copy_session(src, "s", dst)
    assert [e.data for e in dst.read("s")] == [e.data for e in _sql_contents(4, "src")]
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
    events = [*_sql_contents(2, "m"), make_event(5, Message(role="user", content="late"))]
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
    store.append(f"s{STAGING}", [e.data for e in _sql_contents(2, "staged")])
    assert write_new_session(store, "s", _sql_contents(3, "new")) == 3
    assert [e.data for e in store.read("s")] == [e.data for e in _sql_contents(3, "new")]
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
    assert write_new_session(store, "s", _sql_contents(n, "m"), before_commit=counts.append) == n
    assert counts == [n]
    assert [e.data for e in store.read("s")] == [e.data for e in _sql_contents(n, "m")]
    assert [i.session for i in store.sessions()] == ["s"]

    def refuse(count: int) -> None:
        raise LogError(f"refused {count}")

    with pytest.raises(LogError, match="refused 3"):
        write_new_session(store, "t", _sql_contents(3, "m"), before_commit=refuse)
    assert store.last_seq("t") == 0
    store.close()
