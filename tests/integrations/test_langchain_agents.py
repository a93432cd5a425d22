"""The LangChain v1 middleware, driven by a real `create_agent` and a scripted chat model."""

# mypy: allow-untyped-defs

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from compaction import (
    CheckpointRecorded,
    CompactionPolicy,
    Message,
    MessageAdded,
    Session,
    TodoWritten,
    TurnEnded,
    TurnStarted,
    UsageReported,
    check_log,
    parse_checkpoint,
)
from compaction import read_events as stream_events
from harness.integrations.langchain_agents import CHECKPOINT_SOURCE, HarnessMiddleware
from prompts import Mode, ToolPolicy

Step = AIMessage | Callable[[list[BaseMessage]], AIMessage]


class ScriptedModel(BaseChatModel):
    """Answers each call with the next scripted message; records what it was sent."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Step]
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    tools_seen: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Runnable[Any, Any]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kw: Any
    ) -> ChatResult:
        self.calls.append(list(messages))
        self.tools_seen.append(list(kw.get("tools") or []))
        step = self.script.pop(0)
        answer = step(messages) if callable(step) else step
        return ChatResult(generations=[ChatGeneration(message=answer)])


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


def todos(*items: tuple[str, str]) -> dict[str, Any]:
    return {"todos": [{"content": c, "status": s} for c, s in items]}


FIRST = todos(
    ("Read the config", "in_progress"), ("Fix the parser", "pending"), ("Run tests", "pending")
)
SECOND = todos(
    ("Read the config", "completed"), ("Fix the parser", "in_progress"), ("Run tests", "pending")
)

READS: list[str] = []


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    READS.append(path)
    return f"contents of {path}: " + "x = 1\n" * 3


def working_script(final: str = "Done: the parser is fixed.") -> list[Step]:
    return [
        AIMessage(content="", tool_calls=[call("todo_write", FIRST, "c1")]),
        AIMessage(content="", tool_calls=[call("read_file", {"path": "cfg.toml"}, "c2")]),
        AIMessage(content="", tool_calls=[call("todo_write", SECOND, "c3")]),
        AIMessage(
            content=final,
            usage_metadata={
                "input_tokens": 900,
                "output_tokens": 12,
                "total_tokens": 912,
                "input_token_details": {"cache_read": 640},
            },
            response_metadata={"model_name": "scripted-1"},
        ),
    ]


def agent_with(model: ScriptedModel, middleware: HarnessMiddleware) -> Any:
    return create_agent(
        model=model, tools=[read_file], system_prompt="You fix bugs.", middleware=[middleware]
    )


def run(agent: Any, text: str) -> dict[str, Any]:
    return dict(agent.invoke({"messages": [HumanMessage(content=text)]}))


def read_events(path: Path) -> list[Any]:
    return list(stream_events(path))


def lc_id(message: Message) -> Any:
    """The LangChain id a logged message keeps."""
    assert message.provider_fields is not None
    return message.provider_fields["langchain_id"]


def message_events(path: Path) -> list[MessageAdded]:
    return [e for e in read_events(path) if isinstance(e, MessageAdded)]


class TestTodoWriteAndSync:
    def test_the_log_records_the_run_in_order_and_the_state_mirrors_its_list(
        self, tmp_path: Path
    ) -> None:
        log = tmp_path / "s.jsonl"
        model = ScriptedModel(script=working_script())
        middleware = HarnessMiddleware(log)
        state = run(agent_with(model, middleware), "Fix the parser bug")

        kinds = [e.type for e in read_events(log)]
        assert kinds == [
            "turn/start",
            "message",  # the user's request
            "message",  # todo_write call
            "todo/write",
            "message",  # its result
            "message",  # read_file call
            "message",  # its result
            "message",  # todo_write call
            "todo/write",
            "message",  # its result
            "message",  # the final answer
            "usage/report",
            "turn/end",
        ]
        check_log(read_events(log))
        writes = [e for e in read_events(log) if isinstance(e, TodoWritten)]
        assert [[(t.content, t.status) for t in w.data.todos] for w in writes] == [
            [(t["content"], t["status"]) for t in FIRST["todos"]],
            [(t["content"], t["status"]) for t in SECOND["todos"]],
        ]
        # The state's list is the log's latest list, item for item.
        assert state["todos"] == SECOND["todos"]
        # Every state message is logged exactly once, with its LangChain id.
        logged = [lc_id(e.data) for e in message_events(log)]
        assert logged == [m.id for m in state["messages"]]
        assert len(set(logged)) == len(logged)
        # The tool results the model read are the toolkit's.
        results = [m for m in state["messages"] if isinstance(m, ToolMessage)]
        assert results[0].text.startswith("Todo list updated")
        assert results[0].status == "success"
        assert "contents of cfg.toml" in results[1].content
        usage = [e for e in read_events(log) if isinstance(e, UsageReported)]
        assert (usage[0].data.prompt_tokens, usage[0].data.cached_tokens) == (900, 640)
        assert usage[0].data.model == "scripted-1"

    def test_the_model_gets_todo_write_and_the_mode_block(self, tmp_path: Path) -> None:
        model = ScriptedModel(script=working_script())
        run(agent_with(model, HarnessMiddleware(tmp_path / "s.jsonl")), "Fix it")
        names = [t["function"]["name"] for t in model.tools_seen[0]]
        assert sorted(names) == ["read_file", "todo_write"]
        spec = next(t for t in model.tools_seen[0] if t["function"]["name"] == "todo_write")
        assert spec["function"]["parameters"]["required"] == ["todos"]
        system = model.calls[0][0]
        assert isinstance(system, SystemMessage)
        assert system.text.startswith("You fix bugs.\n\n# Mode: Agent")

    def test_bad_arguments_become_a_result_the_model_can_fix(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        two_in_progress = todos(("A", "in_progress"), ("B", "in_progress"))
        model = ScriptedModel(
            script=[
                AIMessage(content="", tool_calls=[call("todo_write", two_in_progress, "c1")]),
                AIMessage(content="ok"),
            ]
        )
        state = run(agent_with(model, HarnessMiddleware(log)), "Do A and B")
        reply = next(m for m in state["messages"] if isinstance(m, ToolMessage))
        assert reply.status == "error"
        assert "in_progress" in reply.content
        assert not any(isinstance(e, TodoWritten) for e in read_events(log))
        assert state.get("todos", []) == []
        # The model read the refusal on its next call.
        assert model.calls[1][-1].content == reply.content

    def test_plan_mode_refuses_todo_write_in_the_session(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        model = ScriptedModel(
            script=[
                AIMessage(content="", tool_calls=[call("todo_write", FIRST, "c1")]),
                AIMessage(content="Here is the plan."),
            ]
        )
        state = run(agent_with(model, HarnessMiddleware(log, mode="plan")), "Plan the fix")
        reply = next(m for m in state["messages"] if isinstance(m, ToolMessage))
        assert reply.status == "error"
        assert "Plan" in reply.content
        events = read_events(log)
        assert not any(isinstance(e, TodoWritten) for e in events)
        assert [e.data.mode for e in events if isinstance(e, TurnStarted)] == ["plan"]
        assert "# Mode: Plan" in model.calls[0][0].text

    def test_a_second_run_continues_the_log_without_logging_twice(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        middleware = HarnessMiddleware(log)
        model = ScriptedModel(script=[*working_script(), AIMessage(content="Tests pass.")])
        agent = agent_with(model, middleware)
        first = run(agent, "Fix the parser bug")
        second = agent.invoke({"messages": [*first["messages"], HumanMessage("Now run tests")]})
        events = read_events(log)
        assert sum(isinstance(e, TurnStarted) for e in events) == 2
        assert sum(isinstance(e, TurnEnded) for e in events) == 2
        logged = [lc_id(e.data) for e in message_events(log)]
        assert logged == [m.id for m in second["messages"]]
        check_log(read_events(log))

    def test_a_new_middleware_on_an_old_log_shows_its_list(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        run(agent_with(ScriptedModel(script=working_script()), HarnessMiddleware(log)), "Fix it")
        model = ScriptedModel(script=[AIMessage(content="Resumed.")])
        state = run(agent_with(model, HarnessMiddleware(log)), "Go on")
        assert state["todos"] == SECOND["todos"]

    def test_async_runs_take_the_same_path(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        agent = agent_with(ScriptedModel(script=working_script()), HarnessMiddleware(log))
        state = asyncio.run(agent.ainvoke({"messages": [HumanMessage("Fix it")]}))
        assert state["todos"] == SECOND["todos"]
        assert sum(isinstance(e, TodoWritten) for e in read_events(log)) == 2


class TestCompaction:
    def long_script(self, turns: int) -> list[Step]:
        steps: list[Step] = [AIMessage(content="", tool_calls=[call("todo_write", FIRST, "t0")])]
        for i in range(turns):
            steps.append(
                AIMessage(
                    content=f"Reading part {i} of the config. " + "Checking each key. " * 20,
                    tool_calls=[call("read_file", {"path": f"part{i}.toml"}, f"r{i}")],
                )
            )
        steps.append(AIMessage(content="", tool_calls=[call("todo_write", SECOND, "t1")]))
        steps.append(AIMessage(content="Parser fixed; tests still to run."))
        return steps

    def test_a_due_compaction_replaces_the_state_with_the_log_view(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        policy = CompactionPolicy(window_tokens=6000, threshold=0.5, retain=0.1)
        model = ScriptedModel(script=self.long_script(24))
        middleware = HarnessMiddleware(log, policy=policy, system_prompt="")
        state = run(agent_with(model, middleware), "Fix the parser bug")

        events = read_events(log)
        checkpoints = [e for e in events if isinstance(e, CheckpointRecorded)]
        assert checkpoints, "the run should have compacted"
        assert len(middleware.compactions) == len(checkpoints)
        # The log keeps every message; the state holds only the log's context view.
        assert len(message_events(log)) > len(state["messages"])
        head = state["messages"][0]
        assert isinstance(head, HumanMessage)
        assert head.additional_kwargs["lc_source"] == CHECKPOINT_SOURCE
        assert head.id == f"context-harness-checkpoint-{checkpoints[-1].data.last_seq}"
        with Session(log) as session:
            window = session.context
            assert [m.id for m in state["messages"][1:]] == [lc_id(m) for m in window.messages]
        # Pending Jobs and Current Work come from the log's list, which the state mirrors.
        checkpoint = parse_checkpoint(checkpoints[-1].data.text)
        lists = [e for e in events if isinstance(e, TodoWritten)]
        before = [e for e in lists if e.seq < checkpoints[-1].seq][-1]
        assert checkpoint.pending_jobs == tuple(
            t.content for t in before.data.todos if t.status == "pending"
        )
        assert checkpoint.current_work == tuple(
            t.content for t in before.data.todos if t.status == "in_progress"
        )
        assert checkpoint.current_work  # the list had work in progress to carry
        assert state["todos"] == SECOND["todos"]
        # A model call after the compaction was sent the Checkpoint first.
        after = [c for c in model.calls if any(getattr(m, "id", None) == head.id for m in c)]
        assert after
        assert after[0][1].id == head.id
        check_log(read_events(log))

    def test_below_the_trigger_nothing_changes(self, tmp_path: Path) -> None:
        log = tmp_path / "s.jsonl"
        model = ScriptedModel(script=working_script())
        middleware = HarnessMiddleware(log)
        state = run(agent_with(model, middleware), "Fix it")
        assert middleware.compactions == []
        assert not any(isinstance(e, CheckpointRecorded) for e in read_events(log))
        assert not any(
            m.additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE for m in state["messages"]
        )

    def test_the_fixed_part_counts_toward_the_trigger(self, tmp_path: Path) -> None:
        """A system prompt large enough alone pushes the request over: the trigger counts it."""
        policy = CompactionPolicy(window_tokens=6000, threshold=0.5, retain=0.1)
        small = HarnessMiddleware(tmp_path / "a.jsonl", policy=policy, system_prompt="")
        big = HarnessMiddleware(
            tmp_path / "b.jsonl", policy=policy, system_prompt="Context. " * 1200
        )
        run(agent_with(ScriptedModel(script=self.long_script(6)), small), "Fix it")
        run(agent_with(ScriptedModel(script=self.long_script(6)), big), "Fix it")
        assert big.fixed_tokens > small.fixed_tokens + 1000
        assert small.compactions == []
        assert big.compactions

    def test_a_huge_tool_result_is_logged_whole_and_clipped_in_the_state(
        self, tmp_path: Path
    ) -> None:
        log = tmp_path / "s.jsonl"

        @tool
        def dump_logs() -> str:
            """Dump the server logs."""
            return "line of log output\n" * 4000

        model = ScriptedModel(
            script=[
                AIMessage(content="", tool_calls=[call("dump_logs", {}, "d1")]),
                AIMessage(content="Seen."),
            ]
        )
        with Session(log, tool_output_cap=500) as session:
            middleware = HarnessMiddleware(session)
            agent = create_agent(model=model, tools=[dump_logs], middleware=[middleware])
            state = run(agent, "Why did it crash?")
        logged = next(e for e in message_events(log) if e.data.role == "tool")
        assert logged.data.text().count("line of log output") == 4000
        shown = next(m for m in state["messages"] if isinstance(m, ToolMessage))
        assert shown.id == lc_id(logged.data)
        assert shown.content.count("line of log output") < 400
        # The model's second call read the clipped result, not the whole one.
        assert model.calls[1][-1].content == shown.content


def test_the_checkpoint_message_is_never_logged_as_a_request(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    policy = CompactionPolicy(window_tokens=6000, threshold=0.5, retain=0.1)
    middleware = HarnessMiddleware(log, policy=policy, system_prompt="")
    model = ScriptedModel(script=TestCompaction().long_script(24))
    run(agent_with(model, middleware), "Fix the parser bug")
    users = [e for e in message_events(log) if e.data.role == "user"]
    assert [u.data.text() for u in users] == ["Fix the parser bug"]
    assert json.loads(json.dumps([u.data.provider_fields for u in users]))


REVIEW = Mode(name="review", title="Review", tools=ToolPolicy(forbidden=("read_file",)))
"""A user mode that forbids a host tool."""


@tool
def task_create(subject: str) -> str:
    """A host's own task tool of the same name (Plan mode forbids task writes)."""
    READS.append(f"task_create ran: {subject}")
    return "created"


