"""Messages as the official SDKs return them: real openai and anthropic objects, in and back out."""

from __future__ import annotations

import json
from typing import Any

import pytest
from anthropic.types import Message as AnthropicMessage
from anthropic.types import TextBlock, ThinkingBlock, ToolUseBlock, Usage
from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
from contracts.sdk_shapes import problems
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from pydantic import ValidationError

from compaction import (
    FunctionCall,
    HarnessError,
    Message,
    MessageError,
    Session,
    TextPart,
    ToolCall,
    from_anthropic,
    from_openai,
    to_messages,
)
from prompts import BUILTIN_MODES, PromptBuilder, anthropic_request, openai_request

AGENT = BUILTIN_MODES["agent"]

DEEPSEEK_ANSWER = {
    "id": "c1",
    "object": "chat.completion",
    "created": 0,
    "model": "deepseek-reasoner",
    "choices": [
        {
            "index": 0,
            "finish_reason": "tool_calls",
            "message": {
                "role": "assistant",
                "content": "Reading it.",
                "reasoning_content": "The user wants the file.",
                "refusal": None,
                "annotations": [
                    {
                        "type": "url_citation",
                        "url_citation": {
                            "start_index": 0,
                            "end_index": 4,
                            "title": "Docs",
                            "url": "https://example.com",
                        },
                    }
                ],
                "audio": {"id": "a1", "data": "UklGRg==", "expires_at": 9, "transcript": "hi"},
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
                    }
                ],
            },
        }
    ],
}


def openai_message() -> ChatCompletionMessage:
    return ChatCompletion.model_validate(DEEPSEEK_ANSWER).choices[0].message


def anthropic_message() -> AnthropicMessage:
    return AnthropicMessage.model_validate(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5",
            "content": [
                {"type": "thinking", "thinking": "Look first.", "signature": "sig=="},
                {"type": "text", "text": "Reading it."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "a"}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_input_tokens": 4},
        }
    )


CALL = ToolCall(id="call_1", function=FunctionCall(name="read_file", arguments='{"path": "a.py"}'))


class TestFromOpenAI:
    def test_sdk_object(self):
        """A ChatCompletionMessage keeps text and calls; the rest lands in provider_fields."""
        msg = from_openai(openai_message())
        assert (msg.role, msg.content, msg.tool_calls) == ("assistant", "Reading it.", (CALL,))
        extra = msg.provider_fields or {}
        assert extra["reasoning_content"] == "The user wants the file."
        assert extra["annotations"] == DEEPSEEK_ANSWER["choices"][0]["message"]["annotations"]  # type: ignore[index]
        assert extra["audio"] == {
            "id": "a1",
            "data": "UklGRg==",
            "expires_at": 9,
            "transcript": "hi",
        }
        assert "refusal" not in extra  # None is not data

    def test_model_dump_same_as_object(self):
        """The SDK object and its model_dump() give the same message."""
        sdk = openai_message()
        assert from_openai(sdk.model_dump()) == from_openai(sdk)

    def test_refusal_kept(self):
        """A refusal (content None) is kept as a provider field."""
        sdk = ChatCompletionMessage(role="assistant", content=None, refusal="I can't help.")
        msg = from_openai(sdk)
        assert msg.content is None
        assert msg.provider_fields == {"refusal": "I can't help."}

    def test_developer_role_is_system(self):
        """A developer message is recorded as system, its role kept."""
        msg = from_openai({"role": "developer", "content": "Be brief."})
        assert msg.role == "system"
        assert msg.provider_fields == {"role": "developer"}

    def test_unknown_content_part_kept(self):
        """An audio input part is neither text nor image: kept, in order, in provider_fields."""
        audio = {"type": "input_audio", "input_audio": {"data": "AA==", "format": "wav"}}
        msg = from_openai({"role": "user", "content": [{"type": "text", "text": "hi"}, audio]})
        assert msg.text() == "hi"
        assert msg.provider_fields == {"content_parts": [audio]}

    def test_not_sent_back(self, tmp_path):
        """The provider fields stay in the log; the OpenAI request carries none of them."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("read a.py")
            session.add_message(openai_message())
            session.add_message({"role": "tool", "tool_call_id": "call_1", "content": "x = 1"})
            request = openai_request(PromptBuilder(), AGENT, session)
            logged = [json.loads(line) for line in session.path.read_text().splitlines()]
        sent = json.dumps(request)
        for key in ("reasoning_content", "annotations", "audio", "UklGRg=="):
            assert key not in sent
        assert (
            logged[2]["data"]["provider_fields"]["reasoning_content"] == "The user wants the file."
        )


class TestFromAnthropic:
    def test_sdk_message(self):
        """An anthropic Message: text and tool_use read; thinking, id, model, usage kept."""
        (msg,) = from_anthropic(anthropic_message())
        assert msg.role == "assistant"
        assert msg.content == "Reading it."
        assert msg.tool_calls == (
            ToolCall(
                id="toolu_1", function=FunctionCall(name="read_file", arguments='{"path":"a"}')
            ),
        )
        extra = msg.provider_fields or {}
        assert extra["thinking"] == [
            {"type": "thinking", "thinking": "Look first.", "signature": "sig=="}
        ]
        assert (extra["id"], extra["model"], extra["stop_reason"]) == (
            "msg_1",
            "claude-sonnet-4-5",
            "tool_use",
        )
        assert extra["usage"]["cache_read_input_tokens"] == 4  # type: ignore[index,call-overload]

    @pytest.mark.parametrize(
        ("block", "expected"),
        [
            (TextBlock(type="text", text="hello"), Message(role="assistant", content="hello")),
            (
                ToolUseBlock(type="tool_use", id="t1", name="ls", input={}),
                Message(
                    role="assistant",
                    tool_calls=(
                        ToolCall(id="t1", function=FunctionCall(name="ls", arguments="{}")),
                    ),
                ),
            ),
            (
                {"type": "tool_result", "tool_use_id": "t1", "content": "a.py", "is_error": True},
                Message(
                    role="tool",
                    tool_call_id="t1",
                    content="a.py",
                    provider_fields={"is_error": True},
                ),
            ),
            (
                ThinkingBlock(type="thinking", thinking="hm", signature="s"),
                Message(
                    role="assistant",
                    provider_fields={
                        "thinking": [{"type": "thinking", "thinking": "hm", "signature": "s"}]
                    },
                ),
            ),
        ],
    )
    def test_content_blocks(self, block, expected):
        """Each content block alone is read as the message it belongs to."""
        assert from_anthropic(block) == (expected,)

    def test_user_turn_with_results_and_text(self):
        """A user turn with two tool_results and a note: two tool messages, then the user text."""
        param = {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "a",
                    "content": [{"type": "text", "text": "1"}],
                },
                {"type": "tool_result", "tool_use_id": "b", "content": "2"},
                {"type": "text", "text": "both done?"},
            ],
        }
        got = from_anthropic(param)
        assert [(m.role, m.tool_call_id, m.text()) for m in got] == [
            ("tool", "a", "1"),
            ("tool", "b", "2"),
            ("user", None, "both done?"),
        ]

    def test_thinking_sent_back_before_tool_use(self, tmp_path):
        """The Anthropic request replays the thinking block (format needs it); it validates."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("read a")
            session.add_message(anthropic_message())
            session.add_message(
                {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_1",
                            "content": "x",
                            "is_error": True,
                        }
                    ],
                }
            )
            request = anthropic_request(PromptBuilder(), AGENT, session, model="m", max_tokens=64)
        assistant = request["messages"][1]["content"]
        assert [b["type"] for b in assistant] == ["thinking", "text", "tool_use"]
        assert assistant[0]["signature"] == "sig=="
        result = request["messages"][2]["content"][0]
        assert result["is_error"] is True
        assert "usage" not in json.dumps(request["messages"])
        assert problems(MessageCreateParamsNonStreaming, request) == []


