"""Issue 25, case 13: `compact` on a file that is not a log, and the sign of a grown request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import Session


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)).replace(b"\n", b"") * 8,
        b"\x00" * 4096,
        b"\x89PNG\r\x1a" + b"\xff" * 900,
        b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4,  # newlines: line 1 is a whole bad line
        b"GIF89a\x01\x00\n{not json}\n",
    ],
)
def test_compact_on_a_binary_file_says_not_a_log(content: bytes, tmp_path: Path) -> None:
    """A binary file is refused as "not a session log" (exit 2), left byte-identical."""
    path = tmp_path / "blob.bin"
    path.write_bytes(content)
    done = run_cli("compact", path, "--force")
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "is not a session log" in done.stderr
    assert "nothing_to_compact" not in done.stderr + done.stdout
    assert path.read_bytes() == content


def test_an_empty_file_is_still_nothing_to_compact(tmp_path: Path) -> None:
    """An empty (or new) log is not refused as foreign: it just has nothing to compact."""
    path = tmp_path / "empty.jsonl"
    path.write_bytes(b"")
    done = run_cli("compact", path, "--force")
    assert "is not a session log" not in done.stderr


def test_a_grown_request_prints_a_plus_sign(tmp_path: Path) -> None:
    """A forced compaction of a tiny context grows it: the change reads +N%, never --N%."""
    log = tmp_path / "s.jsonl"
    with Session(log) as s:
        s.start_turn("Hi", mode="agent")
        s.todo_write({"todos": [{"content": "Say hello", "status": "in_progress"}]})
        for i in range(3):
            s.add_message({"role": "assistant", "content": f"ok {i}"})
    done = run_cli("compact", log, "--force", "--retain", "0")
    assert done.returncode == 0, done.stderr
    change = re.search(r"context \d+ -> \d+, ([+-][0-9.]+%)\)", done.stdout)
    assert change is not None, done.stdout
    assert change.group(1).startswith("+")
    assert "--" not in done.stdout
