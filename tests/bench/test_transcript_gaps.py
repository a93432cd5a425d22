"""Gaps between model calls, measured from Claude Code timestamps, and the benchmark using them."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

from benchmarks.features.result_clearing import calls_of, gap_line, run
from benchmarks.replay.transcript_gaps import gap_pools
from compaction import get_tokenizer


def record(kind: str, at: str, **extra: Any) -> str:
    return json.dumps({"type": kind, "timestamp": f"2026-01-05T10:{at}Z", **extra})


def assistant(at: str, call_id: str, **extra: Any) -> str:
    return record("assistant", at, message={"id": call_id, "content": []}, **extra)


def tool_result(at: str) -> str:
    content = [{"type": "tool_result", "tool_use_id": "t", "content": "ok"}]
    return record("user", at, message={"content": content})


def typed(at: str) -> str:
    return record("user", at, message={"content": "please go on"})


def write(folder: Path, name: str, lines: list[str]) -> None:
    (folder / name).write_text("\n".join(lines) + "\n", encoding="utf-8")


class TestGapPools:
    def test_gaps_by_what_came_between(self, tmp_path: Path) -> None:
        """A call after a tool result is within a turn, after a typed message between turns."""
        write(
            tmp_path,
            "claude-code_a.jsonl",
            [
                typed("00:00"),
                assistant("00:05", "m1"),
                assistant("00:06", "m1"),  # a second block of the same call: not a call
                tool_result("00:07"),
                assistant("00:12", "m2", isSidechain=True),  # a sub-agent's call: left out
                assistant("00:20", "m3"),
                # two records on one line, as a real transcript has
                typed("04:00") + assistant("05:20", "m4"),
            ],
        )
        pools = gap_pools(tmp_path)
        assert pools is not None
        assert pools.within == (15.0,)
        assert pools.between == (300.0,)
        assert pools.files == ("claude-code_a.jsonl",)

    def test_other_files_and_empty_folders_give_none(self, tmp_path: Path) -> None:
        """Only Claude Code transcripts count; without both kinds of gap there are no pools."""
        write(tmp_path, "gemini.json", [typed("00:00"), assistant("00:05", "m1")])
        assert gap_pools(tmp_path) is None
        assert gap_pools(tmp_path / "missing") is None

    def test_real_transcripts_give_both_pools(self, transcripts: Path) -> None:
        """The shared transcripts give gaps of both kinds, the same on every read."""
        pools = gap_pools(transcripts)
        assert pools is not None
        assert len(pools.within) > 100
        assert len(pools.between) > 10
        assert all(g >= 0 for g in pools.within + pools.between)
        assert gap_pools(transcripts) == pools
        summary = pools.summary()
        assert summary["within_turn"]["median_s"] < summary["between_turns"]["median_s"]


class TestBenchmarkGaps:
    def test_calls_take_their_gaps_from_the_pools(self, tmp_path: Path) -> None:
        """With pools, every gap between calls is one of the measured gaps of its kind."""
        write(
            tmp_path,
            "claude-code_b.jsonl",
            [
                typed("00:00"),
                assistant("00:03", "a"),
                tool_result("00:04"),
                assistant("00:11", "b"),
                typed("10:00"),
                assistant("20:11", "c"),
            ],
        )
        pools = gap_pools(tmp_path)
        assert pools is not None
        assert (pools.within, pools.between) == ((8.0,), (1200.0,))
        calls = calls_of(3, 3, get_tokenizer("o200k_base"), pools)
        gaps = {round(b.at - a.at, 6) for a, b in itertools.pairwise(calls)}
        assert gaps == {8.0, 1200.0}

    def test_results_say_where_the_gaps_came_from(self, tmp_path: Path) -> None:
        """The results name the gap source: transcripts when found, synthetic otherwise."""
        assert run([5], 2, tmp_path)["gap_source"] == {"source": "synthetic"}
        assert "synthetic" in gap_line({"source": "synthetic"})
