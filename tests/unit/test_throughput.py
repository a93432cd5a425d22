from __future__ import annotations

import pytest

from benchmarks.throughput import append_all, events_of, measure, run
from compaction import get_tokenizer
from compaction.views import UsageProjection


class TestThroughput:
    def test_events_cycle_the_generated_session(self):
        """Any number of events is drawn from the generated session, in order."""
        events = events_of(2500)
        assert len(events) == 2500
        assert events[:10] == events_of(10)

    def test_measure_small_log(self):
        """A small size gives consistent figures: tokens, positive costs, a real reduction."""
        point = measure(300, trace=True)
        assert point.events == 300
        assert point.message_tokens > 300
        assert point.log_bytes > 0
        assert point.append_us > 0
        assert point.tiktoken_us > 0
        assert point.append_ratio == pytest.approx(point.append_us / point.tiktoken_us)
        assert 0 < point.compaction_reduction < 1
        assert point.append_peak_mb is not None
        assert point.append_peak_mb > 0

    def test_run_sorts_sizes_and_skips_tracing_above_the_limit(self):
        """Sizes run in increasing order; memory is traced only up to the limit."""
        rows = run((400, 200), trace_up_to=200)
        assert [r["events"] for r in rows] == [200, 400]
        assert rows[0]["append_peak_mb"] is not None
        assert rows[1]["append_peak_mb"] is None

    def test_append_counts_the_tokens_so_a_later_read_counts_nothing(self, tmp_path, monkeypatch):
        """The timed append includes the token count, which a Session folds lazily.

        A read after it applies no event, so the timed reads are the O(1) check alone.
        """
        session = append_all(tmp_path / "log.jsonl", events_of(50), get_tokenizer())
        applied: list[object] = []
        apply = UsageProjection.apply

        def spy(self: UsageProjection, state: object, event: object) -> object:
            applied.append(event)
            return apply(self, state, event)  # type: ignore[arg-type]

        monkeypatch.setattr(UsageProjection, "apply", spy)
        with session:
            assert session.context_tokens > 0
        assert applied == []
