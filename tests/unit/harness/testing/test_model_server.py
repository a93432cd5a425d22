"""The loopback stand-in model speaks chat-completions and messages well enough for the SDKs."""

from __future__ import annotations

import json
import re
import socket
import threading
from collections.abc import Mapping
from typing import Any

import anthropic
import httpx
import openai
import pytest

from compaction import is_context_overflow
from harness.testing import Reply, StubModel, ToolCall


class TestStubModel:
    def test_official_sdk_reads_the_scripted_answer(self) -> None:
        """openai.OpenAI against the stub gets the scripted text, and DeepSeek's usage fields."""
        usage = {"prompt_tokens": 100, "completion_tokens": 5, "total_tokens": 105,
                 "prompt_cache_hit_tokens": 64, "prompt_cache_miss_tokens": 36}  # fmt: skip
        with StubModel([Reply("first"), Reply("second", usage=usage)]) as stub:
            client = openai.OpenAI(base_url=stub.base_url, api_key="sk-stub", max_retries=0)
            messages: list[openai.types.chat.ChatCompletionMessageParam] = [
                {"role": "user", "content": "hi"}
            ]
            one = client.chat.completions.create(model="m", messages=messages)
            two = client.chat.completions.create(model="m", messages=messages)
            client.close()
        assert one.choices[0].message.content == "first"
        assert two.choices[0].message.content == "second"
        assert two.usage is not None
        assert two.usage.model_extra == {
            "prompt_cache_hit_tokens": 64,
            "prompt_cache_miss_tokens": 36,
        }
        assert [r.json()["messages"] for r in stub.requests] == [messages, messages]
        assert stub.requests[0].headers["authorization"] == "Bearer sk-stub"

    def test_binds_loopback_only(self) -> None:
        """The server listens on 127.0.0.1."""
        with StubModel([Reply("x")]) as stub:
            assert stub.base_url.startswith("http://127.0.0.1:")

    def test_stop_releases_a_hanging_reply(self) -> None:
        """A client blocked on a hanging reply is let go when the server stops."""
        stub = StubModel([Reply(hang=True)], hang_limit=30.0).start()
        failures: list[BaseException] = []

        def call() -> None:
            try:
                httpx.post(stub.base_url + "/chat/completions", json={}, timeout=30.0)
            except httpx.HTTPError as exc:
                failures.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        while not stub.requests:
            caller.join(0.01)
        stub.stop()
        caller.join(10)
        assert not caller.is_alive()
        assert len(failures) == 1

    @pytest.mark.parametrize("path", ["/v1/completions", "/v1/embeddings"])
    def test_other_paths_are_404(self, path: str) -> None:
        """Only chat completions are served."""
        with StubModel([Reply("x")]) as stub:
            response = httpx.post(stub.base_url.removesuffix("/v1") + path, json={})
        assert response.status_code == 404


def anthropic_client(stub: StubModel) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=stub.root_url, api_key="sk-ant-stub", max_retries=0)


def openai_client(stub: StubModel) -> openai.OpenAI:
    return openai.OpenAI(base_url=stub.base_url, api_key="sk-stub", max_retries=0)


USER: list[openai.types.chat.ChatCompletionMessageParam] = [{"role": "user", "content": "hi"}]


