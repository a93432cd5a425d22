"""`benchmarks.continuity`: B's verbatim tail after each compaction, beside its cost."""

from __future__ import annotations

from benchmarks import continuity
from compaction import CompactionPolicy
from harness.simulation import STRATEGIES, generate, replay


def test_tail_is_the_request_after_the_checkpoint():
    """A record's tail is its request less the fixed prompt and the Checkpoint."""
    result = replay(generate(3, 0, "real"), STRATEGIES["B"], policy=CompactionPolicy(12_000))
    after = [r for r in result.records if r.compacted]
    assert after
    for r in result.records:
        assert r.tail_tokens == r.prompt_tokens - r.fixed_tokens - r.checkpoint_tokens
    assert all(r.checkpoint_tokens > 0 for r in after)
    assert result.records[0].latest_tool_kept is None
    assert all(r.latest_tool_kept is not None for r in after)


def test_a_longer_tail_keeps_more_verbatim():
    """On the same session, retain 0.3 leaves a longer tail after compactions than 0.05."""
    results = continuity.run(
        window=12_000, sessions=[("real", 3, 0)], retains=[0.05, 0.3], thresholds=[0.8]
    )
    short, long = results["rows"]
    assert (short["retain"], long["retain"]) == (0.05, 0.3)
    assert short["compactions"] >= 1
    assert long["compactions"] >= 1
    assert long["tail_mean"] > short["tail_mean"]
    assert long["latest_tool_kept"] >= short["latest_tool_kept"]
    table = continuity.markdown(results)
    assert len(table) == 4 + 2
    assert all(r["every_call"] == 1.0 for r in results["rows"])
