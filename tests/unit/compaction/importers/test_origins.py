"""Message origin: set by the importers and by `switch_mode`, kept in the log and its schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pytest

from compaction import Message, MessageAdded, Session, dump_event, parse_event
from compaction.contract import ORIGINS
from compaction.importers import load
from compaction.summarizers.facts import read_span
from compaction.views.turn_modes import TurnModesProjection
from prompts import BUILTIN_MODES, Environment, PromptBuilder, switch_mode

FIXTURES = Path(__file__).resolve().parents[3] / "fixtures" / "transcripts"
REAL = "claude-code-2.1_entire-cli_7b-e20d70c73b_injected-text_compaction.jsonl"


def user_origins(path: Path) -> list[tuple[str | None, str]]:
    return [
        (e.data.origin, e.data.text())
        for e in load(path)
        if isinstance(e, MessageAdded) and e.data.role == "user"
    ]


class TestImporters:
    @pytest.mark.parametrize(
        ("fixture", "expected"),
        [
            (
                "claude_code_small.jsonl",
                ["user", "injected", "user", "interruption", "user"],
            ),
            ("codex_small.jsonl", ["injected", "user", "user"]),
            ("swe_agent_small.traj", ["injected", "user"]),
            ("openai_small.json", ["user", "user"]),
        ],
    )
    def test_fixture_origins(self, fixture: str, expected: list[str]) -> None:
        """Each user message of a fixture carries the origin of its text."""
        assert [o for o, _ in user_origins(FIXTURES / fixture)] == expected

    def test_real_claude_code_session(self, transcripts: Path) -> None:
        """Slash commands, skill bodies, caveats and notices of a real session are told apart."""
        found = user_origins(transcripts / REAL)
        by_origin: dict[str | None, list[str]] = {}
        for origin, text in found:
            by_origin.setdefault(origin, []).append(text.lstrip())
        assert all(t.startswith("<command-message>") for t in by_origin["command"])
        assert len(by_origin["command"]) == 1  # /github-pr-review, without arguments
        assert any(t.startswith("Base directory for this skill") for t in by_origin["skill"])
        assert all(
            not t.startswith(("<command", "[Request interrupted")) for t in by_origin["user"]
        )
        assert by_origin["user"][0].startswith("Implement the following plan:")
        assert "/review this branch" in by_origin["user"]  # the arguments are typed text

    @pytest.mark.parametrize(
        ("content", "origin", "text"),
        [
            (
                "<command-message>review</command-message>\n<command-name>/review</command-name>"
                "\n<command-args>this branch</command-args>",
                "user",
                "/review this branch",
            ),
            (
                "<command-name>/exit</command-name>\n <command-message>exit</command-message>"
                "\n <command-args></command-args>",
                "command",
                None,
            ),
            ("<bash-input>git status</bash-input>", "shell", None),
            ("<bash-stdout>On branch main</bash-stdout><bash-stderr></bash-stderr>", "shell", None),
            ("Operation stopped by hook: the pre-commit hook failed", "hook", None),
            ("[Operation stopped by hook]", "hook", None),
        ],
    )
    def test_claude_code_record_origins(
        self, tmp_path: Path, content: str, origin: str, text: str | None
    ) -> None:
        """Slash-command arguments are typed; shell escapes and hook notices have their own."""
        record = {
            "type": "user",
            "uuid": "u1",
            "message": {"role": "user", "content": content},
        }
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        [(got, body)] = user_origins(path)
        assert got == origin
        assert body == (text if text is not None else content)

    def test_shell_and_hook_text_is_never_a_request(self) -> None:
        """A summarizer never takes a shell escape or a hook notice for a request."""
        messages = [
            Message(role="user", content="<bash-input>rm -rf build</bash-input>", origin="shell"),
            Message(role="user", content="Operation stopped by hook: blocked", origin="hook"),
            Message(role="user", content="Fix the parser", origin="user"),
        ]
        facts = read_span(messages)
        assert facts.requests == ["Fix the parser"]
        assert len(facts.injected) == 2

    def test_codex_injected_kinds(self, tmp_path: Path) -> None:
        """Codex's shell commands and aborts get their own origins; AGENTS.md is injected."""

        def item(text: str) -> str:
            content = [{"type": "input_text", "text": text}]
            payload = {"type": "message", "role": "user", "content": content}
            return json.dumps({"timestamp": "t", "type": "response_item", "payload": payload})

        path = tmp_path / "rollout.jsonl"
        texts = [
            "# AGENTS.md instructions for /repo\n\nrun make",
            "<user_shell_command>ls</user_shell_command>",
            "<turn_aborted>the user stopped</turn_aborted>",
            "Fix the build",
        ]
        path.write_text("\n".join(item(t) for t in texts) + "\n", encoding="utf-8")
        origins = [o for o, _ in user_origins(path)]
        assert origins == ["injected", "command", "interruption", "user"]

    def test_resumed_summary_is_kept_as_a_message(self, tmp_path: Path) -> None:
        """A Claude Code summary with nothing before it becomes a recorded_summary message."""
        records = [
            {"type": "system", "subtype": "compact_boundary", "uuid": "b"},
            {
                "type": "user",
                "isCompactSummary": True,
                "uuid": "s",
                "message": {"role": "user", "content": "Summary:\n1. Primary Request: build X"},
            },
            {"type": "user", "uuid": "u", "message": {"role": "user", "content": "go on"}},
        ]
        path = tmp_path / "resumed.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        assert user_origins(path) == [
            ("recorded_summary", "Summary:\n1. Primary Request: build X"),
            ("user", "go on"),
        ]


