"""The replay hands its summarizer to every compaction, the token-scaled ones included.

Claude Code's transcripts carry usage reports, so the session learns the provider's token scale
and `maybe_compact` fires below the raw trigger; the replay must ask the same question
(`compaction.compactor.compaction_due`) before it builds the summarizer, or those compactions
fall back to the extractive one and the LLM summarizer's calls go unpriced.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from benchmarks.replay.real_transcripts import REAL_SESSIONS, session_tools
from compaction import (
    CompactionPolicy,
    ExtractiveSummarizer,
    Session,
    SummaryInput,
    UsageReportData,
    get_tokenizer,
)
from compaction.compactor.compact import compaction_due, maybe_compact
from compaction.importers import load
from harness.simulation import STRATEGIES, log_payloads, replay


class CountingSummarizer:
    """The extractive summarizer, counting the compactions it was handed."""

    name = "counting"

    def __init__(self, calls: list[int]) -> None:
        self.calls = calls
        self.inner = ExtractiveSummarizer()

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        self.calls.append(len(span.messages))
        return self.inner.summarize(span)


def test_every_compaction_gets_the_summarizer(transcripts: Path) -> None:
    """On a transcript whose usage reports scale the trigger, each compaction is summarized."""
    name = "real-claude-code-2.1.39-taskcreate-64df"
    payloads = log_payloads(load(transcripts / REAL_SESSIONS[name]))
    calls: list[int] = []

    def make(request: dict[str, Any]) -> CountingSummarizer:
        return CountingSummarizer(calls)

    result = replay(
        payloads,
        STRATEGIES["B"],
        policy=CompactionPolicy(window_tokens=30_000),
        tokenizer=get_tokenizer(),
        session_name=name,
        summarizer=make,
        tools=session_tools(payloads),
    )
    assert result.compactions >= 2
    assert len(calls) == result.compactions


def _play(session: Session, *, calls: int, scale: float) -> None:
    """Log agent calls whose provider prompt grows `scale` times the counted context."""
    session.start_turn("read every file and report")
    for i in range(calls):
        prompt = 900 + round(scale * session.context_tokens)
        session.append(
            UsageReportData(purpose="turn", model="m1", prompt_tokens=prompt, completion_tokens=5)
        )
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        reply = {"role": "assistant", "content": f"step {i} " * 20, "tool_calls": [call]}
        session.add_message(reply)
        session.add_message({"role": "tool", "tool_call_id": f"c{i}", "content": "line\n" * 40})


def test_compaction_due_is_maybe_compacts_check(tmp_path: Path) -> None:
    """`compaction_due` says yes exactly when `maybe_compact` compacts, raw trigger or scaled."""
    with Session(tmp_path / "s.jsonl") as session:
        _play(session, calls=14, scale=1.5)
        raw = session.context_tokens
        scaled = CompactionPolicy(window_tokens=int(raw / 0.8 * 1.2), threshold=0.8)
        assert not scaled.should_compact(raw)
        assert compaction_due(session, scaled)
        roomy = CompactionPolicy(window_tokens=raw * 4, threshold=0.8)
        assert not compaction_due(session, roomy)
        assert maybe_compact(session, roomy) is None
        assert maybe_compact(session, scaled) is not None
