"""Store URLs through the command line: every LOG command with --session, sessions, copy, import."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import psycopg
import pytest

from compaction import Session, dump_event, open_store, read_events
from compaction.stores._postgres import TABLE
from harness.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
TODOS = json.dumps(
    {
        "todos": [
            {"content": "Write the parser", "status": "completed"},
            {"content": "Run the tests", "status": "in_progress"},
            {"content": "Update the docs", "status": "pending"},
        ]
    }
)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out = capsys.readouterr()
    return status, out.out, out.err


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh SQLite file, or a fresh table on the test PostgreSQL server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 's.db'}"
    pg: str = request.getfixturevalue("postgres_url")
    with psycopg.connect(pg, autocommit=True) as db:
        db.execute(f"DROP TABLE IF EXISTS {TABLE}")
    return pg


class TestLogCommandsOnStores:
    def test_todo_write_todos_log_context_compact(
        self, capsys: pytest.CaptureFixture[str], url: str
    ) -> None:
        """todo-write, todos, log, context and compact all work on URL + --session."""
        assert run(capsys, "todo-write", url, "--session", "abc", "--args", TODOS)[0] == 0
        status, out, _ = run(capsys, "todos", url, "--session", "abc")
        assert (status, out.splitlines()[0]) == (0, "1 completed, 1 in progress, 1 pending")
        status, out, _ = run(capsys, "log", url, "--session", "abc", "--json")
        assert (status, json.loads(out)["events_by_type"]) == (0, {"todo/write": 1})
        with Session.open(url, session="abc") as s:
            s.start_turn("go")
            s.add_message({"role": "assistant", "content": "working"})
            s.start_turn("next")
        status, out, _ = run(capsys, "compact", url, "--session", "abc", "--force")
        assert status == 0
        assert "carried by code: 1 pending, 1 in progress todos" in out
        status, out, _ = run(capsys, "context", url, "--session", "abc")
        assert status == 0
        assert "Update the docs" in out
        with Session.open(url, session="abc") as s:
            assert s.report.by_type["compaction/checkpoint"] == 1

    def test_store_url_without_session_is_one_clear_line(
        self, capsys: pytest.CaptureFixture[str], url: str
    ) -> None:
        """A store URL without --session fails with one line saying to name it."""
        status, _, err = run(capsys, "todos", url)
        assert status == 2
        assert err.count("\n") == 1
        assert "--session" in err

    def test_session_on_a_jsonl_path_is_refused(
        self, capsys: pytest.CaptureFixture[str], tmp_path: Path
    ) -> None:
        """--session with a plain JSONL path is a usage error, not silently ignored."""
        status, _, err = run(capsys, "todos", str(tmp_path / "s.jsonl"), "--session", "x")
        assert status == 2
        assert "needs a store URL" in err


class TestSessionsAndCopy:
    def test_sessions_lists_counts_activity_open_tasks(
        self, capsys: pytest.CaptureFixture[str], url: str
    ) -> None:
        """`harness sessions URL` lists each session's events, last activity and open tasks."""
        run(capsys, "todo-write", url, "--session", "b", "--args", TODOS)
        with Session.open(url, session="a") as s:
            s.start_turn("hello")
        status, out, _ = run(capsys, "sessions", url, "--json")
        rows = json.loads(out)["sessions"]
        assert status == 0
        assert [(r["session"], r["events"], r["open_tasks"]) for r in rows] == [
            ("a", 2, 0),
            ("b", 1, 2),
        ]
        assert all(r["last_activity"].endswith("Z") for r in rows)
        status, out, _ = run(capsys, "sessions", url)
        assert "last activity" in out
        assert " b " in out

    def test_copy_round_trip_is_byte_identical(
        self, capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path
    ) -> None:
        """JSONL -> store -> JSONL folder copies every event, byte for byte."""
        src = tmp_path / "orig.jsonl"
        run(capsys, "import", "auto", str(FIXTURES / "codex_small.jsonl"), "-o", str(src))
        status, out, _ = run(capsys, "copy", str(src), url, "--as", "imported")
        assert status == 0
        assert "#imported:" in out
        back = tmp_path / "back"
        assert run(capsys, "copy", url, f"jsonl:///{back}")[0] == 0
        assert (back / "imported.jsonl").read_bytes() == src.read_bytes()
        status, _, err = run(capsys, "copy", str(src), url, "--as", "imported")
        assert status == 2
        assert "already holds" in err

    def test_import_into_store(
        self, capsys: pytest.CaptureFixture[str], url: str, tmp_path: Path
    ) -> None:
        """`harness import ... -o URL --session NAME` writes the same events as a JSONL import."""
        transcript = str(FIXTURES / "claude_code_small.jsonl")
        ref = tmp_path / "ref.jsonl"
        run(capsys, "import", "auto", transcript, "-o", str(ref))
        status, out, _ = run(capsys, "import", "auto", transcript, "-o", url, "--session", "cc")
        assert status == 0
        assert f"-> {url}#cc" in out
        store = open_store(url)
        try:
            assert [dump_event(e) for e in store.read("cc")] == [
                dump_event(e) for e in read_events(ref)
            ]
        finally:
            store.close()
        status, _, err = run(capsys, "import", "auto", transcript, "-o", url, "--session", "cc")
        assert (status, "already exists" in err) == (2, True)
        assert (
            run(capsys, "import", "auto", transcript, "-o", url, "--session", "cc", "--force")[0]
            == 0
        )


def test_subprocess_round_trip(tmp_path: Path) -> None:
    """The installed CLI takes a SQLite URL end to end in a real process."""
    url = f"sqlite:///{tmp_path / 's.db'}"
    for args in (
        ["todo-write", url, "--session", "x", "--args", TODOS],
        ["todos", url, "--session", "x"],
    ):
        done = subprocess.run(
            [sys.executable, "-m", "harness", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
    assert done.stdout.startswith("1 completed, 1 in progress, 1 pending")