class TestForbiddenHostTools:
    @pytest.mark.parametrize(
        ("mode", "modes", "name", "args"),
        [
            ("plan", None, "task_create", {"subject": "Ship it"}),
            ("review", {"review": REVIEW}, "read_file", {"path": "secret.txt"}),
        ],
        ids=["plan-task_create", "user-mode-read_file"],
    )
    def test_a_forbidden_host_tool_is_refused_and_never_runs(
        self, tmp_path: Path, mode: str, modes: dict[str, Mode] | None, name: str, args: Any
    ) -> None:
        """The mode's refusal is the tool result; the host tool never runs; nothing appended."""
        log = tmp_path / "s.jsonl"
        READS.clear()
        model = ScriptedModel(
            script=[AIMessage(content="", tool_calls=[call(name, args, "c1")]), AIMessage("ok")]
        )
        middleware = HarnessMiddleware(log, mode=mode, modes=modes)
        agent = create_agent(model=model, tools=[read_file, task_create], middleware=[middleware])
        state = run(agent, "Go")
        reply = next(m for m in state["messages"] if isinstance(m, ToolMessage))
        assert reply.status == "error"
        assert reply.content == middleware.session.refusal(name, mode=mode)
        assert reply.content.startswith(f"{name}: ")
        assert READS == []
        assert not [e for e in read_events(log) if e.type in ("task/create", "todo/write")]
