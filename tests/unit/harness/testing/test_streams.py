"""The stand-in model's streamed answers, read by the official SDKs' streaming clients."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import anthropic
import httpx
import openai
import pytest

from harness.testing import Reply, StubModel, ToolCall, is_summary_request, summary_rule

CALL = ToolCall("todo_write", {"todos": [{"content": "Run tests", "status": "pending"}]}, "c1")
SCRIPT = [Reply("Planning the work now.", tool_calls=[CALL])]
USAGE = {"input_tokens": 120, "output_tokens": 7}


def _sse_data(body: str) -> list[Any]:
    """Return the decoded ``data:`` lines of an SSE body."""
    return [json.loads(line[6:]) for line in body.splitlines() if line.startswith("data: {")]


class TestAnthropicStream:
    def test_sdk_joins_text_and_tool_input(self) -> None:
        """The anthropic SDK's stream gives back the whole text, the call's input and usage."""
        with StubModel([Reply("Planning the work now.", tool_calls=[CALL], usage=USAGE)]) as stub:
            client = anthropic.Anthropic(base_url=stub.root_url, api_key="x")
            with client.messages.stream(
                model="m", max_tokens=10, messages=[{"role": "user", "content": "go"}]
            ) as stream:
                message = stream.get_final_message()
        assert message.content[0].type == "text"
        assert message.content[0].text == "Planning the work now."
        assert message.content[1].type == "tool_use"
        assert message.content[1].input == CALL.arguments_object()
        assert message.stop_reason == "tool_use"
        assert message.usage.input_tokens == 120
        assert message.usage.output_tokens == 7
        assert stub.requests[0].json()["stream"] is True

    def test_beta_path_streams(self) -> None:
        """``/v1/messages?beta=true`` (what Claude Code posts to) streams the same events."""
        with StubModel([Reply("hi")]) as stub:
            body = {"stream": True, "messages": [{"role": "user", "content": "go"}]}
            got = httpx.post(stub.root_url + "/v1/messages?beta=true", json=body)
        events = [e["type"] for e in _sse_data(got.text)]
        assert got.headers["content-type"] == "text/event-stream"
        assert events[0] == "message_start"
        assert events[-2:] == ["message_delta", "message_stop"]

    def test_error_status_raises_in_the_sdk(self) -> None:
        """A scripted error status reaches a streaming client as the SDK's status error."""
        with StubModel([Reply(status=529)]) as stub:
            client = anthropic.Anthropic(base_url=stub.root_url, api_key="x", max_retries=0)
            with pytest.raises(anthropic.APIStatusError) as caught:
                client.messages.create(
                    model="m",
                    max_tokens=10,
                    messages=[{"role": "user", "content": "go"}],
                    stream=True,
                )
        assert caught.value.status_code == 529


class TestResponsesStream:
    def test_sdk_final_response(self) -> None:
        """The openai SDK's Responses stream ends in the whole output with usage."""
        with StubModel(SCRIPT) as stub:
            client = openai.OpenAI(base_url=stub.base_url, api_key="x")
            with client.responses.stream(model="m", input="go") as stream:
                response = stream.get_final_response()
        assert response.output_text == "Planning the work now."
        calls = [item for item in response.output if item.type == "function_call"]
        assert [(c.name, json.loads(c.arguments), c.call_id) for c in calls] == [
            ("todo_write", CALL.arguments_object(), "c1")
        ]
        assert response.usage is not None
        assert response.usage.input_tokens > 0

    def test_deltas_join_to_the_text(self) -> None:
        """The text deltas of a Responses stream join to the reply's text."""
        with StubModel([Reply("a longer answer to cut")]) as stub:
            client = openai.OpenAI(base_url=stub.base_url, api_key="x")
            events = list(client.responses.create(model="m", input="go", stream=True))
        deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
        assert len(deltas) > 1
        assert "".join(deltas) == "a longer answer to cut"
        assert events[-1].type == "response.completed"


