"""`harness import` through the command line (in-process, through `main(argv)`)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from cli_runner import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def harness(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner)."""
    return run_cli(*args)


class TestImportCommand:
    def test_summary(self, tmp_path):
        """The summary names records, events, calls, todo writes, turns, skips and broken lines."""
        out = tmp_path / "s.jsonl"
        run = harness("import", "auto", FIXTURES / "claude_code_small.jsonl", "-o", out)
        assert run.returncode == 0, run.stderr
        text = run.stdout
        assert "(claude-code)" in text
        assert "records read: 34; lines: 35" in text
        assert "events written: 38" in text
        assert "turns: 3; 10 tool calls (1 with no recorded result" in text
        assert "todo writes: 7" in text
        assert (
            "kept as messages, not requests: 1 interruption notice, "
            "1 meta (kept as context, not a request)"
        ) in text
        assert "lists that break today's todo_write rules (imported as written): 1" in text
        assert "unknown record type 'mystery-record'" in text
        assert "broken line 17: not JSON" in text
        assert "truncated last line 35 (skipped)" in text
        assert "glued JSON objects (all read): 8" in text
        assert "tokens (tiktoken:o200k_base):" in text

    def test_log_is_usable(self, tmp_path):
        """The imported log feeds the other commands: the task panel shows the last list."""
        out = tmp_path / "s.jsonl"
        assert harness("import", "codex", FIXTURES / "codex_small.jsonl", "-o", out).returncode == 0
        panel = harness("todos", out)
        assert panel.stdout.splitlines() == [
            "0 completed, 1 in progress, 0 pending",
            "◉ Write the test",
        ]
        assert harness("log", out).returncode == 0

    def test_json_summary(self, tmp_path):
        """--json prints the report as JSON."""
        out = tmp_path / "s.jsonl"
        run = harness("import", "openai", FIXTURES / "openai_small.json", "-o", out, "--json")
        report = json.loads(run.stdout)
        assert (report["format"], report["events"], report["todo_writes"]) == ("openai", 25, 4)

    @pytest.mark.parametrize(
        ("args", "message"),
        [
            (["--strict"], ":16: unknown record type 'mystery-record'"),
            (["swe-agent"], "not a JSON document"),
        ],
    )
    def test_failures_exit_2(self, tmp_path, args, message):
        """A strict import stops at the first bad line; a wrong format is named; exit status 2."""
        out = tmp_path / "s.jsonl"
        fmt = args[0] if args[0] != "--strict" else "claude-code"
        extra = [a for a in args if a == "--strict"]
        run = harness("import", fmt, FIXTURES / "claude_code_small.jsonl", "-o", out, *extra)
        assert run.returncode == 2
        assert message in run.stderr
        assert not out.exists()

    def test_existing_log_kept(self, tmp_path):
        """An existing log is refused without --force and replaced with it."""
        out = tmp_path / "s.jsonl"
        out.write_text("x\n")
        run = harness("import", "auto", FIXTURES / "openai_small.jsonl", "-o", out)
        assert run.returncode == 2
        assert "already exists" in run.stderr
        run = harness("import", "auto", FIXTURES / "openai_small.jsonl", "-o", out, "--force")
        assert run.returncode == 0
        assert len(out.read_text().splitlines()) == 6
