"""The OpenAI Agents SDK session adapter, driven by a real `agents.Runner` and a scripted model."""

# mypy: allow-untyped-defs

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

pytest.importorskip("agents")

from agents import (
    Agent,
    FunctionTool,
    Model,
    ModelResponse,
    ModelSettings,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from compaction import (
    CompactionPolicy,
    ConfigError,
    Message,
    MessageError,
    MessagesRetracted,
    Session,
    check_log,
    parse_checkpoint,
    read_events,
)
from harness.integrations.openai_agents import LogSession
from prompts import Mode, ToolPolicy, todo_write_spec

set_tracing_disabled(True)  # offline: no trace export


def text_output(text: str) -> ResponseOutputMessage:
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[part]
    )


class ScriptedModel(Model):
    """Answers with the next scripted output; records the input it was given."""

    def __init__(self, script: list[list[Any]]) -> None:
        self.script = list(script)
        self.inputs: list[Any] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
    ) -> ModelResponse:
        self.inputs.append(json.loads(json.dumps(input, default=str)))
        # A response id, as the Responses API gives: the Runner calls run_compaction after it.
        response_id = f"resp_{len(self.inputs)}"
        return ModelResponse(output=self.script.pop(0), usage=Usage(), response_id=response_id)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("the tests never stream")


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"contents of {path}"


def agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="a", instructions="Be brief.", model=model, tools=[read_file],
                 model_settings=ModelSettings())  # fmt: skip


def call(call_id: str, path: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=call_id, name="read_file",
        arguments=json.dumps({"path": path}), id=f"fc_{call_id}", status="completed",
    )  # fmt: skip


def run(coro: Any) -> Any:
    return asyncio.run(coro)


class TestRunner:
    def test_history_lives_in_the_log(self, tmp_path):
        """Two runs on one LogSession: the second sees the first's items, all read from the log."""
        model = ScriptedModel(
            [[call("c1", "a.py")], [text_output("a.py read")], [text_output("still here")]]
        )
        session = LogSession("s1", tmp_path / "s.jsonl")
        first = run(Runner.run(agent(model), "read a.py", session=session))
        assert first.final_output == "a.py read"
        second = run(Runner.run(agent(model), "and now?", session=session))
        assert second.final_output == "still here"
        texts = json.dumps(model.inputs[-1])
        for seen in ("read a.py", "contents of a.py", "a.py read"):
            assert seen in texts
        session.close()
        events = list(read_events(tmp_path / "s.jsonl"))
        check_log(events)
        roles = [e.data.role for e in events if e.type == "message"]
        assert roles == ["user", "assistant", "tool", "assistant", "user", "assistant"]
        again = LogSession("s1", tmp_path / "s.jsonl")
        assert run(again.get_items()) == run(LogSession("x", tmp_path / "s.jsonl").get_items())
        assert len(run(again.get_items())) == 6

    def test_compaction_through_the_sdk_hook(self, tmp_path):
        """The Runner calls run_compaction; our Checkpoint replaces old items, todos carried."""
        path = tmp_path / "s.jsonl"
        with Session(path) as log:
            log.start_turn("plan the work")
            log.todo_write(
                {"todos": [{"content": "Ship it", "status": "in_progress"},
                           {"content": "Write docs", "status": "pending"}]}
            )  # fmt: skip
            for i in range(30):
                log.add_message({"role": "assistant", "content": f"step {i} " + "word " * 60})
        model = ScriptedModel([[text_output("done")]])
        policy = CompactionPolicy(window_tokens=3000, threshold=0.5)
        session = LogSession("s", path, policy=policy)
        result = run(Runner.run(agent(model), "go on", session=session))
        assert result.final_output == "done"
        assert len(session.compactions) == 1
        items = run(session.get_items())
        checkpoint = parse_checkpoint(items[0]["content"])
        assert checkpoint.current_work == ("Ship it",)
        assert checkpoint.pending_jobs == ("Write docs",)
        assert len(items) < 30


class TestProtocol:
    def test_pop_is_a_tombstone(self, tmp_path):
        """pop_item returns the newest item and writes message/retract; the log keeps it."""
        session = LogSession("s", tmp_path / "s.jsonl")
        items: list[Any] = [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
        ]
        run(session.add_items(items))
        popped = run(session.pop_item())
        assert popped == items[1]
        assert run(session.get_items()) == items[:1]
        assert run(session.get_items(limit=5)) == items[:1]
        session.close()
        events = list(read_events(tmp_path / "s.jsonl"))
        assert [e.type for e in events] == ["turn/start", "message", "message", "message/retract"]
        assert isinstance(events[-1], MessagesRetracted)
        assert events[-1].data.seqs == (3,)

    def test_clear_retracts_everything_once(self, tmp_path):
        """clear_session: one tombstone for every message; get_items is empty, pop gives None."""
        session = LogSession("s", tmp_path / "s.jsonl")
        run(session.add_items([cast(Any, {"role": "user", "content": str(i)}) for i in range(4)]))
        run(session.clear_session())
        assert run(session.get_items()) == []
        assert run(session.pop_item()) is None
        assert session.log.context_tokens == 0
        run(session.add_items([cast(Any, {"role": "user", "content": "fresh"})]))
        assert run(session.get_items()) == [{"role": "user", "content": "fresh"}]
        session.close()
        retracts = [e for e in read_events(tmp_path / "s.jsonl") if e.type == "message/retract"]
        assert [e.data.seqs for e in retracts] == [(2, 3, 4, 5)]

    def test_limit_gives_the_newest(self, tmp_path):
        """get_items(limit=n) gives the newest n items in order."""
        session = LogSession("s", tmp_path / "s.jsonl")
        run(session.add_items([cast(Any, {"role": "user", "content": str(i)}) for i in range(5)]))
        assert [i["content"] for i in run(session.get_items(limit=2))] == ["3", "4"]
        assert run(session.get_items(limit=0)) == []


