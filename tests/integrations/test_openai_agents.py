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
    MessagesRetracted,
    Session,
    check_log,
    parse_checkpoint,
    read_events,
)
from harness.integrations.openai_agents import LogSession

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
        assert [e.type for e in events] == ["message", "message", "message/retract"]
        assert isinstance(events[-1], MessagesRetracted)
        assert events[-1].data.seqs == (2,)

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
        assert [e.data.seqs for e in retracts] == [(1, 2, 3, 4)]

    def test_limit_gives_the_newest(self, tmp_path):
        """get_items(limit=n) gives the newest n items in order."""
        session = LogSession("s", tmp_path / "s.jsonl")
        run(session.add_items([cast(Any, {"role": "user", "content": str(i)}) for i in range(5)]))
        assert [i["content"] for i in run(session.get_items(limit=2))] == ["3", "4"]
        assert run(session.get_items(limit=0)) == []