class TestScriptedToolCalls:
    def test_openai_sdk_reads_tool_calls(self) -> None:
        """Chat-completions answers carry the scripted tool calls, arguments as JSON text."""
        calls = [
            ToolCall("read_file", {"path": "a.txt"}),
            ToolCall("todo_write", '{"todos": [', "c9"),
        ]
        with StubModel([Reply(None, tool_calls=calls)]) as stub:
            client = openai_client(stub)
            completion = client.chat.completions.create(model="m", messages=USER)
            client.close()
        choice = completion.choices[0]
        assert choice.finish_reason == "tool_calls"
        assert choice.message.content is None
        got = [
            (c.id, c.function.name, c.function.arguments)
            for c in choice.message.tool_calls or []
            if c.type == "function"
        ]
        assert got == [
            ("call_1_0", "read_file", '{"path": "a.txt"}'),
            ("c9", "todo_write", '{"todos": ['),
        ]

    def test_anthropic_sdk_reads_tool_use_blocks(self) -> None:
        """Messages answers carry the text, then one tool_use block per call, input an object."""
        reply = Reply("Reading it.", tool_calls=[ToolCall("read_file", '{"path": "a.txt"}')])
        with StubModel([reply, Reply("Done.")]) as stub:
            client = anthropic_client(stub)
            first = client.messages.create(model="m", max_tokens=64, messages=[USER_A])
            second = client.messages.create(model="m", max_tokens=64, messages=[USER_A])
            client.close()
        assert first.stop_reason == "tool_use"
        assert [b.type for b in first.content] == ["text", "tool_use"]
        block = first.content[1]
        assert block.type == "tool_use"
        assert (block.id, block.name, block.input) == ("toolu_1_0", "read_file", {"path": "a.txt"})
        assert second.stop_reason == "end_turn"
        assert [(b.type, getattr(b, "text", None)) for b in second.content] == [("text", "Done.")]
        assert stub.requests[0].path == "/v1/messages"
        headers = stub.requests[0].headers
        assert "sk-ant-stub" in (headers.get("x-api-key"), headers.get("authorization", "")[7:])
        assert [r.json()["messages"] for r in stub.requests_to("anthropic")] == [[USER_A]] * 2

    def test_a_step_may_answer_from_the_request(self) -> None:
        """A scripted function gets the decoded request and its reply is sent."""

        def echo(request: Mapping[str, Any]) -> Reply:
            return Reply(f"{len(request['messages'])} messages, model {request['model']}")

        with StubModel([echo]) as stub:
            client = openai_client(stub)
            completion = client.chat.completions.create(model="m-1", messages=USER * 3)
            client.close()
        assert completion.choices[0].message.content == "3 messages, model m-1"

    def test_anthropic_error_body(self) -> None:
        """A scripted status on /v1/messages sends Anthropic's error shape, read by the SDK."""
        with StubModel([Reply(status=529)]) as stub:
            client = anthropic_client(stub)
            with pytest.raises(anthropic.APIStatusError) as caught:
                client.messages.create(model="m", max_tokens=8, messages=[USER_A])
            client.close()
        assert caught.value.status_code == 529
        error = {"type": "api_error", "message": "scripted status 529"}
        assert caught.value.body == {"type": "error", "error": error}


USER_A: anthropic.types.MessageParam = {"role": "user", "content": "hi"}
SYSTEM = [{"type": "text", "text": "s" * 8000, "cache_control": {"type": "ephemeral"}}]


