"""`benchmarks.quality.continuity`: B's verbatim tail after each compaction, beside its cost."""

from __future__ import annotations

from benchmarks.quality import continuity, continuity_report
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
    session = ("synthetic-real-t3-s0", generate(3, 0, "real"), None)
    results = continuity.run(
        window=12_000, sessions=[session], retains=[0.05, 0.3], thresholds=[0.8], boundaries=[None]
    )
    short, long = results["rows"]
    assert (short["retain"], long["retain"]) == (0.05, 0.3)
    assert short["compactions"] >= 1
    assert long["compactions"] >= 1
    assert long["tail_mean"] > short["tail_mean"]
    assert long["latest_tool_kept"] >= short["latest_tool_kept"]
    table = continuity_report.session_table(results["rows"])
    assert len(table) == 2 + 2
    assert all(r["every_call"] == 1.0 for r in results["rows"])


def _row(retain: float, kept: int, empty: int, usd: float, every: float = 1.0) -> dict[str, object]:
    """A measured row of one session: 10 compactions, all after a tool result."""
    return {
        "session": "s",
        "retain": retain,
        "threshold": 0.8,
        "summed_input_tokens": int(usd * 1000),
        "cost_usd": {"openai": usd, "anthropic": 2 * usd},
        "compactions": 10,
        "tail_empty": empty,
        "tool_compactions": 10,
        "tool_kept_count": kept,
        "tails": [100] * 10,
        "every_call": every,
    }


def test_choose_puts_continuity_before_cost():
    """The cheapest setting loses when it drops the latest tool result more often."""
    rows = [_row(0.05, 6, 4, 1.0), _row(0.16, 10, 0, 1.5), _row(0.25, 10, 0, 2.0)]
    pick = continuity_report.choose(continuity_report.pooled({"window": 1, "rows": rows}))
    assert pick is not None
    assert pick["retain"] == 0.16


def test_without_a_whole_setting_the_most_kept_wins():
    """No setting keeps everything: the most latest-tool results kept, then fewest empty tails."""
    rows = [_row(0.05, 6, 4, 1.0), _row(0.16, 9, 1, 1.5), _row(0.25, 9, 2, 1.2)]
    pick = continuity_report.choose(continuity_report.pooled({"window": 1, "rows": rows}))
    assert pick is not None
    assert pick["retain"] == 0.16


def test_choose_skips_a_setting_that_loses_a_todo():
    """A setting that shows fewer than every unfinished item on some call never qualifies."""
    rows = [_row(0.16, 10, 0, 1.5, every=0.99), _row(0.25, 10, 0, 2.0)]
    pick = continuity_report.choose(continuity_report.pooled({"window": 1, "rows": rows}))
    assert pick is not None
    assert pick["retain"] == 0.25
    assert continuity_report.choose([]) is None


def test_each_boundary_floor_is_its_own_setting():
    """Rows that differ only in the boundary floor pool apart; the pick names its floor."""
    plain = _row(0.05, 10, 0, 2.0)
    floor = {**_row(0.05, 10, 0, 1.0), "boundary": 0.4}
    results = {"window": 1, "rows": [plain, floor]}
    settings = continuity_report.pooled(results)
    assert [s["boundary"] for s in settings] == [None, 0.4]
    pick = continuity_report.choose(settings)
    assert pick is not None
    assert continuity_report.picked_text(pick) == "retain 0.05, threshold 0.8, boundary 0.4"
    assert continuity_report.picked_text(settings[0]).endswith("no boundary trigger")
    table = continuity_report.pooled_table(settings)
    assert table[2].startswith("| 0.05 | 0.8 | - | ")
    assert table[3].startswith("| 0.05 | 0.8 | 0.4 | ")


def test_run_skips_a_floor_above_the_threshold():
    """A boundary floor the policy would refuse (above the threshold) is not measured."""
    session = ("synthetic-real-t3-s0", generate(3, 0, "real"), None)
    results = continuity.run(
        window=12_000,
        sessions=[session],
        retains=[0.05],
        thresholds=[0.5],
        boundaries=[None, 0.4, 0.6],
    )
    assert [r["boundary"] for r in results["rows"]] == [None, 0.4]
    assert results["rows"][1]["compactions"] >= results["rows"][0]["compactions"]
