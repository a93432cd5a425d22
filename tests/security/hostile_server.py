"""A hostile chat-completions server on 127.0.0.1 for the security tests.

Behaviours: ``echo401`` answers 401 quoting the request's Authorization header; ``echo200``
answers a completion whose text and model quote it; ``drip`` sends its status line and then
one header byte a second; ``huge`` sends a 10 MB body.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType


class HostileServer:
    def __init__(self, behaviour: str) -> None:
        self.behaviour = behaviour
        self.stop_event = threading.Event()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                self.rfile.read(length)
                auth = self.headers.get("authorization", "")
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    outer.answer(self, auth)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def answer(self, h: BaseHTTPRequestHandler, auth: str) -> None:
        if self.behaviour == "echo401":
            body = json.dumps({"error": {"message": f"bad key; you sent Authorization: {auth}"}})
            self._send(h, 401, body.encode())
        elif self.behaviour == "echo200":
            text = f"## Next Step\n\nYou sent {auth} (key {auth.removeprefix('Bearer ')})"
            body = {
                "model": f"echo {auth}",
                "choices": [{"message": {"content": text}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5},
            }
            self._send(h, 200, json.dumps(body).encode())
        elif self.behaviour == "drip":
            h.wfile.write(b"HTTP/1.1 200 OK\r\n")
            h.wfile.flush()
            for _ in range(60):
                if self.stop_event.wait(1.0):
                    return
                h.wfile.write(b"X")
                h.wfile.flush()
        elif self.behaviour == "huge":
            h.send_response(200)
            h.send_header("Content-Type", "application/json")
            h.send_header("Content-Length", str(10_000_000))
            h.end_headers()
            chunk = b" " * 65536
            sent = 0
            while sent < 10_000_000 and not self.stop_event.is_set():
                h.wfile.write(chunk[: 10_000_000 - sent])
                sent += len(chunk)

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, body: bytes) -> None:
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def __enter__(self) -> HostileServer:
        self.thread.start()
        return self

    def __exit__(
        self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop_event.set()
        self.server.shutdown()
        self.server.server_close()
        time.sleep(0)
