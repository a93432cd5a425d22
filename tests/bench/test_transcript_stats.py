"""`benchmarks.replay.transcript_stats`: the counts the `real` session shape is calibrated on."""

from __future__ import annotations

from pathlib import Path

from benchmarks.replay import transcript_stats
from compaction import Message, TodoWriteData, TurnStartData
from harness.simulation import generate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


def test_counts_match_a_plain_count_of_a_generated_session():
    """Calls, tool calls, writes and the gaps between writes equal a direct count."""
    payloads = generate(5, 2, "real")
    stats = transcript_stats.measure_payloads("g", payloads)
    calls = [p for p in payloads if isinstance(p, Message) and p.role == "assistant"]
    assert stats.model_calls == len(calls)
    assert stats.tool_calls == sum(len(p.tool_calls or ()) for p in calls)
    assert stats.todo_writes == sum(isinstance(p, TodoWriteData) for p in payloads)
    assert len(stats.turn_calls) == sum(isinstance(p, TurnStartData) for p in payloads)
    assert sum(stats.turn_calls) == len(calls)
    assert len(stats.between_writes) == stats.todo_writes - 1
    assert len(stats.output_tokens) == sum(
        isinstance(p, Message) and p.role == "tool" for p in payloads
    )


def test_folder_measured_and_tabled(tmp_path):
    """Each transcript of a folder is one row; an empty series shows as a dash."""
    for name in ("claude_code_small.jsonl", "swe_agent_small.traj"):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    (tmp_path / "SOURCES.md").write_text("not a transcript")
    rows = transcript_stats.measure(tmp_path)
    assert [r.name for r in rows] == ["claude_code_small.jsonl", "swe_agent_small.traj"]
    assert (rows[0].todo_writes, rows[0].task_events, rows[0].tasks) == (2, 5, 2)
    table = transcript_stats.markdown(rows)
    assert len(table) == 4
    assert "| - | - |" not in table[2]
    assert "| 0 | 0 (0) | - | - |" in table[3]  # SWE-agent writes no list
    pooled = transcript_stats.pooled(rows)
    assert pooled["model_calls"] == rows[0].model_calls + rows[1].model_calls
    assert transcript_stats.measure(tmp_path / "absent") == []


def test_recorded_summaries_are_measured():
    """A recorded compaction's summary is counted in tokens: the output a summary call costs."""
    from compaction import CheckpointData, get_tokenizer

    text = "The user asked for a parser; two tests still fail."
    cp = CheckpointData(
        text=text, first_seq=1, last_seq=2, tokens_before=9, tokens_after=3, summarizer="x"
    )
    stats = transcript_stats.measure_payloads("s", [*generate(1, 0), cp])
    assert stats.summary_tokens == [get_tokenizer().count(text)]
    assert transcript_stats.pooled([stats])["summary_tokens"]["n"] == 1