BAD_ITEMS: list[tuple[Any, str]] = [
    (None, "items[1]"),
    (42, "items[1]"),
    ("hello", "items[1]"),
    ({"type": "function_call", "name": "read_file", "arguments": "{}"}, "items[1].call_id"),
    ({"type": "function_call", "call_id": "c1", "arguments": "{}"}, "items[1].name"),
    ({"type": "function_call_output", "output": "x"}, "items[1].call_id"),
    ({"role": "wizard", "content": "x"}, "items[1].role"),
    ({"content": "no role, no type"}, "items[1]"),
]
"""Items the SDK protocol cannot hold, and the field the error names."""


class TestBadItems:
    @pytest.mark.parametrize(("item", "field"), BAD_ITEMS)
    def test_bad_item_raises_naming_the_field(self, tmp_path, item, field):
        """A bad item raises MessageError naming its field; the good item before it is not kept."""
        session = LogSession("s", tmp_path / "s.jsonl")
        with pytest.raises(MessageError) as caught:
            run(session.add_items([{"role": "user", "content": "ok"}, item]))
        assert caught.value.field == field
        assert session.log.applied_seq == 0
        assert run(session.get_items()) == []

    def test_a_non_list_is_refused(self, tmp_path):
        """add_items of something that is not a list of items raises naming ``items``."""
        session = LogSession("s", tmp_path / "s.jsonl")
        with pytest.raises(MessageError) as caught:
            run(session.add_items(cast(Any, "hi")))
        assert caught.value.field == "items"


class TestWhatTheModelSaw:
    def test_clipped_output_comes_back_clipped(self, tmp_path):
        """A 3,000,000-character tool output is logged whole; get_items gives the view's clip."""
        huge = "x" * 3_000_000
        session = LogSession("s", tmp_path / "s.jsonl")
        call_item = {"type": "function_call", "call_id": "c1", "name": "read", "arguments": "{}"}
        out_item = {"type": "function_call_output", "call_id": "c1", "output": huge}
        run(session.add_items(cast(Any, [call_item, out_item])))
        shown = run(session.get_items())[-1]
        assert shown["call_id"] == "c1"
        assert len(shown["output"]) < 100_000
        assert shown["output"] == session.log.context.messages[-1].text()
        logged = session.log.event(2).data
        assert isinstance(logged, Message)
        assert logged.text() == huge  # the log keeps every byte

    def test_clear_hides_the_checkpoint_too(self, tmp_path):
        """After a compaction, clear_session leaves get_items empty (no Checkpoint either)."""
        session = LogSession("s", tmp_path / "s.jsonl", policy=CompactionPolicy(3000, 0.5))
        items = [{"role": "user", "content": f"message {i} " + "word " * 80} for i in range(30)]
        run(session.add_items(cast(Any, items)))
        run(session.run_compaction())
        assert session.compactions
        assert run(session.get_items())[0]["content"].startswith("This session is being")
        run(session.clear_session())
        assert run(session.get_items()) == []
        session.close()
        assert run(LogSession("s", tmp_path / "s.jsonl").get_items()) == []


