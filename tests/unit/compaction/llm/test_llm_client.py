"""The chat-completions client, against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import httpx
import pytest

from compaction import ConfigError, ProviderError
from compaction.llm import ChatClient, ChatConfig
from compaction.llm.client import canonical_json, retry_after
from harness.testing import Reply, StubModel

MESSAGES = [
    {"role": "system", "content": "You are terse. ünïcode ✓"},
    {"role": "user", "content": "Say hi"},
]


@pytest.fixture
def sleeps() -> list[float]:
    return []


def make_client(stub: StubModel, sleeps: list[float], **config: object) -> ChatClient:
    settings: dict[str, object] = {"base_url": stub.base_url, "model": "m-1", "timeout": 5.0}
    settings.update(config)
    return ChatClient(
        # A value of the wrong type on purpose: the runtime check is under test.
        ChatConfig(**settings),  # type: ignore[arg-type]
        sleep=sleeps.append,
        environ={"MY_KEY": "sk-test"},
    )


@pytest.fixture
def served(request: pytest.FixtureRequest) -> Iterator[StubModel]:
    with StubModel(request.param, hang_limit=5.0) as stub:
        yield stub


class TestChatConfig:
    @pytest.mark.parametrize(
        ("settings", "match"),
        [
            ({"base_url": "127.0.0.1:8000"}, "base_url must start with http"),
            ({"model": ""}, "model must not be empty"),
            ({"timeout": 0}, "timeout must be > 0"),
            ({"max_retries": -1}, "max_retries must be >= 0"),
            ({"max_output_tokens": 0}, "max_output_tokens must be >= 1"),
            ({"backoff": -1.0}, "backoff and max_wait"),
        ],
    )
    def test_rejects_bad_values(self, settings: dict[str, object], match: str) -> None:
        """Bad settings raise ConfigError at construction, naming the value."""
        values: dict[str, object] = {"base_url": "http://127.0.0.1:1/v1", "model": "m"}
        values.update(settings)
        with pytest.raises(ConfigError, match=match):
            # A value of the wrong type on purpose: the runtime check is under test.
            ChatConfig(**values)  # type: ignore[arg-type]

    def test_url_joins_base_and_path(self) -> None:
        """Requests go to {base_url}/chat/completions, whatever the trailing slash."""
        assert (
            ChatConfig("http://127.0.0.1:9/v1/", "m").url
            == "http://127.0.0.1:9/v1/chat/completions"
        )


class TestComplete:
    @pytest.mark.parametrize("served", [[Reply("hello")]], indirect=True)
    def test_answer_and_request(self, served: StubModel, sleeps: list[float]) -> None:
        """A success returns the text; the body carries model, max_tokens and the messages."""
        client = make_client(served, sleeps, api_key_env="MY_KEY", max_output_tokens=77)
        answer = client.complete({"messages": MESSAGES})
        assert answer.content == "hello"
        assert answer.finish_reason == "stop"
        assert answer.attempts == 1
        (req,) = served.requests
        assert req.path == "/v1/chat/completions"
        body = req.json()
        assert body == {"model": "m-1", "messages": MESSAGES, "max_tokens": 77}
        assert req.headers["authorization"] == "Bearer sk-test"
        assert canonical_json(MESSAGES).encode() in req.body
        assert sleeps == []

    @pytest.mark.parametrize("served", [[Reply("hi")]], indirect=True)
    def test_no_key_no_header(self, served: StubModel, sleeps: list[float]) -> None:
        """With the key variable unset, no Authorization header is sent (local servers)."""
        make_client(served, sleeps, api_key_env="UNSET_VAR").complete({"messages": MESSAGES})
        assert "authorization" not in served.requests[0].headers

    @pytest.mark.parametrize(
        "served", [[Reply(status=500), Reply(status=503), Reply("ok")]], indirect=True
    )
    def test_retries_5xx_with_backoff(self, served: StubModel, sleeps: list[float]) -> None:
        """5xx answers are retried with exponential backoff until one succeeds."""
        answer = make_client(served, sleeps, backoff=0.5).complete({"messages": MESSAGES})
        assert answer.content == "ok"
        assert answer.attempts == 3
        assert sleeps == [0.5, 1.0]
        assert len({r.body for r in served.requests}) == 1

    @pytest.mark.parametrize(
        "served", [[Reply(status=429, headers={"Retry-After": "7"}), Reply("ok")]], indirect=True
    )
    def test_429_honours_retry_after(self, served: StubModel, sleeps: list[float]) -> None:
        """A 429 waits what Retry-After asks, not the backoff."""
        answer = make_client(served, sleeps, backoff=0.5).complete({"messages": MESSAGES})
        assert (answer.content, sleeps) == ("ok", [7.0])

    @pytest.mark.parametrize(
        "served", [[Reply(status=429, headers={"Retry-After": "120"})]], indirect=True
    )
    def test_retry_after_above_max_wait_gives_up(
        self, served: StubModel, sleeps: list[float]
    ) -> None:
        """A Retry-After longer than max_wait ends the retries at once."""
        client = make_client(served, sleeps, max_wait=30.0)
        with pytest.raises(ProviderError, match="asks to wait 120s") as info:
            client.complete({"messages": MESSAGES})
        assert (info.value.code, info.value.status, sleeps) == ("retry_after", 429, [])

    @pytest.mark.parametrize("served", [[Reply(status=500)]], indirect=True)
    def test_gives_up_after_max_retries(self, served: StubModel, sleeps: list[float]) -> None:
        """After max_retries further attempts the last failure is raised."""
        client = make_client(served, sleeps, max_retries=2, backoff=1.0)
        with pytest.raises(ProviderError, match="HTTP 500") as info:
            client.complete({"messages": MESSAGES})
        assert (info.value.code, info.value.status) == ("http_status", 500)
        assert len(served.requests) == 3
        assert sleeps == [1.0, 2.0]

    @pytest.mark.parametrize("served", [[Reply(status=400), Reply("never")]], indirect=True)
    def test_client_error_not_retried(self, served: StubModel, sleeps: list[float]) -> None:
        """A 400 is final: one request, no wait."""
        with pytest.raises(ProviderError, match="HTTP 400"):
            make_client(served, sleeps).complete({"messages": MESSAGES})
        assert (len(served.requests), sleeps) == (1, [])

    @pytest.mark.parametrize("served", [[Reply(status=401)]], indirect=True)
    def test_auth_error_hints_at_key_variable(self, served: StubModel, sleeps: list[float]) -> None:
        """A 401 says to check the key variable, without showing the key."""
        with pytest.raises(ProviderError, match="--api-key-env") as info:
            make_client(served, sleeps, api_key_env="MY_KEY").complete({"messages": MESSAGES})
        assert "sk-test" not in str(info.value)

    @pytest.mark.parametrize("served", [[Reply(hang=True)]], indirect=True)
    def test_timeout_is_retried_then_raised(self, served: StubModel, sleeps: list[float]) -> None:
        """A server that never answers times out on every attempt, then raises `timeout`."""
        client = make_client(served, sleeps, timeout=0.2, max_retries=1, backoff=0.25)
        with pytest.raises(ProviderError, match="no answer in time") as info:
            client.complete({"messages": MESSAGES})
        assert info.value.code == "timeout"
        assert (len(served.requests), sleeps) == (2, [0.25])

    @pytest.mark.parametrize(
        ("served", "match"),
        [
            ([Reply(body=b'{"choices": [{"message": {"content": "tru')], "body is not JSON"),
            ([Reply(body=b'{"id": "x"}')], "not a chat completion"),
            ([Reply(body=b'{"choices": []}')], "not a chat completion"),
            ([Reply(body=b'{"choices": [{"message": {"content": 3}}]}')], "not a chat completion"),
        ],
        indirect=["served"],
    )
    def test_bad_bodies(self, served: StubModel, sleeps: list[float], match: str) -> None:
        """A 200 whose body is not a chat completion raises `bad_response`, without retry."""
        with pytest.raises(ProviderError, match=match) as info:
            make_client(served, sleeps).complete({"messages": MESSAGES})
        assert info.value.code == "bad_response"
        assert len(served.requests) == 1

    def test_connection_refused(self, sleeps: list[float]) -> None:
        """Nothing listening: a `transport` error after the retries."""
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        config = ChatConfig(f"http://127.0.0.1:{port}/v1", "m", max_retries=1, backoff=0.1)
        with pytest.raises(ProviderError, match=r"127\.0\.0\.1") as info:
            ChatClient(config, sleep=sleeps.append).complete({"messages": MESSAGES})
        assert (info.value.code, sleeps) == ("transport", [0.1])


class TestRetryAfter:
    @pytest.mark.parametrize(
        ("value", "expected"),
        [("3", 3.0), ("0.5", 0.5), ("-4", 0.0), ("soon", None), ("", None)],
    )
    def test_seconds(self, value: str, expected: float | None) -> None:
        """Retry-After in seconds is read as a float; junk is ignored."""
        response = httpx.Response(429, headers={"Retry-After": value})
        assert retry_after(response) == expected

    def test_http_date(self) -> None:
        """Retry-After as an HTTP date gives the seconds until then."""
        when = format_datetime(datetime.now(UTC) + timedelta(seconds=100), usegmt=True)
        wait = retry_after(httpx.Response(503, headers={"Retry-After": when}))
        assert wait is not None
        assert 90 <= wait <= 100
