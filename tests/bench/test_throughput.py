"""The throughput benchmark: unique text, CPU ratios per phase, stores side by side."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.speed import throughput, throughput_phases
from benchmarks.speed.throughput import (
    GOALS,
    append_all,
    events_of,
    goals_met,
    main,
    measure,
    merge,
    run,
)
from benchmarks.speed.throughput_corpus import _corpus
from benchmarks.speed.throughput_phases import rounds_for, timed_append
from benchmarks.speed.throughput_report import performance_table
from compaction import Message, get_tokenizer
from compaction.tokens import message_text
from compaction.views import UsageProjection

ROOT = Path(__file__).resolve().parents[2]


class TestThroughput:
    def test_events_cycle_the_generated_session(self):
        """Any number of events is drawn from the generated session, in order."""
        events = events_of(2500, transcripts=None)
        assert len(events) == 2500
        assert events[:10] == events_of(10, transcripts=None)

    def test_measure_small_log(self):
        """A small size gives consistent figures: tokens, positive costs, a real reduction."""
        point = measure(300, trace=True, transcripts=None)
        assert point.events == 300
        assert point.message_tokens > 300
        assert point.log_bytes > 0
        assert point.append_us > 0
        assert point.tiktoken_us > 0
        assert point.append_ratio == pytest.approx(point.append_us / point.tiktoken_us)
        assert 0 < point.compaction_reduction < 1
        assert point.append_peak_mb is not None
        assert point.append_peak_mb > 0
        # a fresh process reopened the log: its views, its count (recorded by the checkpoint:
        # no tokenizer), then one append and the trigger's check (the tokenizer loaded)
        assert point.reopen_rss_mb is not None
        assert point.reopen_usage_rss_mb is not None
        assert point.reopen_append_rss_mb is not None
        assert 0 < point.reopen_rss_mb <= point.reopen_usage_rss_mb < point.reopen_append_rss_mb
        assert point.reopen_append_rss_mb - point.reopen_usage_rss_mb > 20  # the tokenizer

    def test_run_sorts_sizes_and_skips_tracing_above_the_limit(self):
        """Sizes run in increasing order; memory is traced only up to the limit."""
        rows = run((400, 200), trace_up_to=200, transcripts=None, warm_up=False)
        assert [r["events"] for r in rows] == [200, 400]
        assert rows[0]["append_peak_mb"] is not None
        assert rows[1]["append_peak_mb"] is None

    def test_append_counts_the_tokens_so_a_later_read_counts_nothing(self, tmp_path, monkeypatch):
        """The timed append includes the token count, which a Session folds lazily.

        A read after it applies no event, so the timed reads are the O(1) check alone.
        """
        session = append_all(
            tmp_path / "log.jsonl", events_of(50, transcripts=None), get_tokenizer()
        )
        applied: list[object] = []
        apply = UsageProjection.apply

        def spy(self: UsageProjection, state: object, event: object) -> object:
            applied.append(event)
            return apply(self, state, event)  # type: ignore[arg-type]

        monkeypatch.setattr(UsageProjection, "apply", spy)
        with session:
            assert session.context_tokens > 0
        assert applied == []


class TestUniqueText:
    def test_no_text_of_one_cycle_repeats_in_another(self) -> None:
        """Cycled past the corpus twice, no message text of one copy is in another copy."""
        size = 1774  # the generated 40-turn session
        events = events_of(2 * size + 50, transcripts=None)
        copies = [events[:size], events[size : 2 * size], events[2 * size :]]
        texts = [{message_text(e) for e in copy if isinstance(e, Message)} for copy in copies]
        assert all(texts)
        assert texts[0].isdisjoint(texts[1])
        assert texts[0].isdisjoint(texts[2])
        assert texts[1].isdisjoint(texts[2])

    def test_a_copy_differs_from_the_first_only_by_its_prefix(self) -> None:
        """The k-th copy of a message is the first with ``[k] `` in front of its text."""
        events = events_of(2 * 1774, transcripts=None)
        first, second = events[:1774], events[1774:]
        for a, b in zip(first, second, strict=True):
            if isinstance(a, Message):
                assert isinstance(b, Message)
                assert b.text() == f"[1] {a.text()}"
            else:
                assert a == b

    def test_system_tokens_do_not_grow_with_the_number_of_events(self, transcripts: Path) -> None:
        """Past the first copy no system message comes again: one session, one system prompt.

        Cycled system prompts added up to more than the window at 10^6 events, and a forced
        compaction (which never replaces them) failed with ``does_not_fit``.
        """
        tok = get_tokenizer()
        size = len(_corpus(0, transcripts))

        def system_tokens(n: int) -> int:
            return sum(
                len(tok.encode(message_text(e)))
                for e in events_of(n, transcripts=transcripts)
                if isinstance(e, Message) and e.role == "system"
            )

        first = system_tokens(size)
        assert first > 0
        assert system_tokens(3 * size + 7) == first
        assert len(events_of(3 * size + 7, transcripts=transcripts)) == 3 * size + 7

    def test_real_messages_come_first(self, transcripts: Path) -> None:
        """With the shared transcripts, the first events are their messages, then generated."""
        events = events_of(10, transcripts=transcripts)
        corpus_only = events_of(10, transcripts=None)
        assert all(isinstance(e, Message) for e in events)
        assert events != corpus_only


class TestFigures:
    def test_each_phase_is_a_ratio_of_cpu_times(self) -> None:
        """A point's ratios are its CPU costs over the raw tiktoken cost on the same text."""
        point = measure(300, trace=False, transcripts=None)
        assert point.store == "jsonl"
        assert point.append_ratio == pytest.approx(point.append_us / point.tiktoken_us)
        assert point.reopen_ratio == pytest.approx(point.reopen_us / point.tiktoken_us)
        assert point.compaction_ratio > 0
        assert point.reopen_peak_bytes_per_event is None
        assert point.load_before >= 0

    def test_sqlite_beside_jsonl(self) -> None:
        """The same size measured in SQLite gives the same tokens, in its own store."""
        rows = run(
            (200,), stores=("jsonl", "sqlite"), trace_up_to=0, transcripts=None, warm_up=False
        )
        assert [r["store"] for r in rows] == ["jsonl", "sqlite"]
        assert rows[0]["message_tokens"] == rows[1]["message_tokens"]

    @pytest.mark.parametrize(
        ("ratios", "met"),
        [
            ((1.3, 1.3, 0.8), (True, True, True)),
            ((1.31, 1.0, 0.81), (False, True, False)),
            ((0.0, 1.301, 0.0), (True, False, True)),
        ],
    )
    def test_goals_are_met_at_the_limit_and_missed_past_it(
        self, ratios: tuple[float, float, float], met: tuple[bool, bool, bool]
    ) -> None:
        """A ratio equal to its goal meets it; anything more misses it."""
        point = dict(zip(GOALS, ratios, strict=True))
        assert goals_met(point) == dict(zip(GOALS, met, strict=True))


