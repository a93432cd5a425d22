"""The named session shapes: `stepwise` kept as it was, `real` shaped like the real transcripts."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import pytest

from compaction import Message, TodoWriteData, TurnStartData
from compaction.tools import parse_todo_write
from harness.simulation import PROFILES, generate
from harness.simulation._session_profiles import REAL, STEPWISE, SessionProfile, get_profile
from harness.simulation._sessions import unfinished


def calls_between_writes(payloads: list[Any]) -> list[int]:
    """Model calls between two consecutive todo writes (a plain reference count)."""
    gaps, since, wrote = [], 0, False
    for p in payloads:
        if isinstance(p, Message) and p.role == "assistant":
            since += 1
        elif isinstance(p, TodoWriteData):
            if wrote:
                gaps.append(since)
            since, wrote = 0, True
    return gaps


class TestProfiles:
    def test_stepwise_is_the_default(self):
        """Without a profile the generator writes the stepwise shape, by name or by object."""
        assert generate(6, 3) == generate(6, 3, "stepwise") == generate(6, 3, STEPWISE)
        assert generate(6, 3, "real") != generate(6, 3)

    def test_profiles_by_name(self):
        """Every profile is listed under its own name, with a description."""
        assert set(PROFILES) >= {"stepwise", "real"}
        for name, profile in PROFILES.items():
            assert profile.name == name
            assert profile.description

    @pytest.mark.parametrize("bad", ["", "Real", "dense", "real "])
    def test_unknown_profile_is_refused(self, bad):
        """An unknown name is a ValueError that lists the names."""
        with pytest.raises(ValueError, match="choose one of stepwise, real"):
            generate(2, 0, bad)
        with pytest.raises(ValueError, match="unknown session profile"):
            get_profile(bad)

    @pytest.mark.parametrize("profile", sorted(PROFILES))
    @pytest.mark.parametrize(("turns", "seed"), [(1, 0), (6, 1), (12, 7)])
    def test_invariants_hold_for_every_profile(self, profile, turns, seed):
        """Calls answered in order, valid recorded writes, no write in Plan mode, work left."""
        payloads = generate(turns, seed, profile)
        assert generate(turns, seed, profile) == payloads
        mode = None
        for i, p in enumerate(payloads):
            if isinstance(p, TurnStartData):
                mode = p.mode
            if not isinstance(p, Message) or not p.tool_calls:
                continue
            answers = [x for x in payloads[i + 1 :] if isinstance(x, Message)]
            ids = [c.id for c in p.tool_calls]
            assert [a.tool_call_id for a in answers[: len(ids)]] == ids
            for call in p.tool_calls:
                if call.function.name == "todo_write":
                    assert mode != "plan"
                    nxt = payloads[i + 1]
                    assert isinstance(nxt, TodoWriteData)
                    assert nxt.todos == parse_todo_write(call.function.arguments)
        left = unfinished(payloads)
        assert left
        assert [t.status for t in left].count("in_progress") == 1

    @pytest.mark.parametrize("seed", [0, 1, 2, 7])
    def test_real_writes_rarely_with_long_work_between(self, seed):
        """`real` leaves several calls between writes, up to long stretches; stepwise does not."""
        real = calls_between_writes(generate(24, seed, "real"))
        step = calls_between_writes(generate(24, seed, "stepwise"))
        assert statistics.median(real) >= 5
        assert max(real) >= 20
        assert statistics.median(step) <= 3
        assert max(step) < 10

    def test_real_has_very_large_outputs(self):
        """`real` now and then reads a very large file; stepwise never does."""

        def biggest(profile: str) -> int:
            return max(
                len(p.text())
                for p in generate(24, 0, profile)
                if isinstance(p, Message) and p.role == "tool"
            )

        assert biggest("real") > 40_000
        assert biggest("stepwise") < 40_000

    def test_a_profile_object_is_used_as_given(self):
        """A custom SessionProfile drives the generator: rewrite_chance 0 writes once a turn."""
        once = SessionProfile(name="once", description="one write", rewrite_chance=0.0)
        payloads = generate(4, 0, once)
        starts = sum(isinstance(p, TurnStartData) for p in payloads)
        writes = sum(isinstance(p, TodoWriteData) for p in payloads)
        # One write at each turn's start and one at its end (the last turn ends mid-work).
        assert writes <= 2 * starts
        assert REAL.rewrite_chance < 1.0 == STEPWISE.rewrite_chance


def test_real_profile_matches_the_transcripts(transcripts: Path) -> None:
    """The `real` cadence (median calls between writes) is within 2x of the real transcripts'."""
    from benchmarks.replay.transcript_stats import measure, pooled

    measured = pooled(measure(transcripts))["between_writes"]["median"]
    gaps = [g for seed in (0, 1, 2) for g in calls_between_writes(generate(24, seed, "real"))]
    assert measured / 2 <= statistics.median(gaps) <= measured * 2
