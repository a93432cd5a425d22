"""Store URLs, Session.open, copying, and the store benchmark's shape (small sizes)."""

from __future__ import annotations

import errno
import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchmarks.speed import store_comparison
from compaction import (
    ConfigError,
    LogError,
    LogFormatError,
    Message,
    SeqConflictError,
    Session,
    open_store,
)
from compaction.stores import SqliteStore, copy_session
from compaction.stores import _sqlite as sqlite_module
from compaction.stores._opening import is_store_url
from compaction.stores._postgres import _redact
from compaction.stores._sqlite_checks import io_cause
from compaction.stores.jsonl import JsonlStore


class TestUrls:
    @pytest.mark.parametrize(
        ("target", "expected"),
        [
            ("sqlite:///s.db", True),
            ("postgresql://u@h/db", True),
            ("postgres://u@h/db", True),
            ("jsonl:///dir", True),
            ("s.jsonl", False),
            ("http://example.invalid/x", False),
            (Path("sqlite:///s.db"), False),
        ],
    )
    def test_is_store_url(self, target: str | Path, expected: bool) -> None:
        """Only known schemes with :// are store URLs; a Path never is."""
        assert is_store_url(target) is expected

    def test_relative_and_absolute_paths(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """sqlite:///rel.db is relative to the working folder; four slashes make it absolute."""
        monkeypatch.chdir(tmp_path)
        rel = open_store("sqlite:///rel.db")
        absolute = open_store(f"sqlite:///{tmp_path / 'abs.db'}")
        try:
            assert isinstance(rel, SqliteStore)
            assert rel.url == f"sqlite:///{tmp_path / 'rel.db'}"
            assert absolute.url == f"sqlite:///{tmp_path / 'abs.db'}"
        finally:
            rel.close()
            absolute.close()
        assert isinstance(open_store(f"jsonl:///{tmp_path}"), JsonlStore)

    @pytest.mark.parametrize(
        ("url", "match"),
        [
            ("redis://localhost", "not a store URL"),
            ("sqlite://", "three slashes"),
            ("sqlite:///", "three slashes"),
        ],
    )
    def test_bad_urls(self, url: str, match: str) -> None:
        """Unknown schemes and missing paths are ConfigErrors naming the form to use."""
        with pytest.raises(ConfigError, match=match):
            open_store(url)

    def test_password_never_shown(self) -> None:
        """A PostgreSQL URL's password is replaced in every message built from it."""
        assert _redact("postgresql://bob:s3cret@db:5432/x") == "postgresql://bob:***@db:5432/x"
        assert _redact("postgresql://bob@db/x") == "postgresql://bob@db/x"

    def test_unreachable_postgres_is_one_log_error(self) -> None:
        """A server that refuses connections gives a LogError without the password."""
        with pytest.raises(LogError, match=r"postgresql://u:\*\*\*@127\.0\.0\.1:9/x") as info:
            open_store("postgresql://u:pw@127.0.0.1:9/x?connect_timeout=2")
        assert "pw@" not in str(info.value)


class TestSessionOpen:
    def test_open_sqlite_and_reopen(self, tmp_path: Path) -> None:
        """Session.open(url, session=...) appends and replays through the store."""
        url = f"sqlite:///{tmp_path / 's.db'}"
        with Session.open(url, session="abc") as s:
            s.start_turn("hello")
            assert s.where == f"{url}#abc"
        with Session.open(url, session="abc") as s:
            assert s.applied_seq == 2
            assert [m.text() for m in s.context.messages] == ["hello"]
        with Session.open(url, session="other") as s:
            assert s.applied_seq == 0

    def test_store_without_session_and_session_without_store(self, tmp_path: Path) -> None:
        """A store URL needs a session id; a JSONL path refuses one."""
        with pytest.raises(ConfigError, match="name the session"):
            Session.open(f"sqlite:///{tmp_path / 's.db'}")
        with pytest.raises(ConfigError, match="needs a store URL"):
            Session.open(str(tmp_path / "s.jsonl"), session="x")
        with pytest.raises(ConfigError, match="needs a log path"):
            Session()

    def test_jsonl_default_is_unchanged_on_disk(self, tmp_path: Path) -> None:
        """Session('s.jsonl') writes the same bytes as the JSONL store's session file."""
        with Session(tmp_path / "s.jsonl") as a:
            a.start_turn("hi")
        store = JsonlStore(tmp_path / "folder")
        with Session(store=store, session="s") as b:
            b.start_turn("hi")
        store.close()
        assert (tmp_path / "folder" / "s.jsonl").read_bytes() == (tmp_path / "s.jsonl").read_bytes()

    def test_store_session_has_no_jsonl_log(self, tmp_path: Path) -> None:
        """Asking a store session for its JSONL log is a ConfigError, not an AttributeError."""
        with (
            Session.open(f"sqlite:///{tmp_path / 's.db'}", session="a") as s,
            pytest.raises(ConfigError, match="has no JSONL log"),
        ):
            _ = s.log


class TestCopy:
    def test_copy_refuses_an_existing_session(self, tmp_path: Path) -> None:
        """Copying onto a session that holds events writes nothing."""
        src, dst = JsonlStore(tmp_path / "a"), SqliteStore(tmp_path / "b.db")
        src.append("s", [Message(role="user", content="x")])
        dst.append("s", [Message(role="user", content="mine")])
        with pytest.raises(LogError, match="already holds 1 events"):
            copy_session(src, "s", dst)
        assert [e.data.content for e in dst.read("s")] == ["mine"]  # type: ignore[union-attr]
        assert copy_session(src, "s", dst, "t") == 1
        src.close()
        dst.close()


class TestBenchmark:
    def test_small_run_has_every_figure_and_ratio(self, tmp_path: Path) -> None:
        """A tiny run reports appends, reopen, memory and concurrency, with ratios to JSONL."""
        out = tmp_path / "stores.json"
        store_comparison.main(
            ["--quick", "--sizes", "40", "80", "--backends", "jsonl", "sqlite", "--out", str(out)],
            say=lambda _: None,
        )
        doc = json.loads(out.read_text())
        assert list(doc["backends"]) == ["jsonl", "sqlite"]
        for figures in doc["backends"].values():
            assert [r["events"] for r in figures["per_size"]] == [40, 80]
            assert all(r["appends_per_s"] > 0 and r["reopen_s"] >= 0 for r in figures["per_size"])
            assert set(figures["concurrent_appends_per_s"]) == {"1", "4", "16"}
        ratio = doc["ratios"]["sqlite_vs_jsonl"]
        expected = round(
            doc["backends"]["sqlite"]["per_size"][0]["appends_per_s"]
            / doc["backends"]["jsonl"]["per_size"][0]["appends_per_s"],
            3,
        )
        assert ratio["appends_per_s"][0] == expected
        report = out.with_suffix(".md").read_text()
        assert "| sqlite | 80 |" in report
        assert "sqlite_vs_jsonl" in report


# Pinned by mutation testing (folded in from tests/unit/compaction/stores/test_stores.py):
# Store behaviour that mutation testing found untested (issue 25): each test kills survivors.
#
# `scripts/mutate --group stores` runs these with the stores' other tests; each test names what
# it pins (an error's exact text and exit class, a rename that must not merge two sessions).


def _error(name: str | None) -> sqlite3.OperationalError:
    """An `OperationalError` carrying SQLite's result-code name, as the module raises them."""
    exc = sqlite3.OperationalError(f"failed with {name}")
    exc.sqlite_errorname = name  # type: ignore[assignment]  # None: no result code
    return exc


@pytest.mark.parametrize(
    "name",
    [
        "SQLITE_BUSY",
        "SQLITE_READONLY",
        "SQLITE_READONLY_DIRECTORY",
        "SQLITE_IOERR_SHORT_READ",
        "SQLITE_CANTOPEN_ISDIR",
        "SQLITE_FULL",
    ],
)
def test_io_failures_and_their_extended_codes_are_os_errors(name: str) -> None:
    """An I/O result code, extended or not, stands for an EIO `OSError` with SQLite's text."""
    cause = io_cause(_error(name))
    assert isinstance(cause, OSError)
    assert cause.errno == errno.EIO
    assert cause.strerror == f"failed with {name}"


@pytest.mark.parametrize("name", ["SQLITE_CORRUPT", "SQLITE_CORRUPT_VTAB", "SQLITE_ERROR", None])
def test_other_failures_are_not_os_errors(name: str | None) -> None:
    """A damaged file or a plain error is no I/O failure (the CLI's exit 2, not 3)."""
    assert io_cause(_error(name)) is None


def test_an_error_raised_by_the_module_itself_is_mapped(tmp_path: Path) -> None:
    """A closed connection's error (no SQLite result code) is a `LogError`, not a crash."""
    store = SqliteStore(tmp_path / "s.db")
    store.close()
    with pytest.raises(LogError, match=r"s\.db#s1: read failed: Cannot operate on a closed") as e:
        store.last_seq("s1")
    assert e.value.__cause__ is None


def _two_sessions(path: Path) -> SqliteStore:
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content="a1"), Message(role="user", content="a2")])
    store.append("b", [Message(role="user", content="b1")])
    return store


