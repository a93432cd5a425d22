r"""``python -m harness.testing``: serve the scripted demo agent on loopback, to try a loop offline.

It answers OpenAI chat completions, the Responses API and Anthropic messages with
`demo_reply` (write a todo list, read ``README.md``, work through the list, answer), until
interrupted. Point an example or an integration at it with its base-URL variable and any key:

    python -m harness.testing --port 8765 &
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=offline \
        python examples/openai_chat_loop.py s.jsonl "Summarize the README"
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from harness.testing._demo_agent import demo_reply
from harness.testing._model_server import StubModel


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT or SIGTERM; print the URLs to set first."""
    parser = argparse.ArgumentParser(
        prog="python -m harness.testing",
        description="Serve a scripted model on 127.0.0.1 (OpenAI chat completions, the "
        "Responses API, Anthropic messages) to try an agent loop offline, with no key.",
    )
    parser.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any)")
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0..65535, not {args.port}")
    try:
        stub = StubModel([demo_reply], port=args.port).start()
    except OSError as exc:
        print(f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", file=sys.stderr)
        return 3
    stop = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stop.set())
    print(f"serving a scripted model on {stub.root_url} (Ctrl-C stops it); set", flush=True)
    print(f"  OPENAI_BASE_URL={stub.base_url} OPENAI_API_KEY=offline", flush=True)
    print(f"  ANTHROPIC_BASE_URL={stub.root_url} ANTHROPIC_API_KEY=offline", flush=True)
    while not stop.wait(1.0):
        pass
    stub.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
