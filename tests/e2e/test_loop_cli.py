"""The command line of a real agent loop: whole-request parts, clipped outputs read back."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from cli_runner import run_cli

from compaction import FunctionCall, Message, Session, ToolCall

TOOLS = Path(__file__).resolve().parents[2] / "prompts" / "examples" / "coding_tools.json"
BIG = "".join(f"row {i}: {i * 13}\n" for i in range(4000))


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner)."""
    return run_cli(*args)


def write_log(path: Path) -> None:
    with Session(path, tool_output_cap=500) as s:
        s.start_turn("Read the big file, then fix it", mode="agent")
        for n in range(6):
            fn = FunctionCall(name="read_file", arguments=json.dumps({"path": f"f{n}.txt"}))
            calls = (ToolCall(id=f"c{n}", function=fn),)
            s.add_message(Message(role="assistant", tool_calls=calls))
            s.add_message(Message(role="tool", tool_call_id=f"c{n}", content=BIG))


def compact_json(*args: str | Path) -> dict[str, Any]:
    run = harness("compact", *args, "--json")
    assert run.returncode == 0, run.stderr
    out: dict[str, Any] = json.loads(run.stdout)
    return out


class TestCompactParts:
    def test_json_reports_the_request_by_part(self, tmp_path: Path) -> None:
        """--json gives fixed (system prompt + tools) and context; the tools file counts."""
        log = tmp_path / "s.jsonl"
        write_log(log)
        bare = compact_json(log, "--window", "8192", "--dry-run", "--force")
        tools = compact_json(log, "--window", "8192", "--dry-run", "--force", "--tools-file", TOOLS)
        modes = json.loads(harness("modes", "--tools-file", TOOLS, "--json").stdout)
        agent = next(m for m in modes["modes"] if m["mode"] == "agent")
        assert tools["tool_catalog_tokens"] == agent["tools_tokens"]
        assert 3 <= tools["system_prompt_tokens"] - agent["system_tokens"] <= 6
        for r in (bare, tools):
            assert r["fixed_tokens"] == r["system_prompt_tokens"] + r["tool_catalog_tokens"]
            assert r["request_tokens_before"] == r["fixed_tokens"] + r["tokens_before"]
            assert r["request_tokens_after"] == r["fixed_tokens"] + r["tokens_after"]
            assert r["request_tokens_after"] + r["output_reserve"] <= r["window_tokens"] == 8192
        assert tools["fixed_tokens"] > bare["fixed_tokens"] + 1_000

    def test_fixed_part_decides_the_trigger(self, tmp_path: Path) -> None:
        """The same log is below the trigger alone and due once the tool catalog counts."""
        log = tmp_path / "s.jsonl"
        write_log(log)
        context = compact_json(log, "--window", "9000", "--dry-run")
        assert context["compacted"] is False
        window = context["tokens_before"] + context["fixed_tokens"] + 200
        window = int(window / 0.9)
        alone = compact_json(log, "--window", str(window), "--dry-run")
        assert alone["compacted"] is False
        assert alone["request_tokens_before"] < alone["trigger_tokens"]
        due = compact_json(log, "--window", str(window), "--dry-run", "--tools-file", TOOLS)
        assert due["dry_run"] is True
        assert due["request_tokens_before"] >= int(0.9 * window)

    def test_does_not_fit_is_one_line(self, tmp_path: Path) -> None:
        """A window too small for system + tools + Checkpoint: exit 2 and one clear line."""
        log = tmp_path / "s.jsonl"
        write_log(log)
        run = harness("compact", log, "--window", "3000", "--force", "--tools-file", TOOLS)
        assert run.returncode == 2
        assert run.stderr.startswith("harness compact: does_not_fit: ")
        assert run.stderr.count("\n") == 1
        assert "Traceback" not in run.stderr


class TestLogSeq:
    def test_prints_a_clipped_result_whole(self, tmp_path: Path) -> None:
        """The note's command gives the whole output back; --json the event."""
        log = tmp_path / "s.jsonl"
        write_log(log)
        context = json.loads(harness("context", log).stdout)
        note = next(m["content"] for m in context["messages"] if m["role"] == "tool")
        assert "`harness log LOG --seq 4` prints it" in note
        assert len(note) < len(BIG) / 5
        run = harness("log", log, "--seq", "4")
        assert run.returncode == 0, run.stderr
        assert run.stdout == BIG + "\n"
        event = json.loads(harness("log", log, "--seq", "4", "--json").stdout)
        assert event["seq"] == 4
        assert event["data"]["content"] == BIG
        assert event["data"]["clip"]["omitted_tokens"] > 0

    def test_unknown_seq(self, tmp_path: Path) -> None:
        """An unknown seq is one line on stderr, exit 2."""
        log = tmp_path / "s.jsonl"
        write_log(log)
        run = harness("log", log, "--seq", "999")
        assert run.returncode == 2
        assert run.stderr.strip().endswith("no event with seq 999")
