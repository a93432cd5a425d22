"""The Agents SDK in a real loop: a long run compacts inside itself, resumes, survives overflow."""

# mypy: allow-untyped-defs

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

import httpx2
import openai
from agents import (
    Agent,
    Model,
    ModelProvider,
    ModelResponse,
    OpenAIChatCompletionsModel,
    RunConfig,
    Runner,
    Usage,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from compaction import (
    CompactionPolicy,
    RequestOverflowError,
    Session,
    check_log,
    get_tokenizer,
    parse_checkpoint,
    read_events,
)
from harness.integrations.openai_agents import LogSession, UnguardedModelWarning
from harness.testing import Reply, StubModel, ToolCall, prompt_tokens

set_tracing_disabled(True)  # offline: no trace export

WINDOW = 12_000
BIG = "".join(f"line {i}: the quick brown fox jumps over the lazy dog\n" for i in range(90))
"""One read_file result: about 1,200 tokens, so 30 calls would reach ~35k without compaction."""
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


def text_output(text: str) -> ResponseOutputMessage:
    part = ResponseOutputText(type="output_text", text=text, annotations=[])
    return ResponseOutputMessage(
        id="msg", type="message", role="assistant", status="completed", content=[part]
    )


def call(name: str, args: dict[str, Any], call_id: str) -> ResponseFunctionToolCall:
    return ResponseFunctionToolCall(
        type="function_call", call_id=call_id, name=name, arguments=json.dumps(args),
        id=f"fc_{call_id}", status="completed",
    )  # fmt: skip


def overflow() -> openai.BadRequestError:
    """The error the openai SDK raises when a request is over the model's window."""
    request = httpx2.Request("POST", "http://127.0.0.1/v1/responses")
    body = {"error": {"code": "context_length_exceeded", "message": "Your input exceeds the "
            "context window of this model.", "type": "invalid_request_error"}}  # fmt: skip
    return openai.BadRequestError(
        "Error code: 400 - context_length_exceeded",
        response=httpx2.Response(400, request=request),
        body=body,
    )


Step = list[Any] | Callable[[list[Any]], list[Any]] | BaseException


class ScriptedModel(Model):
    """Answers with the next scripted output (or raises it); records every request."""

    def __init__(self, script: list[Step]) -> None:
        self.script = list(script)
        self.requests: list[tuple[str | None, list[Any], list[Any]]] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, model_settings: Any, tools: Any,
        *args: Any, **kwargs: Any,
    ) -> ModelResponse:  # fmt: skip
        items = json.loads(json.dumps(input, default=str))
        self.requests.append((system_instructions, items, list(tools)))
        step = self.script.pop(0)
        if isinstance(step, BaseException):
            raise step
        output = step(items) if callable(step) else step
        usage = Usage(requests=1, input_tokens=0, output_tokens=1)
        return ModelResponse(output=output, usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise AssertionError("the tests never stream")


@function_tool
def read_file(path: str) -> str:
    """Read a file."""
    return f"{path}:\n{BIG}"


def long_script(calls: int = 30) -> list[Step]:
    """A plan, many file reads, a progress update, a final answer: `calls` model calls."""
    script: list[Step] = [[call("todo_write", {"todos": PLAN}, "t0")]]
    for i in range(1, calls - 2):
        script.append([call("read_file", {"path": f"mod{i}.py"}, f"r{i}")])
        if i == calls // 2:
            script.append([call("todo_write", {"todos": LATER}, "t1")])
    script.append([text_output("report written")])
    return script


def request_tokens(request: tuple[str | None, list[Any], list[Any]]) -> int:
    """Count a request as sent, independently of the adapter: instructions, items, tool specs."""
    tok = get_tokenizer()
    instructions, items, tools = request
    specs = [
        {"name": t.name, "description": t.description, "parameters": t.params_json_schema}
        for t in tools
    ]
    return (
        tok.count(instructions or "") + tok.count(json.dumps(items)) + tok.count(json.dumps(specs))
    )


def agent(model: Model, session: LogSession) -> Agent[Any]:
    return Agent(name="a", instructions="Work through the plan.", model=model,
                 tools=[*session.tools(), read_file])  # fmt: skip


def run(session: LogSession, model: Model, text: str) -> Any:
    config = session.run_config(model=model)
    return asyncio.run(
        Runner.run(agent(model, session), text, session=session, run_config=config, max_turns=60)
    )


def checkpoint_of(items: list[Any]) -> Any:
    first = items[0]
    assert first["role"] == "user"
    return parse_checkpoint(first["content"])


class TestLongRun:
    def test_thirty_calls_at_a_12k_window(self, tmp_path: Path) -> None:
        """30 calls: compacts inside the run, peak request under the window, todos as written."""
        model = ScriptedModel(long_script(30))
        policy = CompactionPolicy(window_tokens=WINDOW, output_reserve=1_000)
        session = LogSession("u1", tmp_path / "s.jsonl", policy=policy)
        result = run(session, model, "Review the ten modules and write a report.")
        assert result.final_output == "report written"
        assert len(model.requests) == 30
        assert session.compactions, "no compaction inside the run"
        assert len(session.compactions) <= 6  # each one makes room: not one per call
        seen = [checkpoint_of(r[1]) for r in model.requests if "# Checkpoint" in json.dumps(r[1])]
        assert seen, "no model call saw a Checkpoint"
        peak = max(request_tokens(r) for r in model.requests)
        assert peak + policy.output_reserve < WINDOW
        grown = sum(len(json.dumps(r[1])) for r in model.requests[-1:])
        assert grown < 60_000  # the SDK's own input would be ~130k characters by now
        assert [t.model_dump() for t in session.log.latest_todos] == LATER
        session.close()
        check_log(list(read_events(tmp_path / "s.jsonl")))

    def test_resume_from_the_log_alone(self, tmp_path: Path) -> None:
        """A new process, a new LogSession on the log: its first call sees the Checkpoint."""
        policy = CompactionPolicy(window_tokens=WINDOW)
        first = LogSession("u1", tmp_path / "s.jsonl", policy=policy)
        run(first, ScriptedModel(long_script(30)), "Review the modules.")
        first.close()
        model = ScriptedModel([[text_output("resumed")]])
        again = LogSession("u1", tmp_path / "s.jsonl", policy=policy)
        assert run(again, model, "where were we?").final_output == "resumed"
        checkpoint = checkpoint_of(model.requests[0][1])
        assert checkpoint.current_work == ("Summarize each module",)
        assert checkpoint.pending_jobs == ("Write the report",)
        assert model.requests[0][1][-1] == {"role": "user", "content": "where were we?"}

    @pytest.mark.parametrize(
        "url", ["sqlite:///{tmp}/s.db", "jsonl:///{tmp}/logs"], ids=["sqlite", "jsonl-folder"]
    )
    def test_store_urls_name_the_session(self, tmp_path: Path, url: str) -> None:
        """LogSession(session_id, store URL) logs into that store's session named session_id."""
        where = url.format(tmp=tmp_path)
        session = LogSession("user-7", where, policy=CompactionPolicy(window_tokens=WINDOW))
        run(session, ScriptedModel(long_script(6)), "Review.")
        session.close()
        with Session.open(where, session="user-7") as log:
            assert [t.model_dump() for t in log.latest_todos] == LATER
            assert log.applied_seq > 6


class TestOverflow:
    def test_one_overflow_is_answered_by_one_compaction_and_a_retry(self, tmp_path: Path) -> None:
        """The provider refuses once: the log is compacted, the same call is sent again, once."""
        script = long_script(8)
        script.insert(6, overflow())
        model = ScriptedModel(script)
        # A window the trigger never reaches: only the refusal makes it compact.
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        config = session.run_config(model=model)
        result = asyncio.run(
            Runner.run(agent(model, session), "go", session=session, run_config=config)
        )
        assert result.final_output == "report written"
        assert config.model.retries == 1  # type: ignore[union-attr]
        assert len(session.compactions) == 1
        refused, retried = model.requests[6], model.requests[7]
        assert "# Checkpoint" in json.dumps(retried[1])
        assert len(json.dumps(retried[1])) < len(json.dumps(refused[1]))

    def test_the_refused_size_bounds_the_window_from_then_on(self, tmp_path: Path) -> None:
        """A refusal naming no window: the refused request's size is the window from then on."""
        model, _ = overflow_once()
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        run(session, model, "go")
        refused = session.log.refused_window
        assert refused is not None
        assert refused < 200_000
        assert session._policy().window_tokens <= refused

    def test_a_second_overflow_propagates_in_one_line(self, tmp_path: Path) -> None:
        """Refused again after the retry: RequestOverflowError, one line naming the size."""
        script: list[Step] = [[call("read_file", {"path": f"m{i}.py"}, f"r{i}")] for i in range(4)]
        script += [overflow(), overflow()]
        model = ScriptedModel(script)
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        with pytest.raises(RequestOverflowError) as caught:
            run(session, model, "go")
        message = str(caught.value)
        assert "\n" not in message
        assert f"about {caught.value.request_tokens} tokens" in message
        assert "200000-token window" in message
        assert caught.value.request_tokens > 0
        assert len(model.requests) == 4 + 2  # four answered, then exactly two sends refused
        refusals = [e for e in read_events(tmp_path / "s.jsonl") if e.type == "context/overflow"]
        assert len(refusals) == 1

    @pytest.mark.parametrize(
        "usage",
        [
            Usage(requests=1, input_tokens=-5, output_tokens=1),
            Usage(requests=1, input_tokens=10**5000, output_tokens=1),
        ],
        ids=["negative", "huge"],
    )
    def test_usage_never_loses_an_answered_response(self, tmp_path: Path, usage: Usage) -> None:
        """A response whose usage cannot be logged is still the run's answer."""

        class Odd(ScriptedModel):
            async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
                answered = await super().get_response(*args, **kwargs)
                return ModelResponse(output=answered.output, usage=usage, response_id=None)

        session = LogSession("u1", tmp_path / "s.jsonl")
        result = run(session, Odd([[text_output("fine")]]), "go")
        assert result.final_output == "fine"
        assert not [e for e in read_events(tmp_path / "s.jsonl") if e.type == "usage/report"]


class NamedProvider(ModelProvider):
    """Resolves one model name to a scripted model (a user's own provider)."""

    def __init__(self, name: str, model: Model) -> None:
        self.name, self.model = name, model
        self.asked: list[str | None] = []

    def get_model(self, model_name: str | None) -> Model:
        self.asked.append(model_name)
        assert model_name == self.name
        return self.model


def overflow_once(steps: int = 8) -> tuple[ScriptedModel, list[Step]]:
    """A scripted model refused as too long at its 7th call (once)."""
    script = long_script(steps)
    script.insert(6, overflow())
    return ScriptedModel(script), script


def assert_answered_once(model: ScriptedModel, session: LogSession, result: Any) -> None:
    """One refusal: one compaction, the call sent again once with the Checkpoint, and smaller."""
    assert result.final_output == "report written"
    assert session.retries == 1
    assert len(session.compactions) == 1
    assert len(model.requests) == 9  # eight answered calls and the refused one
    refused, retried = model.requests[6], model.requests[7]
    assert "# Checkpoint" not in json.dumps(refused[1])
    assert "# Checkpoint" in json.dumps(retried[1])
    assert len(json.dumps(retried[1])) < len(json.dumps(refused[1]))


class TestOverflowWithoutRunConfigModel:
    """The model is the agent's (not passed to run_config): an overflow is still answered."""

    def test_a_model_object_on_the_agent_via_session_agent(self, tmp_path: Path) -> None:
        """Agent(model=SomeModel(...)) run as session.agent(agent): compacted once, retried once."""
        model, _ = overflow_once()
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        mine = agent(model, session)
        guarded = session.agent(mine)
        assert mine.model is model  # the user's agent is left as it was
        result = asyncio.run(
            Runner.run(guarded, "go", session=session, run_config=session.run_config())
        )
        assert_answered_once(model, session, result)

    def test_a_model_object_on_a_handoff_agent_is_guarded_too(self, tmp_path: Path) -> None:
        """The agent handed off to has its own model object: session.agent guards it as well."""
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        worker_model, _ = overflow_once()
        worker = agent(worker_model, session)
        front = Agent(name="front", instructions="Hand off.", model=worker_model, handoffs=[worker])
        guarded = session.agent(front)
        (handoff,) = guarded.handoffs
        assert isinstance(handoff, Agent)
        assert handoff is not worker
        assert type(handoff.model).__name__ == "OverflowGuard"
        assert type(guarded.model).__name__ == "OverflowGuard"
        assert worker.model is worker_model
        assert front.handoffs == [worker]
        twice = session.agent(guarded)
        assert type(twice.model).__name__ == "OverflowGuard"
        assert twice.model.model is worker_model  # type: ignore[union-attr]  # not guarded twice

    def test_a_model_name_on_the_agent_via_the_run_configs_provider(self, tmp_path: Path) -> None:
        """Agent(model="name") resolved by the user's model_provider: the provider is guarded."""
        model, _ = overflow_once()
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        provider = NamedProvider("scripted-1", model)
        named = Agent(name="a", instructions="Work through the plan.", model="scripted-1",
                      tools=[*session.tools(), read_file])  # fmt: skip
        config = session.run_config(model_provider=provider)
        assert config.model is None
        result = asyncio.run(Runner.run(named, "go", session=session, run_config=config))
        assert_answered_once(model, session, result)
        assert provider.asked
        assert set(provider.asked) == {"scripted-1"}

    def test_a_real_sdk_model_over_http_refused_by_the_stub(self, tmp_path: Path) -> None:
        """OpenAIChatCompletionsModel on the agent, the stub's 6,000-token window: one retry."""
        script = [Reply(None, tool_calls=[ToolCall("todo_write", {"todos": PLAN})])]
        script += [Reply(None, tool_calls=[ToolCall("read_file", {"path": f"m{i}.py"})])
                   for i in range(7)]  # fmt: skip
        script.append(Reply("report written"))
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))

        async def go(stub: StubModel) -> Any:
            client = AsyncOpenAI(base_url=stub.base_url, api_key="sk-test", max_retries=0)
            model = OpenAIChatCompletionsModel(model="stub-model", openai_client=client)
            mine = Agent(name="a", instructions="Work.", model=model,
                         tools=[*session.tools(), read_file])  # fmt: skip
            try:
                return await Runner.run(
                    session.agent(mine), "go", session=session, run_config=session.run_config()
                )
            finally:
                await client.close()

        with StubModel(script, context_window=6_000) as stub:
            result = asyncio.run(go(stub))
        assert result.final_output == "report written"
        assert (session.retries, len(session.compactions), len(stub.refused)) == (1, 1, 1)
        sizes = [prompt_tokens("openai", r.json()) for r in stub.requests]
        refused = stub.refused[0]
        assert sizes[refused] > 6_000
        assert all(size <= 6_000 for i, size in enumerate(sizes) if i != refused)
        assert "# Checkpoint" in json.dumps(stub.requests[refused + 1].json()["messages"])
        assert sizes[refused + 1] < sizes[refused]
        session.close()
        reports = [e for e in read_events(tmp_path / "s.jsonl") if e.type == "usage/report"]
        assert len(reports) == len(script)  # every answered call, none for the refused one
        assert {r.data.model for r in reports} == {"stub-model"}

    def test_without_a_guard_the_refusal_propagates(self, tmp_path: Path) -> None:
        """The control: a bare RunConfig and the agent's own model object let the error through."""
        model, _ = overflow_once()
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        with pytest.raises(openai.BadRequestError):
            asyncio.run(
                Runner.run(agent(model, session), "go", session=session, run_config=RunConfig())
            )
        assert session.retries == 0
        assert session.compactions == []


