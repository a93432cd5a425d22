"""LangChain in a real loop: a long run compacts, a restart resumes, an overflow is answered."""

# mypy: allow-untyped-defs

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest

pytest.importorskip("langchain")

from langchain.agents import create_agent
from langchain_core.exceptions import ContextOverflowError
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field

from compaction import (
    CompactionPolicy,
    RequestOverflowError,
    TurnStarted,
    check_log,
    get_tokenizer,
    parse_checkpoint,
    read_events,
)
from harness.integrations.langchain_agents import CHECKPOINT_SOURCE, HarnessMiddleware

WINDOW = 12_000
BIG = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(90))
PLAN = [
    {"content": "Read the ten modules", "status": "in_progress"},
    {"content": "Summarize each module", "status": "pending"},
    {"content": "Write the report", "status": "pending"},
]
LATER = [
    {"content": "Read the ten modules", "status": "completed"},
    {"content": "Summarize each module", "status": "in_progress"},
    {"content": "Write the report", "status": "pending"},
]

Step = AIMessage | BaseException


class ScriptedModel(BaseChatModel):
    """Answers each call with the next scripted message (or raises it); records every request."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    script: list[Any]  # AIMessage or an exception to raise
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
        if isinstance(step, BaseException):
            raise step
        return ChatResult(generations=[ChatGeneration(message=step)])


def call(name: str, args: dict[str, Any], call_id: str) -> dict[str, Any]:
    return {"name": name, "args": args, "id": call_id, "type": "tool_call"}


@tool
def read_file(path: str) -> str:
    """Read a file of the project."""
    return f"{path}:\n{BIG}"


def long_script(calls: int = 30) -> list[Step]:
    """A plan, many reads, a progress update, a final answer: `calls` model calls."""
    steps: list[Step] = [
        AIMessage(content="", tool_calls=[call("todo_write", {"todos": PLAN}, "t0")])
    ]
    for i in range(1, calls - 2):
        steps.append(
            AIMessage(content="", tool_calls=[call("read_file", {"path": f"m{i}.py"}, f"r{i}")])
        )
        if i == calls // 2:
            steps.append(
                AIMessage(content="", tool_calls=[call("todo_write", {"todos": LATER}, "t1")])
            )
    steps.append(AIMessage(content="report written"))
    return steps


def agent_with(model: ScriptedModel, middleware: HarnessMiddleware) -> Any:
    return create_agent(
        model=model, tools=[read_file], system_prompt="Work through the plan.",
        middleware=[middleware],
    )  # fmt: skip


def invoke(agent: Any, text: str) -> dict[str, Any]:
    return dict(agent.invoke({"messages": [HumanMessage(content=text)]}, {"recursion_limit": 200}))


def request_tokens(messages: list[BaseMessage], tools: list[dict[str, Any]]) -> int:
    """Count a request as sent, independently of the middleware: messages and tool specs."""
    tok = get_tokenizer()
    texts = [json.dumps([m.model_dump(mode="json") for m in messages], default=str)]
    return sum(tok.count(t) for t in texts) + tok.count(json.dumps(tools))


def deepseek_overflow() -> Exception:
    """DeepSeek's refusal as the OpenAI SDK raises it (HTTP 400, its own wording)."""
    message = (
        "This model's maximum context length is 65536 tokens. However, you requested 70000 "
        "tokens. Please reduce the length of the messages."
    )
    body = {"error": {"message": message, "type": "invalid_request_error", "code": None}}
    request = httpx2.Request("POST", "http://127.0.0.1/v1/chat/completions")
    response = httpx2.Response(400, request=request)
    return openai.BadRequestError(f"Error code: 400 - {body}", response=response, body=body)


def overflow() -> ContextOverflowError:
    return ContextOverflowError("prompt is too long: 250000 tokens > 200000 maximum")


