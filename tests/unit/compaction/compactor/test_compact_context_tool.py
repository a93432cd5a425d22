"""The compact_context tool: the model asks to compact at a natural break; the host opts in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli
from loop_sessions import call, reads, result, say, todos

from compaction import (
    COMPACT_CONTEXT,
    CheckpointRecorded,
    CompactionPolicy,
    ConfigError,
    ModePolicy,
    Session,
    builtin_policies,
    call_tool,
    check_log,
)
from compaction.compactor.compact_context import compact_context_schema
from prompts import PromptBuilder, ToolCatalog, get_mode, openai_request

POLICY = CompactionPolicy(window_tokens=8_000)


def asking(path: Path, *, policies: dict[str, ModePolicy] | None = None) -> Session:
    """A finished step, then the model's compact_context call (waiting for its result)."""
    session = Session(path, policies=policies)
    session.start_turn("Fix the parser, then write the docs", mode="agent")
    session.todo_write(todos(("Fix the parser", "completed"), ("Write the docs", "pending")))
    reads(session, [f"src/m{i}.py" for i in range(6)])
    session.add_message(say("The parser is fixed."))
    session.add_message(call("cc", COMPACT_CONTEXT))
    return session


def checkpoints(session: Session) -> list[CheckpointRecorded]:
    """Return the checkpoint events of the log."""
    return [e for e in session.events() if isinstance(e, CheckpointRecorded)]


class TestRun:
    def test_it_compacts_and_names_the_span_and_the_tokens_saved(self, log_path: Path) -> None:
        """One line: events 1..N replaced, tokens saved; the event is an ordinary checkpoint."""
        with asking(log_path) as session:
            out = call_tool(session, COMPACT_CONTEXT, "{}", policy=POLICY)
            [event] = checkpoints(session)
            d = event.data
            assert not out.is_error
            assert out.content == (
                f"Context compacted: events 1..{d.last_seq} replaced by a Checkpoint; "
                f"{d.tokens_before - d.tokens_after} tokens saved "
                f"({d.tokens_before} -> {d.tokens_after})."
            )
            assert d.tokens_after < d.tokens_before
            assert session.context_tokens == d.tokens_after
            # The call stays in the kept tail: its result can be appended and the log is valid.
            assert session.context.messages[-1].tool_calls is not None
            session.add_message(result("cc", out.content))
            check_log(list(session.events()))

    def test_the_focus_reaches_the_summarizer_and_the_event(self, log_path: Path) -> None:
        """`focus` becomes the compaction's instructions."""
        with asking(log_path) as session:
            out = call_tool(session, COMPACT_CONTEXT, {"focus": "the parser's API"}, policy=POLICY)
            [event] = checkpoints(session)
        assert not out.is_error
        assert event.data.instructions == "the parser's API"

    def test_an_empty_session_has_nothing_to_compact(self, log_path: Path) -> None:
        """Said plainly, not an error; nothing appended."""
        with Session(log_path) as session:
            out = call_tool(session, COMPACT_CONTEXT)
            assert session.applied_seq == 0
        assert not out.is_error
        assert out.content == (
            "Nothing to compact: the context holds no message before this call that can be "
            "replaced."
        )

    def test_a_window_too_small_is_an_error_result_not_a_crash(self, log_path: Path) -> None:
        """A compaction that cannot fit returns `compact_context: not compacted: ...`."""
        with asking(log_path) as session:
            seq = session.applied_seq
            out = call_tool(
                session, COMPACT_CONTEXT, policy=CompactionPolicy(window_tokens=60, retain=0.0)
            )
            assert session.applied_seq == seq
        assert out.is_error
        assert out.content.startswith("compact_context: not compacted: does_not_fit: ")

    @pytest.mark.parametrize(
        ("arguments", "problem"),
        [
            ('{"now": true}', 'unknown parameter "now"; compact_context takes only "focus"'),
            ('{"focus": 3}', '"focus" must be a string'),
            (json.dumps({"focus": "x" * 2001}), '"focus" is longer than 2000 characters'),
            ("[1]", "must be a JSON object"),
            ("{not json", "not valid JSON"),
        ],
    )
    def test_bad_arguments_are_rejected_and_append_nothing(
        self, log_path: Path, arguments: str, problem: str
    ) -> None:
        """Each violation is named for the model; the log is unchanged."""
        with asking(log_path) as session:
            seq = session.applied_seq
            out = call_tool(session, COMPACT_CONTEXT, arguments, policy=POLICY)
            assert session.applied_seq == seq
        assert out.is_error
        assert out.content.startswith("compact_context: rejected, nothing was changed.")
        assert problem in out.content


