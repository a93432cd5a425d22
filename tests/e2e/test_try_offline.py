"""Try it offline: `python -m harness.testing` serves a scripted agent; every example runs on it.

Two commands, no key: the server, then an example (the two SDK loops, the LangChain agent, the
Agents SDK session) with its base-URL variable pointed at it. Each run ends with the demo's
answer and a log whose panel shows the job done.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
DONE = "3 completed, 0 in progress, 0 pending"


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """Start ``python -m harness.testing --port 0`` and yield its root URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "harness.testing", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    assert first.startswith("serving a scripted model on http://127.0.0.1:"), first
    root = first.split(" on ", 1)[1].split(" ", 1)[0]
    try:
        yield root
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err


def run_example(name: str, env: dict[str, str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    ambient = ("OPENAI_", "ANTHROPIC_", "MODEL", "WINDOW_TOKENS")
    base = {k: v for k, v in os.environ.items() if not k.startswith(ambient)}
    base.update({"NO_PROXY": "127.0.0.1", "PYTHONIOENCODING": "utf-8", **env})
    return subprocess.run(
        [sys.executable, str(EXAMPLES / name), "s.jsonl", "Summarize the README"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=base,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("name", "api"),
    [
        ("openai_chat_loop.py", "openai"),
        ("anthropic_messages_loop.py", "anthropic"),
        ("langchain_agent.py", "openai"),
        ("agents_sdk_session.py", "openai"),
    ],
)
def test_every_example_runs_offline(server: str, name: str, api: str, tmp_path: Path) -> None:
    """The example finishes the scripted job: the answer, then the panel with every item done."""
    (tmp_path / "README.md").write_text("# A project\n\nIt does one thing.\n", encoding="utf-8")
    env = (
        {"OPENAI_BASE_URL": server + "/v1", "OPENAI_API_KEY": "offline"}
        if api == "openai"
        else {"ANTHROPIC_BASE_URL": server, "ANTHROPIC_API_KEY": "offline"}
    )
    done = run_example(name, env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Done. The toolkit keeps"), done.stdout
    assert DONE in done.stdout
    lines = (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()
    writes = [json.loads(line) for line in lines if '"todo/write"' in line]
    assert len(writes) == 3  # the plan, one item done, all done
    assert writes[0]["data"]["todos"][0] == {"content": "Read the README", "status": "in_progress"}


def test_a_busy_port_is_one_line(server: str) -> None:
    """A port already in use: one line naming it, exit 3, no traceback."""
    port = server.rsplit(":", 1)[1]
    done = subprocess.run(
        [sys.executable, "-m", "harness.testing", "--port", port],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    assert done.returncode == 3
    assert done.stderr.startswith(f"error: cannot listen on 127.0.0.1:{port}:")
    assert len(done.stderr.splitlines()) == 1
