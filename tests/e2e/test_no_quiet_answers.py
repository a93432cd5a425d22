"""Issue 39, item 9: no quiet wrong answers from the command line.

A read never creates a store: a store that is not there is "no such store", a session it does
not hold "no session ID", both exit 3 with nothing written. A transcript given where a log is
expected names the import command. A closed pipe is quiet. Each exit status is the README's.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction.stores import SqliteStore

READS = [
    ["todos", "{url}", "--session", "s1"],
    ["log", "{url}", "--session", "s1"],
    ["context", "{url}", "--session", "s1"],
    ["tasks", "{url}", "--session", "s1"],
    ["sessions", "{url}"],
    ["copy", "{url}", "jsonl:///{out}", "--session", "s1"],
]


def _argv(words: list[str], url: str, tmp_path: Path) -> list[str]:
    return [w.format(url=url, out=tmp_path / "out") for w in words]


@pytest.mark.parametrize("words", READS, ids=[w[0] for w in READS])
@pytest.mark.parametrize("kind", ["sqlite", "jsonl"])
def test_a_read_of_a_missing_store_creates_nothing(
    words: list[str], kind: str, tmp_path: Path
) -> None:
    """`sqlite:///missing.db` and `jsonl:///no/such/folder`: "no such store", exit 3, no file."""
    target = tmp_path / ("missing.db" if kind == "sqlite" else "no/such/folder")
    done = run_cli(*_argv(words, f"{kind}:///{target}", tmp_path))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "no such store" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "0 sessions" not in done.stdout
    assert "0 completed" not in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("words", [w for w in READS if w[0] != "sessions"], ids=str)
def test_a_read_of_a_missing_session_says_so(words: list[str], tmp_path: Path) -> None:
    """A store that holds no session `s1`: "no session 's1'", exit 3, the store unchanged."""
    path = tmp_path / "s.db"
    SqliteStore(path).close()
    before = path.read_bytes()
    done = run_cli(*_argv(words, f"sqlite:///{path}", tmp_path))
    assert done.returncode == 3, (done.stdout, done.stderr)
    assert "no session 's1'" in done.stderr
    assert path.read_bytes() == before
    assert not (tmp_path / "out").exists()


def test_a_foreign_sqlite_file_is_not_a_store_and_gains_no_table(tmp_path: Path) -> None:
    """An SQLite file of another application: "no such store", and no events table is added."""
    import sqlite3

    path = tmp_path / "other.db"
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    done = run_cli("todos", f"sqlite:///{path}", "--session", "s1")
    assert done.returncode == 3
    assert "no such store" in done.stderr
    db = sqlite3.connect(path)
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master")]
    db.close()
    assert names == ["t"]


def test_a_write_still_creates_its_store(tmp_path: Path) -> None:
    """`todo-write` to a new SQLite store creates it (writes are not reads)."""
    url = f"sqlite:///{tmp_path / 'new.db'}"
    done = run_cli("todo-write", url, "--session", "s1", "--args", '{"todos": []}')
    assert done.returncode == 0, done.stderr
    assert run_cli("todos", url, "--session", "s1").returncode == 0


TRANSCRIPTS = sorted((Path(__file__).parents[1] / "fixtures" / "transcripts").iterdir())


@pytest.mark.parametrize("command", ["todos", "context", "log", "tasks", "compact"])
@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: p.name)
def test_a_transcript_given_as_a_log_names_the_import(command: str, path: Path) -> None:
    """One line naming the transcript's format and `harness import auto FILE -o LOG`, exit 2."""
    done = run_cli(command, str(path))
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f"harness import auto {path} -o LOG" in done.stderr
    assert "is a transcript (" in done.stderr
    assert "--skip-bad" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_damaged_session_log_keeps_the_readers_message(tmp_path: Path) -> None:
    """A session log with a bad line is not taken for a transcript: the reader's line stands."""
    log = tmp_path / "s.jsonl"
    log.write_text('{"v":1,"seq":1,"type":"turn/start","data":{}}\n{"v":1,"seq":3}\n')
    done = run_cli("todos", str(log))
    assert done.returncode == 2
    assert "harness import" not in done.stderr
    assert "s.jsonl:2" in done.stderr