class TestLongRun:
    def test_thirty_calls_at_a_12k_window(self, tmp_path: Path) -> None:
        """30 calls: compacts inside the run, peak request under the window, todos as written."""
        model = ScriptedModel(script=long_script(30))
        policy = CompactionPolicy(window_tokens=WINDOW, output_reserve=1_000)
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", policy=policy)
        state = invoke(agent_with(model, middleware), "Review the ten modules.")
        assert state["messages"][-1].content == "report written"
        assert len(model.calls) == 30
        assert middleware.compactions
        assert len(middleware.compactions) <= 6  # each one makes room: not one per call
        saw = [c for c in model.calls if any(m.id and "checkpoint" in m.id for m in c)]
        assert saw, "no model call saw a Checkpoint"
        peak = max(request_tokens(c, t) for c, t in zip(model.calls, model.tools_seen, strict=True))
        # JSON dumps overcount the request; even so it stays under the window.
        assert peak + policy.output_reserve < WINDOW
        assert [t.model_dump() for t in middleware.session.latest_todos] == LATER
        assert state["todos"] == LATER
        middleware.close()
        check_log(list(read_events(tmp_path / "s.jsonl")))

    def test_a_restart_resumes_from_the_log(self, tmp_path: Path) -> None:
        """A new middleware, no checkpointer: the first call sees Checkpoint, tail, new input."""
        log = tmp_path / "s.jsonl"
        policy = CompactionPolicy(window_tokens=WINDOW)
        first = HarnessMiddleware(log, policy=policy)
        invoke(agent_with(ScriptedModel(script=long_script(30)), first), "Review the modules.")
        first.close()
        model = ScriptedModel(script=[AIMessage(content="resumed")])
        again = HarnessMiddleware(log, policy=policy)
        state = invoke(agent_with(model, again), "where were we?")
        sent = model.calls[0]
        head = sent[1]  # after the system message
        assert head.additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE
        checkpoint = parse_checkpoint(head.text)
        assert checkpoint.current_work == ("Summarize each module",)
        assert checkpoint.pending_jobs == ("Write the report",)
        assert sent[-1].text == "where were we?"
        assert len(sent) > 3  # the kept tail came too
        assert state["todos"] == LATER
        again.close()
        users = [e for e in read_events(log) if e.type == "message" and e.data.role == "user"]
        assert [u.data.text() for u in users] == ["Review the modules.", "where were we?"]

    def test_a_huge_result_leaves_a_clipped_tail(self, tmp_path: Path) -> None:
        """One result larger than the tail budget enters clipped, so the model still reads it."""

        @tool
        def dump() -> str:
            """Dump everything."""
            return "START\n" + "a log line of the crashed server\n" * 5000 + "END\n"

        model = ScriptedModel(
            script=[AIMessage(content="", tool_calls=[call("dump", {}, "d1")]), AIMessage("seen")]
        )
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", policy=CompactionPolicy(WINDOW))
        agent = create_agent(model=model, tools=[dump], middleware=[middleware])
        invoke(agent, "why did it crash?")
        shown = model.calls[1][-1]
        assert isinstance(shown, ToolMessage)
        assert shown.text.startswith("START")
        assert shown.text.rstrip().endswith("END")
        assert get_tokenizer().count(shown.text) <= CompactionPolicy(WINDOW).tool_output_tokens


class TestModes:
    def test_mode_switch_between_invocations(self, tmp_path: Path) -> None:
        """Plan, then agent: todo_write is refused, then runs; each turn is logged in its mode."""
        args = {"todos": PLAN}
        model = ScriptedModel(
            script=[
                AIMessage(content="", tool_calls=[call("todo_write", args, "p1")]),
                AIMessage(content="here is the plan"),
                AIMessage(content="", tool_calls=[call("todo_write", args, "a1")]),
                AIMessage(content="started"),
            ]
        )
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", mode="plan")
        agent = agent_with(model, middleware)
        first = invoke(agent, "plan it")
        refused = next(m for m in first["messages"] if isinstance(m, ToolMessage))
        assert refused.status == "error"
        middleware.mode = "agent"
        agent.invoke({"messages": [*first["messages"], HumanMessage("go ahead")]})
        assert [t.model_dump() for t in middleware.session.latest_todos] == PLAN
        events = list(read_events(tmp_path / "s.jsonl"))
        assert [e.data.mode for e in events if isinstance(e, TurnStarted)] == ["plan", "agent"]
        assert "# Mode: Plan" in model.calls[0][0].text
        assert "# Mode: Plan" not in model.calls[2][0].text