def test_listing_sessions_that_cannot_be_read_names_the_file(tmp_path: Path) -> None:
    """A failed listing says which file and what failed, with SQLite's reason."""
    store = _two_sessions(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute("DROP TABLE events")
    other.commit()
    other.close()
    with pytest.raises(LogError) as e:
        store.sessions()
    assert str(e.value) == f"{tmp_path / 's.db'}: cannot list the sessions: no such table: events"
    assert e.value.__cause__ is None
    store.close()


def test_a_rename_onto_a_session_holding_events_changes_nothing(tmp_path: Path) -> None:
    """Renaming `a` to `b` while `b` holds events is refused; both sessions keep their events."""
    store = _two_sessions(tmp_path / "s.db")
    with pytest.raises(LogError) as e:
        store.rename_session("a", "b")
    assert str(e.value) == f"{tmp_path / 's.db'}#b: the session already holds events"
    assert [(s.session, s.events) for s in store.sessions()] == [("a", 2), ("b", 1)]
    assert [ev.seq for ev in store.read("b")] == [1]
    store.close()


def test_a_rename_moves_every_event(tmp_path: Path) -> None:
    """A rename to a new id moves the session's events, seqs and bodies unchanged."""
    store = _two_sessions(tmp_path / "s.db")
    before = list(store.read("a"))
    store.rename_session("a", "c")
    assert list(store.read("c")) == before
    assert store.last_seq("a") == 0
    assert [s.session for s in store.sessions()] == ["b", "c"]
    store.close()


def _busy_ms(store: object) -> int:
    """How long the store's connection waits for a held lock (SQLite's busy timeout, in ms)."""
    assert isinstance(store, SqliteStore)
    return int(store._db.execute("PRAGMA busy_timeout").fetchone()[0])


@pytest.mark.parametrize(
    ("query", "ms"),
    [
        ("", 60_000),
        ("?timeout=5", 5_000),
        ("?timeout=1&timeout=2.5", 2_500),
        ("?timeout=86400", 86_400_000),
    ],
)
def test_a_sqlite_url_sets_the_lock_timeout(query: str, ms: int, tmp_path: Path) -> None:
    """No ``timeout``: 60 s; else its last value, up to a day."""
    store = open_store(f"sqlite:///{tmp_path / 's.db'}{query}")
    assert _busy_ms(store) == ms
    store.close()


@pytest.mark.parametrize(("query", "raw"), [("?timeout=86400.5", "'86400.5'"), ("?timeout=", "''")])
def test_a_timeout_past_a_day_or_blank_is_refused(query: str, raw: str, tmp_path: Path) -> None:
    """The message quotes the value and the bounds."""
    url = f"sqlite:///{tmp_path / 's.db'}{query}"
    with pytest.raises(ConfigError) as e:
        open_store(url)
    assert str(e.value) == f"{url}: timeout={raw} must be seconds, above 0 and at most 86400"


def test_an_unknown_parameter_is_named_first_in_order(tmp_path: Path) -> None:
    """Of several unknown parameters the first in sorted order is named; timeout is known."""
    url = f"sqlite:///{tmp_path / 's.db'}?timeout=1&zeta=1&alpha=2"
    with pytest.raises(ConfigError) as e:
        open_store(url)
    assert str(e.value) == f"{url}: unknown parameter 'alpha'; sqlite URLs take ?timeout="


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///", "jsonl://x", "sqlite://?timeout=1"])
def test_a_url_without_a_path_is_refused(url: str) -> None:
    """A path must follow the three slashes."""
    with pytest.raises(ConfigError) as e:
        open_store(url)
    assert "write a path after three slashes, e.g. sqlite:///sessions.db" in str(e.value)
    assert str(e.value).startswith(url.partition("?")[0] + ":")


def test_a_failed_read_names_the_session(tmp_path: Path) -> None:
    """A read that SQLite refuses names the file and session, with SQLite's reason."""
    store = _two_sessions(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute("DROP TABLE events")
    other.commit()
    other.close()
    with pytest.raises(LogError) as e:
        list(store.read("a"))
    assert str(e.value) == f"{tmp_path / 's.db'}#a: read failed: no such table: events"
    assert e.value.__cause__ is None
    store.close()


def test_a_failed_rename_rolls_back_and_says_so(tmp_path: Path) -> None:
    """An update SQLite refuses (a trigger here) leaves both sessions as they were."""
    store = _two_sessions(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute(
        "CREATE TRIGGER no_rename BEFORE UPDATE ON events BEGIN SELECT RAISE(ABORT, 'kept'); END"
    )
    other.commit()
    other.close()
    with pytest.raises(LogError) as e:
        store.rename_session("a", "c")
    assert str(e.value) == f"{tmp_path / 's.db'}#c: rename failed, nothing changed: kept"
    assert e.value.__cause__ is None
    assert [(s.session, s.events) for s in store.sessions()] == [("a", 2), ("b", 1)]
    store.close()


def _refuse_opens(
    monkeypatch: pytest.MonkeyPatch,
    path: Path,
    allowed: set[str],
    name: str | None = "SQLITE_READONLY_DIRECTORY",
) -> None:
    """Make SQLite refuse the opens of `path` not in `allowed`, even for root.

    The kinds are ``plain``, ``mode=ro`` and ``immutable=1``; a refusal is the one a folder
    without write permission gives, or one with result code `name`.
    """
    real = sqlite3.connect
    target = path.resolve()

    def connect(database: str | Path, *args: Any, **kwargs: Any) -> Any:
        opened = str(database)
        kind = "plain"
        if kwargs.get("uri"):
            base, _, kind = opened.partition("?")
            if Path(base.removeprefix("file://")) != target:
                return real(database, *args, **kwargs)
        elif Path(opened).resolve() != target:
            return real(database, *args, **kwargs)
        if kind not in allowed:
            exc = sqlite3.OperationalError("attempt to write a readonly database")
            if name is not None:  # None: an error without a result code
                exc.sqlite_errorname = name
            raise exc
        return real(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", connect)


def test_a_read_only_file_opens_with_mode_ro(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused read-write, the store opens ``mode=ro``, not immutable.

    It sees later writes, waits its lock timeout, and serves other threads, as the read-write
    connection does.
    """
    path = tmp_path / "s.db"
    _two_sessions(path).close()
    _refuse_opens(monkeypatch, path, {"mode=ro", "immutable=1"})
    store = SqliteStore(path, timeout=0.5)
    assert store.read_only is True
    assert _busy_ms(store) == 500
    monkeypatch.undo()
    writer = SqliteStore(path)
    writer.append("a", [Message(role="user", content="a3")])
    writer.close()
    assert store.last_seq("a") == 3  # an immutable connection would still say 2
    seen: list[int] = []
    thread = threading.Thread(target=lambda: seen.append(store.last_seq("b")))
    thread.start()
    thread.join()
    assert seen == [1]
    store.close()


def test_a_store_no_open_accepts_is_an_io_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused read-write, ``mode=ro`` and ``immutable=1``: one error naming the file (exit 3)."""
    path = tmp_path / "s.db"
    _two_sessions(path).close()
    _refuse_opens(monkeypatch, path, set())
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: cannot open the SQLite store, even read-only: attempt to write a readonly "
        "database"
    )
    assert isinstance(e.value.__cause__, OSError)


def test_a_lost_connection_keeps_the_failure_that_ended_the_transaction(tmp_path: Path) -> None:
    """When the rollback fails (the connection is gone), the block's own error is raised."""
    store = _two_sessions(tmp_path / "s.db")

    def lose_the_connection() -> None:
        with store.transaction("a"):
            store._db.close()  # the connection lost mid-transaction
            raise ValueError("the block's own error")

    with pytest.raises(ValueError, match="the block's own error"):
        lose_the_connection()


def test_delete_says_whether_the_session_held_events(tmp_path: Path) -> None:
    """Deleting a session removes only its events and returns True; a second delete, False."""
    store = _two_sessions(tmp_path / "s.db")
    assert store.delete("a") is True
    assert store.delete("a") is False
    assert [(s.session, s.events) for s in store.sessions()] == [("b", 1)]
    assert store.delete("b") is True  # one event
    assert store.sessions() == []
    store.close()


def test_sessions_carry_the_time_of_their_last_append(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each listed session has the store time of its last append, in seconds."""
    store = SqliteStore(tmp_path / "s.db")
    monkeypatch.setattr(time, "time", lambda: 1000.5)
    store.append("a", [Message(role="user", content="a1")])
    monkeypatch.setattr(time, "time", lambda: 2000.25)
    store.append("a", [Message(role="user", content="a2")])
    store.append("b", [Message(role="user", content="b1")])
    monkeypatch.undo()
    listed = [(s.session, s.events, s.last_activity) for s in store.sessions()]
    assert listed == [("a", 2, 2000.25), ("b", 1, 2000.25)]
    store.close()


def test_a_failed_delete_rolls_back_and_says_so(tmp_path: Path) -> None:
    """A delete SQLite refuses (a trigger here) names the session and keeps every event."""
    store = _two_sessions(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute(
        "CREATE TRIGGER no_delete BEFORE DELETE ON events BEGIN SELECT RAISE(ABORT, 'kept'); END"
    )
    other.commit()
    other.close()
    with pytest.raises(LogError) as e:
        store.delete("a")
    assert str(e.value) == f"{tmp_path / 's.db'}#a: delete failed: kept"
    assert e.value.__cause__ is None
    assert [(s.session, s.events) for s in store.sessions()] == [("a", 2), ("b", 1)]
    store.close()


def test_a_row_that_is_not_an_event_names_the_session_and_seq(tmp_path: Path) -> None:
    """A damaged row is refused with the file, the session and the row's seq."""
    store = _two_sessions(tmp_path / "s.db")
    other = sqlite3.connect(tmp_path / "s.db")
    other.execute("UPDATE events SET body = 'not json' WHERE session = 'a' AND seq = 2")
    other.commit()
    other.close()
    with pytest.raises(LogFormatError) as e:
        list(store.read("a"))
    assert str(e.value).startswith(f"{tmp_path / 's.db'}#a:2: ")
    store.close()


def test_an_append_after_another_writer_names_both_seqs(tmp_path: Path) -> None:
    """`expected_seq` behind the session's last seq: refused with both seqs, nothing written."""
    store = _two_sessions(tmp_path / "s.db")
    with pytest.raises(SeqConflictError) as e:
        store.append("a", [Message(role="user", content="late")], expected_seq=1)
    assert (e.value.where, e.value.expected, e.value.current) == (f"{tmp_path / 's.db'}#a", 1, 2)
    assert store.last_seq("a") == 2
    assert [ev.seq for ev in store.append("a", [], expected_seq=2)] == []
    store.close()


def _header(path: Path) -> tuple[int, int]:
    """The page size and page count an SQLite file's header declares."""
    head = path.read_bytes()[:100]
    size = int.from_bytes(head[16:18], "big")
    return (65536 if size == 1 else size), int.from_bytes(head[28:32], "big")


@pytest.mark.parametrize("page_size", [4096, 65536])
def test_a_truncated_file_names_its_size_and_the_declared_pages(
    page_size: int, tmp_path: Path
) -> None:
    """A file shorter than its declared pages: both sizes in the message (64 KiB pages too)."""
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA page_size={page_size}")
    db.execute("CREATE TABLE filler (x TEXT)")
    db.executemany("INSERT INTO filler VALUES (?)", [("x" * 3000,) for _ in range(60)])
    db.commit()
    db.close()
    declared, pages = _header(path)
    assert declared == page_size
    with path.open("r+b") as f:
        f.truncate(pages * page_size - 1)
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: the SQLite store is truncated: {pages * page_size - 1} bytes, but its header "
        f"declares {pages} pages of {page_size} bytes ({pages * page_size}); restore it from a "
        "backup"
    )


def test_a_page_count_left_by_an_old_writer_is_not_trusted(tmp_path: Path) -> None:
    """A header whose page count is stale (its version stamp differs) is left to quick_check."""
    path = tmp_path / "s.db"
    _two_sessions(path).close()
    data = bytearray(path.read_bytes())
    data[92:96] = (int.from_bytes(data[24:28], "big") + 1).to_bytes(4, "big")
    data[28:32] = (10_000).to_bytes(4, "big")  # far more pages than the file holds
    path.write_bytes(bytes(data))
    store = SqliteStore(path)
    assert store.last_seq("a") == 2
    store.close()


def test_a_short_file_with_the_header_text_is_not_sqlite(tmp_path: Path) -> None:
    """The header's text alone, under 100 bytes, is no SQLite database."""
    path = tmp_path / "s.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 40)
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: not an SQLite database (its first bytes are not an SQLite header)"
    )


def test_a_folder_in_place_of_the_file_cannot_be_read(tmp_path: Path) -> None:
    """A folder at the store's path is refused with the reason, chained to the OSError."""
    path = tmp_path / "s.db"
    path.mkdir()
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == f"{path}: cannot read the SQLite store: Is a directory"
    assert isinstance(e.value.__cause__, IsADirectoryError)


def test_an_empty_file_is_a_new_store(tmp_path: Path) -> None:
    """A zero-byte file (as `touch` leaves) opens as an empty store that takes appends."""
    path = tmp_path / "s.db"
    path.touch()
    store = SqliteStore(path)
    assert store.sessions() == []
    assert [e.seq for e in store.append("a", [Message(role="user", content="x")])] == [1]
    store.close()


def test_a_commit_on_a_lost_connection_says_nothing_was_stored(tmp_path: Path) -> None:
    """The connection gone before the commit: one error naming the session, nothing stored."""
    path = tmp_path / "s.db"
    store = _two_sessions(path)

    def append_then_lose_the_connection() -> None:
        with store.transaction("a"):
            store.append("a", [Message(role="user", content="lost")])
            store._db.close()

    with pytest.raises(LogError) as e:
        append_then_lose_the_connection()
    assert str(e.value) == (
        f"{path}#a: commit failed, nothing stored: Cannot operate on a closed database."
    )
    assert e.value.__cause__ is None
    again = SqliteStore(path)
    assert again.last_seq("a") == 2
    again.close()


def test_nested_transactions_commit_once_at_the_outermost(tmp_path: Path) -> None:
    """Appends in nested blocks are one transaction: an error in the outer block drops both."""
    path = tmp_path / "s.db"
    store = _two_sessions(path)

    def nested_then_fail() -> None:
        with store.transaction("a"):
            with store.transaction("a"):
                store.append("a", [Message(role="user", content="inner")])
            store.append("a", [Message(role="user", content="outer")])
            assert store.last_seq("a") == 4
            raise ValueError("undo both")

    with pytest.raises(ValueError, match="undo both"):
        nested_then_fail()
    assert store.last_seq("a") == 2
    with store.transaction("a"), store.transaction("a"):
        store.append("a", [Message(role="user", content="kept")])
    assert store.last_seq("a") == 3
    store.close()


def test_a_store_serves_another_thread(tmp_path: Path) -> None:
    """A store opened in one thread appends and reads in another (an adapter's worker thread)."""
    store = _two_sessions(tmp_path / "s.db")
    seqs: list[int] = []

    def work() -> None:
        seqs.extend(e.seq for e in store.append("b", [Message(role="user", content="b2")]))
        seqs.append(store.last_seq("b"))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seqs == [2, 2]
    store.close()


@pytest.mark.parametrize(("sync", "level"), [("always", 2), ("batch", 1)])
def test_the_sync_policy_sets_sqlites_durability(sync: str, level: int, tmp_path: Path) -> None:
    """``always``: synchronous=FULL (2); ``batch``: NORMAL (1); the journal is WAL either way."""
    store = SqliteStore(tmp_path / "s.db", sync=sync)  # type: ignore[arg-type]
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == level
    assert store._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    store.close()


@pytest.mark.parametrize(
    "name", ["SQLITE_READONLY_DIRECTORY", "SQLITE_CANTOPEN_ISDIR", "SQLITE_IOERR_SHORT_READ"]
)
def test_a_refused_read_write_open_falls_back_to_read_only(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Read-only, cannot-open and I/O refusals of an existing file open it read-only."""
    path = tmp_path / "s.db"
    _two_sessions(path).close()
    _refuse_opens(monkeypatch, path, {"mode=ro"}, name)
    store = SqliteStore(path)
    assert store.read_only is True
    assert store.last_seq("a") == 2
    store.close()


@pytest.mark.parametrize(
    ("exists", "name"),
    [(False, "SQLITE_READONLY_DIRECTORY"), (True, "SQLITE_CORRUPT"), (True, None)],
)
def test_other_refusals_are_not_retried_read_only(
    exists: bool, name: str | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file not there yet, or another kind of refusal: one error, no read-only attempt."""
    path = tmp_path / "s.db"
    if exists:
        _two_sessions(path).close()
    _refuse_opens(monkeypatch, path, {"mode=ro", "immutable=1"}, name)
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: cannot open the SQLite store: attempt to write a readonly database"
    )
    assert isinstance(e.value.__cause__, OSError) is (name == "SQLITE_READONLY_DIRECTORY")


def test_a_check_stopped_at_its_bound_opens_and_leaves_no_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """quick_check stopped at `QUICK_CHECK_STEPS` opens the store; later long reads run whole."""
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content=f"m{i}") for i in range(3000)])
    store.close()
    monkeypatch.setattr(sqlite_module, "QUICK_CHECK_STEPS", 1000)
    store = SqliteStore(path)
    assert [e.seq for e in store.read("a")] == list(range(1, 3001))
    assert store.sessions()[0].events == 3000
    store.close()