def test_todo_write_at_a_terminal_does_not_wait(tmp_path: Path) -> None:
    """No --args and stdin a terminal: one line, exit 2, at once (a real pty, a subprocess)."""
    import os
    import pty
    import subprocess
    import sys

    leader, follower = pty.openpty()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "harness", "todo-write", str(tmp_path / "s.jsonl")],
            stdin=follower,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2, done.stderr
    assert "stdin is a terminal" in done.stderr
    assert "--args" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "s.jsonl").exists()


def test_bench_names_its_missing_extra_before_it_runs(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Without httpx (the README's first install): the llm extra is named, exit 2, no run."""
    import sys

    from harness.commands import bench_cmd

    monkeypatch.setitem(sys.modules, "httpx", None)
    monkeypatch.setattr(bench_cmd, "load_suite", lambda: pytest.fail("the suite was loaded"))
    done = run_cli("bench", "--quick", "--out", str(tmp_path / "out"))
    assert done.returncode == 2, done.stderr
    assert "pip install 'context-harness[llm]'" in done.stderr
    assert not (tmp_path / "out").exists()


def _log(tmp_path: Path) -> Path:
    from compaction import Session

    log = tmp_path / "s.jsonl"
    with Session(log) as session:
        session.start_turn("Fix it", mode="agent")
        session.add_message({"role": "assistant", "content": "done"})
    return log


ROWS = [
    (0, ["todos", "{log}"]),
    (1, ["todo-write", "{log}", "--args", '{"todos": [{"content": "x", "status": "done"}]}']),
    (2, ["prompt", "--mode", "nosuch"]),
    (2, ["log", "{log}", "--plot", "{tmp}/x.txt"]),
    (2, ["compact", "{log}", "--backend", "openai-responses"]),
    (3, ["todos", "{tmp}/missing.jsonl"]),
    (3, ["todos", "sqlite:///{tmp}/missing.db", "--session", "s1"]),
    (3, ["log", "{log}", "--plot", "{log}/x.png"]),
    (3, ["bench", "--report-only", "--out", "{log}/out"]),
]


@pytest.mark.parametrize(("status", "words"), ROWS, ids=[" ".join(w[:2]) for _, w in ROWS])
def test_every_row_of_the_exit_table(status: int, words: list[str], tmp_path: Path) -> None:
    """Each case exits with the README table's status for it, one line on stderr when it fails."""
    from harness.cli import EXIT_CODES

    log = _log(tmp_path)
    argv = [w.replace("{log}", str(log)).replace("{tmp}", str(tmp_path)) for w in words]
    done = run_cli(*argv)
    assert done.returncode == status, (argv, done.stderr)
    assert status in EXIT_CODES
    if status > 1:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_a_transcript_over_the_size_limit_says_so(tmp_path: Path) -> None:
    """A record over the 16 MiB line limit: the limit and the line are named, not "no events"."""
    import json

    from compaction.importers._records import MAX_LINE_BYTES

    big = "y" * (MAX_LINE_BYTES + 10)
    path = tmp_path / "t.jsonl"
    record = {"type": "user", "sessionId": "s", "message": {"role": "user", "content": big}}
    path.write_text(json.dumps(record) + "\n")
    done = run_cli("import", "auto", str(path), "-o", str(tmp_path / "s.jsonl"))
    assert done.returncode == 2, done.stderr
    assert f"over the size limit of {MAX_LINE_BYTES} bytes (line 1)" in done.stderr
    assert "no session events" not in done.stderr
    assert not (tmp_path / "s.jsonl").exists()


def test_an_empty_panel_says_where_the_latest_list_is(tmp_path: Path) -> None:
    """A new turn with no list, the latest (all done) in turn 1: the panel says seq and turn."""
    from compaction import Session
    from harness.commands.todos_cmd import todos_text

    log = tmp_path / "s.jsonl"
    done = [{"content": "Read", "status": "completed"}, {"content": "Fix", "status": "completed"}]
    with Session(log) as session:
        session.start_turn("First", mode="agent")
        session.todo_write({"todos": done})
        seq = max(e.seq for e in session.events())
        session.start_turn("Second", mode="agent")
        full = todos_text(session).plain
    line = f"no list in this turn; the latest, seq {seq} in turn 1: all 2 completed"
    assert full == f"{line}\n0 completed, 0 in progress, 0 pending"
    plain = run_cli("todos", str(log))
    assert plain.stdout == full + "\n"
