"""The store-cost benchmark: each store's append and read, as ratios to raw tiktoken."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from benchmarks.speed import store_costs
from compaction import EventData, EventStore


class TestStoreCosts:
    def test_each_store_gets_a_ratio_per_round_and_their_median(self) -> None:
        """Two rounds of JSONL and SQLite: two positive ratios per phase, the median kept."""
        figures = store_costs.measure(300, 2, ["jsonl", "sqlite"], transcripts=None)
        assert figures["events"] == 300
        assert figures["rounds"] == 2
        assert set(figures["stores"]) == {"jsonl", "sqlite"}
        for costs in figures["stores"].values():
            for phase in ("append", "read"):
                rounds = costs[f"{phase}_rounds"]
                assert len(rounds) == 2
                assert all(r > 0 for r in rounds)
                assert costs[f"{phase}_ratio"] == pytest.approx(sum(rounds) / 2)

    def test_a_read_missing_events_is_an_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A store that gives back fewer events than appended fails the run, naming it."""
        monkeypatch.setattr(store_costs, "BATCH", 100)
        original = store_costs._append

        def short(store: EventStore, session: str, events: Sequence[EventData]) -> None:
            original(store, session, events[:-1])

        monkeypatch.setattr(store_costs, "_append", short)
        with pytest.raises(AssertionError, match="sqlite: read 299 events of 300"):
            store_costs.measure(300, 1, ["sqlite"], transcripts=None)
