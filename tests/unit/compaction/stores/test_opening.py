"""Contracts of the JSONL file store and of opening a store, pinned by mutation testing.

Each test states behaviour `scripts/mutate --group opening` found untested: what a `FileStore`
passes to its writer and reader (sync policy, bad-line skipping, the caller's report), how far
its reader has read after its own appends, and what `open_session_store` passes on.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import ConfigError, LogError, Message, open_store
from compaction.errors import SeqConflictError
from compaction.events import dump_event, make_event
from compaction.stores import FileStore, SessionLog, SqliteStore
from compaction.stores._opening import is_store_url, open_session_store
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_reader import ReadReport
from compaction.stores.log_writer import SyncPolicy


def _log(path: Path, n: int) -> Path:
    with SessionLog(path) as log:
        log.append_many([Message(role="user", content=f"m{i}") for i in range(n)])
    return path


def _with_bad_line(path: Path) -> Path:
    """A log of three events whose second line is not JSON."""
    _log(path, 1)
    after = dump_event(make_event(2, Message(role="user", content="after")))
    with path.open("ab") as f:
        f.write(b"this is not an event\n" + after.encode() + b"\n")
    return path


def test_a_file_store_refuses_bad_lines_unless_told_to_skip(tmp_path: Path) -> None:
    """By default a bad line is an error; skipping it yields the rest and records the line."""
    path = _with_bad_line(tmp_path / "s.jsonl")
    with pytest.raises(LogError, match=r"s\.jsonl:2: not JSON"):
        list(FileStore(path).read("s"))
    store = FileStore(path, skip_bad_lines=True)
    assert [e.seq for e in store.read("s")] == [1, 2]
    assert [b.line for b in store.report.bad_lines] == [2]
    # A read from further back re-reads with a reader of its own, which also skips.
    assert [e.seq for e in store.read("s", after=1)] == [2]
    assert [e.seq for e in store.read("s", after=0)] == [1, 2]


def test_open_session_store_passes_skipping_and_the_report_on(tmp_path: Path) -> None:
    """`open_session_store` hands its skip flag, its report and its sync policy to the store."""
    path = _with_bad_line(tmp_path / "s.jsonl")
    store, session = open_session_store(path)
    with pytest.raises(LogError, match=r"s\.jsonl:2: not JSON"):
        list(store.read(session))
    report = ReadReport(path="mine")
    store, session = open_session_store(path, skip_bad_lines=True, report=report, sync="batch")
    assert isinstance(store, FileStore)
    assert [e.seq for e in store.read(session)] == [1, 2]
    assert store.report is report
    assert (report.events, report.lines, [b.line for b in report.bad_lines]) == (2, 3, [2])
    assert store.log.sync == "batch"
    store, _ = open_session_store(path)
    assert isinstance(store, FileStore)
    assert store.log.sync == "always"


def test_a_file_store_counts_into_the_report_it_is_given(tmp_path: Path) -> None:
    """A given report is the one filled; without one, a new report names the file."""
    path = _log(tmp_path / "s.jsonl", 3)
    report = ReadReport(path="given")
    store = FileStore(path, report=report)
    assert store.report is report
    assert [e.seq for e in store.read("s")] == [1, 2, 3]
    assert (report.events, report.lines) == (3, 3)
    own = FileStore(path)
    list(own.read("s"))
    assert (own.report.path, own.report.events) == (str(path), 3)


def test_the_sync_policy_reaches_the_writer_and_survives_a_release(tmp_path: Path) -> None:
    """``sync="batch"`` is the writer's policy, before and after `release`."""
    store = FileStore(tmp_path / "s.jsonl", sync="batch")
    assert store.log.sync == "batch"
    store.release("s")
    assert store.log.sync == "batch"
    assert FileStore(tmp_path / "t.jsonl").log.sync == "always"


def test_an_append_names_the_seq_it_expects(tmp_path: Path) -> None:
    """`expected_seq` reaches the writer: another last seq refuses the append, writing nothing."""
    path = _log(tmp_path / "s.jsonl", 2)
    store = FileStore(path)
    size = path.stat().st_size
    with pytest.raises(SeqConflictError):
        store.append("s", [Message(role="user", content="x")], expected_seq=1)
    assert path.stat().st_size == size
    assert [e.seq for e in store.append("s", [Message(role="user", content="y")], expected_seq=2)]
    assert store.last_seq("s") == 3


def test_own_appends_are_taken_as_read_and_later_ones_read_once(tmp_path: Path) -> None:
    """After its own append the reader stands at its end; another writer's events follow once."""
    path = _log(tmp_path / "s.jsonl", 2)
    store = FileStore(path)
    assert [e.seq for e in store.read("s")] == [1, 2]
    store.append("s", [Message(role="user", content="own"), Message(role="user", content="o2")])
    assert store.read_seq == 4
    assert list(store.read("s", after=4)) == []
    with SessionLog(path) as other:
        other.append(Message(role="user", content="theirs"))
    got = list(store.read("s", after=4))
    assert [(e.seq, e.data) for e in got] == [(5, Message(role="user", content="theirs"))]
    assert store.report.events == 5
    assert store.report.lines == 5


