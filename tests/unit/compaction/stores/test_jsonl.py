"""Contracts of the JSONL folder store (`JsonlStore`), pinned by mutation testing.

Each test states behaviour `scripts/mutate --group stores-core` found untested: the listing of a
folder and what it skips, `delete`, `last_seq` of a new session, `expected_seq`, the sync
policy, one writer per session (its lock held through a transaction), a read resuming where the
last one ended, and a read after `release` starting anew.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from fsync_calls import count_fsyncs
from open_files import needs_proc, open_fds

from compaction import ConfigError, Message, SeqConflictError
from compaction.errors import HarnessError
from compaction.events import EventData
from compaction.stores import SessionLog
from compaction.stores import jsonl as jsonl_module
from compaction.stores.jsonl import JsonlStore
from compaction.stores.log_reader import LogReader
from compaction.stores.log_writer import SyncPolicy
from compaction.stores.protocol import SessionInfo

BAD_ID = "use 1-200 letters, digits, '.', '_' or '-', starting with a letter or digit"


def msgs(*texts: str) -> list[EventData]:
    return [Message(role="user", content=t) for t in texts]


def folder_with_strays(root: Path) -> None:
    """Two sessions, an empty file, and files that are not sessions, in `root`."""
    store = JsonlStore(root)
    store.append("b", msgs("x"))
    store.append("a", msgs("x", "y"))
    store.close()
    (root / "empty.jsonl").touch()
    (root / "-bad.jsonl").write_text("x")
    (root / "junk.jsonl").write_text("not json\nmore\n")
    (root / "dir.jsonl").mkdir()
    (root / "notes.txt").write_text("not a log\n")
    (root / "a.jsonl.bak").write_text("not a log\n")


def refusing(text: str) -> Callable[[SessionLog], int]:
    """A `SessionLog.last_seq` that raises a `HarnessError` saying `text`."""

    def last_seq(self: SessionLog) -> int:
        raise HarnessError(text)

    return last_seq


class TestSessions:
    def test_a_new_store_has_skipped_nothing(self, tmp_path: Path) -> None:
        """`bad_entries` is an empty list before any listing, and a missing folder lists none."""
        store = JsonlStore(tmp_path / "none")
        assert store.bad_entries == []
        assert store.sessions() == []
        assert store.bad_entries == []
        assert not (tmp_path / "none").exists()

    def test_lists_sessions_by_id_with_counts_and_times(self, tmp_path: Path) -> None:
        """Each ``*.jsonl`` holding events is listed, sorted, with its last seq and mtime."""
        folder_with_strays(tmp_path)
        store = JsonlStore(tmp_path)
        got = store.sessions()
        mtimes = {s: os.stat(tmp_path / f"{s}.jsonl").st_mtime for s in ("a", "b")}
        assert got == [SessionInfo("a", 2, mtimes["a"]), SessionInfo("b", 1, mtimes["b"])]

    def test_files_that_are_not_sessions_are_described(self, tmp_path: Path) -> None:
        """A bad id, a folder and a file that is not a log are each one line.

        An empty file and other suffixes are not mentioned; a message naming the file is kept.
        """
        folder_with_strays(tmp_path)
        store = JsonlStore(tmp_path)
        store.sessions()
        assert store.bad_entries == [
            f"{tmp_path / '-bad.jsonl'}: invalid session id '-bad': {BAD_ID}",
            f"{tmp_path / 'dir.jsonl'}: cannot open the log: Is a directory",
            f"{tmp_path / 'junk.jsonl'}:2: last line: not JSON: expected value at line 1 column 1."
            " Fix or remove that line, or read with skip_bad_lines=True (CLI: --skip-bad) to"
            " count and skip it.",
        ]
        (tmp_path / "-bad.jsonl").unlink()
        (tmp_path / "junk.jsonl").unlink()
        (tmp_path / "dir.jsonl").rmdir()
        assert [s.session for s in store.sessions()] == ["a", "b"]
        assert store.bad_entries == []

    def test_a_long_description_is_cut_to_300_characters_on_one_line(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Whitespace runs become one space, the text stops at 300 characters.

        The path is put in front when the text does not name it.
        """
        (tmp_path / "s.jsonl").write_text("x")
        path = tmp_path / "s.jsonl"
        path.write_text("x")
        store = JsonlStore(tmp_path)
        long = "first  line\n\n" + "word " * 100
        monkeypatch.setattr(SessionLog, "last_seq", refusing(long))
        assert store.sessions() == []
        expected = "first line " + ("word " * 100)[:289]
        assert store.bad_entries == [f"{path}: {expected}"]
        monkeypatch.setattr(SessionLog, "last_seq", refusing(f"{path}:\tbroken\n"))
        store.sessions()
        assert store.bad_entries == [f"{path}: broken"]


@needs_proc
class TestOneWriterPerSession:
    def test_appends_share_one_file_and_close_releases_it(self, tmp_path: Path) -> None:
        """All appends to a session go through one open file, which `close` closes."""
        store = JsonlStore(tmp_path)
        for text in ("1", "2", "3"):
            store.append("s", msgs(text))
        assert store.last_seq("s") == 3
        assert open_fds(store.path_of("s")) == 1
        store.close()
        assert open_fds(store.path_of("s")) == 0

    def test_an_append_inside_a_transaction_uses_the_locked_file(self, tmp_path: Path) -> None:
        """The transaction's lock and its appends are one file: no second descriptor waits."""
        store = JsonlStore(tmp_path)
        store.append("s", msgs("1"))
        with store.transaction("s"):
            assert open_fds(store.path_of("s")) == 1
            assert [e.seq for e in store.append("s", msgs("2"))] == [2]
            assert store.last_seq("s") == 2
        store.release("s")
        assert open_fds(store.path_of("s")) == 0


