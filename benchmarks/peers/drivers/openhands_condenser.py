"""Peer: the OpenHands SDK agent loop with its `LLMSummarizingCondenser` (needs Python >= 3.12).

The agent model is the SDK's own fake, `openhands.sdk.testing.TestLLM`, subclassed to answer each
call with the session's next scripted step and to record the prompt; the condenser gets a second
one that answers with the fake summarizer. Todo writes become calls of OpenHands' own todo tool,
``task_tracker`` (``command="plan"`` with the full ``task_list``; ``pending`` is its ``todo``,
``completed`` its ``done``). The session's other tools are scripted tools whose outputs come from
the session, in call order per tool and arguments (the SDK runs tool calls one at a time).

Variants: ``tokens`` (``max_tokens=budget``, the other settings at their defaults: condense when
the view passes the budget, down to half of it) and ``defaults`` (no token limit: condense past
240 events). Token counts use o200k_base, like every other peer, over the whole request: the
condenser's counter sees the messages, and the tool specs the agent last sent are added to it.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, ClassVar

from openhands.sdk import LLM, Agent, Conversation, Message, TextContent, Tool
from openhands.sdk.context.condenser import LLMSummarizingCondenser
from openhands.sdk.conversation import ConversationExecutionStatus
from openhands.sdk.llm import LLMResponse, MessageToolCall
from openhands.sdk.testing import TestLLM
from openhands.sdk.tool import Action, Observation, ToolDefinition, ToolExecutor, register_tool
from openhands.tools.task_tracker import TaskTrackerTool
from pydantic import PrivateAttr

from benchmarks.peers.drivers._common import (
    TODO_TOOL,
    Recorder,
    Script,
    StepQueue,
    count_text,
    load_script,
    parse_args,
    summarize,
    versions,
    write_record,
)
from benchmarks.peers.drivers._open_actions import open_action_type, recorded_arguments

TODO_NAME = "task_tracker"
STATUS = {"pending": "todo", "in_progress": "in_progress", "completed": "done"}
"""Our statuses in the task tracker's words."""
VARIANTS: tuple[str, ...] = ("tokens", "defaults")


def _messages(llm: LLM, messages: list[Message]) -> list[dict[str, Any]]:
    out = []
    for message in llm.format_messages_for_llm(messages):
        content = message.get("content")
        if isinstance(content, list) and all(
            isinstance(b, dict) and b.get("type") == "text" for b in content
        ):
            message = {**message, "content": "".join(b["text"] for b in content)}
        out.append({k: v for k, v in message.items() if k != "cache_control"})
    return out


class ScriptedLLM(TestLLM):
    """The agent's model: the next scripted step per call, each prompt recorded."""

    __test__: ClassVar[bool] = False
    _queue: StepQueue | None = PrivateAttr(default=None)
    _recorder: Recorder | None = PrivateAttr(default=None)

    def completion(
        self, messages: list[Message], tools: Sequence[Any] | None = None, **kwargs: object
    ) -> LLMResponse:
        """Record the prompt and answer with the next scripted step."""
        queue, recorder = self._queue, self._recorder
        assert queue is not None, "set _queue first"
        assert recorder is not None, "set _recorder first"
        step = queue.pop()
        specs = [t.to_openai_tool(add_security_risk_prediction=True) for t in tools or ()]
        recorder.record(_messages(self, messages), specs, overrun=step is None)
        if step is None:
            reply = Message(role="assistant", content=[TextContent(text="Done.")])
        else:
            calls = [_call(c["id"], c["name"], c["arguments"]) for c in step.tool_calls]
            reply = Message(
                role="assistant",
                content=[TextContent(text=step.content)],
                tool_calls=calls or None,
            )
        self._scripted_responses.append(reply)
        return super().completion(messages, tools, **kwargs)

    def get_token_count(self, messages: list[Message], *args: object, **kwargs: object) -> int:
        """Count the whole request with o200k_base: the messages and the agent's tool specs."""
        recorder = self._recorder
        assert recorder is not None, "set _recorder first"
        return count_text(_messages(self, messages)) + recorder.tool_tokens()


class SummaryLLM(TestLLM):
    """The condenser's model: the fake summarizer's text."""

    __test__: ClassVar[bool] = False
    _recorder: Recorder | None = PrivateAttr(default=None)
    _kind: str = PrivateAttr(default="structural")

    def completion(
        self, messages: list[Message], tools: Sequence[Any] | None = None, **kwargs: object
    ) -> LLMResponse:
        """Answer a summary request with the fake summarizer."""
        recorder = self._recorder
        assert recorder is not None, "set _recorder first"
        sent = _messages(self, messages)
        recorder.record_summary(sent)
        text = "\n".join(str(m.get("content") or "") for m in sent)
        summary = summarize(self._kind, text)
        self._scripted_responses.append(
            Message(role="assistant", content=[TextContent(text=summary)])
        )
        return super().completion(messages, tools, **kwargs)