class TestSession:
    def test_add_message_takes_every_shape(self, tmp_path):
        """add_message records SDK objects, dumps and dicts of both providers."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("go")
            session.add_message(openai_message())
            session.add_message({"role": "tool", "tool_call_id": "call_1", "content": "ok"})
            session.add_message(anthropic_message())
            last = session.add_message(
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}],
                }
            )
            roles = [m.role for m in session.context.messages]
        assert roles == ["user", "assistant", "tool", "assistant", "tool"]
        assert last.data.tool_call_id == "toolu_1"  # type: ignore[union-attr]

    def test_to_messages_tells_the_provider(self):
        """A dict with Anthropic-only blocks is Anthropic's; a chat dict is OpenAI's."""
        anthropic = {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "x", "input": {}}],
        }
        openai = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
        assert to_messages(anthropic)[0].tool_calls is not None
        assert to_messages(openai)[0].content == (TextPart(text="hi"),)


class TestRejected:
    @pytest.mark.parametrize(
        ("message", "field", "reason"),
        [
            ({"role": "robot", "content": "x"}, "role", "Input should be"),
            ({"content": "x"}, "role", "Field required"),
            ({"role": "tool", "content": "x"}, "message", "tool_call_id"),
            (
                {"role": "assistant", "tool_calls": [{"id": "c", "type": "custom", "custom": {}}]},
                "tool_calls[0].type",
                "only function tool calls",
            ),
            (
                {
                    "role": "assistant",
                    "tool_calls": [{"id": "c", "function": {"name": 3, "arguments": "{}"}}],
                },
                "tool_calls[0].function.name",
                "valid string",
            ),
            (
                {
                    "role": "assistant",
                    "content": [{"type": "tool_use", "id": "t", "name": "x", "input": [1]}],
                },
                "content[0].input",
                "must be an object",
            ),
            (
                {"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]},
                "content[0].source",
                "base64 or url",
            ),
            ({"role": "system", "content": [{"type": "tool_result"}]}, "role", "user or assistant"),
            (42, "message", "not int"),
        ],
    )
    def test_project_error_names_the_field(self, tmp_path, message, field, reason):
        """A rejected message raises MessageError naming the field, never a pydantic error."""
        with Session(tmp_path / "s.jsonl") as session:
            with pytest.raises(MessageError) as info:
                session.add_message(message)
            assert session.applied_seq == 0
        assert info.value.field == field
        assert reason in info.value.reason
        assert isinstance(info.value, HarnessError)
        assert not isinstance(info.value, ValidationError)
        assert info.value.__cause__ is None

    def test_sdk_object_holding_an_untyped_answer_is_rejected_quietly(self, tmp_path):
        """An SDK Message with a string tool_use input is a MessageError, with no warning."""
        # a hostile server's answer; pytest turns a pydantic serializer warning into an error
        bad: Any = '{"todos": ['  # typed as the SDK does not, which is the point
        block = ToolUseBlock.model_construct(id="t", name="x", input=bad, type="tool_use")
        usage = Usage(input_tokens=1, output_tokens=1)
        reply = AnthropicMessage.model_construct(
            id="m", type="message", role="assistant", model="x", content=[block], usage=usage
        )
        with Session(tmp_path / "s.jsonl") as session:
            with pytest.raises(MessageError) as info:
                session.add_message(reply)
            assert session.applied_seq == 0
        assert info.value.field == "content[0].input"