def test_a_read_after_the_last_seq_read_continues_the_store_reader(tmp_path: Path) -> None:
    """Reading on from exactly the last seq read keeps counting into the store's report."""
    path = _log(tmp_path / "s.jsonl", 2)
    store = FileStore(path)
    assert [e.seq for e in store.read("s")] == [1, 2]
    _log(path, 1)
    assert [e.seq for e in store.read("s", after=2)] == [3]
    assert (store.read_seq, store.report.events) == (3, 3)


def test_another_session_id_is_refused_by_name(tmp_path: Path) -> None:
    """A valid other id names the one session; an invalid one is refused as an invalid id."""
    store = FileStore(_log(tmp_path / "s.jsonl", 1))
    with pytest.raises(ConfigError, match=r"holds one session \('s'\), not 'other'"):
        store.read("other")
    with pytest.raises(ConfigError, match=r"invalid session id '\.\./x'"):
        store.path_of("../x")


def test_last_seq_sessions_and_delete_of_a_file(tmp_path: Path) -> None:
    """A missing file holds seq 0 and no session; one with events lists it; delete removes it."""
    path = tmp_path / "s.jsonl"
    store = FileStore(path)
    assert (store.last_seq("s"), store.sessions(), store.delete("s")) == (0, [], False)
    _log(path, 3)
    (info,) = store.sessions()
    assert (info.session, info.events, info.last_activity) == ("s", 3, path.stat().st_mtime)
    assert store.last_seq("s") == 3
    with pytest.raises(ConfigError, match="holds one session"):
        store.last_seq("t")
    assert store.delete("s") is True
    assert not path.exists()
    assert store.last_seq("s") == 0


def test_naming_another_session_of_a_file_says_a_path_is_one_session(tmp_path: Path) -> None:
    """The refusal tells the user why: a JSONL path is one session already."""
    with pytest.raises(ConfigError, match="a JSONL path is one session already"):
        open_session_store(_log(tmp_path / "s.jsonl", 1), "other")


def test_open_store_passes_skipping_the_report_and_sync_to_a_file(tmp_path: Path) -> None:
    """`open_store` on a path builds the file store with the caller's options (defaults off)."""
    path = _with_bad_line(tmp_path / "s.jsonl")
    with pytest.raises(LogError, match=r"s\.jsonl:2: not JSON"):
        list(open_store(path).read("s"))
    report = ReadReport(path="mine")
    store = open_store(path, skip_bad_lines=True, report=report, sync="batch")
    assert isinstance(store, FileStore)
    assert [e.seq for e in store.read("s")] == [1, 2]
    assert (store.report is report, report.events, store.log.sync) == (True, 2, "batch")


def test_a_url_is_split_at_its_first_scheme_separator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A ``://`` inside the path is part of the path, not another scheme."""
    monkeypatch.chdir(tmp_path)
    assert is_store_url("sqlite:///odd://name.db")
    store = open_store("jsonl:///a://b")
    assert isinstance(store, JsonlStore)
    assert store.root == Path("a://b")


@pytest.mark.parametrize(("timeout", "ms"), [("0.5", 500), ("1", 1000), ("0.001", 1)])
def test_a_lock_timeout_of_a_second_or_less_is_accepted(
    timeout: str, ms: int, tmp_path: Path
) -> None:
    """Any positive number of seconds is a lock timeout, including those below one."""
    store = open_store(f"sqlite:///{tmp_path / 's.db'}?timeout={timeout}")
    assert isinstance(store, SqliteStore)
    assert int(store._db.execute("PRAGMA busy_timeout").fetchone()[0]) == ms
    store.close()


@pytest.mark.parametrize("timeout", ["0", "-1", "0.0", "nan", "x"])
def test_a_lock_timeout_of_zero_or_less_is_refused(timeout: str, tmp_path: Path) -> None:
    """Zero, a negative number and what is no number are refused, quoting the value."""
    with pytest.raises(ConfigError, match=f"timeout='{timeout}' must be seconds, above 0"):
        open_store(f"sqlite:///{tmp_path / 's.db'}?timeout={timeout}")
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(("sync", "level"), [("always", 2), ("batch", 1)])
def test_open_store_passes_the_sync_policy_to_each_store(
    sync: SyncPolicy, level: int, tmp_path: Path
) -> None:
    """A folder and a SQLite file opened by URL take the caller's policy (FULL=2, NORMAL=1)."""
    folder = open_store(f"jsonl:///{tmp_path / 'dir'}", sync=sync)
    assert isinstance(folder, JsonlStore)
    assert folder.sync == sync
    db = open_store(f"sqlite:///{tmp_path / 's.db'}", sync=sync)
    assert isinstance(db, SqliteStore)
    assert db._db.execute("PRAGMA synchronous").fetchone()[0] == level
    db.close()


def test_an_unknown_scheme_is_refused_quoting_the_url_without_its_password() -> None:
    """The refusal quotes what was typed (password removed) and lists the URL forms."""
    with pytest.raises(ConfigError) as info:
        open_store("http://bob:hunter22@example.invalid/x")
    assert str(info.value) == (
        "'http://bob:***@example.invalid/x' is not a store URL: use jsonl:///folder, "
        "sqlite:///file.db or postgresql://user@host/db"
    )
