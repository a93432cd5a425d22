"""A provider's opaque item counts in the whole request: trigger, usage view, tokens_after."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from compaction import (
    CheckpointRecorded,
    CompactionPolicy,
    Session,
    compact,
    count_message,
    get_tokenizer,
    maybe_compact,
    read_events,
)
from compaction.backends import BackendConfig, code_owned_message
from compaction.views import checkpoint_message
from harness.testing import Reply, StubModel
from prompts import compaction_backend

POLICY = CompactionPolicy(window_tokens=8000)
HUGE = "QUJD" * 12_000
"""A 48,000-character opaque payload (base64-shaped)."""


def filled(path: Path) -> Session:
    """A session with a todo list and enough turns to compact."""
    session = Session(path)
    session.start_turn("Fix the parser")
    session.todo_write(
        {
            "todos": [
                {"content": "Fix the off-by-one", "status": "in_progress"},
                {"content": "Run the tests", "status": "pending"},
            ]
        }
    )
    for i in range(8):
        session.add_message({"role": "user", "content": f"step {i} " + "details " * 60})
        session.add_message({"role": "assistant", "content": "done " * 60})
    return session


def compacted(path: Path, reply: Reply) -> Session:
    """The session after a forced compaction through the openai-responses backend."""
    session = filled(path)
    with StubModel([reply]) as stub:
        config = BackendConfig(base_url=stub.base_url, model="gpt-5.2", max_retries=0)
        backend = compaction_backend("openai-responses", config)
        result = compact(session, POLICY, force=True, backend=backend)
    assert result.data.provider is not None
    assert result.data.provider.item is not None
    return session


def usage(output_tokens: int) -> dict[str, Any]:
    total = 900 + output_tokens
    return {"input_tokens": 900, "output_tokens": output_tokens, "total_tokens": total}


class TestItemSize:
    def test_a_huge_item_moves_the_trigger(self, tmp_path: Path) -> None:
        """Same log, same local Checkpoint: only the session with the huge item is due."""
        small = compacted(tmp_path / "small.jsonl", Reply(compaction="tiny", usage=usage(40)))
        huge = compacted(tmp_path / "huge.jsonl", Reply(compaction=HUGE))
        with small, huge:
            small_cp, huge_cp = small.context.checkpoint, huge.context.checkpoint
            assert small_cp is not None
            assert huge_cp is not None
            assert small_cp.text == huge_cp.text
            assert huge.context_tokens > small.context_tokens + 20_000
            assert huge.usage.context_tokens == huge.context_tokens
            assert maybe_compact(small, POLICY) is None
            assert maybe_compact(huge, POLICY) is not None

    def test_harness_log_reports_the_count_with_the_item(self, tmp_path: Path) -> None:
        """`harness log --json` gives the same context figure, item included."""
        path = tmp_path / "s.jsonl"
        session = compacted(path, Reply(compaction=HUGE))
        with session:
            live = session.context_tokens
        done = run_cli("log", path, "--json")
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["context_tokens"] == live
        assert live > 20_000

    @pytest.mark.parametrize("reported", [None, 0, 12_345])
    def test_the_item_costs_its_json_count(self, tmp_path: Path, reported: int | None) -> None:
        """The item costs the tokenizer's count of its canonical JSON, whatever usage says."""
        tok = get_tokenizer("o200k_base")
        answer = usage(reported) if reported is not None else {"x": 1}
        session = compacted(tmp_path / "s.jsonl", Reply(compaction=HUGE, usage=answer))
        with session:
            data = session.context.checkpoint
            assert data is not None
            assert data.provider is not None
            assert data.provider.item
            item = json.dumps(data.provider.item, sort_keys=True, separators=(",", ":"))
            owned = count_message(tok, code_owned_message(data))
            kept = sum(count_message(tok, m) for m in session.context.messages)
            assert session.context_tokens == tok.count(item) + owned + kept

    def test_tokens_after_counts_the_item_and_survives_reopen(self, tmp_path: Path) -> None:
        """tokens_after includes the item; a reopened session counts the same context."""
        path = tmp_path / "s.jsonl"
        session = compacted(path, Reply(compaction=HUGE))
        with session:
            live = session.context_tokens
        event = [e for e in read_events(path) if isinstance(e, CheckpointRecorded)][-1]
        assert event.data.tokens_after > 20_000
        with Session(path) as reopened:
            assert reopened.context_tokens == live

    def test_never_below_the_local_checkpoint(self, tmp_path: Path) -> None:
        """A tiny item never makes the checkpoint cost less than its local message."""
        tok = get_tokenizer("o200k_base")
        session = compacted(tmp_path / "s.jsonl", Reply(compaction="t"))
        with session:
            data = session.context.checkpoint
            assert data is not None
            kept = sum(count_message(tok, m) for m in session.context.messages)
            assert session.context_tokens == count_message(tok, checkpoint_message(data)) + kept
