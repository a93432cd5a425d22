"""The tuning split B's defaults are chosen on, and the evaluation split they are judged on."""

from __future__ import annotations

import pytest

from benchmarks.peers.peer_sessions import default_sessions
from benchmarks.quality import continuity_report
from benchmarks.report.results_report import BenchConfig
from benchmarks.splits import EVALUATION, TUNING, split_of


@pytest.mark.parametrize(
    ("session", "split"),
    [
        ("synthetic-t12-s0", "tuning"),
        ("synthetic-real-t24-s2", "tuning"),  # every shape of a tuning seed is tuning
        ("synthetic-t12-s3", "evaluation"),
        ("synthetic-stepwise-t24-s7", "evaluation"),
        ("synthetic-t24-s0", "evaluation"),  # another length of seed 0 was never tuned on
        ("real-claude-code-2.1.7-todowrite-cd95", "evaluation"),
        ("own-rollout", "evaluation"),
    ],
)
def test_split_of_a_session(session: str, split: str) -> None:
    """Tuning sessions are the listed generated ones; everything else is evaluation."""
    assert split_of(session) == split


def test_splits_are_disjoint_and_evaluation_has_five_seeds() -> None:
    """No session is in both; the evaluation split holds at least five generated seeds."""
    assert not set(TUNING) & set(EVALUATION)
    assert len({seed for _, seed in EVALUATION}) >= 5
    assert set(BenchConfig.full().sessions) == set(TUNING) | set(EVALUATION)


def test_the_rule_is_shown_the_tuning_rows_only() -> None:
    """`choose` never sees an evaluation row: a cheap evaluation row cannot win the pick."""
    row = {
        "cost_usd": {"openai": 1.0},
        "summed_input_tokens": 10,
        "compactions": 1,
        "tail_empty": 0,
        "tool_compactions": 1,
        "tool_kept_count": 1,
        "tails": [100],
        "every_call": 1.0,
    }
    rows = [
        {**row, "session": "synthetic-t12-s0", "retain": 0.1, "threshold": 0.8},
        {**row, "session": "synthetic-t12-s0", "retain": 0.2, "threshold": 0.8},
        {**row, "session": "synthetic-t12-s3", "retain": 0.1, "threshold": 0.8},
        {**row, "session": "synthetic-t12-s3", "retain": 0.2, "threshold": 0.8},
    ]
    rows[1] = {**rows[1], "cost_usd": {"openai": 2.0}}
    rows[2] = {**rows[2], "cost_usd": {"openai": 9.0}}  # evaluation says 0.2 is cheaper
    results = {"window": 30_000, "rows": rows}
    tuning = continuity_report.tuning(results)
    assert {r["session"] for r in tuning["rows"]} == {"synthetic-t12-s0"}
    summary = continuity_report.summary(results)
    assert summary["tuning_sessions"] == ["synthetic-t12-s0"]
    assert summary["picked"]["retain"] == 0.1


def test_peer_sessions_cover_both_splits(tmp_path) -> None:
    """The peers replay every generated session of both splits."""
    paths = default_sessions(tmp_path, which="synthetic")
    names = [p.stem for p in paths]
    assert [split_of(n) for n in names].count("evaluation") == len(EVALUATION)
    assert [split_of(n) for n in names].count("tuning") == len(TUNING)
