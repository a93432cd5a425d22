"""Requests: OpenAI chat completions and Anthropic messages, checked against the SDKs' types."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from contracts.sdk_shapes import problems

from compaction import (
    CheckpointData,
    FunctionCall,
    ImagePart,
    Message,
    Session,
    TextPart,
    ToolCall,
)
from compaction.events import ImageURL
from prompts import (
    BUILTIN_MODES,
    CACHE_CONTROL,
    MAX_CACHE_BREAKPOINTS,
    CacheBreakpoint,
    Environment,
    PromptBuilder,
    ToolCatalog,
    anthropic_message_sources,
    anthropic_messages,
    anthropic_request,
    cache_breakpoints,
    dumps,
    load_tools,
    openai_request,
)

EXAMPLE_TOOLS = Path(__file__).resolve().parents[3] / "prompts" / "examples" / "coding_tools.json"
AGENT, PLAN = BUILTIN_MODES["agent"], BUILTIN_MODES["plan"]
BUILDER = PromptBuilder(
    ToolCatalog(load_tools(EXAMPLE_TOOLS)),
    environment=Environment(date="2026-11-30", cwd="/repo", variables={"shell": "bash"}),
)


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def conversation(session: Session) -> None:
    """A turn with parallel tool calls, a checkpoint, an image, a system note, text answers."""
    session.start_turn("Fix the failing test", mode="agent")
    session.add_message({"role": "assistant", "content": "Old work, to be compacted."})
    session.append(
        CheckpointData(
            text="## Goal\nFix the failing test",
            first_seq=1,
            last_seq=3,
            tokens_before=100,
            tokens_after=20,
            summarizer="template",
        )
    )
    session.add_message(Message(role="system", content="Note from the operator."))
    session.add_message(
        Message(
            role="user",
            content=(
                TextPart(text="Here is the screenshot"),
                ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo=")),
            ),
        )
    )
    session.add_message(
        Message(
            role="assistant",
            content="Reading the test.",
            tool_calls=(
                _call("call_1", "read_file", '{"path": "tests/test_x.py"}'),
                _call("call_2", "grep", "not json"),
            ),
        )
    )
    session.add_message(Message(role="tool", tool_call_id="call_1", content="def test_x(): ..."))
    session.add_message(Message(role="tool", tool_call_id="call_2", content=""))
    session.add_message({"role": "user", "content": "Also check the docs."})
    session.add_message({"role": "assistant", "content": "Done: the test passes."})


@pytest.fixture
def session(log_path: Path) -> Iterator[Session]:
    with Session(log_path) as s:
        conversation(s)
        yield s


def validate(params_type: Any, request: dict[str, Any]) -> None:
    """Check a request against an SDK TypedDict: keys, types, no unknown keys."""
    assert problems(params_type, json.loads(json.dumps(request))) == []


class TestOpenAI:
    def test_validates_against_the_sdk(self, session: Session) -> None:
        """The request validates as the openai SDK's CompletionCreateParamsNonStreaming."""
        types = pytest.importorskip("openai.types.chat.completion_create_params")
        request = openai_request(BUILDER, AGENT, session, model="gpt-test")
        validate(types.CompletionCreateParamsNonStreaming, request)

    def test_layout(self, session: Session) -> None:
        """System prompt first, log system messages next, then the checkpoint, then the turn."""
        messages = openai_request(BUILDER, PLAN, session)["messages"]
        assert messages[0] == {"role": "system", "content": BUILDER.system_prompt(PLAN)}
        assert messages[1] == {"role": "system", "content": "Note from the operator."}
        assert messages[2]["role"] == "user"
        assert "## Goal\nFix the failing test" in messages[2]["content"]
        assert "Old work" not in dumps(messages)
        assert messages[4]["tool_calls"][0]["function"]["name"] == "read_file"
        assert messages[5] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": "def test_x(): ...",
        }

    def test_skeleton(self) -> None:
        """Without a context the request holds only the system message and the tools."""
        request = openai_request(BUILDER, AGENT)
        assert [m["role"] for m in request["messages"]] == ["system"]
        assert [t["function"]["name"] for t in request["tools"]][-1] == "todo_write"
        assert "model" not in request


