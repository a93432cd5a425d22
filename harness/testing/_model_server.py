"""A scripted stand-in model served over HTTP on loopback, speaking four provider APIs.

Tests, benchmarks and the examples point real clients at it (`compaction.llm.ChatClient`, the
official ``openai`` and ``anthropic`` SDKs): it answers ``POST /v1/chat/completions`` in the
OpenAI chat-completions shape, ``POST /v1/messages`` in the Anthropic messages shape (with the
``compact_20260112`` edit's compaction block), and ``POST /v1/responses`` and
``POST /v1/responses/compact`` in the OpenAI Responses shapes (`harness.testing._responses_api`),
and ``POST /v1beta/models/MODEL:generateContent`` (and ``:streamGenerateContent``) in the Gemini
shape (`harness.testing._gemini_api`), with the replies it was scripted with, in order (the
last one repeats), and records every request's raw bytes. A reply can hold text and tool calls
(`ToolCall`), a status with a ``Retry-After``, a
malformed body, an empty answer, a provider's context-overflow refusal (`Reply.overflow`, or
every request over the stub's `context_window`: `harness.testing._overflow_bodies`), or no answer at
all (the connection hangs until the client gives up), so every path of an agent loop and every
failure path of a client runs over a real socket. A scripted step may be a function of the
decoded request, and `rules` answer the requests they recognise (an agent's summary request,
say: `harness.testing._rules`) without using a step of the script. A request that asks for a
stream (``"stream": true``; Gemini's ``:streamGenerateContent``) gets the same answer as
server-sent events (`harness.testing._streams`); an error status is sent whole, as the
providers do.

Unless a reply brings its own ``usage``, the stub reports one from a simple prefix-cache model
(about four bytes a token): chat-completions counts the longest prefix shared with an earlier
request as ``prompt_tokens_details.cached_tokens`` (OpenAI's rule: nothing under 1,024 tokens,
then 128-token steps); messages reads a prefix ending at an earlier request's ``cache_control``
breakpoint as ``cache_read_input_tokens`` and writes up to this request's last breakpoint as
``cache_creation_input_tokens``.

Invariants: it binds 127.0.0.1 only; a request body over `max_body` bytes is refused (413)
unread, and a client that sends less than it announced is dropped after `read_timeout`
seconds; a hanging reply waits at most `hang_limit` seconds, and `stop()` releases it at once,
so the server thread always ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import replace
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import Any

from harness.testing import _responses_api as responses_api
from harness.testing import _streams as streams
from harness.testing._gemini_api import gemini_answer, model_of
from harness.testing._handler import handler_for
from harness.testing._overflow_bodies import OVERFLOW_STATUS, Dialect, overflow_body
from harness.testing._prefix_cache import Api as Api
from harness.testing._prefix_cache import PrefixCache as PrefixCache
from harness.testing._prefix_cache import prompt_pieces as prompt_pieces
from harness.testing._prefix_cache import prompt_tokens
from harness.testing._replies import RecordedRequest as RecordedRequest
from harness.testing._replies import Reply as Reply
from harness.testing._replies import Script as Script
from harness.testing._replies import ToolCall as ToolCall
from harness.testing._routes import GEMINI_METHODS as GEMINI_METHODS
from harness.testing._routes import PATHS as PATHS
from harness.testing._routes import api_of as api_of
from harness.testing._routes import decoded as decoded_body
from harness.testing._routes import wants_stream as wants_stream
from harness.testing._rules import Rule as Rule
from harness.testing._tool_pairing import PAIRING_STATUS, pairing_body, unanswered_ids

MAX_BODY = 8 * 1024 * 1024
"""Default cap on a request body, in bytes."""


class StubModel:
    """A chat-completions and messages server on 127.0.0.1 that answers from a script.

    Args:
        script: replies in order; the last one repeats once the script runs out.
        hang_limit: longest a hanging reply holds its connection, in seconds.
        model: the model name echoed in answers.
        max_body: the largest request body read, in bytes; a larger one gets a 413.
        read_timeout: longest wait for a client's bytes, in seconds.
        context_window: the model's window in the stub's tokens (about four bytes a token); a
            request over it is refused as too long, in the provider's words, without using a
            step of the script. None: no limit.
        dialect: whose words a chat-completions refusal uses (``openai`` or ``deepseek``).
        rules: asked in order before the script, with the API's name and the decoded request;
            the first reply one returns answers, and the script stays where it is.
        port: the loopback port to listen on; 0 takes a free one.
        check_calls: refuse a request holding a tool call without its result (HTTP 400, in
            the provider's words: `harness.testing._tool_pairing`), as every provider does,
            without using a step of the script.
    """

    def __init__(
        self,
        script: Iterable[Script],
        *,
        hang_limit: float = 10.0,
        model: str = "stub",
        max_body: int = MAX_BODY,
        read_timeout: float = 10.0,
        context_window: int | None = None,
        dialect: Dialect = "openai",
        rules: Iterable[Rule] = (),
        port: int = 0,
        check_calls: bool = True,
    ) -> None:
        self.script = list(script) or [Reply()]
        self.rules = list(rules)
        self.context_window = context_window
        self.dialect = dialect
        self.check_calls = check_calls
        self.unpaired: list[int] = []
        """Indexes (into `requests`) of the requests refused for an unanswered tool call."""
        self.refused: list[int] = []
        """Indexes (into `requests`) of the requests refused as too long, in order."""
        self._steps = 0
        self.hang_limit = hang_limit
        self.model = model
        self.max_body = max_body
        self.read_timeout = read_timeout
        self.requests: list[RecordedRequest] = []
        self.cache = PrefixCache()
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def root_url(self) -> str:
        """The server's root (``http://127.0.0.1:PORT``): the Anthropic SDK's ``base_url``."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def base_url(self) -> str:
        """The API root of an OpenAI client (``http://127.0.0.1:PORT/v1``)."""
        return self.root_url + "/v1"

    def start(self) -> StubModel:
        """Start serving in a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release hanging replies, stop serving and close the socket."""
        self._released.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> StubModel:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def requests_to(self, api: Api) -> list[RecordedRequest]:
        """Return the recorded requests made to `api`'s path, in order."""
        return [r for r in self.requests if api_of(r.path) == api]

    def next_reply(self, request: RecordedRequest) -> Reply:
        """Record `request` and return the scripted reply for it.

        A request over `context_window` gets an overflow refusal and leaves the script where
        it is (the retry gets the step the refused request would have).
        """
        api = api_of(request.path)
        over = (
            self.context_window is not None
            and api is not None
            and prompt_tokens(api, decoded_body(request)) > self.context_window
        )
        unpaired = unanswered_ids(api, decoded_body(request)) if api and self.check_calls else []
        with self._lock:
            self.requests.append(request)
            if unpaired:
                self.unpaired.append(len(self.requests) - 1)
                return Reply(status=PAIRING_STATUS, body=pairing_body(api or "openai", unpaired))
            if over:
                self.refused.append(len(self.requests) - 1)
                return Reply(status=OVERFLOW_STATUS, overflow=True)
        ruled = self._ruled(api, request)
        if ruled is not None:
            return ruled
        with self._lock:
            index, self._steps = self._steps, self._steps + 1
        step = self.script[min(index, len(self.script) - 1)]
        reply = step if isinstance(step, Reply) else step(decoded_body(request))
        if reply.overflow:
            with self._lock:
                self.refused.append(len(self.requests) - 1)
            return replace(reply, status=OVERFLOW_STATUS)
        return reply

    def _ruled(self, api: Api | None, request: RecordedRequest) -> Reply | None:
        """Return the first rule's reply for `request`, or None when no rule answers it."""
        if api is None or not self.rules:
            return None
        body = decoded_body(request)
        for rule in self.rules:
            reply = rule(api, body)
            if reply is not None:
                return reply
        return None

    def wait_released(self) -> None:
        """Block a hanging reply until the server stops or `hang_limit` passes."""
        self._released.wait(self.hang_limit)

    def answer_body(self, request: RecordedRequest, reply: Reply, api: Api = "openai") -> bytes:
        """Return the response body for `reply`, in `api`'s shape."""
        answer = self.answer(request, reply, api)
        if isinstance(answer, bytes):
            return answer
        return json.dumps(answer, ensure_ascii=False).encode()

    def answer_stream(
        self, request: RecordedRequest, answer: Mapping[str, Any], api: Api
    ) -> Iterable[bytes]:
        """Return `answer` (a whole answer in `api`'s shape) as the API's stream of events."""
        if api == "anthropic":
            return streams.anthropic_events(answer)
        if api == "responses":
            return streams.responses_events(answer)
        if api == "gemini":
            return streams.gemini_events(answer)
        options = decoded_body(request).get("stream_options")
        include = isinstance(options, Mapping) and options.get("include_usage") is True
        return streams.chat_events(answer, include)

    def answer(self, request: RecordedRequest, reply: Reply, api: Api) -> dict[str, Any] | bytes:
        """Return the answer for `reply` in `api`'s shape, or raw bytes (an error, a body)."""
        if reply.body is not None:
            return reply.body
        if reply.overflow:
            size = prompt_tokens(api, decoded_body(request))
            window = self.context_window if self.context_window is not None else size - 1
            return overflow_body(api, self.dialect, size, window)
        if reply.status != 200:
            message = f"scripted status {reply.status}"
            if api == "anthropic":
                error = {"type": "error", "error": {"type": "api_error", "message": message}}
                return json.dumps(error).encode()
            if api == "gemini":
                status = {"code": reply.status, "message": message, "status": "UNAVAILABLE"}
                return json.dumps({"error": status}).encode()
            return json.dumps({"error": {"message": message, "type": "stub_error"}}).encode()
        decoded = decoded_body(request)
        text = reply.content or ""
        with self._lock:
            index = len(self.requests)
            usage = reply.usage
            if usage is None:
                usage = self.cache.usage(api, decoded, text + _calls_text(reply))
        if api == "anthropic":
            answer = self._anthropic_answer(reply, index, usage, decoded)
        elif api == "responses":
            answer = responses_api.responses_answer(decoded, reply, index, usage, self.model)
        elif api == "responses_compact":
            answer = responses_api.compact_answer(decoded, reply, index, usage)
        elif api == "gemini":
            answer = gemini_answer(reply, usage, model_of(request.path))
        else:
            answer = self._openai_answer(reply, index, usage)
        return answer

    def _openai_answer(self, reply: Reply, index: int, usage: Mapping[str, Any]) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": call.id or f"call_{index}_{i}",
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.arguments_text()},
                }
                for i, call in enumerate(reply.tool_calls)
            ]
        default = "tool_calls" if reply.tool_calls else "stop"
        return {
            "id": f"stub-{index}",
            "object": "chat.completion",
            "created": 0,
            "model": self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": reply.finish_reason or default}
            ],
            "usage": dict(usage),
        }

    def _anthropic_answer(
        self, reply: Reply, index: int, usage: Mapping[str, Any], request: Mapping[str, Any]
    ) -> dict[str, Any]:
        block, pause = responses_api.anthropic_compaction(request, reply, index)
        content: list[dict[str, Any]] = [block] if block is not None else []
        if pause:
            return self._anthropic_envelope(content, "compaction", index, usage)
        if reply.content:
            content.append({"type": "text", "text": reply.content})
        content += [
            {
                "type": "tool_use",
                "id": call.id or f"toolu_{index}_{i}",
                "name": call.name,
                "input": call.arguments_object(),
            }
            for i, call in enumerate(reply.tool_calls)
        ]
        default = "tool_use" if reply.tool_calls else "end_turn"
        return self._anthropic_envelope(content, reply.stop_reason or default, index, usage)

    def _anthropic_envelope(
        self, content: list[dict[str, Any]], stop: str, index: int, usage: Mapping[str, Any]
    ) -> dict[str, Any]:
        return {
            "id": f"msg_stub_{index}",
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": content,
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": anthropic_usage(usage),
        }


def anthropic_usage(usage: Mapping[str, Any]) -> dict[str, Any]:
    """Return a usage of any of the stub's shapes in the messages shape (that one unchanged)."""
    if "input_tokens" in usage:
        return dict(usage)
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
    return {
        "input_tokens": usage.get("prompt_tokens", 0) - cached,
        "output_tokens": usage.get("completion_tokens", 0),
        "cache_read_input_tokens": cached,
        "cache_creation_input_tokens": 0,
    }


def _calls_text(reply: Reply) -> str:
    return "".join(c.name + c.arguments_text() for c in reply.tool_calls)
