"""A small client for OpenAI-compatible chat-completions endpoints (DeepSeek, OpenAI, vLLM...).

It posts one JSON body to ``{base_url}/chat/completions`` and returns the answer's text, finish
reason and usage. Transient failures (429, 5xx, timeouts, dropped connections) are retried with
exponential backoff; a ``Retry-After`` header, when the server sends one, sets the wait instead.
The sleep function is injected, so tests never wait for real.

Invariants: the body is serialized canonically (sorted keys, compact separators, UTF-8, the same
bytes `prompts.requests.dumps` writes), so a request that replays an earlier one's messages and
tools sends them byte for byte; the API key is read from the environment at call time and never
appears in an error message (`ChatClient.redact` runs on every message built from an answer);
``timeout`` bounds a whole attempt (connect, send and every read together, however slowly the
server drips), and an answer is read up to `ChatConfig.answer_cap` bytes, then abandoned.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from typing import Any

import httpx

from compaction.errors import ConfigError, ProviderError
from compaction.llm._usage import ProviderUsage, read_usage
from compaction.secrets import redact

RETRY_STATUSES: frozenset[int] = frozenset({408, 409, 429, 500, 502, 503, 504})
"""Statuses worth another try: rate limits, timeouts and server errors (any other 5xx too)."""

Sleep = Callable[[float], None]


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to call a chat-completions endpoint.

    Args:
        base_url: the API root, e.g. ``https://api.deepseek.com`` or ``http://127.0.0.1:8000/v1``;
            requests go to ``{base_url}/chat/completions``.
        model: the model name sent in each request.
        api_key_env: the environment variable holding the API key; when it is unset or empty no
            ``Authorization`` header is sent (local servers need none).
        timeout: seconds one attempt may take in all: connecting, sending and reading the whole
            answer (a server that drips bytes slowly is cut off at the timeout).
        max_retries: further attempts after the first one fails transiently.
        max_output_tokens: cap on the answer's length (sent as ``max_tokens``).
        backoff: seconds before the first retry; doubled at each further one.
        max_wait: longest wait between two attempts; a ``Retry-After`` above it ends the retries.
    """

    base_url: str
    model: str
    api_key_env: str = "OPENAI_API_KEY"
    timeout: float = 60.0
    max_retries: int = 3
    max_output_tokens: int = 4096
    backoff: float = 0.5
    max_wait: float = 60.0

    def __post_init__(self) -> None:
        problems = []
        if not self.base_url.startswith(("http://", "https://")):
            problems.append(f"base_url must start with http:// or https://, not {self.base_url!r}")
        if not self.model:
            problems.append("model must not be empty")
        if self.timeout <= 0:
            problems.append(f"timeout must be > 0 seconds, not {self.timeout}")
        if self.max_retries < 0:
            problems.append(f"max_retries must be >= 0, not {self.max_retries}")
        if self.max_output_tokens < 1:
            problems.append(f"max_output_tokens must be >= 1, not {self.max_output_tokens}")
        if self.backoff < 0 or self.max_wait < 0:
            problems.append("backoff and max_wait must be >= 0 seconds")
        if problems:
            raise ConfigError("ChatConfig: " + "; ".join(problems))

    @property
    def answer_cap(self) -> int:
        """Largest answer body read, in bytes: 16 per output token plus 64 KiB of envelope."""
        return 16 * self.max_output_tokens + 64 * 1024

    @property
    def url(self) -> str:
        """The chat-completions URL."""
        return self.base_url.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class ChatAnswer:
    """What a chat-completions call returned."""

    content: str
    """The first choice's text ("" when the model sent none)."""
    finish_reason: str | None
    """Why the model stopped (``stop``, ``length``, ``tool_calls``...)."""
    usage: ProviderUsage | None
    """Token figures the provider reported, if any."""
    attempts: int = 1
    """How many HTTP attempts the call took."""
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    """The decoded response body."""