class TestTools:
    def test_todo_write_runs_against_the_log(self, tmp_path):
        """session.tools()'s todo_write writes the log; bad arguments come back as the result."""
        session = LogSession("s", tmp_path / "s.jsonl")
        (todo,) = session.tools()
        assert todo.name == "todo_write"
        good = json.dumps({"todos": [{"content": "Ship it", "status": "in_progress"}]})
        assert "1 in progress" in run(todo.on_invoke_tool(cast(Any, None), good))
        bad = run(todo.on_invoke_tool(cast(Any, None), '{"todos": "all"}'))
        assert '"todos" must be an array' in bad
        assert [t.content for t in session.log.latest_todos] == ["Ship it"]

    def test_plan_mode_refuses_todo_write_and_forbidden_host_tools(self, tmp_path):
        """In Plan mode todo_write gets the mode's refusal and appends nothing."""
        session = LogSession("s", tmp_path / "s.jsonl", mode="plan")
        todo = session.tools()[0]
        args = json.dumps({"todos": [{"content": "x", "status": "pending"}]})
        answer = run(todo.on_invoke_tool(cast(Any, None), args))
        assert answer == session.log.refusal("todo_write", mode="plan")
        assert session.log.applied_seq == 0

    def test_team_mode_adds_the_task_tools(self, tmp_path):
        """Team mode offers task_create / task_update / task_list, bound to the log."""
        session = LogSession("s", tmp_path / "s.jsonl", mode="team")
        tools = {t.name: t for t in session.tools(read_file)}
        assert set(tools) == {"todo_write", "task_create", "task_update", "task_list", "read_file"}
        made = run(tools["task_create"].on_invoke_tool(cast(Any, None), '{"subject": "Fix it"}'))
        assert "1" in made
        assert [t.subject for t in session.log.tasks.tasks] == ["Fix it"]

    def test_run_config_keeps_its_filter(self, tmp_path):
        """run_config refuses a call_model_input_filter of the caller's (it is the session's)."""
        session = LogSession("s", tmp_path / "s.jsonl")
        assert session.run_config(workflow_name="w").call_model_input_filter == session.filter_input
        with pytest.raises(ConfigError):
            session.run_config(call_model_input_filter=lambda data: data.model_data)

    def test_todo_write_spec_has_a_default(self):
        """todo_write_spec() without arguments gives the one-in-progress spec."""
        assert todo_write_spec() == todo_write_spec(allow_parallel_in_progress=False)


class TestRunModes:
    def test_each_runs_input_opens_a_turn_in_the_current_mode(self, tmp_path):
        """A user message opens a turn/start in the mode; tool outputs open none."""
        session = LogSession("s", tmp_path / "s.jsonl")
        run(session.add_items([cast(Any, {"role": "user", "content": "plan it"})]))
        session.mode = "plan"
        assert session.mode.name == "plan"
        run(session.add_items([cast(Any, {"role": "user", "content": "now plan"})]))
        out = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
        run(
            session.add_items(
                [
                    cast(
                        Any,
                        {"type": "function_call", "call_id": "c1", "name": "x", "arguments": "{}"},
                    ),
                    cast(Any, out),
                ]
            )
        )
        session.close()
        turns = [e for e in read_events(tmp_path / "s.jsonl") if e.type == "turn/start"]
        assert [t.data.mode for t in turns] == ["agent", "plan"]

    def test_an_unknown_mode_is_one_config_error(self, tmp_path):
        """Setting a mode the session does not know: ConfigError naming the choices."""
        session = LogSession("s", tmp_path / "s.jsonl")
        with pytest.raises(ConfigError, match='unknown mode "nope"'):
            session.mode = "nope"
        assert session.mode.name == "agent"
        session.close()


RAN: list[str] = []


@function_tool
def task_create(subject: str) -> str:
    """A host's own tool named like a task write (Plan mode forbids task writes)."""
    RAN.append(subject)
    return "created"


@function_tool
def write_file(path: str) -> str:
    """A host tool a user mode forbids."""
    RAN.append(path)
    return "written"


class TestForbiddenHostTools:
    @pytest.mark.parametrize(
        ("mode", "modes", "tool", "args"),
        [
            ("plan", None, task_create, '{"subject": "Ship it"}'),
            (
                "review",
                {"review": Mode(name="review", title="Review",
                                tools=ToolPolicy(forbidden=("write_file",)))},
                write_file,
                '{"path": "a.txt"}',
            ),
        ],
        ids=["plan-task_create", "user-mode-write_file"],
    )  # fmt: skip
    def test_a_forbidden_host_tool_is_refused_and_never_runs(
        self, tmp_path, mode: str, modes: Any, tool: Any, args: str
    ) -> None:
        """The mode's refusal is the tool's answer; the host's function never runs."""
        RAN.clear()
        session = LogSession("s", tmp_path / "s.jsonl", mode=mode, modes=modes)
        run(session.add_items([cast(Any, {"role": "user", "content": "go"})]))
        [guarded] = [t for t in session.tools(tool) if t.name == tool.name]
        answer = run(guarded.on_invoke_tool(cast(Any, None), args))
        assert answer == session.log.refusal(tool.name, mode=mode)
        assert str(answer).startswith(f"{tool.name}: ")
        assert RAN == []
        session.close()

    def test_switching_the_mode_switches_the_refusals(self, tmp_path) -> None:
        """Tools made before `mode` is set follow the new mode on their next call."""
        RAN.clear()

        async def invoke(ctx: Any, arguments: str) -> str:
            RAN.append(json.loads(arguments)["subject"])
            return "created"

        host = FunctionTool(
            name="task_create", description="", params_json_schema={}, on_invoke_tool=invoke
        )
        session = LogSession("s", tmp_path / "s.jsonl")
        [guarded] = [t for t in session.tools(host) if t.name == "task_create"]
        assert run(guarded.on_invoke_tool(cast(Any, None), '{"subject": "a"}')) == "created"
        session.mode = "plan"
        refused = run(guarded.on_invoke_tool(cast(Any, None), '{"subject": "b"}'))
        assert refused == session.log.refusal("task_create", mode="plan")
        assert RAN == ["a"]
        session.close()
