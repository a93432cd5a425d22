"""The agent benchmark's parts: the request after a compaction, the real cuts, the totals."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.replay.agent_compactions import first_after, totals
from benchmarks.replay.agent_scenarios import plant, real_cut, scenarios
from benchmarks.replay.hook_cpu import big_transcript
from harness.testing import RecordedRequest, StubModel, make_agent_run


def _request(text: str) -> RecordedRequest:
    body = {"messages": [{"role": "user", "content": text}]}
    return RecordedRequest("/v1/messages", {}, json.dumps(body).encode())


class TestFirstAfter:
    def test_the_request_after_the_last_summary_request(self) -> None:
        """The first ordinary request after the last summary request is the one measured."""
        requests = [
            _request("go"),
            _request("CRITICAL: Respond with TEXT ONLY. one"),
            _request("after one"),
            _request("CRITICAL: Respond with TEXT ONLY. two"),
            _request("after two"),
        ]
        found = first_after(requests)
        assert found is not None
        assert b"after two" in found.body

    def test_none_without_a_compaction(self) -> None:
        """A run with no summary request has no request to measure."""
        assert first_after([_request("go")]) is None


def test_totals_per_agent() -> None:
    """Totals add each agent's rows, with and without the hooks."""
    row = {"agent": "codex", "with": {"open": 3, "held": 3}, "without": {"open": 3, "held": 0}}
    assert totals([row, row]) == {"codex": {"open": 6, "with": 6, "without": 0, "runs": 2}}


def test_every_scenario_leaves_items_open() -> None:
    """Each scripted scenario names the items it leaves open, and its summary keeps none."""
    for scenario in scenarios():
        assert scenario.items
        assert not any(item in scenario.summary for item in scenario.items)


def test_real_cut_ends_where_items_are_open(transcripts: Path, tmp_path: Path) -> None:
    """The cut of a real session ends after a tool result, with its open items listed."""
    source = transcripts / "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
    lines, items = real_cut(source)
    assert len(items) == 4
    assert b"tool_use_id" in lines[-1]
    with StubModel([]) as stub:
        run = make_agent_run(tmp_path, "claude-code", stub)
        session = plant(run, lines)
    planted = next((run.home / ".claude" / "projects").rglob(f"{session}.jsonl"))
    first = json.loads(planted.read_text().splitlines()[1])
    assert first.get("sessionId") in (None, session)


def test_big_transcript_passes_the_size(transcripts: Path, tmp_path: Path) -> None:
    """The CPU benchmark's transcript is at least the size asked, and ends in a compaction."""
    source = transcripts / "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
    path = big_transcript(source, tmp_path / "big.jsonl", 3 * 1024 * 1024)
    assert path.stat().st_size >= 3 * 1024 * 1024
    assert b"isCompactSummary" in path.read_bytes()[-300:]