class TestPrefixCacheUsage:
    @pytest.mark.parametrize(
        ("chars", "cached"), [(4095, 0), (4096, 1024), (4607, 1024), (4608, 1152), (6000, 1408)]
    )
    def test_openai_counts_the_shared_prefix_in_128_token_steps(
        self, chars: int, cached: int
    ) -> None:
        """A repeated prompt is cached from 1,024 tokens on, in 128-token steps."""
        # the prompt is the tools (`[]`, 2 bytes) then the message, about four bytes a token
        message = {"role": "user", "content": "x" * (chars - 33)}
        assert len(json.dumps(message)) + 2 == chars
        with StubModel([Reply("ok")]) as stub:
            url = stub.base_url + "/chat/completions"
            one, two = (httpx.post(url, json={"messages": [message]}).json() for _ in "12")
            three = httpx.post(url, json={"messages": USER}).json()
        assert one["usage"]["prompt_tokens"] == two["usage"]["prompt_tokens"] == chars // 4
        assert one["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
        assert two["usage"]["prompt_tokens_details"] == {"cached_tokens": cached}
        assert three["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}

    def test_anthropic_reads_from_an_earlier_breakpoint_and_writes_to_its_own(self) -> None:
        """The first call writes the prefix up to its breakpoint; the second reads it back."""
        body = {"model": "m", "max_tokens": 8, "system": SYSTEM, "messages": [USER_A]}
        with StubModel([Reply("ok")]) as stub:
            one = httpx.post(stub.root_url + "/v1/messages", json=body).json()["usage"]
            two = httpx.post(stub.root_url + "/v1/messages", json=body).json()["usage"]
            other = {**body, "system": [{**SYSTEM[0], "text": "t" * 8000}]}
            three = httpx.post(stub.root_url + "/v1/messages", json=other).json()["usage"]
        written = len(json.dumps(SYSTEM[0], sort_keys=True)) // 4
        assert (one["cache_read_input_tokens"], one["cache_creation_input_tokens"]) == (0, written)
        assert (two["cache_read_input_tokens"], two["cache_creation_input_tokens"]) == (written, 0)
        assert three["cache_read_input_tokens"] == 0
        assert one["input_tokens"] == two["input_tokens"] > 0

    def test_scripted_usage_wins(self) -> None:
        """A reply's own usage object is sent unchanged."""
        usage = {"input_tokens": 7, "output_tokens": 1, "cache_read_input_tokens": 3}
        with StubModel([Reply("ok", usage=usage)]) as stub:
            got = httpx.post(stub.root_url + "/v1/messages", json={}).json()["usage"]
        assert got == usage


class TestBoundedReads:
    def test_oversized_body_is_refused_unread(self) -> None:
        """A body announced over max_body gets a 413 at once; nothing is recorded."""
        with StubModel([Reply("x")], max_body=1024) as stub:
            with socket.create_connection(("127.0.0.1", int(stub.root_url.rsplit(":", 1)[1]))) as s:
                s.settimeout(10)
                s.sendall(
                    b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 999999999\r\n\r\n"
                )
                answer = s.recv(4096)
            assert stub.requests == []
        assert answer.startswith(b"HTTP/1.1 413")

    def test_short_body_is_dropped_after_the_read_timeout(self) -> None:
        """A client that sends less than it announced is let go; the server keeps answering."""
        with StubModel([Reply("x")], read_timeout=0.2) as stub:
            with socket.create_connection(("127.0.0.1", int(stub.root_url.rsplit(":", 1)[1]))) as s:
                s.settimeout(10)
                s.sendall(b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
                assert s.recv(4096) == b""  # closed, no answer
            response = httpx.post(stub.root_url + "/v1/messages", json={}, timeout=10)
        assert response.status_code == 200
        assert [r.body for r in stub.requests] == [b"{}"]


class TestResponsesShapes:
    def test_sdk_reads_a_responses_answer(self) -> None:
        """Openai's responses.create parses the stub's text and function-call items."""
        reply = Reply("hello", tool_calls=[ToolCall("read_file", {"path": "a.py"})])
        with StubModel([reply]) as stub:
            client = openai_client(stub)
            answer = client.responses.create(model="m", input="hi")
            client.close()
        assert answer.output_text == "hello"
        call = answer.output[1]
        assert call.type == "function_call"
        assert (call.name, json.loads(call.arguments)) == ("read_file", {"path": "a.py"})
        assert answer.usage is not None
        assert answer.usage.input_tokens > 0
        assert stub.requests_to("responses")[0].json()["input"] == "hi"

    def test_sdk_reads_a_compact_answer(self) -> None:
        """Openai's responses.compact parses the user messages and the compaction item."""
        with StubModel([Reply(compaction="opaque")]) as stub:
            client = openai_client(stub)
            answer = client.responses.compact(
                model="m",
                input=[
                    {"type": "message", "role": "user", "content": "do it"},
                    {"type": "message", "role": "assistant", "content": "done"},
                ],
            )
            client.close()
        assert answer.object == "response.compaction"
        assert [item.type for item in answer.output] == ["message", "compaction"]
        item = answer.output[-1]
        assert item.type == "compaction"
        assert item.encrypted_content == "opaque"

    @pytest.mark.parametrize(("threshold", "compacted"), [(1, True), (10**9, False)])
    def test_server_side_compaction_past_the_threshold(
        self, threshold: int, compacted: bool
    ) -> None:
        """context_management compaction adds an item only once the input passes the threshold."""
        with StubModel([Reply("ok")]) as stub:
            client = openai_client(stub)
            answer = client.responses.create(
                model="m",
                input="hi",
                context_management=[{"type": "compaction", "compact_threshold": threshold}],
            )
            client.close()
        kinds = [item.type for item in answer.output]
        assert kinds == (["compaction", "message"] if compacted else ["message"])

    @pytest.mark.parametrize(
        ("pause", "kinds"), [(True, ["compaction"]), (False, ["compaction", "text"])]
    )
    def test_anthropic_beta_reads_a_compaction_block(self, pause: bool, kinds: list[str]) -> None:
        """Anthropic's beta messages parse the block; pausing answers with it alone."""
        with StubModel([Reply("after", compaction="the summary")]) as stub:
            client = anthropic_client(stub)
            answer = client.beta.messages.create(
                model="m",
                max_tokens=10,
                messages=[{"role": "user", "content": "hi"}],
                betas=["compact-2026-01-12"],
                context_management={
                    "edits": [
                        {
                            "type": "compact_20260112",
                            "trigger": {"type": "input_tokens", "value": 1},
                            "pause_after_compaction": pause,
                        }
                    ]
                },
            )
            client.close()
        assert [block.type for block in answer.content] == kinds
        block = answer.content[0]
        assert block.type == "compaction"
        assert block.content == "the summary"
        assert answer.stop_reason == ("compaction" if pause else "end_turn")
        assert stub.requests[0].headers["anthropic-beta"] == "compact-2026-01-12"


class TestContextOverflow:
    """Refusals in each provider's words, read by the real SDKs as their BadRequestError."""

    def test_a_request_over_the_window_is_refused_without_using_a_step(self) -> None:
        """Over context_window: OpenAI's context_length_exceeded; the next request gets step 1."""
        big: list[openai.types.chat.ChatCompletionMessageParam] = [
            {"role": "user", "content": "word " * 2_000}
        ]
        with StubModel([Reply("first"), Reply("second")], context_window=1_000) as stub:
            client = openai_client(stub)
            with pytest.raises(openai.BadRequestError) as caught:
                client.chat.completions.create(model="m", messages=big)
            answer = client.chat.completions.create(model="m", messages=USER)
            client.close()
        assert caught.value.code == "context_length_exceeded"
        assert "maximum context length is 1000 tokens" in caught.value.message
        assert is_context_overflow(caught.value)
        assert answer.choices[0].message.content == "first"
        assert stub.refused == [0]

    def test_anthropic_says_prompt_is_too_long(self) -> None:
        """A scripted overflow on /v1/messages: "prompt is too long: N tokens > M maximum"."""
        with StubModel([Reply(overflow=True), Reply("ok")], context_window=5_000) as stub:
            client = anthropic_client(stub)
            with pytest.raises(anthropic.BadRequestError) as caught:
                client.messages.create(model="m", max_tokens=8, messages=[USER_A])
            client.close()
        body = caught.value.body
        assert isinstance(body, dict)
        assert body["error"]["type"] == "invalid_request_error"
        assert re.fullmatch(
            r"prompt is too long: \d+ tokens > 5000 maximum", body["error"]["message"]
        )
        assert is_context_overflow(caught.value)
        assert stub.refused == [0]

    def test_deepseek_words_its_own_way(self) -> None:
        """The deepseek dialect: no context_length_exceeded code, its "you requested" sentence."""
        with StubModel([Reply(overflow=True)], dialect="deepseek") as stub:
            client = openai_client(stub)
            with pytest.raises(openai.BadRequestError) as caught:
                client.chat.completions.create(model="m", messages=USER)
            client.close()
        assert caught.value.code == "invalid_request_error"
        assert "However, you requested" in caught.value.message
        assert is_context_overflow(caught.value)
