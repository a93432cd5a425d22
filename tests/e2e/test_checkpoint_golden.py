"""A golden Checkpoint for one real Claude Code session (ours, generated from it at test time).

The transcript is read from ../shared/transcripts (never copied here); it is imported and
replayed at a 32,000-token window with the extractive summarizer, and the newest Checkpoint of
the replay is compared byte for byte with the committed one. Regenerate after an intended change
with ``UPDATE_GOLDEN=1 .venv/bin/pytest tests/e2e/test_checkpoint_golden.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

from compaction import CompactionPolicy, Session, get_tokenizer, parse_checkpoint
from compaction.importers import load, replay

GOLDEN = Path(__file__).resolve().parent / "golden" / "checkpoint_claude_code_ends_with_pending.md"
TRANSCRIPT = "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"


def test_golden_checkpoint_of_a_real_session(transcripts: Path, tmp_path: Path) -> None:
    """The newest Checkpoint of the replayed session is the committed one, and reads right."""
    tokenizer = get_tokenizer()
    events = list(load(transcripts / TRANSCRIPT, tokenizer=tokenizer))
    with Session(tmp_path / "replay.jsonl", tokenizer=tokenizer, sync="batch") as session:
        report = replay(events, session, CompactionPolicy(window_tokens=32_000))
    assert len(report.compactions) >= 2
    text = report.compactions[-1].result.data.text
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text, encoding="utf-8")
    assert GOLDEN.exists(), f"missing golden file {GOLDEN}; run with UPDATE_GOLDEN=1"
    assert text == GOLDEN.read_text(encoding="utf-8")
    checkpoint = parse_checkpoint(text)
    assert checkpoint.primary_request.startswith('- on which data does "entire session list"')
    assert checkpoint.files_and_code.startswith("- edited `")
    assert "?" not in checkpoint.next_step.rstrip()[-1:]