class ChatClient:
    """Calls one OpenAI-compatible chat-completions endpoint, with retries.

    Args:
        config: endpoint, model, key variable, timeouts and limits.
        sleep: waits between attempts (inject a recorder in tests).
        environ: where the API key is looked up (default `os.environ`).
        transport: an httpx transport, for tests that mock the network.
    """

    def __init__(
        self,
        config: ChatConfig,
        *,
        sleep: Sleep = time.sleep,
        environ: Mapping[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.config = config
        self.sleep = sleep
        self.environ = os.environ if environ is None else environ
        self.transport = transport

    def headers(self) -> dict[str, str]:
        """Return the request headers, with the API key when its variable is set."""
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        key = self.environ.get(self.config.api_key_env, "")
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def redact(self, text: str) -> str:
        """Return `text` without the API key or anything shaped like a token."""
        return redact(text, [self.environ.get(self.config.api_key_env, "")])

    def complete(self, body: Mapping[str, Any]) -> ChatAnswer:
        """Post `body` (model and max_tokens filled in when absent) and return the answer.

        Raises:
            ProviderError: the call failed for good (after retries where they apply), or the
                answer is not a chat completion; its message never holds the API key.
        """
        payload = {"model": self.config.model, **body}
        payload.setdefault("max_tokens", self.config.max_output_tokens)
        content = canonical_json(payload).encode("utf-8")
        try:
            with httpx.Client(timeout=self.config.timeout, transport=self.transport) as http:
                response, attempts = self._post(http, content)
            return parse_answer(response, attempts)
        except ProviderError as exc:
            message = self.redact(str(exc).removeprefix(f"{exc.code}: "))
            failure = ProviderError(exc.code, message, status=exc.status)
        except Exception as exc:  # an unexpected failure may quote a header: never show it raw
            detail = self.redact(f"{type(exc).__name__}: {exc}")
            failure = ProviderError("transport", f"{self.config.url}: {detail}")
        # Raised outside the handler, so the unredacted original is not kept as __context__.
        raise failure

    def _post(self, http: httpx.Client, content: bytes) -> tuple[httpx.Response, int]:
        """Send the body, retrying transient failures; return the final response."""
        attempt = 0
        while True:
            attempt += 1
            try:
                response = self._attempt(http, content)
            except httpx.TimeoutException as exc:
                failure = ProviderError("timeout", f"{self.config.url}: no answer in time ({exc})")
                wait = None
            except httpx.TransportError as exc:
                failure = ProviderError("transport", f"{self.config.url}: {exc}")
                wait = None
            else:
                if response.is_success:
                    return response, attempt
                failure = status_error(self.config.url, response)
                if not retryable(response.status_code):
                    raise failure
                wait = retry_after(response)
            self._wait_or_raise(attempt, wait, failure)

    def _attempt(self, http: httpx.Client, content: bytes) -> httpx.Response:
        """Make one attempt, within `timeout` in all and `answer_cap` bytes.

        The request runs in a worker thread so that the deadline holds even while the server
        drips its headers; past the deadline the attempt is abandoned (the client's close ends
        the worker's socket).
        """
        timeout = self.config.timeout
        deadline = time.monotonic() + timeout
        outcome: list[httpx.Response | BaseException] = []

        def work() -> None:
            try:
                outcome.append(self._read(http, content, deadline))
            except BaseException as exc:  # handed to the caller's thread
                outcome.append(exc)

        worker = threading.Thread(target=work, name="harness-llm-attempt", daemon=True)
        worker.start()
        worker.join(timeout)
        if not outcome:
            raise httpx.TimeoutException(f"the attempt took more than {timeout:g}s in all")
        result = outcome[0]
        if isinstance(result, BaseException):
            raise result
        return result

    def _read(self, http: httpx.Client, content: bytes, deadline: float) -> httpx.Response:
        """Send the request and read the answer, up to the size cap and the deadline."""
        cap = self.config.answer_cap
        headers = self.headers()
        with http.stream("POST", self.config.url, content=content, headers=headers) as streamed:
            body = bytearray()
            for chunk in streamed.iter_bytes():
                body += chunk
                if len(body) > cap:
                    raise ProviderError(
                        "bad_response",
                        f"{self.config.url}: the answer passed {cap} bytes "
                        f"(16 x max_output_tokens + 64 KiB); abandoned",
                    )
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer was still arriving at the timeout")
            kept = {
                k: v
                for k, v in streamed.headers.items()
                if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")
            }
            return httpx.Response(
                streamed.status_code, headers=kept, content=bytes(body), request=streamed.request
            )

    def _wait_or_raise(self, attempt: int, wait: float | None, failure: ProviderError) -> None:
        """Sleep before the next attempt, or raise `failure` when no attempt is left."""
        if attempt > self.config.max_retries:
            raise failure
        if wait is None:
            wait = min(self.config.max_wait, self.config.backoff * 2 ** (attempt - 1))
        elif wait > self.config.max_wait:
            raise ProviderError(
                "retry_after",
                f"{failure}; the server asks to wait {wait:g}s, more than max_wait "
                f"{self.config.max_wait:g}s",
                status=failure.status,
            )
        self.sleep(wait)


def canonical_json(obj: object) -> str:
    """Serialize JSON data canonically: sorted keys, compact separators, UTF-8 text."""
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def retryable(status: int) -> bool:
    """Tell whether an HTTP status is worth another attempt."""
    return status in RETRY_STATUSES or status >= 500


def retry_after(response: httpx.Response) -> float | None:
    """Return the wait a ``Retry-After`` header asks for, in seconds (None when absent or bad)."""
    value = response.headers.get("retry-after", "").strip()
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def status_error(url: str, response: httpx.Response) -> ProviderError:
    """Return the error for a failed HTTP status, with the start of the server's message."""
    detail = response.text[:300].strip()
    hint = (
        " (check the API key variable named by --api-key-env)"
        if response.status_code
        in (
            401,
            403,
        )
        else ""
    )
    return ProviderError(
        "http_status",
        f"{url}: HTTP {response.status_code}{hint}: {detail}",
        status=response.status_code,
    )


def parse_answer(response: httpx.Response, attempts: int) -> ChatAnswer:
    """Read a chat-completions response body into a `ChatAnswer`."""
    try:
        data = response.json()
    except ValueError as exc:
        raise ProviderError(
            "bad_response", f"{response.url}: body is not JSON ({exc}): {response.text[:200]!r}"
        ) from None
    try:
        choice = data["choices"][0]
        message = choice["message"]
        text = message.get("content") or ""
        if not isinstance(text, str):
            raise TypeError(f"content is {type(text).__name__}, not a string")
        finish = choice.get("finish_reason")
    except (KeyError, IndexError, TypeError, AttributeError) as exc:
        raise ProviderError(
            "bad_response", f"{response.url}: not a chat completion ({exc!r})"
        ) from None
    usage = data.get("usage")
    return ChatAnswer(
        content=text,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=read_usage(usage) if isinstance(usage, Mapping) else None,
        attempts=attempts,
        raw=data,
    )
