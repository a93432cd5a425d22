"""Issue 25, cases 4 and 8: `harness copy` is atomic, truthful, and refuses what it cannot copy.

A copy interrupted part-way (a failing write, a SIGKILL) leaves no destination session; a rerun
(or ``--resume`` into SQL) finishes it; a missing or damaged source, a symlinked destination and
a store with a stray entry are refused with one line.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import Event, LogError, Message, Session, open_store, read_events
from compaction.stores import SqliteStore, copy_session
from compaction.stores import _copy as copy_module
from compaction.stores.jsonl import JsonlStore


def _log(path: Path, messages: int = 50) -> Path:
    with Session(path) as session:
        session.start_turn("Fix it", mode="agent")
        session.append_many(
            [Message(role="assistant", content=f"step {i}") for i in range(messages)]
        )
    return path


def _failing_after(events: Iterator[Event], n: int) -> Iterator[Event]:
    for i, event in enumerate(events):
        if i == n:
            raise LogError("simulated read failure")
        yield event


@pytest.fixture(params=["jsonl", "sqlite"])
def dst_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A destination store URL of each local backend."""
    if request.param == "jsonl":
        return f"jsonl:///{tmp_path / 'dst'}"
    return f"sqlite:///{tmp_path / 'dst.db'}"


def test_a_failed_copy_leaves_no_destination(dst_url: str, tmp_path: Path) -> None:
    """A copy failing after 2,500 events leaves no session; a rerun copies it whole."""
    src = JsonlStore(tmp_path / "src")
    _log(src.path_of("s"), messages=3000)
    dst = open_store(dst_url)
    with pytest.raises(LogError, match="the destination was not created"):
        copy_module.write_new_session(dst, "s", _failing_after(src.read("s"), 2500))
    assert dst.last_seq("s") == 0
    assert [i.session for i in dst.sessions() if not i.session.endswith("staging")] == []
    assert copy_session(src, "s", dst) == 3002
    assert [e.seq for e in dst.read("s")][-1] == 3002
    src.close()
    dst.close()


def test_resume_continues_a_staging_session(tmp_path: Path) -> None:
    """Into SQLite, --resume appends only what the staging session lacks."""
    src = JsonlStore(tmp_path / "src")
    _log(src.path_of("s"), messages=2500)
    dst = SqliteStore(tmp_path / "dst.db")
    with pytest.raises(LogError, match="--resume"):
        copy_module.write_new_session(dst, "s", _failing_after(src.read("s"), 2100))
    assert dst.last_seq("s.copy-staging") == 2000
    assert copy_session(src, "s", dst, resume=True) == 2502
    assert dst.last_seq("s.copy-staging") == 0
    assert list(dst.read("s")) == list(src.read("s"))
    src.close()
    dst.close()


def _copying(tmp_path: Path, backend: str) -> bool:
    """Tell whether the copy has started writing (its part file or staging rows exist)."""
    if backend == "jsonl":
        return (tmp_path / "out" / ".big.jsonl.part").exists()
    db = tmp_path / "o.db"
    if not db.exists():
        return False
    try:
        con = sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True, timeout=0.01)
        try:
            row = con.execute(
                "SELECT count(*) FROM events WHERE session = 'big.copy-staging'"
            ).fetchone()
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return bool(row and row[0])


