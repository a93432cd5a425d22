"""Nothing heavy at CLI start: todo-write and todos never load a tokenizer they do not need."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compaction import Session

RUN = textwrap.dedent(
    """
    import io, json, sys
    from harness.cli import main

    log, command, stdin = sys.argv[1], sys.argv[2], sys.argv[3]
    sys.stdin = io.TextIOWrapper(io.BytesIO(stdin.encode()))
    status = main([command, log, *sys.argv[4:]])
    loaded = {m.split(".")[0] for m in sys.modules}
    print(json.dumps({"status": status, "tiktoken": "tiktoken" in loaded,
                      "tokenizers": "tokenizers" in loaded}))
    """
)

WRITE = json.dumps(
    {
        "todos": [
            {"content": "Read the code", "status": "completed"},
            {"content": "Fix the bug", "status": "in_progress"},
        ]
    }
)


def run_cli(log: Path, command: str, *extra: str, stdin: str = "") -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(log), command, stdin, *extra],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


@pytest.fixture
def chat_log(tmp_path: Path) -> Path:
    """A log holding a request and messages, so a usage fold would have text to count."""
    path = tmp_path / "s.jsonl"
    with Session(path) as s:
        s.start_turn("Fix the bug in the parser")
        s.add_message({"role": "assistant", "content": "Looking at the parser now."})
    return path


class TestNoTokenizerUnlessNeeded:
    def test_todo_write_loads_no_tokenizer(self, chat_log: Path) -> None:
        """todo-write validates and appends without loading tiktoken."""
        out = run_cli(chat_log, "todo-write", stdin=WRITE)
        assert out == {"status": 0, "tiktoken": False, "tokenizers": False}
        with Session(chat_log) as s:
            assert s.todos.counts()["in_progress"] == 1

    @pytest.mark.parametrize("extra", [(), ("--json",)])
    def test_todos_loads_no_tokenizer(self, chat_log: Path, extra: tuple[str, ...]) -> None:
        """The task panel is read without loading tiktoken."""
        run_cli(chat_log, "todo-write", stdin=WRITE)
        assert run_cli(chat_log, "todos", *extra) == {
            "status": 0,
            "tiktoken": False,
            "tokenizers": False,
        }

    def test_log_does_load_it(self, chat_log: Path) -> None:
        """Control: `harness log` counts tokens, so the same probe sees tiktoken loaded."""
        assert run_cli(chat_log, "log")["tiktoken"] is True


class TestSessionUsageIsLazy:
    def test_usage_counts_every_event_once_loaded(self, chat_log: Path) -> None:
        """A usage view folded late equals one folded from the start."""
        with Session(chat_log) as late:
            late.add_message({"role": "user", "content": "and the tests"})
            eager = Session(chat_log)
            assert eager.context_tokens > 0
            late_usage = late.usage
        assert late_usage == eager.usage
        assert late_usage.events == 4