class TestOverflow:
    def test_one_overflow_one_compaction_one_retry(self, tmp_path: Path) -> None:
        """The provider refuses once: one compaction, the call is sent again with the view."""
        script = long_script(8)
        script.insert(6, overflow())
        model = ScriptedModel(script=script)
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        state = invoke(agent_with(model, middleware), "go")
        assert state["messages"][-1].content == "report written"
        assert middleware.retries == 1
        assert len(middleware.compactions) == 1
        refused, retried = model.calls[6], model.calls[7]
        assert retried[1].additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE
        assert len(retried) < len(refused)
        # The next call goes on from the compacted view, not the long state.
        assert model.calls[8][1].additional_kwargs.get("lc_source") == CHECKPOINT_SOURCE

    def test_the_refused_window_is_used_from_then_on(self, tmp_path: Path) -> None:
        """Configured 400k, refused with "> 200000 maximum": the window is 200k from then on."""
        script = long_script(8)
        script.insert(6, overflow())
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", policy=CompactionPolicy(400_000))
        invoke(agent_with(ScriptedModel(script=script), middleware), "go")
        assert middleware.session.refused_window == 200_000
        assert middleware._policy().window_tokens == 200_000
        again = HarnessMiddleware(tmp_path / "s.jsonl", policy=CompactionPolicy(400_000))
        assert again._policy().window_tokens == 200_000  # a restarted process too

    @pytest.mark.parametrize(
        "error",
        [
            overflow(),
            deepseek_overflow(),
        ],
        ids=["langchain", "deepseek"],
    )  # fmt: skip
    def test_a_second_overflow_propagates_in_one_line(
        self, tmp_path: Path, error: Exception
    ) -> None:
        """Refused again after the retry: RequestOverflowError, one line naming the size."""
        script: list[Step] = [*long_script(6)[:4], error, error]
        model = ScriptedModel(script=script)
        middleware = HarnessMiddleware(tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        with pytest.raises(RequestOverflowError) as caught:
            invoke(agent_with(model, middleware), "go")
        message = str(caught.value)
        assert "\n" not in message
        assert f"about {caught.value.request_tokens} tokens" in message
        assert middleware.retries == 1
        assert len(model.calls) == 4 + 2  # four answered, then exactly two sends refused
        refusals = [e for e in read_events(tmp_path / "s.jsonl") if e.type == "context/overflow"]
        assert len(refusals) == 1  # the first refusal is recorded; the second raises

    def test_other_errors_pass_through(self, tmp_path: Path) -> None:
        """An error that is no overflow is not retried."""
        model = ScriptedModel(script=[RuntimeError("rate limited")])
        middleware = HarnessMiddleware(tmp_path / "s.jsonl")
        with pytest.raises(RuntimeError, match="rate limited"):
            invoke(agent_with(model, middleware), "go")
        assert middleware.retries == 0


class TestUsage:
    @pytest.mark.parametrize("figure", [-5, 10**5000], ids=["negative", "huge"])
    def test_usage_never_fails_an_answered_call(self, tmp_path: Path, figure: int) -> None:
        """An answer whose usage no event can hold: the run goes on, nothing unreadable logged."""
        usage = {"input_tokens": figure, "output_tokens": 1, "total_tokens": 1}
        model = ScriptedModel(script=[AIMessage(content="done", usage_metadata=usage)])
        middleware = HarnessMiddleware(tmp_path / "s.jsonl")
        state = invoke(agent_with(model, middleware), "go")
        assert state["messages"][-1].content == "done"
        events = list(read_events(tmp_path / "s.jsonl"))
        assert not [e for e in events if e.type == "usage/report"]
        assert events[-1].type == "turn/end"
