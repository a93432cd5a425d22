"""A process killed inside a tool call, then a second process that resumes: a valid request.

Each host (the LangChain middleware without and with a checkpointer, the Agents SDK session)
runs one turn in its own process against the scripted model; the model asks for ``read_file``,
whose tool blocks on a FIFO until the test kills the process with SIGKILL. A second process then
resumes the same log over a stub that refuses, as every provider does, a request holding a tool
call without its result. It must get its answer: the killed call answered by the placeholder,
recorded once in the log.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("langchain")
pytest.importorskip("agents")

from killing import kill_inside_tool

from compaction import MessageAdded, read_events
from compaction.views.unanswered import interrupted_text, unanswered_in_log
from harness.testing import Reply, StubModel, ToolCall

CHILD = Path(__file__).with_name("killed_loop.py")
HOSTS = ["langchain", "langchain_checkpointer", "agents"]


def child(host: str, log: Path, stub: StubModel, blocker: Path, request: str) -> list[str]:
    return [sys.executable, str(CHILD), host, str(log), stub.base_url, str(blocker), request]


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}
    return {**env, "NO_PROXY": "127.0.0.1", "PYTHONPATH": str(Path.cwd())}


def placeholders(log: Path) -> list[str]:
    """The call ids the log answers with the placeholder, in order."""
    return [
        e.data.tool_call_id or ""
        for e in read_events(log)
        if isinstance(e, MessageAdded) and e.data.text() == interrupted_text()
    ]


@pytest.mark.parametrize("host", HOSTS)
def test_a_resume_after_a_kill_inside_a_tool_call_sends_a_valid_request(
    host: str, tmp_path: Path
) -> None:
    """Killed in read_file; the next process's requests are accepted, the call answered once."""
    log = tmp_path / "s.jsonl"
    first = [Reply(None, tool_calls=[ToolCall("read_file", {"path": "x"}, id="call_killed")])]
    with StubModel(first) as stub:
        command = child(host, log, stub, tmp_path / "blocker", "Read x.")
        kill_inside_tool(command, tmp_path / "blocker", cwd=tmp_path, env=environment())
    killed = [c.id for _, c in unanswered_in_log(read_events(log))]
    # The Agents SDK saves a turn's items after its tools ran: the killed call never reached it.
    assert killed == ([] if host == "agents" else ["call_killed"])
    (tmp_path / "plain").write_text("x", encoding="utf-8")
    for turn in ("Go on.", "And again."):
        with StubModel([Reply("Done.")]) as stub:
            done = subprocess.run(
                child(host, log, stub, tmp_path / "plain", turn), cwd=tmp_path,
                env=environment(), capture_output=True, text=True, timeout=180, check=False,
            )  # fmt: skip
        assert (done.returncode, done.stdout.strip()) == (0, "Done."), done.stderr
        assert stub.unpaired == []
        sent = stub.requests[0].json()["messages"]
        answers = [m for m in sent if m.get("tool_call_id") == "call_killed"]
        assert [a["content"] for a in answers] == [interrupted_text()] * len(killed)
    assert placeholders(log) == killed  # recorded once, whatever the later turns
    assert unanswered_in_log(read_events(log)) == []
