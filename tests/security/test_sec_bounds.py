"""Section 4: every wait and read is bounded.

The timeout covers a whole attempt, an answer is read up to a size cap, and importers refuse
over-long lines and over-deep JSON without reading them whole.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from hostile_server import HostileServer

from compaction import Session
from harness.cli import main


@pytest.fixture
def log(tmp_path: Path) -> Path:
    path = tmp_path / "s.jsonl"
    with Session(path) as s:
        s.start_turn("Add a flag.", mode="agent")
        assert not s.todo_write({"todos": [{"content": "Ship it", "status": "pending"}]}).is_error
        for i in range(6):
            s.add_message({"role": "assistant", "content": f"Step {i}: edited cli.py " * 30})
        s.start_turn("Also the changelog.", mode="agent")
    return path


def _compact(log: Path, server: HostileServer, *extra: str) -> int:
    return main(
        [
            "compact",
            str(log),
            "--force",
            "--json",
            "--summarizer",
            "openai",
            "--base-url",
            server.base_url,
            "--model",
            "m",
            "--api-key-env",
            "HARNESS_NO_KEY",
            "--max-retries",
            "0",
            *extra,
        ]
    )


def test_timeout_bounds_a_dripping_server(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--timeout 2 --max-retries 0`` against a server dripping a byte a second ends quickly."""
    with HostileServer("drip") as server:
        started = time.monotonic()
        status = _compact(log, server, "--timeout", "2")
        elapsed = time.monotonic() - started
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert elapsed < 15, elapsed  # the drip alone lasts 60 s; per-read timeouts never fire
    assert out["summarizer"] == "extractive"
    assert "timeout" in out["fallback_reason"]


def test_huge_answer_is_abandoned(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """An answer past 16 x max_output_tokens + 64 KiB bytes is abandoned with a fallback."""
    with HostileServer("huge") as server:
        status = _compact(log, server, "--timeout", "30", "--max-output-tokens", "1000")
    out = json.loads(capsys.readouterr().out)
    assert status == 0
    assert out["summarizer"] == "extractive"
    assert f"passed {16 * 1000 + 64 * 1024} bytes" in out["fallback_reason"]