def _corrupt_events_page(path: Path) -> None:
    db = sqlite3.connect(path)
    root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    db.close()
    size = _header(path)[0]
    with path.open("r+b") as f:
        f.seek((root - 1) * size)
        f.write(b"\x0d" + b"\xa5" * (size - 1))


def test_a_damaged_page_is_refused_with_quick_checks_findings(tmp_path: Path) -> None:
    """quick_check's findings are quoted (at most 300 characters) with the way out."""
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content="x" * 500) for _ in range(200)])
    store.close()
    _corrupt_events_page(path)
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    text = str(e.value)
    assert text.startswith(f"{path}: the SQLite store is damaged (quick_check: *** in database ")
    assert text.endswith("); restore it from a backup")
    detail = text.partition("(quick_check: ")[2].rpartition("); restore")[0]
    assert "Page 2: btreeInitPage() returns error code 11" in detail
    assert "\n" not in detail
    assert len(detail) <= 300


def test_another_applications_table_is_named_with_its_columns(tmp_path: Path) -> None:
    """An ``events`` table with other columns: both column lists in the message."""
    path = tmp_path / "s.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE events (id INTEGER PRIMARY KEY, name TEXT)")
    db.commit()
    db.close()
    with pytest.raises(LogError) as e:
        SqliteStore(path)
    assert str(e.value) == (
        f"{path}: its events table is not a Context Harness store's (columns id, name; "
        "expected session, seq, type, body, at); use another file"
    )