class TestOneSession:
    def test_a_new_session_is_at_seq_0_and_holds_no_file(self, tmp_path: Path) -> None:
        """`last_seq` of a session never written is 0, and asking creates nothing."""
        store = JsonlStore(tmp_path)
        assert store.last_seq("s") == 0
        assert not store.path_of("s").exists()
        store.append("s", msgs("x", "y"))
        assert store.last_seq("s") == 2

    def test_an_append_names_the_seq_it_expects(self, tmp_path: Path) -> None:
        """Another last seq than `expected_seq` refuses the append and writes nothing."""
        store = JsonlStore(tmp_path)
        store.append("s", msgs("1", "2"))
        size = store.path_of("s").stat().st_size
        with pytest.raises(SeqConflictError, match="expected the last seq to be 1, but it is 2"):
            store.append("s", msgs("x"), expected_seq=1)
        assert store.path_of("s").stat().st_size == size
        assert [e.seq for e in store.append("s", msgs("3"), expected_seq=2)] == [3]

    def test_delete_says_whether_the_session_existed(self, tmp_path: Path) -> None:
        """`delete` removes the file and answers True; a missing session answers False."""
        store = JsonlStore(tmp_path)
        store.append("s", msgs("1", "2"))
        assert store.delete("s") is True
        assert not store.path_of("s").exists()
        assert store.delete("s") is False
        assert store.delete("never") is False
        assert [e.seq for e in store.append("s", msgs("again"))] == [1]
        assert [e.data for e in store.read("s")] == msgs("again")

    @pytest.mark.parametrize(("sync", "per_append"), [("always", 1), ("batch", 0)])
    def test_the_sync_policy_reaches_every_session(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync: SyncPolicy, per_append: int
    ) -> None:
        """``always`` fsyncs each append; ``batch`` only when a transaction ends."""
        store = JsonlStore(tmp_path, sync=sync)
        store.append("a", msgs("x"))  # the file exists: creating it costs no fsync below
        calls = count_fsyncs(monkeypatch)
        for _ in range(3):
            store.append("a", msgs("y"))
        assert len(calls) == 3 * per_append
        with store.transaction("a"):
            store.append("a", msgs("z"))
        assert len(calls) == 4 * per_append + 1  # and the one when the transaction ends


class CountingReader(LogReader):
    made = 0

    def __init__(self, path: Path | str) -> None:
        CountingReader.made += 1
        super().__init__(path)


class TestReading:
    def test_reads_after_a_seq(self, tmp_path: Path) -> None:
        """`read(after=n)` yields seqs above n only, from a fresh store or a resumed one."""
        store = JsonlStore(tmp_path)
        store.append("s", msgs("1", "2", "3"))
        assert [e.seq for e in JsonlStore(tmp_path).read("s", after=1)] == [2, 3]
        assert [e.seq for e in store.read("s", after=3)] == []
        assert list(store.read("missing")) == []

    def test_a_read_resumes_where_the_last_one_ended(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Reading on from the last seq read keeps the session's reader.

        The file is not read again from its start; a read from further back starts anew.
        """
        monkeypatch.setattr(jsonl_module, "LogReader", CountingReader)
        CountingReader.made = 0
        store = JsonlStore(tmp_path)
        store.append("s", msgs("1", "2"))
        store.append("t", msgs("other"))
        assert [e.seq for e in store.read("s")] == [1, 2]
        assert [e.seq for e in store.read("s", after=2)] == []
        assert CountingReader.made == 1
        store.append("s", msgs("3"))
        assert [e.seq for e in store.read("s", after=2)] == [3]
        assert [e.seq for e in store.read("t")] == [1]
        assert CountingReader.made == 2
        assert [e.seq for e in store.read("s", after=1)] == [2, 3]
        assert CountingReader.made == 3

    def test_after_release_a_replaced_file_is_read_anew(self, tmp_path: Path) -> None:
        """`release` forgets how far the file was read: the replacement is read from its start."""
        store = JsonlStore(tmp_path)
        store.append("s", msgs("a", "b"))
        assert [e.seq for e in store.read("s")] == [1, 2]
        path = store.path_of("s")
        replacement = tmp_path / "new.tmp"
        with SessionLog(replacement) as log:
            log.append_many(msgs("a much longer first message", "second", "third"))
        os.replace(replacement, path)
        store.release("s")
        got = [(e.seq, e.data) for e in store.read("s", after=2)]
        assert got == [(3, Message(role="user", content="third"))]


class TestSessionIds:
    @pytest.mark.parametrize("bad", ["", "../x", ".hidden", "-x", "_x", "a/b", "a" * 201])
    def test_an_invalid_id_is_refused_with_the_rule(self, tmp_path: Path, bad: str) -> None:
        """The refusal quotes the id and states the whole rule; nothing is created."""
        store = JsonlStore(tmp_path / "f")
        with pytest.raises(ConfigError) as caught:
            store.append(bad, msgs("x"))
        assert str(caught.value) == f"invalid session id {bad!r}: {BAD_ID}"
        assert not (tmp_path / "f").exists()

    def test_the_longest_id_is_a_session(self, tmp_path: Path) -> None:
        """200 characters, dots, dashes and underscores after the first: a valid id."""
        sid = "a" + "._-b" * 49 + "cde"
        assert len(sid) == 200
        store = JsonlStore(tmp_path)
        store.append(sid, msgs("x"))
        assert store.sessions() == [
            SessionInfo(sid, 1, os.stat(tmp_path / f"{sid}.jsonl").st_mtime)
        ]