class TestModeSwitch:
    def test_switch_mode_message_has_its_origin(self, tmp_path: Path) -> None:
        """switch_mode by message appends a message of origin mode_switch; modes follow."""
        builder = PromptBuilder(
            environment=Environment.model_validate({"date": "2026-11-30", "cwd": "/repo"})
        )
        agent, plan = BUILTIN_MODES["agent"], BUILTIN_MODES["plan"]
        with Session(tmp_path / "log.jsonl") as session:
            session.start_turn("Plan first", mode="plan")
            assert session.turn_modes.mode_now == "plan"
            switch_mode(session, builder, plan, agent, how="message")
            last = session.context.messages[-1]
            assert last.origin == "mode_switch"
            assert session.turn_modes.mode_now is None
            assert session.turn_modes.modes_of([1, 2, 3]) == ("plan", "plan", None)

    def test_turn_modes_fold(self) -> None:
        """Each turn sets the mode; a mode message ends it; replay gives the same view."""
        events = [
            parse_event('{"v":1,"seq":1,"type":"turn/start","data":{"mode":"plan"}}'),
            parse_event('{"v":1,"seq":2,"type":"message","data":{"role":"user","content":"x"}}'),
            parse_event('{"v":1,"seq":3,"type":"turn/start","data":{"mode":"agent"}}'),
        ]
        projection = TurnModesProjection()
        state = projection.init()
        for event in events:
            state = projection.apply(state, event)
        view = projection.view(state)
        assert (view.mode_at(0), view.mode_at(2), view.mode_at(3)) == (None, "plan", "agent")
        assert view.mode_now == "agent"


class TestLogFormat:
    def test_origin_round_trips_and_is_in_the_schema(self) -> None:
        """Every origin parses and dumps back; the committed schema lists exactly them."""
        for origin in ORIGINS:
            line = json.dumps(
                {
                    "v": 1,
                    "seq": 1,
                    "type": "message",
                    "data": {"role": "user", "content": "x", "origin": origin},
                },
                separators=(",", ":"),
            )
            assert dump_event(parse_event(line)) == line
        schema = json.loads(
            resources.files("compaction").joinpath("schemas", "event.schema.json").read_text()
        )
        origin = schema["$defs"]["Message"]["properties"]["origin"]
        enum = next(o["enum"] for o in origin["anyOf"] if "enum" in o)
        assert sorted(enum) == sorted(ORIGINS)

    def test_unknown_origin_rejected(self) -> None:
        """An origin outside the list does not parse."""
        with pytest.raises(ValueError, match="origin"):
            Message.model_validate({"role": "user", "content": "x", "origin": "robot"})

    def test_origin_never_reaches_a_provider(self) -> None:
        """The provider message shape has no origin field."""
        from prompts.requests import openai_message

        message = Message(role="user", content="x", origin="skill")
        assert "origin" not in openai_message(message)