class TestResults:
    def test_main_writes_results_and_the_table_reads_them(self, tmp_path: Path) -> None:
        """The command line writes points, goals and the machine; the table has a row a point."""
        out = tmp_path / "throughput.json"
        assert (
            main(
                [
                    "--sizes",
                    "200",
                    "--generated-only",
                    "--no-warm-up",
                    "--no-chart",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
        results = json.loads(out.read_text())
        assert results["goals"] == GOALS
        assert results["machine"]["clock"].startswith("time.process_time")
        (point,) = results["points"]
        assert point["events"] == 200
        assert point["reopen_peak_bytes_per_event"] > 0
        table = performance_table(results)
        assert "| 200 | jsonl |" in table

    def test_docs_table_is_the_committed_results(self) -> None:
        """docs/performance.md holds the table of the committed results, byte for byte."""
        results = json.loads((ROOT / "benchmarks" / "results" / "throughput.json").read_text())
        doc = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8")
        assert performance_table(results) in doc

    def test_merge_replaces_what_is_measured_again_and_keeps_the_rest(self) -> None:
        """A merged run keeps the old sizes and stores it did not measure, sorted by size."""
        old = [
            {"events": 1000, "store": "jsonl", "v": 1},
            {"events": 1000, "store": "sqlite", "v": 1},
        ]
        new = [
            {"events": 100, "store": "postgres", "v": 2},
            {"events": 1000, "store": "jsonl", "v": 2},
        ]
        assert merge(old, new) == [
            {"events": 100, "store": "postgres", "v": 2},
            {"events": 1000, "store": "jsonl", "v": 2},
            {"events": 1000, "store": "sqlite", "v": 1},
        ]


class TestRounds:
    @pytest.mark.parametrize(
        ("n", "min_timed", "rounds"),
        [(1_000, 10_000, 10), (3_000, 10_000, 4), (10_000, 10_000, 1), (100, 10_000, 10),
         (100_000, 10_000, 1), (500, 0, 1), (500, 1_000, 2)],
    )  # fmt: skip
    def test_a_small_size_is_timed_over_rounds_adding_up_to_the_minimum(
        self, n: int, min_timed: int, rounds: int
    ) -> None:
        """Rounds add up to at least `min_timed` events, at most `MAX_ROUNDS` of them."""
        assert rounds_for(n, min_timed) == rounds

    def test_each_round_appends_a_fresh_log_with_a_fresh_tokenizer(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """No round's counts are memo hits of another's; only the last round's log is kept."""
        seen: list[tuple[Path, object]] = []

        def spy(path: Path, events: object, tokenizer: object, open_: object) -> object:
            seen.append((path, tokenizer))
            return append_all(path, events, tokenizer, open_)  # type: ignore[arg-type]

        monkeypatch.setattr(throughput_phases, "append_all", spy)
        events = events_of(120, transcripts=None)
        texts = [message_text(e) for e in events if isinstance(e, Message)]
        with throughput_phases.opener("jsonl", tmp_path) as open_:
            timed = timed_append(tmp_path, events, texts, open_, 3)
        with timed.session as session:
            assert session.applied_seq == 120
            assert session.tokenizer is seen[-1][1]
        assert timed.rounds == 3
        assert len({id(tok) for _, tok in seen}) == 3
        assert [p.name for p, _ in seen] == ["round-0.jsonl", "round-1.jsonl", "timed.jsonl"]
        assert sorted(p.name for p in tmp_path.iterdir()) == ["timed.jsonl"]
        assert timed.tokens == sum(len(session.tokenizer.encode(t)) for t in texts)
        assert timed.append_s > 0
        assert timed.raw_s > 0

    def test_reopen_is_timed_over_the_same_rounds(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """A small size's reopen is timed over the append's rounds, each a fresh reopen."""
        names: list[str] = []

        def spy(open_: throughput_phases.Opener, name: str) -> int:
            names.append(name)
            return throughput_phases.reopen_count(open_, name)

        monkeypatch.setattr(throughput, "reopen_count", spy)
        point = measure(200, trace=False, transcripts=None, min_timed=600)
        assert point.rounds == 3
        assert names == ["timed"] * 3
        assert point.reopen_us > 0

    def test_a_point_says_its_rounds(self) -> None:
        """The rounds a size was timed over are kept with its figures."""
        assert measure(200, trace=False, transcripts=None, min_timed=400).rounds == 2
        assert measure(200, trace=False, transcripts=None, min_timed=0).rounds == 1
