"""The stand-in model's HTTP handler: read a request, ask the server for its reply, send it.

A whole answer goes as one JSON body with its length; a streamed one as server-sent events on a
connection that closes after the last event.

Invariants: a body over the server's `max_body` is refused (413) unread; a hanging reply holds
its connection only as long as the server lets it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from harness.testing._prefix_cache import Api
from harness.testing._replies import RecordedRequest, Reply
from harness.testing._routes import api_of, decoded, wants_stream


class Server(Protocol):
    """What the handler asks of the server (`harness.testing.StubModel`)."""

    read_timeout: float
    max_body: int

    def next_reply(self, request: RecordedRequest) -> Reply:
        """Record `request` and return its reply."""
        ...

    def wait_released(self) -> None:
        """Block a hanging reply until the server lets it go."""
        ...

    def answer(self, request: RecordedRequest, reply: Reply, api: Api) -> dict[str, Any] | bytes:
        """Return the whole answer for `reply`, or raw bytes."""
        ...

    def answer_stream(
        self, request: RecordedRequest, answer: Mapping[str, Any], api: Api
    ) -> Iterable[bytes]:
        """Return `answer` as the API's stream of events."""
        ...


class Handler(BaseHTTPRequestHandler):
    """Answers one connection's requests from the server it is bound to (`handler_for`)."""

    stub: Server
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        request = self.read_request()
        if request is None:
            return
        reply = self.stub.next_reply(request)
        if reply.hang:
            self.stub.wait_released()
            self.close_connection = True
            return
        self.answer(request, reply)

    def read_request(self) -> RecordedRequest | None:
        """Read the request; refuse (413) and return None when its body is too large."""
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 <= length <= self.stub.max_body:
            self.close_connection = True
            self.send(Reply(status=413), b'{"error": {"message": "request body too large"}}')
            return None
        body = self.rfile.read(length)
        headers = {k.lower(): v for k, v in self.headers.items()}
        return RecordedRequest(self.path, headers, body)

    def answer(self, request: RecordedRequest, reply: Reply) -> None:
        """Send the answer to `reply`: whole, or streamed when the request asks for it."""
        api = api_of(self.path)
        if api is None:
            reply = Reply(status=404)
        answer = self.stub.answer(request, reply, api or "openai")
        if isinstance(answer, bytes):
            self.send(reply, answer)
        elif api is not None and wants_stream(self.path, decoded(request)):
            self.stream(reply, self.stub.answer_stream(request, answer, api))
        else:
            self.send(reply, json.dumps(answer, ensure_ascii=False).encode())

    def stream(self, reply: Reply, events: Iterable[bytes]) -> None:
        """Send `events` as a server-sent event stream; the connection closes after it."""
        self.close_connection = True
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for event in events:
            self.wfile.write(event)
            self.wfile.flush()

    def send(self, reply: Reply, payload: bytes) -> None:
        """Send `payload` with `reply`'s status and headers."""
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format: str, *args: object) -> None:
        """Keep test output quiet."""


def handler_for(stub: Server) -> type[BaseHTTPRequestHandler]:
    """Return a request handler class bound to `stub`."""
    return type("BoundHandler", (Handler,), {"stub": stub, "timeout": stub.read_timeout})