class TestChatStream:
    def test_chunks_join_to_content_and_call(self) -> None:
        """Chat-completions chunks join to the text and the call's arguments; usage comes last."""
        with StubModel(SCRIPT) as stub:
            client = openai.OpenAI(base_url=stub.base_url, api_key="x")
            chunks = list(
                client.chat.completions.create(
                    model="m",
                    messages=[{"role": "user", "content": "go"}],
                    stream=True,
                    stream_options={"include_usage": True},
                )
            )
        text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        arguments = "".join(
            call.function.arguments or ""
            for c in chunks
            if c.choices
            for call in c.choices[0].delta.tool_calls or []
            if call.function is not None
        )
        finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
        assert text == "Planning the work now."
        assert json.loads(arguments) == CALL.arguments_object()
        assert finishes[-1] == "tool_calls"
        assert chunks[-1].usage is not None


class TestGemini:
    PATH = "/v1beta/models/gemini-2.5-pro"

    def test_generate_content(self) -> None:
        """``:generateContent`` answers text and functionCall parts with usageMetadata."""
        usage = {"input_tokens": 60000, "output_tokens": 5}
        with StubModel([Reply("ok", tool_calls=[CALL], usage=usage)]) as stub:
            got = httpx.post(stub.root_url + self.PATH + ":generateContent", json={}).json()
        parts = got["candidates"][0]["content"]["parts"]
        assert parts == [
            {"text": "ok"},
            {"functionCall": {"name": "todo_write", "args": CALL.arguments_object(), "id": "c1"}},
        ]
        assert got["usageMetadata"]["promptTokenCount"] == 60000
        assert got["modelVersion"] == "gemini-2.5-pro"

    def test_stream_generate_content_sse(self) -> None:
        """``:streamGenerateContent?alt=sse`` sends chunks; the last closes with usage."""
        with StubModel(SCRIPT) as stub:
            url = stub.root_url + self.PATH + ":streamGenerateContent?alt=sse"
            got = httpx.post(url, json={"contents": [{"role": "user", "parts": [{"text": "go"}]}]})
        chunks = _sse_data(got.text)
        parts = [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]
        assert "".join(p.get("text", "") for p in parts) == "Planning the work now."
        assert [p["functionCall"]["name"] for p in parts if "functionCall" in p] == ["todo_write"]
        assert chunks[-1]["candidates"][0]["finishReason"] == "STOP"
        assert chunks[-1]["usageMetadata"]["promptTokenCount"] > 0
        assert stub.requests_to("gemini") == stub.requests

    def test_unknown_method_is_404(self) -> None:
        """A Gemini path with another method is not answered."""
        with StubModel(SCRIPT) as stub:
            got = httpx.post(stub.root_url + self.PATH + ":embedContent", json={})
        assert got.status_code == 404


SUMMARY_REQUESTS: list[tuple[str, Mapping[str, Any]]] = [
    (
        "anthropic",
        {"messages": [{"role": "user", "content": "CRITICAL: Respond with TEXT ONLY. x"}]},
    ),
    (
        "responses",
        {
            "input": [
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": "CONTEXT CHECKPOINT COMPACTION"}],
                }
            ]
        },
    ),
    (
        "gemini",
        {
            "systemInstruction": {"parts": [{"text": "distil into <state_snapshot>"}]},
            "contents": [{"role": "user", "parts": [{"text": "Generate"}]}],
        },
    ),
]


class TestRules:
    @pytest.mark.parametrize(("api", "body"), SUMMARY_REQUESTS)
    def test_summary_requests_are_recognised(self, api: str, body: Mapping[str, Any]) -> None:
        """Each CLI's summary request is recognised, and an ordinary request is not."""
        assert is_summary_request(api, body)
        assert not is_summary_request(api, {"messages": [], "input": [], "contents": []})

    def test_rule_answers_without_using_a_step(self) -> None:
        """A summary request gets the scripted summary; the script stays where it was."""
        rules = [summary_rule("SUMMARY-X")]
        with StubModel([Reply("first"), Reply("second")], rules=rules) as stub:
            client = anthropic.Anthropic(base_url=stub.root_url, api_key="x")

            def ask(text: str) -> str:
                message = client.messages.create(
                    model="m", max_tokens=5, messages=[{"role": "user", "content": text}]
                )
                block = message.content[0]
                assert block.type == "text"
                return block.text

            got = [ask("go"), ask("CRITICAL: Respond with TEXT ONLY."), ask("again")]
        assert got == ["first", "SUMMARY-X", "second"]
