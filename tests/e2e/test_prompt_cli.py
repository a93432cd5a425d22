"""The prompt commands end to end: golden prompts per mode, requests, refusal, modes table.

Regenerate the golden files after an intended change with
``UPDATE_GOLDEN=1 .venv/bin/pytest tests/e2e/test_prompt_cli.py``.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import FunctionCall, Message, Session, ToolCall

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "golden"
TOOLS = str(ROOT / "prompts" / "examples" / "coding_tools.json")
ENV = ["--date", "2026-11-30", "--cwd", "/home/user/project", "--var", "shell=bash"]


def harness(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process from the checkout's root (see cli_runner)."""
    return run_cli(*args, stdin=stdin, cwd=ROOT)


def check_golden(name: str, text: str) -> None:
    """Compare with tests/e2e/golden/<name>, or rewrite it when UPDATE_GOLDEN is set."""
    path = GOLDEN / name
    if os.environ.get("UPDATE_GOLDEN"):
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing golden file {path}; run with UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8")


class TestPromptCommand:
    @pytest.mark.parametrize("mode", ["agent", "parallel", "plan", "team"])
    def test_golden_system_prompt(self, mode: str) -> None:
        """Each mode's rendered system prompt matches its golden file."""
        result = harness("prompt", "--mode", mode, "--tools-file", TOOLS, *ENV)
        assert result.returncode == 0, result.stderr
        check_golden(f"prompt_{mode}.txt", result.stdout)

    @pytest.mark.parametrize(
        ("fmt", "tools"), [("openai", "stable"), ("openai", "filtered"), ("anthropic", "stable")]
    )
    def test_golden_plan_requests(self, fmt: str, tools: str) -> None:
        """Plan mode's request skeletons match their golden files."""
        args = [
            "prompt",
            "--mode",
            "plan",
            "--format",
            fmt,
            "--tools",
            tools,
            "--tools-file",
            TOOLS,
        ]
        result = harness(*args, *ENV)
        assert result.returncode == 0, result.stderr
        check_golden(f"prompt_plan_{fmt}_{tools}.json", result.stdout)
        request = json.loads(result.stdout)
        if fmt == "openai":
            assert [m["role"] for m in request["messages"]] == ["system"]
            names = [t["function"]["name"] for t in request["tools"]]
        else:
            assert set(request) == {"system", "tools"}
            names = [t["name"] for t in request["tools"]]
        assert ("todo_write" in names) == (tools == "stable")

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--date", "30/11/2026"], "--date '30/11/2026': expected a real date, YYYY-MM-DD"),
            (["--var", "a b=1"], "--var: variable name 'a b' must match"),
            (["--var", "novalue"], "--var 'novalue': expected NAME=VALUE"),
            (["--tools-file", "missing.json"], "cannot read tools file missing.json"),
        ],
    )
    def test_bad_options(self, args: list[str], message: str) -> None:
        """Bad option values exit 2 with one line naming the option."""
        result = harness("prompt", *args)
        assert result.returncode == 2
        assert result.stderr.startswith(f"harness prompt: {message}")
        assert result.stderr.count("\n") == 1

    def test_unknown_mode(self) -> None:
        """An unknown mode exits 2 with the list of modes."""
        result = harness("prompt", "--mode", "yolo")
        assert result.returncode == 2
        assert 'unknown mode "yolo"; choose one of agent, parallel, plan, team' in result.stderr


class TestTodoWriteMode:
    ARGS = '{"todos": [{"content": "Read the code", "status": "in_progress"}]}'

    def test_plan_mode_refuses(self, log_path: Path) -> None:
        """`todo-write --mode plan` prints the refusal, exits 1 and writes no log."""
        result = harness("todo-write", str(log_path), "--mode", "plan", "--args", self.ARGS)
        assert result.returncode == 1
        assert result.stdout.startswith("todo_write: refused, nothing was changed. You are in Plan")
        assert not log_path.exists()

    def test_mode_comes_from_the_latest_turn(self, log_path: Path) -> None:
        """Without --mode the log's latest turn/start decides: refused in plan, then allowed."""
        with Session(log_path) as session:
            session.start_turn("Plan it", mode="plan")
        before = log_path.read_bytes()
        result = harness("todo-write", str(log_path), "--args", self.ARGS)
        assert result.returncode == 1
        assert result.stdout.startswith("todo_write: refused, nothing was changed. You are in Plan")
        assert log_path.read_bytes() == before
        with Session(log_path) as session:
            session.start_turn("Do it", mode="parallel")
        two = json.dumps({"todos": [{"content": c, "status": "in_progress"} for c in ("a", "b")]})
        result = harness("todo-write", str(log_path), "--args", two)
        assert (result.returncode, result.stdout) == (
            0,
            "Todo list updated: 0 pending, 2 in progress, 0 completed.\n",
        )

    def test_parallel_mode_allows_two_in_progress(self, log_path: Path) -> None:
        """`--mode parallel` accepts two in_progress items; the default mode rejects them."""
        two = json.dumps({"todos": [{"content": c, "status": "in_progress"} for c in ("a", "b")]})
        assert harness("todo-write", str(log_path), "--args", two).returncode == 1
        result = harness("todo-write", str(log_path), "--mode", "parallel", "--args", two)
        assert (result.returncode, result.stdout) == (
            0,
            "Todo list updated: 0 pending, 2 in progress, 0 completed.\n",
        )