def _call(call_id: str, name: str, arguments: dict[str, Any]) -> MessageToolCall:
    if name == TODO_TOOL:
        name = TODO_NAME
        tasks = [
            {"title": t["content"], "notes": "", "status": STATUS[t["status"]]}
            for t in arguments["todos"]
        ]
        arguments = {"command": "plan", "task_list": tasks}
    text = json.dumps(arguments, ensure_ascii=False)
    return MessageToolCall(id=call_id, name=name, arguments=text, origin="completion")


class _Outputs:
    """Scripted tool outputs, handed out in call order per tool name and arguments."""

    def __init__(self, script: Script) -> None:
        self._queues: dict[tuple[str, str], deque[str]] = {}
        for turn in script.turns:
            for step in turn.steps:
                for call in step.tool_calls:
                    key = (call["name"], _key(call["arguments"]))
                    self._queues.setdefault(key, deque()).append(step.results[call["id"]])

    def pop(self, name: str, arguments: dict[str, Any]) -> str:
        queue = self._queues.get((name, _key(arguments)))
        return queue.popleft() if queue else f"{name}: no scripted output"


def _key(arguments: dict[str, Any]) -> str:
    given = {k: v for k, v in arguments.items() if v is not None}
    return json.dumps(given, sort_keys=True, ensure_ascii=False)


class ScriptedObservation(Observation):
    """A scripted tool's output."""


def _tool_class(spec: dict[str, Any], outputs: _Outputs) -> type[ToolDefinition]:
    """Build a ToolDefinition subclass for one session tool spec.

    Its action type (`_open_actions.open_action_type`) declares the spec's properties and
    accepts every recorded argument as given, those an open spec does not declare included.
    """
    name = spec["name"]
    parameters: dict[str, Any] = spec.get("parameters") or {}
    camel = "".join(part.title() for part in name.split("_"))
    action = open_action_type(f"{camel}Action", parameters, Action)

    class Executor(ToolExecutor):
        def __call__(self, act: Action, conversation: object = None) -> ScriptedObservation:
            args = recorded_arguments(act, parameters)
            observation: ScriptedObservation = ScriptedObservation.from_text(
                text=outputs.pop(name, args)
            )
            return observation

    def create(
        cls: type[ToolDefinition], /, conv_state: object = None, **params: object
    ) -> list[ToolDefinition]:
        return [
            cls(
                description=spec.get("description") or name,
                action_type=action,
                observation_type=ScriptedObservation,
                executor=Executor(),
            )
        ]

    return type(f"{camel}Tool", (ToolDefinition,), {"name": name, "create": classmethod(create)})


def main() -> None:
    """Replay one session through the OpenHands agent loop and write the record."""
    args = parse_args()
    if args.variant not in VARIANTS:
        raise SystemExit(f"unknown variant {args.variant!r}; choose one of {VARIANTS}")
    script = load_script(args.session)
    queue = StepQueue(script)
    recorder = Recorder()
    outputs = _Outputs(script)
    names = []
    for spec in script.tools:
        register_tool(spec["name"], _tool_class(spec, outputs))
        names.append(spec["name"])
    llm = ScriptedLLM(model="scripted-fake", usage_id="agent")
    llm._queue, llm._recorder = queue, recorder
    summary_llm = SummaryLLM(model="scripted-fake", usage_id="condenser")
    summary_llm._recorder, summary_llm._kind = recorder, args.summarizer
    options = {"max_tokens": args.budget} if args.variant == "tokens" else {}
    condenser = LLMSummarizingCondenser(llm=summary_llm, **options)
    tools = [Tool(name=TaskTrackerTool.name), *(Tool(name=n) for n in names)]
    agent = Agent(llm=llm, tools=tools, condenser=condenser)
    with tempfile.TemporaryDirectory(prefix="openhands-peer-") as workspace:
        conversation = Conversation(agent=agent, workspace=workspace, visualizer=None)
        started = time.perf_counter()
        for index, turn in enumerate(script.turns):
            queue.start_turn(index)
            conversation.send_message(turn.user)
            conversation.run()
            while queue.remaining():  # the recorded turn went on past a reply without tool calls
                with conversation.state:
                    conversation.state.execution_status = ConversationExecutionStatus.IDLE
                conversation.run()
        wall = time.perf_counter() - started
    write_record(
        args,
        recorder,
        peer="openhands-condenser",
        wall_time_s=wall,
        versions=versions("openhands-sdk", "openhands-tools", "litellm"),
        extra={"overruns": queue.overruns},
    )


if __name__ == "__main__":
    main()