class TestCounting:
    def test_run_compaction_counts_the_fixed_part(self, tmp_path: Path) -> None:
        """run_compaction adds the last request's instructions and tools to the context."""
        policy = CompactionPolicy(window_tokens=WINDOW)
        session = LogSession("u1", tmp_path / "s.jsonl", policy=policy)
        items: list[Any] = [{"role": "user", "content": "word " * 700} for _ in range(10)]
        asyncio.run(session.add_items(items))
        assert session.log.context_tokens < policy.trigger_tokens
        asyncio.run(session.run_compaction())
        assert session.compactions == []
        session.fixed_tokens = policy.trigger_tokens - session.log.context_tokens
        asyncio.run(session.run_compaction())
        assert len(session.compactions) == 1
        assert session.compactions[0].fixed_tokens == session.fixed_tokens

    def test_provider_usage_is_logged_before_each_reply(self, tmp_path: Path) -> None:
        """The guard logs each answered call's input tokens; enough calls teach the token scale."""

        class Counting(ScriptedModel):
            async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
                response = await super().get_response(*args, **kwargs)
                grown = 5_000 + 1_300 * len(self.requests)  # ~1.3 provider tokens per counted
                response.usage = Usage(requests=1, input_tokens=grown, output_tokens=3)
                return response

        model = Counting(long_script(14))
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        run(session, model, "go")
        session.close()
        events = list(read_events(tmp_path / "s.jsonl"))
        reports = [e for e in events if e.type == "usage/report"]
        assert len(reports) == 14
        assert [r.data.prompt_tokens for r in reports[:2]] == [6_300, 7_600]
        with Session(tmp_path / "s.jsonl") as log:
            assert log.token_scale is not None

    def test_an_unguarded_model_object_is_warned_about_once(self, tmp_path: Path) -> None:
        """The agent's own model, run_config() without session.agent: one warning naming the fix."""
        model, _ = overflow_once()
        session = LogSession("u1", tmp_path / "s.jsonl", policy=CompactionPolicy(200_000))
        mine = agent(model, session)
        warned = pytest.warns(UnguardedModelWarning, match=r"session\.agent\(agent\)")
        with warned as seen, pytest.raises(openai.BadRequestError):  # unguarded: it goes through
            asyncio.run(Runner.run(mine, "go", session=session, run_config=session.run_config()))
        assert len(seen) == 1  # seven model calls, one warning
        assert session.retries == 0