class TestPolicy:
    def test_every_built_in_mode_allows_it(self) -> None:
        """agent, parallel, plan and team all let the model ask."""
        table = builtin_policies()
        assert set(table) >= {"agent", "parallel", "plan", "team"}
        assert not any(p.forbids(COMPACT_CONTEXT) for p in table.values())

    def test_a_mode_that_forbids_it_refuses_and_appends_nothing(self, log_path: Path) -> None:
        """The mode policy applies to compact_context like any tool."""
        refusal = "compact_context: refused in this mode."
        table = {"agent": ModePolicy(refusals={COMPACT_CONTEXT: refusal})}
        with asking(log_path, policies=table) as session:
            seq = session.applied_seq
            out = call_tool(session, COMPACT_CONTEXT, policy=POLICY)
            assert session.applied_seq == seq
        assert out.is_error
        assert out.content == refusal

    def test_a_host_handler_cannot_shadow_it(self, log_path: Path) -> None:
        """The built-in runs even when a host registers a handler of that name."""
        with asking(log_path) as session:
            out = call_tool(
                session, COMPACT_CONTEXT, policy=POLICY, handlers={COMPACT_CONTEXT: lambda a: "x"}
            )
        assert out.content.startswith("Context compacted: ")


class TestCatalog:
    def test_off_by_default_shown_when_the_host_opts_in(self) -> None:
        """The catalog holds compact_context only with `compact_context=True`, before todo_write."""
        mode = get_mode("agent")
        plain = [t["function"]["name"] for t in openai_request(PromptBuilder(), mode)["tools"]]
        shown = PromptBuilder(ToolCatalog(compact_context=True))
        names = [t["function"]["name"] for t in openai_request(shown, mode)["tools"]]
        assert COMPACT_CONTEXT not in plain
        assert names == [COMPACT_CONTEXT, *plain]

    def test_its_description_says_when_to_use_it(self) -> None:
        """At a natural break, before a long new phase; the schema is compaction's."""
        tools = PromptBuilder(ToolCatalog(compact_context=True)).tools(get_mode("plan"))
        spec = next(t for t in tools if t.name == COMPACT_CONTEXT)
        assert "natural break" in spec.description
        assert "before starting a long new phase" in spec.description
        assert spec.parameters == compact_context_schema()

    def test_a_user_tool_may_not_take_its_name(self) -> None:
        """The name is built in."""
        with pytest.raises(ConfigError, match="compact_context; it is built in"):
            ToolCatalog([{"name": COMPACT_CONTEXT, "description": "mine"}])


class TestCli:
    def test_harness_tool_compact_context(self, log_path: Path) -> None:
        """`harness tool LOG compact_context` compacts the log and prints the line."""
        asking(log_path).close()
        run = run_cli("tool", log_path, COMPACT_CONTEXT, "--window", "8000", "--args", "{}")
        assert run.returncode == 0, run.stderr
        assert run.stdout.startswith("Context compacted: events 1..")
        with Session(log_path) as session:
            assert len(checkpoints(session)) == 1

    def test_a_bad_window_is_one_line(self, log_path: Path) -> None:
        """A window the policy rejects is a usage error, not a traceback."""
        asking(log_path).close()
        run = run_cli("tool", log_path, COMPACT_CONTEXT, "--window", "0", "--args", "{}")
        assert run.returncode != 0
        assert "Traceback" not in run.stderr
        assert "window_tokens must be a positive integer" in run.stderr


class TestFloor:
    def repeat(self, session: Session, calls: int, floor: int | None = None) -> list[str]:
        """Answer `calls` compact_context calls in a row, as a model calling it in a loop."""
        out = []
        for i in range(calls):
            answer = (
                call_tool(session, COMPACT_CONTEXT, "{}", policy=POLICY)
                if floor is None
                else call_tool(session, COMPACT_CONTEXT, "{}", policy=POLICY, min_new_tokens=floor)
            )
            out.append(answer.content)
            session.add_message(result(f"cc{i}" if i else "cc", answer.content))
            session.add_message(call(f"cc{i + 1}", COMPACT_CONTEXT))
        return out

    def test_thirty_calls_in_a_row_make_one_checkpoint(self, log_path: Path) -> None:
        """After one compaction, calls with less new content than the floor compact nothing."""
        with asking(log_path) as session:
            answers = self.repeat(session, 30)
            assert len(checkpoints(session)) == 1
        assert answers[0].startswith("Context compacted: ")
        assert all(a.startswith("Nothing to compact: only ") for a in answers[1:])
        assert answers[1].endswith(
            "since the last Checkpoint (the floor is 2000); go on with the task."
        )

    def test_new_content_over_the_floor_compacts_again(self, log_path: Path) -> None:
        """Enough new messages since the Checkpoint: the next call compacts."""
        with asking(log_path) as session:
            first = call_tool(session, COMPACT_CONTEXT, "{}", policy=POLICY)
            session.add_message(result("cc", first.content))
            reads(session, [f"src/n{i}.py" for i in range(12)])
            session.add_message(call("cc2", COMPACT_CONTEXT))
            again = call_tool(session, COMPACT_CONTEXT, "{}", policy=POLICY, min_new_tokens=500)
            assert again.content.startswith("Context compacted: ")
            assert len(checkpoints(session)) == 2

    def test_a_floor_of_zero_compacts_every_time(self, log_path: Path) -> None:
        """The host can turn the floor off: every call compacts when it can."""
        with asking(log_path) as session:
            answers = self.repeat(session, 3, floor=0)
        assert not any(a.startswith("Nothing to compact: only") for a in answers)
