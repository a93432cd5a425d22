"""Section 6: small holes in tool arguments and options."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import Session, ToolInputError
from compaction.contract import MAX_ARGUMENT_BYTES
from compaction.tools import parse_todo_write
from harness.cli import main

HEAD = "todo_write: rejected, nothing was changed. Fix the arguments and call again:\n"


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ('{"todos": [{"content": "a", "status": "pending"}], "todos": []}', "todos"),
        ('{"todos": [{"content": "a", "content": "b", "status": "pending"}]}', "content"),
        ('{"todos": [{"content": "a", "status": "pending", "status": "completed"}]}', "status"),
    ],
)
def test_duplicate_keys_are_rejected(raw: str, key: str, tmp_path: Path) -> None:
    """A repeated key is rejected (JSON would silently keep the last), and nothing is appended."""
    with pytest.raises(ToolInputError) as info:
        parse_todo_write(raw)
    assert str(info.value) == HEAD + f'- arguments repeat the key "{key}"; send each key once'
    log = tmp_path / "s.jsonl"
    with Session(log) as session:
        assert session.todo_write(raw).is_error
    assert not log.exists() or log.read_bytes() == b""


@pytest.mark.parametrize(
    "content",
    [
        "\u200b",
        "\ufeff",
        "\u200e\u200f",
        "\u202a\u202e\u2066\u2069",
        " \u200b\u200c\u200d\u2060 ",
        "\u00ad",
        "\u3164",
        "\u2800",
    ],
)
def test_invisible_content_is_blank(content: str) -> None:
    """Content made only of invisible characters (zero-width, BOM, bidi marks) is blank."""
    raw = json.dumps({"todos": [{"content": content, "status": "pending"}]})
    with pytest.raises(ToolInputError) as info:
        parse_todo_write(raw)
    assert str(info.value) == HEAD + "- todos[0].content is blank"


def test_visible_text_with_invisible_marks_is_kept() -> None:
    """A real task that also holds a zero-width or bidi mark is accepted as written."""
    raw = json.dumps({"todos": [{"content": "Fix \u200bthe \u202eparser", "status": "pending"}]})
    assert parse_todo_write(raw)[0].content == "Fix \u200bthe \u202eparser"


def test_size_limit_counts_bytes() -> None:
    """The argument size limit counts UTF-8 bytes: 400,000 three-byte characters are too many."""
    content = "\u4e2d" * 400_000  # 400,000 characters, 1,200,000 bytes
    raw = json.dumps({"todos": [{"content": content, "status": "pending"}]}, ensure_ascii=False)
    assert len(raw) < MAX_ARGUMENT_BYTES < len(raw.encode("utf-8"))
    with pytest.raises(ToolInputError, match=f"larger than {MAX_ARGUMENT_BYTES} bytes"):
        parse_todo_write(raw)
    items = [{"content": f"{i:04d}" + "x" * 1990, "status": "pending"} for i in range(490)]
    ascii_raw = json.dumps({"todos": items})
    assert len(ascii_raw.encode()) <= MAX_ARGUMENT_BYTES
    assert len(parse_todo_write(ascii_raw)) == 490


@pytest.mark.parametrize("date", ["2026-02-30", "2026-13-01", "2025-02-29", "0000-01-01"])
def test_date_must_be_real(date: str, capsys: pytest.CaptureFixture[str]) -> None:
    """`--date` must be a real calendar date, not just four-two-two digits."""
    assert main(["prompt", "--date", date]) == 2
    assert capsys.readouterr().err == (
        f"harness prompt: --date '{date}': expected a real date, YYYY-MM-DD\n"
    )


def test_real_date_is_shown(capsys: pytest.CaptureFixture[str]) -> None:
    """A real date (a leap day included) goes into the environment block."""
    assert main(["prompt", "--date", "2024-02-29"]) == 0
    assert '- Date: "2024-02-29"' in capsys.readouterr().out
