"""The clearing benchmark: deterministic, every strategy per provider, naive pays at the cache."""

from __future__ import annotations

from typing import Any

import pytest

from benchmarks.features.result_clearing import markdown, run


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    """One short session, run once for the module."""
    return run([5], 4)


def test_every_strategy_for_every_provider(doc: dict[str, Any]) -> None:
    """Each provider has none, naive and the cache-aware strategies; Anthropic the server-side."""
    names = {"none", "naive", "cache-aware", "cache-aware+payback"}
    assert set(doc["providers"]) == {"openai", "anthropic", "deepseek"}
    for provider, rows in doc["providers"].items():
        expected = names | ({"server-side"} if provider == "anthropic" else set())
        assert set(rows) == expected
        assert rows["none"]["tokens_vs_none"] == 0
        assert rows["naive"]["input_tokens"] <= rows["none"]["input_tokens"]
        for row in rows.values():
            assert 0 <= row["cache_hit_tokens"] <= row["input_tokens"]


def test_cache_aware_never_sends_more_than_none(doc: dict[str, Any]) -> None:
    """Clearing only shortens requests: no strategy sends more tokens than no clearing."""
    for rows in doc["providers"].values():
        assert all(r["input_tokens"] <= rows["none"]["input_tokens"] for r in rows.values())


def test_deterministic(doc: dict[str, Any]) -> None:
    """The same seeds give the same figures (no clock is read)."""
    assert run([5], 4) == doc
    assert markdown(doc).count("\n| ") == 1 + 13  # the header, then a row per strategy
