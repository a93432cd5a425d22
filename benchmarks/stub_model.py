"""A scripted stand-in model served over HTTP on loopback, speaking chat-completions.

Tests and benchmarks point the real `compaction.llm.ChatClient` at it: it answers
``POST /v1/chat/completions`` with the replies it was scripted with, in order (the last one
repeats), and records every request's raw bytes. A reply can be a status with a ``Retry-After``,
a malformed body, an empty answer, or no answer at all (the connection hangs until the client
gives up), so every failure path of the client runs over a real socket.

Invariants: it binds 127.0.0.1 only; a hanging reply waits at most `hang_limit` seconds, and
`stop()` releases it at once, so the server thread always ends.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer of the stand-in model."""

    content: str | None = ""
    """The assistant message's text (None sends ``"content": null``)."""
    status: int = 200
    """HTTP status; not 200 sends an OpenAI-style error body."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """Extra response headers, e.g. ``{"Retry-After": "2"}``."""
    body: bytes | None = None
    """Raw response body, sent as is (malformed JSON, a truncated answer...)."""
    usage: Mapping[str, Any] | None = None
    """The ``usage`` object; None sends a default one (prompt tokens ~ bytes / 4)."""
    hang: bool = False
    """Send nothing until the client gives up (or the server stops)."""
    finish_reason: str = "stop"


Script = Reply | Callable[[Mapping[str, Any]], Reply]
"""A reply, or a function of the decoded request that returns one."""


@dataclass(frozen=True)
class RecordedRequest:
    """A request the stand-in model received."""

    path: str
    headers: Mapping[str, str]
    """Header names in lower case."""
    body: bytes

    def json(self) -> Any:  # noqa: ANN401 - a decoded JSON body has no narrower type
        """Return the decoded JSON body."""
        return json.loads(self.body)


def default_usage(request: Mapping[str, Any], content: str) -> dict[str, Any]:
    """Return a plausible usage object: about four bytes a token, no cache figure."""
    prompt = json.dumps(request.get("messages", []), ensure_ascii=False)
    return {
        "prompt_tokens": len(prompt.encode()) // 4,
        "completion_tokens": len(content.encode()) // 4,
        "total_tokens": (len(prompt.encode()) + len(content.encode())) // 4,
    }


class StubModel:
    """A chat-completions server on 127.0.0.1 that answers from a script.

    Args:
        script: replies in order; the last one repeats once the script runs out.
        hang_limit: longest a hanging reply holds its connection, in seconds.
        model: the model name echoed in answers.
    """

    def __init__(
        self, script: Iterable[Script], *, hang_limit: float = 10.0, model: str = "stub"
    ) -> None:
        self.script = list(script) or [Reply()]
        self.hang_limit = hang_limit
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        """The API root to configure a client with (``http://127.0.0.1:PORT/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

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

    def next_reply(self, request: RecordedRequest) -> Reply:
        """Record `request` and return the scripted reply for it."""
        with self._lock:
            index = len(self.requests)
            self.requests.append(request)
        step = self.script[min(index, len(self.script) - 1)]
        if isinstance(step, Reply):
            return step
        try:
            decoded = request.json()
        except ValueError:
            decoded = {}
        return step(decoded)

    def wait_released(self) -> None:
        """Block a hanging reply until the server stops or `hang_limit` passes."""
        self._released.wait(self.hang_limit)

    def answer_body(self, request: RecordedRequest, reply: Reply) -> bytes:
        """Return the response body for `reply`."""
        if reply.body is not None:
            return reply.body
        if reply.status != 200:
            error = {"message": f"scripted status {reply.status}", "type": "stub_error"}
            return json.dumps({"error": error}).encode()
        try:
            decoded = request.json()
        except ValueError:
            decoded = {}
        content = reply.content or ""
        usage = reply.usage if reply.usage is not None else default_usage(decoded, content)
        answer = {
            "id": f"stub-{len(self.requests)}",
            "object": "chat.completion",
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content},
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": dict(usage),
        }
        return json.dumps(answer, ensure_ascii=False).encode()


def _handler_for(stub: StubModel) -> type[BaseHTTPRequestHandler]:
    """Return a request handler class bound to `stub`."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(length)
            headers = {k.lower(): v for k, v in self.headers.items()}
            request = RecordedRequest(self.path, headers, body)
            reply = stub.next_reply(request)
            if reply.hang:
                stub.wait_released()
                self.close_connection = True
                return
            if not self.path.endswith("/chat/completions"):
                reply = Reply(status=404)
            payload = stub.answer_body(request, reply)
            self.send_response(reply.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            """Keep test output quiet."""

    return Handler