def test_a_check_under_its_bound_runs_whole(tmp_path: Path) -> None:
    """With the default bound, a few thousand events are checked to the end and open."""
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content=f"m{i}") for i in range(3000)])
    store.close()
    store = SqliteStore(path)
    assert store.last_seq("a") == 3000
    store.close()


def test_damage_past_the_bound_is_trusted_and_within_it_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check stops at its bound: damage it did not reach opens; a full check refuses it."""
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.append("a", [Message(role="user", content="x" * 500) for _ in range(3000)])
    store.close()
    size, pages = _header(path)
    with path.open("r+b") as f:  # the last page: a leaf the check reaches last
        f.seek((pages - 1) * size)
        f.write(b"\x0d" + b"\xa5" * (size - 1))
    monkeypatch.setattr(sqlite_module, "QUICK_CHECK_STEPS", 3000)  # three progress calls
    SqliteStore(path).close()  # stopped before the damage
    monkeypatch.undo()
    with pytest.raises(LogError, match="the SQLite store is damaged"):
        SqliteStore(path)


def test_a_store_locked_by_another_connection_is_an_io_error_not_damage(tmp_path: Path) -> None:
    """An exclusive lock held elsewhere: the check cannot run; the message says so (exit 3)."""
    path = tmp_path / "s.db"
    _two_sessions(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode=EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    holder.execute("INSERT INTO events VALUES ('z', 1, 'message', '{}', 0)")
    try:
        with pytest.raises(LogError) as e:
            SqliteStore(path, timeout=0.05)
    finally:
        holder.rollback()
        holder.close()
    assert str(e.value) == f"{path}: cannot check the SQLite store: database is locked"
    assert isinstance(e.value.__cause__, OSError)


def test_a_new_store_makes_its_folders_and_takes_the_defaults(tmp_path: Path) -> None:
    """A store in folders not there yet creates them, and takes the defaults.

    By default it is read-write, fully synchronous, and waits 60 s for a held lock.
    """
    store = SqliteStore(tmp_path / "a" / "b" / "s.db")
    assert (tmp_path / "a" / "b" / "s.db").is_file()
    assert store.read_only is False
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 2
    assert _busy_ms(store) == 60_000
    store.close()