class TestAnthropic:
    def test_validates_against_the_sdk(self, session: Session) -> None:
        """The request validates as the anthropic SDK's MessageCreateParamsNonStreaming."""
        types = pytest.importorskip("anthropic.types.message_create_params")
        request = anthropic_request(BUILDER, AGENT, session, model="claude-test", max_tokens=1024)
        validate(types.MessageCreateParamsNonStreaming, request)

    def test_cache_control_on_the_last_stable_layer(self) -> None:
        """Core, then mode block with the breakpoint, then the environment after it."""
        layers = BUILDER.layers(PLAN)
        system = anthropic_request(BUILDER, PLAN)["system"]
        assert [b["text"] for b in system] == [layers.core, layers.mode, layers.environment]
        assert [b.get("cache_control") for b in system] == [None, CACHE_CONTROL, None]

    def test_tool_calls_become_blocks(self, session: Session) -> None:
        """tool_calls become tool_use; tool messages merge into one user turn of tool_results."""
        request = anthropic_request(BUILDER, AGENT, session)
        messages = request["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
        assert messages[0]["content"][2]["source"] == {
            "type": "base64",
            "media_type": "image/png",
            "data": "iVBORw0KGgo=",
        }
        text, use1, use2 = messages[1]["content"]
        assert text == {"type": "text", "text": "Reading the test."}
        assert use1 == {
            "type": "tool_use",
            "id": "call_1",
            "name": "read_file",
            "input": {"path": "tests/test_x.py"},
        }
        assert use2["input"] == {"_raw_arguments": "not json"}
        results = messages[2]["content"]
        assert results[0] == {
            "type": "tool_result",
            "tool_use_id": "call_1",
            "content": [{"type": "text", "text": "def test_x(): ..."}],
        }
        assert results[1] == {"type": "tool_result", "tool_use_id": "call_2"}
        assert results[2] == {"type": "text", "text": "Also check the docs."}
        assert request["system"][-1] == {"type": "text", "text": "Note from the operator."}

    def test_url_images_and_empty_messages(self) -> None:
        """A URL image keeps its URL; a message with nothing to say is dropped."""
        image = Message(
            role="user", content=(ImagePart(image_url=ImageURL(url="https://x/y.png")),)
        )
        empty = Message(role="assistant", content="")
        out = anthropic_messages([image, empty])
        assert out == [
            {
                "role": "user",
                "content": [{"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}],
            }
        ]


class TestSerialization:
    def test_same_inputs_same_bytes(self, log_path: Path, tmp_path: Path) -> None:
        """Two sessions with the same history give byte-identical requests."""
        other = tmp_path / "other.jsonl"
        with Session(log_path) as first, Session(other) as second:
            conversation(first)
            conversation(second)
            for build in (openai_request, anthropic_request):
                assert dumps(build(BUILDER, AGENT, first)) == dumps(build(BUILDER, AGENT, second))

    def test_sorted_keys(self) -> None:
        """Keys are sorted at every level."""
        text = dumps({"b": 1, "a": {"d": 2, "c": 3}})
        assert text == '{"a":{"c":3,"d":2},"b":1}'


class TestShapeChecker:
    @pytest.mark.parametrize(
        ("module", "name", "mutate", "match"),
        [
            (
                "openai.types.chat.completion_create_params",
                "CompletionCreateParamsNonStreaming",
                lambda r: r["messages"][0].update(cache_control={"type": "ephemeral"}),
                "unknown key 'cache_control'",
            ),
            (
                "openai.types.chat.completion_create_params",
                "CompletionCreateParamsNonStreaming",
                lambda r: r["messages"].append({"role": "tool", "content": "x"}),
                "missing 'tool_call_id'",
            ),
            (
                "anthropic.types.message_create_params",
                "MessageCreateParamsNonStreaming",
                lambda r: r["system"][0].update(cache_control={"type": "forever"}),
                "'forever' is not one of",
            ),
            (
                "anthropic.types.message_create_params",
                "MessageCreateParamsNonStreaming",
                lambda r: r["tools"][0].pop("input_schema"),
                "missing 'input_schema'",
            ),
        ],
    )
    def test_catches_bad_requests(self, module: str, name: str, mutate: Any, match: str) -> None:
        """The SDK shape check rejects unknown keys, missing keys and bad literals."""
        params_type = getattr(pytest.importorskip(module), name)
        if module.startswith("openai"):
            request = openai_request(BUILDER, AGENT, model="m")
        else:
            request = anthropic_request(BUILDER, AGENT, model="m", max_tokens=10)
            request["messages"] = [{"role": "user", "content": "hi"}]
        assert problems(params_type, request) == []
        mutate(request)
        found = problems(params_type, request)
        assert any(match in p for p in found), found


class TestAnthropicBreakpoints:
    def test_rolling_breakpoint_on_the_last_block(self, session: Session) -> None:
        """The last block of the last message carries cache_control; no other message does."""
        messages = anthropic_request(BUILDER, AGENT, session)["messages"]
        marked = [
            (i, j)
            for i, m in enumerate(messages)
            for j, b in enumerate(m["content"])
            if "cache_control" in b
        ]
        assert marked == [(len(messages) - 1, len(messages[-1]["content"]) - 1)]
        assert messages[-1]["content"][-1]["cache_control"] == CACHE_CONTROL

    def test_breakpoints_read_back_within_the_limit(self, session: Session) -> None:
        """cache_breakpoints finds the system one and the rolling one: 2 of the 4 allowed."""
        request = anthropic_request(BUILDER, AGENT, session)
        last = len(request["messages"]) - 1
        assert cache_breakpoints(request) == (
            CacheBreakpoint("system", 1),
            CacheBreakpoint("messages", last, len(request["messages"][-1]["content"]) - 1),
        )
        assert len(cache_breakpoints(request)) <= MAX_CACHE_BREAKPOINTS

    @pytest.mark.parametrize(
        ("last", "kind"),
        [
            (Message(role="assistant", tool_calls=(_call("c9", "ls", "{}"),)), "tool_use"),
            (Message(role="tool", tool_call_id="c9", content="x"), "tool_result"),
            (Message(role="user", content="go on"), "text"),
        ],
    )
    def test_rolling_breakpoint_on_any_block_kind(self, last: Message, kind: str) -> None:
        """Whatever block ends the request (tool_use, tool_result, text) carries it."""
        first = Message(role="assistant", tool_calls=(_call("c9", "ls", "{}"),))
        history = [Message(role="user", content="hi")]
        history += [first] if last.role == "tool" else []
        out = anthropic_messages([*history, last], rolling_breakpoint=True)
        assert out[-1]["content"][-1]["type"] == kind
        assert out[-1]["content"][-1]["cache_control"] == CACHE_CONTROL
        assert sum("cache_control" in b for m in out for b in m["content"]) == 1

    def test_prompt_alone_has_only_the_system_breakpoint(self) -> None:
        """With no messages there is nothing to roll: one breakpoint, on the mode block."""
        assert cache_breakpoints(anthropic_request(BUILDER, PLAN)) == (
            CacheBreakpoint("system", 1),
        )

    def test_validates_with_breakpoints(self, session: Session) -> None:
        """A request with both breakpoints still validates against the anthropic SDK types."""
        types = pytest.importorskip("anthropic.types.message_create_params")
        request = anthropic_request(BUILDER, AGENT, session, model="m", max_tokens=64)
        assert request["messages"][-1]["content"][-1]["cache_control"] == CACHE_CONTROL
        validate(types.MessageCreateParamsNonStreaming, request)

    def test_more_than_four_rejected(self) -> None:
        """A request with five breakpoints is refused by cache_breakpoints."""
        block = {"type": "text", "text": "x", "cache_control": CACHE_CONTROL}
        request = {"system": [block] * 3, "messages": [{"role": "user", "content": [block] * 2}]}
        with pytest.raises(ValueError, match="5 cache_control breakpoints; Anthropic allows 4"):
            cache_breakpoints(request)

    def test_sources_follow_role_merging(self) -> None:
        """Each Anthropic message maps to the last OpenAI-style message merged into it."""
        call = _call("c1", "ls", "{}")
        messages = [
            Message(role="user", content="a"),
            Message(role="assistant", tool_calls=(call,)),
            Message(role="tool", tool_call_id="c1", content="r"),
            Message(role="user", content="b"),
            Message(role="assistant", content=""),
            Message(role="assistant", content="done"),
        ]
        assert anthropic_message_sources(messages) == [0, 1, 3, 5]
