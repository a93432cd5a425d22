"""`harness compact --summarizer openai` (in-process) against a stand-in model on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli
from contracts.sdk_shapes import problems
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from compaction import Session, check_log, read_events
from compaction.checkpoint import parse_checkpoint
from compaction.llm.client import canonical_json
from harness.testing import Reply, StubModel

TODOS = [
    {"content": "Add the --verbose flag", "status": "completed"},
    {"content": "Test the flag\n# not a heading", "status": "in_progress"},
    {"content": "Document it in README.md", "status": "pending"},
    {"content": "Release 1.2", "status": "pending"},
]
ANSWER = "\n\n".join(
    [
        "## Primary Request and Intent\n\nAdd a --verbose flag to the CLI.",
        "## Files and Code\n\n- harness/cli.py",
        "## Pending Jobs\n\n- Release 1.3 (invented)",
        "## Current Work\n\n(none)",
        "## Next Step\n\nRun the tests.",
    ]
)
USAGE = {"prompt_tokens": 2000, "completion_tokens": 40, "prompt_cache_hit_tokens": 1920}


def harness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `harness ARGS` in-process (see cli_runner), with `env` as the environment."""
    return run_cli(*args, env=env)


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "session.jsonl"
    with Session(path) as s:
        s.start_turn("Add a --verbose flag to the CLI. Always keep the old output.", mode="agent")
        call = {
            "id": "t1",
            "type": "function",
            "function": {"name": "todo_write", "arguments": "{}"},
        }
        s.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
        assert not s.todo_write({"todos": TODOS}).is_error
        s.add_message({"role": "tool", "tool_call_id": "t1", "content": "Todo list updated."})
        for i in range(6):
            s.add_message(
                {"role": "assistant", "content": f"Step {i}: edited harness/cli.py " * 30}
            )
        s.start_turn("Also mention it in the changelog.", mode="agent")
        s.add_message({"role": "assistant", "content": "Will do."})
    return path


def compact(log: Path, stub: StubModel, *extra: str) -> subprocess.CompletedProcess[str]:
    return harness(
        "compact", str(log), "--force", "--json", "--summarizer", "openai",
        "--base-url", stub.base_url, "--model", "stub-model", "--date", "2026-01-02",
        "--cwd", "/repo", "--api-key-env", "HARNESS_TEST_NO_KEY", *extra,
    )  # fmt: skip


def assert_tasks_and_log(log: Path, out: dict[str, Any]) -> None:
    assert out["pending"] == ["Document it in README.md", "Release 1.2"]
    assert out["current"] == ["Test the flag\n# not a heading"]
    parsed = parse_checkpoint(out["checkpoint"])
    assert parsed.pending_jobs == ("Document it in README.md", "Release 1.2")
    assert "Release 1.3" not in out["checkpoint"]
    check_log(list(read_events(log)))


class TestCompactOpenAI:
    def test_summary_replays_what_context_prints(self, log: Path) -> None:
        """The summary call is `harness context`'s request plus one message; tasks from the log."""
        context = harness("context", str(log), "--date", "2026-01-02", "--cwd", "/repo")
        assert context.returncode == 0, context.stderr
        before = json.loads(context.stdout)
        with StubModel([Reply(ANSWER, usage=USAGE)]) as stub:
            done = compact(log, stub)
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert (out["summarizer"], out["fallback_reason"]) == ("openai", None)
        (sent,) = stub.requests
        body = sent.json()
        assert canonical_json(body["messages"][:-1]) == canonical_json(before["messages"])
        assert canonical_json(body["tools"]) == canonical_json(before["tools"])
        assert (canonical_json(before["messages"])[:-1] + ",").encode() in sent.body
        assert body["tool_choice"] == "none"
        assert problems(CompletionCreateParamsNonStreaming, body) == []
        assert "authorization" not in sent.headers
        assert out["summary_usage"] == [
            {
                "purpose": "summary",
                "model": "stub",
                "prompt_tokens": 2000,
                "completion_tokens": 40,
                "cached_tokens": 1920,
            }
        ]
        assert_tasks_and_log(log, out)
        assert [e.type for e in read_events(log)][-2:] == ["compaction/checkpoint", "usage/report"]
        summary = json.loads(harness("log", str(log), "--json").stdout)
        assert summary["provider_usage"]["summary"]["cached_tokens"] == 1920
        assert "provider usage, summary: 1 calls" in harness("log", str(log)).stdout

    @pytest.mark.parametrize(
        ("script", "reason"),
        [
            ([Reply(status=500)], "HTTP 500"),
            ([Reply(body=b"not json")], "body is not JSON"),
            ([Reply("")], "empty answer"),
            ([Reply(hang=True)], "timeout: "),
        ],
        ids=["500", "malformed", "empty", "timeout"],
    )
    def test_failure_falls_back(self, log: Path, script: list[Reply], reason: str) -> None:
        """A failing endpoint leaves an extractive checkpoint that says why, every task kept."""
        with StubModel(script, hang_limit=10.0) as stub:
            done = compact(log, stub, "--max-retries", "0", "--timeout", "0.5")
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert out["summarizer"] == "extractive"
        assert reason in out["fallback_reason"]
        assert_tasks_and_log(log, out)

    def test_429_retry_after_then_answer(self, log: Path) -> None:
        """A 429 with Retry-After is retried, and the model's answer is then used."""
        script = [Reply(status=429, headers={"Retry-After": "0"}), Reply(ANSWER, usage=USAGE)]
        with StubModel(script) as stub:
            done = compact(log, stub, "--max-retries", "2")
        assert done.returncode == 0, done.stderr
        out = json.loads(done.stdout)
        assert (out["summarizer"], out["fallback_reason"]) == ("openai", None)
        assert len(stub.requests) == 2
        assert stub.requests[0].body == stub.requests[1].body
        assert_tasks_and_log(log, out)

    def test_dry_run_appends_nothing(self, log: Path) -> None:
        """--dry-run calls the model but appends neither the checkpoint nor its usage."""
        size = log.stat().st_size
        with StubModel([Reply(ANSWER, usage=USAGE)]) as stub:
            done = compact(log, stub, "--dry-run")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["summary_usage"][0]["cached_tokens"] == 1920
        assert log.stat().st_size == size

    def test_text_report_shows_cache_share(self, log: Path) -> None:
        """Without --json the report ends with the summary call's cache-hit figures."""
        with StubModel([Reply(ANSWER, usage=USAGE)]) as stub:
            done = harness(
                "compact", str(log), "--force", "--summarizer", "openai",
                "--base-url", stub.base_url, "--model", "m",
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "2000 prompt tokens, cached 1920 (96.0%)" in done.stdout

    @pytest.mark.parametrize(
        ("args", "match"),
        [
            (["--model", "m"], "needs --base-url"),
            (["--base-url", "http://127.0.0.1:9/v1"], "needs --model"),
            ([], "needs --base-url and --model"),
            (["--base-url", "127.0.0.1:9", "--model", "m"], "base_url must start with http"),
        ],
    )
    def test_bad_options_exit_2(self, log: Path, args: list[str], match: str) -> None:
        """Missing or bad endpoint options fail with exit 2 and a clear message, log untouched."""
        size = log.stat().st_size
        done = harness("compact", str(log), "--force", "--summarizer", "openai", *args)
        assert done.returncode == 2
        assert match in done.stderr
        assert log.stat().st_size == size
