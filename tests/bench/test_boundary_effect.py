"""B with and without its task-boundary trigger, against each peer: read from the result files."""

from __future__ import annotations

from typing import Any

from benchmarks.report import boundary_effect

CONFIG = {"retain": 0.1, "threshold": 0.8, "boundary": 0.5}


def _row(session: str, boundary: float | None, tokens: int, **kw: Any) -> dict[str, Any]:
    return {
        "session": session,
        "retain": kw.get("retain", 0.1),
        "threshold": kw.get("threshold", 0.8),
        "boundary": boundary,
        "summed_input_tokens": tokens,
    }


GRID = {
    "rows": [
        _row("synthetic-stepwise-t12-s3", None, 1000),
        _row("synthetic-stepwise-t12-s3", 0.5, 800),
        _row("synthetic-stepwise-t12-s3", 0.4, 1),  # another floor: not the run's
        _row("synthetic-stepwise-t12-s3", 0.5, 2, retain=0.05),  # another tail
        _row("synthetic-stepwise-t12-s3", 0.5, 3, threshold=0.9),  # another trigger
        _row("synthetic-real-t12-s3", 0.5, 4),  # a shape the benchmark does not replay
        _row("real-gemini-cli-ab2b", None, 500),
    ]
}


def test_bench_names() -> None:
    """Stepwise rows carry the benchmark's plain names; other shapes are not bench sessions."""
    assert boundary_effect.bench_name("synthetic-stepwise-t24-s7") == "synthetic-t24-s7"
    assert boundary_effect.bench_name("synthetic-real-t24-s7") is None
    assert boundary_effect.bench_name("real-swe-agent-x") == "real-swe-agent-x"


def test_collect_reads_the_runs_setting_only() -> None:
    """Only rows at the run's retain and threshold, with its floor or none, are read."""
    got = boundary_effect.collect(GRID, CONFIG)
    assert got == {
        "boundary": 0.5,
        "sessions": {
            "real-gemini-cli-ab2b": {"without": 500},
            "synthetic-t12-s3": {"with": 800, "without": 1000},
        },
    }


def _comparison() -> dict[str, Any]:
    peer = {"kind": "peer", "matched": True, "name": "lc", "summed_input": 900}
    other = {"kind": "peer", "matched": False, "name": "oh", "summed_input": 1}
    ours = {"kind": "strategy", "matched": True, "name": "B", "summed_input": 800}
    return {"sessions": {"synthetic-t12-s3": [ours, peer, other]}}


def test_section_sets_both_sides_against_each_matched_peer() -> None:
    """Each cell: how much less B sends than the peer, without -> with the floor."""
    effect = boundary_effect.collect(GRID, CONFIG)
    lines = boundary_effect.section(effect, _comparison())
    table = [line for line in lines if line.startswith("| `")]
    assert table[1] == "| `synthetic-t12-s3` | evaluation | 1,000 | 800 | -11.1% -> +11.1% |"
    assert table[0] == "| `real-gemini-cli-ab2b` | evaluation | 500 | - | - |"
    assert "oh" not in "\n".join(lines)  # an unmatched peer is never compared


def test_no_section_without_a_floor_or_rows() -> None:
    """A run whose policy has no boundary trigger, or no grid, gets no section."""
    assert boundary_effect.section(None, _comparison()) == []
    assert boundary_effect.section({"boundary": None, "sessions": {"x": {}}}, {}) == []
    assert boundary_effect.section({"boundary": 0.5, "sessions": {}}, {}) == []


def test_run_words_name_the_floor() -> None:
    """The report's run line says the floor, or that only size triggers."""
    assert boundary_effect.run_words(None) == ", size trigger only"
    assert "holds 0.4 of the window" in boundary_effect.run_words(0.4)