def _copy_process(src: Path, dst: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "harness", "copy", str(src), dst, "--as", "big"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("backend", ["jsonl", "sqlite"])
def test_sigkill_mid_copy_never_leaves_a_truncated_session(backend: str, tmp_path: Path) -> None:
    """Killed at any point, the destination holds the whole session or none of it."""
    src = _log(tmp_path / "big.jsonl", messages=6000)
    total = sum(1 for _ in read_events(src))
    dst = f"jsonl:///{tmp_path / 'out'}" if backend == "jsonl" else f"sqlite:///{tmp_path}/o.db"
    proc = _copy_process(src, dst)
    deadline = time.monotonic() + 120  # a bound on the wait, not a timing assertion
    while proc.poll() is None and not _copying(tmp_path, backend) and time.monotonic() < deadline:
        pass
    with contextlib.suppress(ProcessLookupError):
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    store = open_store(dst)
    assert store.last_seq("big") in (0, total)
    store.close()
    rerun = run_cli("copy", src, dst, "--as", "big")
    if rerun.returncode != 0:
        assert "already holds" in rerun.stderr
    store = open_store(dst)
    assert store.last_seq("big") == total
    store.close()


def test_a_missing_source_is_refused(dst_url: str, tmp_path: Path) -> None:
    """Copying a session that does not exist is one line, not "0 events".

    A missing JSONL file, a store that is not there and a store session that holds no events
    are each exit 3, as for every command that reads (issue 39: "no such store", "no session
    ID"); the missing store is not created.
    """
    done = run_cli("copy", tmp_path / "nothing.jsonl", dst_url, "--as", "x")
    assert done.returncode == 3
    assert "no such session" in done.stderr
    assert "0 events" not in done.stdout
    src = f"sqlite:///{tmp_path / 'empty.db'}"
    done = run_cli("copy", src, dst_url, "--session", "ghost")
    assert done.returncode == 3
    assert "no such store" in done.stderr
    assert not (tmp_path / "empty.db").exists()
    SqliteStore(tmp_path / "empty.db").close()
    done = run_cli("copy", src, dst_url, "--session", "ghost")
    assert done.returncode == 3
    assert "no session 'ghost'" in done.stderr


@pytest.mark.parametrize("kind", ["dangling", "outside", "to-a-file"])
def test_a_symlinked_destination_is_refused(kind: str, tmp_path: Path) -> None:
    """A destination that is a symlink (dangling or not) is refused; nothing is written."""
    src = _log(tmp_path / "s.jsonl", messages=3)
    folder = tmp_path / "dst"
    folder.mkdir()
    target = tmp_path / "elsewhere" / "victim.jsonl"
    if kind == "to-a-file":
        target.parent.mkdir()
        target.write_text("precious\n")
    (folder / "x.jsonl").symlink_to(target if kind != "outside" else Path("/tmp/../etc/x.jsonl"))
    done = run_cli("copy", src, f"jsonl:///{folder}", "--as", "x")
    assert done.returncode == 2, done.stderr
    assert "symlink" in done.stderr
    assert not target.exists() or target.read_text() == "precious\n"
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_renumbered_source_is_refused(tmp_path: Path) -> None:
    """A SQLite row whose seq disagrees with its body's is refused, never renumbered."""
    db = tmp_path / "src.db"
    store = SqliteStore(db)
    with Session(store=store, session="s") as session:
        for i in range(5):
            session.add_message({"role": "user", "content": f"m{i}"})
    store.close()
    con = sqlite3.connect(db)
    con.execute("DELETE FROM events WHERE session = 's' AND seq < 5")
    con.execute("UPDATE events SET seq = 1 WHERE session = 's'")
    con.commit()
    con.close()
    done = run_cli("copy", f"sqlite:///{db}", f"jsonl:///{tmp_path / 'out'}", "--session", "s")
    assert done.returncode == 2
    assert "damaged" in done.stderr
    assert not (tmp_path / "out" / "s.jsonl").exists()


def _folder_with_a_stray_file(tmp_path: Path) -> Path:
    folder = tmp_path / "src"
    folder.mkdir()
    _log(folder / "a.jsonl", messages=2)
    _log(folder / "b.jsonl", messages=2)
    (folder / "notes.jsonl").write_text("not a log\n")
    return folder


def test_sessions_lists_the_rest_and_names_the_stray_file(tmp_path: Path) -> None:
    """One stray file: `sessions` lists the real sessions and names the file on stderr."""
    folder = _folder_with_a_stray_file(tmp_path)
    done = run_cli("sessions", f"jsonl:///{folder}", "--json")
    assert done.returncode == 0, done.stderr
    listed = json.loads(done.stdout)
    assert [r["session"] for r in listed["sessions"]] == ["a", "b"]
    assert "notes.jsonl" in listed["bad_entries"][0]
    assert "notes.jsonl" in done.stderr


def test_copy_of_a_store_with_a_stray_file_copies_the_rest_only_when_asked(
    tmp_path: Path,
) -> None:
    """Without --skip-bad nothing is copied; with it the two sessions are, the file reported."""
    folder = _folder_with_a_stray_file(tmp_path)
    dst = f"sqlite:///{tmp_path / 'dst.db'}"
    refused = run_cli("copy", f"jsonl:///{folder}", dst)
    assert refused.returncode == 2
    assert "--skip-bad" in refused.stderr
    store = open_store(dst)
    assert store.sessions() == []
    store.close()
    done = run_cli("copy", f"jsonl:///{folder}", dst, "--skip-bad", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [c["events"] for c in report["copied"]] == [4, 4]
    assert "notes.jsonl" in report["skipped"][0]


def test_no_temporary_file_is_left_behind(tmp_path: Path) -> None:
    """A JSONL copy leaves only the session file: the hidden part file is gone."""
    src = _log(tmp_path / "s.jsonl", messages=3)
    assert run_cli("copy", src, f"jsonl:///{tmp_path / 'out'}", "--as", "x").returncode == 0
    assert sorted(os.listdir(tmp_path / "out")) == ["x.jsonl"]
    assert (tmp_path / "out" / "x.jsonl").read_bytes() == src.read_bytes()


def test_postgres_copy_is_atomic_and_rerunnable(postgres_url: str, tmp_path: Path) -> None:
    """Into PostgreSQL a failed copy leaves no session, resume finishes it, a rerun is refused."""
    src = JsonlStore(tmp_path / "src")
    _log(src.path_of("pgcopy"), messages=2500)
    dst = open_store(postgres_url)
    dst.delete("pgcopy")
    dst.delete("pgcopy.copy-staging")
    with pytest.raises(LogError, match="the destination was not created"):
        copy_module.write_new_session(dst, "pgcopy", _failing_after(src.read("pgcopy"), 2100))
    assert dst.last_seq("pgcopy") == 0
    assert copy_session(src, "pgcopy", dst, resume=True) == 2502
    assert list(dst.read("pgcopy")) == list(src.read("pgcopy"))
    with pytest.raises(LogError, match="already holds"):
        copy_session(src, "pgcopy", dst)
    dst.delete("pgcopy")
    src.close()
    dst.close()
