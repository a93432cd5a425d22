"""The loopback stand-in model speaks chat-completions well enough for the official SDK."""

from __future__ import annotations

import threading

import httpx
import openai
import pytest

from benchmarks.stub_model import Reply, StubModel


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
