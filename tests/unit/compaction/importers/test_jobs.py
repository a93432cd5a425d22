"""Jobs and approved plans read from transcripts, carried by the Checkpoint after an import."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import CompactionPolicy, Session, check_log, compact, parse_checkpoint
from compaction.events import (
    CheckpointRecorded,
    Event,
    JobEndData,
    JobEnded,
    JobStartData,
    JobStarted,
    MessageAdded,
    PlanApproved,
    PlanApproveData,
    TurnStarted,
)
from compaction.importers import ImportReport, import_transcript, load
from compaction.importers._jobs import (
    claude_code_call,
    claude_code_notice,
    codex_call,
    codex_notice,
    gemini_call,
)
from compaction.importers._recorded_calls import call_from, timestamp_of

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "transcripts"
PLAN = (
    "# Migration plan\n\n## Steps\n1. Dump the database\n2. Run the v2 migration\n"
    "3. Verify the row counts"
)


def imported(name: str) -> list[Event]:
    path = FIXTURES / name
    return list(load(path, report=ImportReport(path=str(path))))


def finished(name: str, args: object, result: str, meta: object = None) -> object:
    call = call_from("c1", name, args)
    call.result, call.meta = result, meta
    return call


class TestClaudeCode:
    def test_an_approved_exit_plan_mode_is_the_plan(self) -> None:
        """The approved ExitPlanMode's plan is recorded whole, naming the call's message."""
        events = imported("claude_code_plan_jobs.jsonl")
        plans = [e for e in events if isinstance(e, PlanApproved)]
        assert [p.data.text for p in plans] == [PLAN]
        assert plans[0].data.via == "ExitPlanMode"
        source = events[(plans[0].data.source_seq or 0) - 1]
        assert isinstance(source, MessageAdded)
        assert source.data.tool_calls

    def test_jobs_start_and_end_as_recorded(self) -> None:
        """Background commands and an async agent start; the notice and KillShell end two."""
        events = imported("claude_code_plan_jobs.jsonl")
        starts = [(e.data.id, e.data.kind) for e in events if isinstance(e, JobStarted)]
        ends = [(e.data.id, e.data.status) for e in events if isinstance(e, JobEnded)]
        assert starts == [("b7b23b2", "command"), ("a93ccab", "agent"), ("c0ffee1", "command")]
        assert ends == [("c0ffee1", "killed"), ("b7b23b2", "completed")]
        check_log(events)

    def test_the_checkpoint_after_import_carries_the_plan_and_the_agent(
        self, tmp_path: Path
    ) -> None:
        """Compacting the imported session: the running agent by id, the plan verbatim."""
        log = tmp_path / "s.jsonl"
        import_transcript(FIXTURES / "claude_code_plan_jobs.jsonl", log)
        with Session(log) as session:
            result = compact(session, CompactionPolicy(), force=True)
        checkpoint = parse_checkpoint(result.data.text)
        assert [j.id for j in checkpoint.jobs] == ["a93ccab"]
        assert checkpoint.plan is not None
        assert checkpoint.plan.text == PLAN
        assert "- job a93ccab (agent, since seq " in result.data.text

    @pytest.mark.parametrize(
        ("name", "args", "result", "meta", "expected"),
        [
            (
                "ExitPlanMode",
                {"plan": "# P"},
                "User has approved your plan.",
                None,
                [PlanApproveData(text="# P", via="ExitPlanMode")],
            ),
            ("ExitPlanMode", {"plan": "# P"}, "User rejected the plan", None, []),
            (
                "Bash",
                {"command": "make"},
                "ok",
                {"backgroundTaskId": "bg1"},
                [JobStartData(id="bg1", kind="command", runs="make")],
            ),
            ("Bash", {"command": "make"}, "ok", None, []),
            (
                "Task",
                {"description": "d"},
                "Async agent launched successfully.\nagentId: a1",
                None,
                [JobStartData(id="a1", kind="agent", runs="d")],
            ),
            (
                "KillShell",
                {"shell_id": "bg1"},
                "Killed",
                None,
                [JobEndData(id="bg1", status="killed")],
            ),
            ("BashOutput", {"bash_id": "bg1"}, "<status>running</status>", None, []),
            (
                "BashOutput",
                {"bash_id": "bg1"},
                "<status>failed</status>",
                None,
                [JobEndData(id="bg1", status="failed")],
            ),
            (
                "TaskOutput",
                {"task_id": "bg1"},
                "x",
                {"task": {"task_id": "bg1", "status": "completed"}},
                [JobEndData(id="bg1", status="completed")],
            ),
            ("Bash", {}, "Command running in background with ID: " + "x" * 200, None, []),
        ],
        ids=[
            "approved",
            "rejected",
            "background-meta",
            "plain-bash",
            "async-agent",
            "kill",
            "still-running",
            "output-failed",
            "task-output-meta",
            "id-too-long",
        ],
    )
    def test_calls(
        self, name: str, args: object, result: str, meta: object, expected: list[object]
    ) -> None:
        """Each recorded call shape gives exactly its events."""
        assert claude_code_call(finished(name, args, result, meta)) == expected  # type: ignore[arg-type]

    def test_a_notice_with_a_final_status_ends_its_job(self) -> None:
        """A <task-notification> ends the job it names only with a final status."""
        done = "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
        assert claude_code_notice(done) == [JobEndData(id="b1", status="completed")]
        assert claude_code_notice(done.replace("completed", "running")) == []
        assert claude_code_notice("plain text") == []


class TestCodex:
    def test_subagent_notifications_are_never_requests(self) -> None:
        """A <subagent_notification> is kept with origin subagent and starts no turn."""
        events = imported("codex_jobs.jsonl")
        notices = [e for e in events if isinstance(e, MessageAdded) and e.data.origin == "subagent"]
        assert len(notices) == 1
        after_starts = [events[e.seq] for e in events if isinstance(e, TurnStarted)]
        requests = [e.data.text() for e in after_starts if isinstance(e, MessageAdded)]
        assert requests == ["Port the parser to Rust", "Also keep the old API"]

    def test_replacement_history_keeps_the_typed_requests(self) -> None:
        """An empty message with a replacement_history: its typed requests and last answer."""
        events = imported("codex_jobs.jsonl")
        [checkpoint] = [e for e in events if isinstance(e, CheckpointRecorded)]
        text = checkpoint.data.text
        assert "- Port the parser to Rust\n- Also keep the old API" in text
        assert "The lexer tests are written" in text
        assert "subagent_notification" not in text
        assert "environment_context" not in text
        assert "gAAAAB" not in text

    def test_the_next_checkpoint_keeps_requests_and_running_jobs(self, tmp_path: Path) -> None:
        """Compacting after the import: Primary Request has the typed requests; jobs by id."""
        log = tmp_path / "s.jsonl"
        import_transcript(FIXTURES / "codex_jobs.jsonl", log)
        with Session(log) as session:
            result = compact(session, CompactionPolicy(), force=True)
        checkpoint = parse_checkpoint(result.data.text)
        assert "Port the parser to Rust" in checkpoint.primary_request
        assert "Also keep the old API" in checkpoint.primary_request
        assert "subagent_notification" not in checkpoint.primary_request
        assert [(j.id, j.kind) for j in checkpoint.jobs] == [
            ("agent-9aa", "agent"),
            ("4242", "command"),
        ]

    @pytest.mark.parametrize(
        ("name", "args", "result", "expected"),
        [
            (
                "spawn_agent",
                {"message": "Lex"},
                json.dumps({"agent_id": "ag1"}),
                [JobStartData(id="ag1", kind="agent", runs="Lex")],
            ),
            ("close_agent", {"id": "ag1"}, "{}", [JobEndData(id="ag1", status="killed")]),
            (
                "exec_command",
                {"cmd": "cargo test"},
                "Process running with session ID 7",
                [JobStartData(id="7", kind="command", runs="cargo test")],
            ),
            ("exec_command", {"cmd": "ls"}, "Process exited with code 0", []),
            (
                "write_stdin",
                {"session_id": 7},
                "Process exited with code 2",
                [JobEndData(id="7", status="failed", detail="exit code 2")],
            ),
            ("write_stdin", {"session_id": 7}, "still going", []),
        ],
        ids=["spawn", "close", "background-terminal", "foreground", "exited", "running"],
    )
    def test_calls(self, name: str, args: object, result: str, expected: list[object]) -> None:
        """Each recorded call shape gives exactly its events."""
        assert codex_call(finished(name, args, result)) == expected  # type: ignore[arg-type]

    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            (
                '<subagent_notification>{"agent_id":"a","status":{"completed":"x"}}</subagent_notification>',
                [JobEndData(id="a", status="completed")],
            ),
            (
                '<subagent_notification>{"agent_id":"a","status":"errored"}</subagent_notification>',
                [JobEndData(id="a", status="failed")],
            ),
            (
                '<subagent_notification>{"agent_id":"a","status":"running"}</subagent_notification>',
                [],
            ),
            (
                "<subagent_notification><agent_id>b</agent_id><status>shutdown</status></subagent_notification>",
                [JobEndData(id="b", status="killed")],
            ),
        ],
        ids=["completed-object", "errored", "running", "tags"],
    )
    def test_notices(self, text: str, expected: list[object]) -> None:
        """A notification ends the agent it names when its status is final."""
        assert codex_notice(text) == expected


class TestRecordedTimes:
    @pytest.mark.parametrize(
        ("name", "first"),
        [
            ("claude_code_plan_jobs.jsonl", "2026-02-01T10:01:00Z"),
            ("codex_jobs.jsonl", "2026-02-01T11:02:00Z"),
        ],
    )
    def test_sessions_shows_when_the_imported_session_ran(
        self, tmp_path: Path, name: str, first: str
    ) -> None:
        """Turns keep the transcript's timestamps; `harness sessions` shows the first and last."""
        log = tmp_path / "s.jsonl"
        import_transcript(FIXTURES / name, log)
        events = list(Session(log).events())
        times = [e.data.at for e in events if isinstance(e, TurnStarted)]
        assert times
        assert all(t is not None for t in times)
        out = run_cli("sessions", log, "--json")
        assert out.returncode == 0, out.stderr
        [row] = json.loads(out.stdout)["sessions"]
        assert row["first_turn"] == first
        assert row["last_turn"] >= first

    @pytest.mark.parametrize(
        ("value", "expected"),
        [
            ("2026-01-23T15:37:47.029Z", 1769182667.029),
            ("2026-01-23T15:37:47", 1769182667.0),
            ("2026-01-23T16:37:47+01:00", 1769182667.0),
            ("yesterday", None),
            (12, None),
            ("", None),
        ],
    )
    def test_timestamps(self, value: object, expected: float | None) -> None:
        """ISO 8601 times read as seconds since the epoch (UTC when no zone); others are None."""
        assert timestamp_of(value) == expected


class TestGemini:
    @pytest.mark.parametrize(
        ("command", "output", "expected"),
        [
            (
                "npm run dev &",
                "Output: (empty)\nBackground PIDs: 4242\nExit Code: 0",
                [JobStartData(id="4242", kind="command", runs="npm run dev &")],
            ),
            ("ls", "Output: a\nBackground PIDs: (none)\nExit Code: 0", []),
            (
                "kill 4242",
                "Output: (empty)\nExit Code: 0",
                [JobEndData(id="4242", status="killed")],
            ),
            (
                "kill -9 1 2",
                "Exit Code: 0",
                [JobEndData(id="1", status="killed"), JobEndData(id="2", status="killed")],
            ),
        ],
        ids=["background", "none", "kill", "kill-two"],
    )
    def test_shell_calls(self, command: str, output: str, expected: list[object]) -> None:
        """Background PIDs start commands; a kill ends them."""
        call = finished("run_shell_command", {"command": command}, output)
        assert gemini_call(call) == expected  # type: ignore[arg-type]
