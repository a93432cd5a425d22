"""The session-core commands: todo-write, todos, log, --help (in-process, and real processes)."""

from __future__ import annotations

import json
import queue
import subprocess
import sys
import threading
import time
from importlib import resources
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import Session, SessionLog, TurnStartData
from harness.cli import build_parser

HEAD = "todo_write: rejected, nothing was changed. Fix the arguments and call again:\n"
THREE = json.dumps(
    {
        "todos": [
            {"content": "Write the parser", "status": "completed"},
            {"content": "Run the tests", "status": "in_progress"},
            {"content": "Update the docs", "status": "pending"},
        ]
    }
)


def todos(*items: tuple[str, str]) -> str:
    """Return todo_write arguments with one item per (content, status) pair."""
    return json.dumps({"todos": [{"content": c, "status": s} for c, s in items]})


def harness(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner); `--follow` and --help use a subprocess."""
    return run_cli(*args, stdin=stdin)


class TestTodoWrite:
    def test_stdin_accepted(self, log_path: Path) -> None:
        """Arguments on stdin: prints the counts line, exits 0, appends one todo/write."""
        out = harness("todo-write", str(log_path), stdin=THREE)
        assert (out.returncode, out.stdout, out.stderr) == (
            0,
            "Todo list updated: 1 pending, 1 in progress, 1 completed.\n",
            "",
        )
        lines = log_path.read_text().splitlines()
        assert [json.loads(x)["type"] for x in lines] == ["todo/write"]

    def test_json_rejected_appends_nothing(self, log_path: Path) -> None:
        """A rejected call prints every violation, exits 1 and leaves the log untouched."""
        with SessionLog(log_path) as log:
            log.append(TurnStartData())
        before = log_path.read_bytes()
        args = '{"todos": [{"content": "x", "status": "done", "id": 1}]}'
        out = harness("todo-write", str(log_path), "--args", args)
        assert out.returncode == 1
        assert out.stdout == (
            HEAD
            + '- todos[0].status must be one of pending, in_progress, completed, not "done"\n'
            + '- todos[0]: unknown field "id"; an item has only "content" and "status"\n'
        )
        assert log_path.read_bytes() == before

    def test_not_json_on_missing_log_creates_nothing(self, tmp_path: Path) -> None:
        """Garbage arguments against a new log: exit 1, and no file appears."""
        path = tmp_path / "new.jsonl"
        out = harness("todo-write", str(path), stdin="not json at all")
        assert out.returncode == 1
        assert out.stdout.startswith(HEAD + "- arguments are not valid JSON")
        assert not path.exists()

    def test_allow_parallel(self, log_path: Path) -> None:
        """Two in_progress items are rejected by default and accepted with --allow-parallel."""
        args = todos(("a", "in_progress"), ("b", "in_progress"))
        rejected = harness("todo-write", str(log_path), "--args", args)
        assert rejected.returncode == 1
        assert "2 items are in_progress (todos[0], todos[1])" in rejected.stdout
        assert not log_path.exists()
        accepted = harness("todo-write", str(log_path), "--args", args, "--allow-parallel")
        assert accepted.returncode == 0
        assert accepted.stdout == "Todo list updated: 0 pending, 2 in progress, 0 completed.\n"


class TestTodos:
    @pytest.fixture
    def written(self, log_path: Path) -> Path:
        """A log whose current turn has a three-item list."""
        with Session(log_path) as session:
            session.start_turn("Add a parser")
            session.todo_write(THREE)
        return log_path

    def test_panel_text(self, written: Path) -> None:
        """The counts line, then one line per item with its status mark."""
        out = harness("todos", str(written))
        assert out.returncode == 0
        assert out.stdout == (
            "1 completed, 1 in progress, 1 pending\n"
            "✓ Write the parser\n"
            "◉ Run the tests\n"
            "○ Update the docs\n"
        )

    def test_json(self, written: Path) -> None:
        """--json prints counts, the source seq and the items, with sorted keys."""
        out = harness("todos", str(written), "--json")
        assert out.returncode == 0
        assert json.loads(out.stdout) == {
            "counts": {"completed": 1, "in_progress": 1, "pending": 1},
            "seq": 3,
            "todos": json.loads(THREE)["todos"],
            "carried": None,
            "jobs": [],
            "plan": None,
        }
        assert out.stdout == json.dumps(json.loads(out.stdout), indent=2, sort_keys=True) + "\n"

    def test_new_turn_empties_panel(self, written: Path) -> None:
        """After a turn/start the panel is empty once the latest list is all completed.

        Issue 39: a line above it says where the latest list is (seq and turn), never a blank.
        """
        done = json.dumps({"todos": [{"content": "Write the parser", "status": "completed"}]})
        with Session(written) as session:
            session.todo_write(done)
            session.start_turn("Something else")
        assert harness("todos", str(written)).stdout == (
            "no list in this turn; the latest, seq 4 in turn 1: all 1 completed\n"
            "0 completed, 0 in progress, 0 pending\n"
        )
        assert json.loads(harness("todos", str(written), "--json").stdout)["carried"] is None

    def test_unfinished_list_from_an_earlier_turn_is_marked_carried(self, written: Path) -> None:
        """A new turn with no list of its own shows the earlier unfinished list, marked carried."""
        with Session(written) as session:
            session.start_turn("Something else")
            session.start_turn("And another thing")
        out = harness("todos", str(written))
        assert out.stdout == (
            "carried from turn 1: no list written in this turn; the latest list (seq 3) still "
            "has unfinished items\n"
            "1 completed, 1 in progress, 1 pending\n"
            "✓ Write the parser\n"
            "◉ Run the tests\n"
            "○ Update the docs\n"
        )
        view = json.loads(harness("todos", str(written), "--json").stdout)
        assert view["todos"] == []
        assert view["carried"] == {"turn": 1, "seq": 3, "todos": json.loads(THREE)["todos"]}

    def test_follow_redraws_when_another_process_writes(self, written: Path) -> None:
        """--follow prints the panel, then prints it again when another process appends."""
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "harness",
                "todos",
                str(written),
                "--follow",
                "--interval",
                "0.05",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        lines: queue.Queue[str] = queue.Queue()
        assert proc.stdout is not None
        stdout = proc.stdout

        def read_lines() -> None:
            for line in stdout:
                lines.put(line)

        reader = threading.Thread(target=read_lines, daemon=True)
        reader.start()

        def read_until(wanted: str) -> list[str]:
            seen: list[str] = []
            deadline = time.monotonic() + 60
            while wanted not in seen:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"never saw {wanted!r}; saw {seen!r}")
                try:
                    seen.append(lines.get(timeout=remaining).rstrip("\n"))
                except queue.Empty:
                    continue
            return seen

        try:
            first = read_until("○ Update the docs")
            assert first == [
                "1 completed, 1 in progress, 1 pending",
                "✓ Write the parser",
                "◉ Run the tests",
                "○ Update the docs",
            ]
            done = todos(("Write the parser", "completed"), ("Run the tests", "completed"))
            assert harness("todo-write", str(written), "--args", done).returncode == 0
            second = read_until("✓ Run the tests")
            assert second == [
                "",
                "2 completed, 0 in progress, 0 pending",
                "✓ Write the parser",
                "✓ Run the tests",
            ]
        finally:
            proc.terminate()
            proc.communicate(timeout=30)
        reader.join(timeout=30)


class TestLog:
    @pytest.fixture
    def damaged(self, log_path: Path) -> Path:
        """A log with a bad second line and a torn last line."""
        with Session(log_path) as session:
            session.start_turn("Add a parser")
            session.todo_write(THREE)
            session.end_turn()
        lines = log_path.read_bytes().splitlines(keepends=True)
        lines[1] = b"{not json\n"
        log_path.write_bytes(b"".join(lines) + b'{"v":1,"seq":5,"type":"mess')
        return log_path

    def test_bad_line_fails_naming_file_and_line(self, damaged: Path) -> None:
        """Without --skip-bad a malformed line exits 2 with path:line and the fix."""
        out = harness("log", str(damaged))
        assert out.returncode == 2
        assert out.stdout == ""
        assert out.stderr.startswith(f"harness log: {damaged}:2: not JSON: ")
        assert "--skip-bad" in out.stderr

    def test_skip_bad_summary(self, damaged: Path) -> None:
        """--skip-bad counts the bad line, reports the torn tail and summarises the rest."""
        out = harness("log", str(damaged), "--skip-bad")
        assert out.returncode == 0, out.stderr
        assert "torn last line 5 (a crash mid-append): skipped" in out.stdout
        assert "bad line 2: not JSON: " in out.stdout
        for kind in ("turn/start", "todo/write", "turn/end"):
            assert kind in out.stdout

    def test_skip_bad_json(self, damaged: Path) -> None:
        """--json --skip-bad gives the same facts as data."""
        out = harness("log", str(damaged), "--skip-bad", "--json")
        assert out.returncode == 0, out.stderr
        summary = json.loads(out.stdout)
        assert summary["events_by_type"] == {"todo/write": 1, "turn/end": 1, "turn/start": 1}
        assert (summary["events"], summary["lines"], summary["torn_line"]) == (3, 5, 5)
        assert [b["line"] for b in summary["bad_lines"]] == [2]
        assert summary["tokens_by_type"]["todo/write"] > 0
        assert summary["tokenizer"] == "tiktoken:o200k_base"

    def test_clean_log_summary(self, log_path: Path) -> None:
        """A clean log summarises with no torn or bad lines."""
        with Session(log_path) as session:
            session.start_turn("hello")
        summary = json.loads(harness("log", str(log_path), "--json").stdout)
        assert (summary["torn_line"], summary["bad_lines"], summary["events"]) == (None, [], 2)

    def test_schema_is_the_committed_file(self) -> None:
        """`harness log --schema` prints exactly compaction/schemas/event.schema.json."""
        out = harness("log", "--schema")
        committed = resources.files("compaction").joinpath("schemas", "event.schema.json")
        assert out.returncode == 0
        assert out.stdout == committed.read_text(encoding="utf-8")

    def test_missing_log(self, tmp_path: Path) -> None:
        """A log that does not exist is one clear error line, exit 3 (an I/O error)."""
        out = harness("log", str(tmp_path / "none.jsonl"))
        assert out.returncode == 3
        assert out.stderr == f"harness log: {tmp_path / 'none.jsonl'}: no such session log\n"


HELP_SCRIPT = """
import contextlib, io, json, sys
from harness.cli import main
out = {}
for name in sys.argv[1:]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        try:
            main([name, "--help"])
            code = None
        except SystemExit as exc:
            code = exc.code
    out[name] = [code, buf.getvalue()]
print(json.dumps(out))
"""


def test_every_command_has_help() -> None:
    """`harness --help` and each command's --help exit 0 with a usage line."""
    sub = next(a for a in build_parser()._actions if a.choices)  # the subcommands
    commands = sorted(sub.choices)  # type: ignore[arg-type]
    assert {"todo-write", "todos", "log"} <= set(commands)
    top = harness("--help")
    assert top.returncode == 0
    assert top.stdout.startswith("usage: harness")
    for name in commands:
        assert name in top.stdout
    # One interpreter runs every command's --help through the real entry point.
    each = subprocess.run(
        [sys.executable, "-c", HELP_SCRIPT, *commands],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    for name, (code, text) in json.loads(each.stdout).items():
        assert code == 0, name
        assert text.startswith(f"usage: harness {name}"), (name, text)