class TestContextCommand:
    def test_golden_request(self, log_path: Path) -> None:
        """`harness context` prints the whole request from the log's context view."""
        with Session(log_path) as session:
            session.start_turn("Rename the config loader", mode="plan")
            call = ToolCall(
                id="call_1",
                function=FunctionCall(name="grep", arguments='{"pattern": "load_config"}'),
            )
            session.add_message(Message(role="assistant", content=None, tool_calls=(call,)))
            session.add_message(
                Message(role="tool", tool_call_id="call_1", content="src/config.py:12")
            )
        for fmt in ("openai", "anthropic", "text"):
            result = harness("context", str(log_path), "--format", fmt, "--tools-file", TOOLS, *ENV)
            assert result.returncode == 0, result.stderr
            suffix = "txt" if fmt == "text" else "json"
            check_golden(f"context_plan_{fmt}.{suffix}", result.stdout)
        assert "# Mode: Plan" in result.stdout, "the mode comes from the log's turn/start"


class TestModesCommand:
    def test_lists_modes_with_tokens(self) -> None:
        """`harness modes` lists every mode with its sizes and the shared prefix."""
        result = harness("modes", "--tools-file", TOOLS, *ENV)
        assert result.returncode == 0, result.stderr
        check_golden("modes.txt", result.stdout)
        data = json.loads(harness("modes", "--json", "--tools-file", TOOLS, *ENV).stdout)
        assert [m["mode"] for m in data["modes"]] == ["agent", "parallel", "plan", "team"]
        # Team appends the task tools after todo_write: the one-list modes still share 90%.
        largest = max(m["total_tokens"] for m in data["modes"] if m["mode"] != "team")
        assert data["shared_prefix_tokens"] >= 0.9 * largest


class TestUserModesFile:
    def test_user_mode_from_toml(self, tmp_path: Path, log_path: Path) -> None:
        """A mode defined in TOML with its own template works in prompt, modes and todo-write."""
        (tmp_path / "review.md.j2").write_text(
            "# Mode: {{ mode.title }}\n\n"
            "Review the diff; do not call {{ forbidden_tools | join(', ') }}.\n"
        )
        modes_file = tmp_path / "modes.toml"
        modes_file.write_text(
            '[[modes]]\nname = "review"\ntitle = "Review"\nsummary = "code review"\n'
            'blocks = ["review.md.j2"]\ntodo = { forbidden = true }\n'
            'tools = { forbidden = ["write_file"] }\n'
        )
        common = ["--modes-file", str(modes_file), "--tools-file", TOOLS]
        prompt = harness("prompt", "--mode", "review", *common)
        assert prompt.returncode == 0, prompt.stderr
        assert "# Mode: Review\n\nReview the diff; do not call write_file.\n" in prompt.stdout
        table = harness("modes", *common)
        assert "review     forbidden" in table.stdout
        refused = harness(
            "todo-write", str(log_path), "--mode", "review", "--modes-file", str(modes_file),
            "--args", TestTodoWriteMode.ARGS,
        )  # fmt: skip
        assert refused.returncode == 1
        assert "You are in Review mode" in refused.stdout
        assert not log_path.exists()
        filtered = json.loads(
            harness(
                "prompt", "--mode", "review", "--format", "openai", "--tools", "filtered", *common
            ).stdout
        )
        names = [t["function"]["name"] for t in filtered["tools"]]
        assert "write_file" not in names
        assert "todo_write" not in names
