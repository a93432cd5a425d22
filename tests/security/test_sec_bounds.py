"""Section 4: every wait and read is bounded.

The timeout covers a whole attempt, an answer is read up to a size cap, and importers refuse
over-long lines and over-deep JSON without reading them whole.
"""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import pytest
from security.hostile_server import HostileServer

from compaction import Session, TranscriptError
from compaction.importers import ImportReport, load
from compaction.importers._records import DEEP, MAX_DEPTH, MAX_LINE_BYTES, too_deep
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


FIXTURE = Path(__file__).parents[1] / "fixtures" / "transcripts" / "codex_small.jsonl"


def _with_line(tmp_path: Path, line: bytes) -> Path:
    """Return a copy of the Codex fixture with `line` inserted as its third line."""
    lines = FIXTURE.read_bytes().splitlines(keepends=True)
    path = tmp_path / "t.jsonl"
    with path.open("wb") as fh:
        fh.writelines(lines[:2])
        fh.write(line + b"\n")
        fh.writelines(lines[2:])
    return path


def _big_line(size: int) -> bytes:
    """A Codex user message of `size` bytes of text, in words as real text is.

    (Counting a run of one letter with no space to split it is ten times slower, and beside the
    point here.)
    """
    head = b'{"type": "response_item", "payload": {"type": "message", "role": "user", "content": '
    text = (b"ab " * (size // 3 + 1))[:size]
    return head + b'[{"type": "input_text", "text": "' + text + b'"}]}}'


def _events(path: Path, report: ImportReport, *, strict: bool = False) -> list[object]:
    return list(load(path, "codex", report=report, strict=strict))


def test_long_line_is_skipped_unread(tmp_path: Path) -> None:
    """A 50 MB line is counted and skipped with peak memory far below its size."""
    path = _with_line(tmp_path, _big_line(50_000_000))
    clean = ImportReport(path=str(FIXTURE))
    expected = len(_events(FIXTURE, clean))
    report = ImportReport(path=str(path))
    tracemalloc.start()
    try:
        events = _events(path, report)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * MAX_LINE_BYTES < 50_000_000
    assert len(events) == expected
    assert [(b.line, b.reason) for b in report.broken_lines] == [
        (3, f"line longer than {MAX_LINE_BYTES} bytes (skipped unread)")
    ]


def test_line_at_the_cap_is_read(tmp_path: Path) -> None:
    """A line of exactly MAX_LINE_BYTES bytes is still read."""
    line = _big_line(0)
    line = _big_line(MAX_LINE_BYTES - len(line))
    assert len(line) == MAX_LINE_BYTES
    report = ImportReport(path="t")
    _events(_with_line(tmp_path, line), report)
    assert report.broken_lines == []


@pytest.mark.parametrize(
    "line",
    [b"[" * 5000 + b"]" * 5000, b'{"a": ' * 101 + b"1" + b"}" * 101, b"[" * 200_000],
)
def test_deep_json_is_skipped(line: bytes, tmp_path: Path) -> None:
    """JSON nested past MAX_DEPTH is counted and skipped, and --strict names the line."""
    path = _with_line(tmp_path, line)
    report = ImportReport(path=str(path))
    _events(path, report)
    assert [b.line for b in report.broken_lines] == [3]
    assert report.broken_lines[0].reason in (DEEP, "not JSON at column 1: Expecting value")
    with pytest.raises(TranscriptError, match=r"t\.jsonl:3: "):
        _events(path, ImportReport(path=str(path)), strict=True)


def test_depth_limit_boundary() -> None:
    """MAX_DEPTH levels pass; one more is too deep."""
    value: object = 1
    for _ in range(MAX_DEPTH):
        value = [value]
    assert not too_deep(value)
    assert too_deep([value])


def test_import_cli_reports_the_long_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`harness import` lists the over-long line; with --strict it is one error line, exit 2."""
    path = _with_line(tmp_path, _big_line(MAX_LINE_BYTES + 10))
    assert main(["import", "codex", str(path), "-o", str(tmp_path / "out.jsonl")]) == 0
    assert "broken line 3: line longer than" in capsys.readouterr().out
    out = tmp_path / "strict.jsonl"
    assert main(["import", "codex", str(path), "-o", str(out), "--strict"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert f"{path}:3: line longer than {MAX_LINE_BYTES} bytes" in err
    assert not out.exists()
