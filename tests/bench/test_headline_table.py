"""The headline table: per session and provider, B against the cheapest rival, and why."""

from __future__ import annotations

from typing import Any

from benchmarks.report.headline_table import rows, section


def _cost(usd: float, hit: int = 0, miss: int = 1_000) -> dict[str, Any]:
    return {"usd": usd, "hit": hit, "miss": miss, "write": 0, "output": 0}


def _row(name: str, kind: str, usd: float, with_calls: float, calls: int) -> dict[str, Any]:
    return {
        "name": name,
        "kind": kind,
        "matched": True,
        "summed_input": 1_000,
        "fixed": 100,
        "messages": 900,
        "summary_calls": calls,
        "cost": {"openai": _cost(with_calls)},
        "cost_without_summaries": {"openai": _cost(usd)},
    }


def test_summary_calls_can_make_b_the_cheaper() -> None:
    """B's requests cost a little more, but the peer's summary calls cost more still."""
    comparison = {
        "sessions": {
            "s": [
                _row("B", "strategy", 1.00, 1.00, 0),
                _row("peer/x (copy-todos)", "peer", 0.95, 1.20, 3),
                _row("peer/y (copy-todos)", "peer", 0.99, 1.10, 2),
                _row("A", "strategy", 0.50, 0.50, 0),
            ]
        }
    }
    [entry] = rows(comparison, ["openai"])
    assert entry["rival"] == "peer/y (copy-todos)"  # the cheapest peer, not our own A
    assert entry["cheaper"]
    assert entry["why"].startswith("summary calls decide it: 0 summary calls against 2")
    text = "\n".join(section(comparison, ["openai"]))
    assert "(cheaper)" in text
    assert "B is the cheaper in 1 of 1" in text


def test_without_peers_b_meets_our_other_designs() -> None:
    """Where no peer ran the session, the rival is the cheapest of A, C and A:blind."""
    comparison = {
        "sessions": {
            "s": [
                _row("B", "strategy", 1.00, 1.00, 0),
                _row("B:blind", "strategy", 0.10, 0.10, 0),
                _row("C", "strategy", 0.90, 0.90, 0),
                _row("A", "strategy", 1.50, 1.50, 0),
            ]
        }
    }
    [entry] = rows(comparison, ["openai"])
    assert entry["rival"] == "C"
    assert not entry["cheaper"]
    assert entry["why"].startswith("B's requests cost more (+0.1000 USD)")
