from __future__ import annotations

import copy

import pytest

from benchmarks.peers.drivers._common import STRUCTURAL_SUMMARY
from benchmarks.report.comparison import compare, headline
from benchmarks.report.fair_report import headline_lines, usage_section, why
from benchmarks.report.gap import CAUSES, cause, gap_by_cause
from compaction import (
    NARRATIVE_SECTIONS,
    CompactionPolicy,
    Message,
    SummaryInput,
    get_tokenizer,
)
from harness.simulation import (
    BLIND_RUNS,
    STRATEGIES,
    blind_summarizer,
    default_prices,
    generate,
    output_tokens,
    replay,
    session_cost,
)
from harness.simulation._blind import CONTENT_BLIND_SUMMARY, BlindSummarizer
from prompts import dumps, openai_message


def _run(name, prompts, hits, *, fixed=None, every=1.0, compacted=(), modes=None, budget=100):
    n = len(prompts)
    return {
        "strategy": name,
        "session": "s",
        "compactions": len(compacted),
        "budget": budget,
        "request_retention": every,
        "retention": {"kept": 3, "expected": 3, "rate": 1.0},
        "per_request": {
            "prompt_tokens": prompts,
            "fixed_tokens": fixed or [10] * n,
            "ideal": [0] + [p - 1 for p in prompts[1:]],
            "hits": {m: hits for m in ("deepseek", "openai", "anthropic", "vllm")},
            "compacted": list(compacted),
            "mode": modes or ["agent"] * n,
        },
    }


def _peer(name, prompts, hits, *, every=0.9, budget=100):
    return {
        "peer": name,
        "variant": "v",
        "summarizer": "structural",
        "session": "s",
        "status": "ok",
        "budget": budget,
        "metrics": {
            "summed_input_tokens": sum(prompts),
            "peak_input_tokens": max(prompts),
            "prompt_tokens": prompts,
            "fixed_prompt_tokens": [20] * len(prompts),
            "cache_hit_tokens": {m: hits for m in ("deepseek", "openai", "anthropic", "vllm")},
            "todo_retention_rate": every,
            "rewrites": 1,
        },
    }


def _results(runs, peers):
    return {
        "config": {"budget": 100},
        "runs": runs,
        "outputs": {"s": 50},
        "peers": {"available": True, "records": peers},
    }


class TestCompare:
    def test_rows_split_fixed_and_messages_and_price_every_provider(self):
        """A row's input splits into fixed + messages; its cost is session_cost of its series."""
        results = _results(
            [_run("B", [1000, 1100], [0, 990])], [_peer("p", [1200, 1300], [0, 1100])]
        )
        rows = compare(results)["sessions"]["s"]
        b, p = rows
        assert (b["fixed"], b["messages"], b["first_fixed"]) == (20, 2080, 10)
        assert (p["fixed"], p["messages"], p["first_fixed"]) == (40, 2460, 20)
        for provider, price in default_prices().providers.items():
            want = session_cost(price, [1000, 1100], [0, 990], 50).usd
            assert b["cost"][provider]["usd"] == pytest.approx(want, abs=1e-6)

    def test_task_retention_for_ours_and_the_peers(self):
        """Every-call task retention is each row's own, and None where no task was open."""
        ours = {**_run("B", [10, 20], [0, 5]), "task_checks": 4, "task_retention": 1.0}
        peer = _peer("p", [10, 20], [0, 5])
        peer["metrics"] |= {"task_checks": 4, "task_retention_rate": 0.75}
        rows = {r["name"]: r for r in compare(_results([ours], [peer]))["sessions"]["s"]}
        assert rows["B"]["every_call_tasks"] == 1.0
        assert rows["p/v (structural)"]["every_call_tasks"] == 0.75
        bare = compare(_results([_run("B", [10], [0])], [_peer("p", [10], [0])]))
        assert all(r["every_call_tasks"] is None for r in bare["sessions"]["s"])

    def test_a_run_at_another_budget_is_labelled(self):
        """A peer without the matched budget is kept but not matched."""
        results = _results(
            [_run("B", [10], [0])], [_peer("p", [10], [0]), _peer("q", [10], [0], budget=None)]
        )
        rows = {r["name"]: r for r in compare(results)["sessions"]["s"]}
        assert rows["B"]["matched"]
        assert rows["p/v (structural)"]["matched"]
        assert not rows["q/v (structural)"]["matched"]

    def test_peers_that_did_not_run_get_no_row(self):
        """A skipped peer, or one without per-request hits, is never priced."""
        skipped = {
            "peer": "x",
            "variant": "v",
            "summarizer": "s",
            "session": "s",
            "status": "skipped",
        }
        old = _peer("old", [10], [0])
        del old["metrics"]["cache_hit_tokens"]
        rows = compare(_results([_run("B", [10], [0])], [skipped, old]))["sessions"]["s"]
        assert [r["name"] for r in rows] == ["B"]


class TestHeadline:
    def test_says_where_a_peer_wins(self):
        """A peer that sends fewer tokens on a session is named with that session."""
        results = _results(
            [_run("B", [2000, 2000], [0, 1900])], [_peer("cheap", [1000, 1000], [0, 900])]
        )
        (entry,) = headline(compare(results))
        assert entry["peer_fewer_tokens"] == ["s"]
        assert all(v == ["s"] for v in entry["peer_cheaper"].values())
        assert entry["ours_every_call"] == 1.0
        assert entry["peer_every_call"] == 0.9

    def test_gives_each_sides_sawtooth_and_says_why(self):
        """Kept after a compaction, its Checkpoint, the request before and growth per call."""
        b = _run("B", [100, 300, 500, 150, 250], [0] * 5, compacted=[3])
        b["per_request"]["checkpoint_tokens"] = [0, 0, 0, 40, 40]
        peer = _peer("p", [120, 320, 520, 90, 120], [0] * 5)
        peer["metrics"]["reused_prefix_tokens"] = [0, 120, 320, 20, 90]
        results = _results([b], [peer])
        rows = {r["name"]: r for r in compare(results)["sessions"]["s"]}
        assert rows["B"]["after_reset"] == {
            "count": 1,
            "steps": 3,
            "growth": 200 + 200 + 100,
            "kept": 150 - 10,
            "checkpoint": 40,
            "before": 500,
        }
        assert rows["p/v (structural)"]["after_reset"]["kept"] == 90 - 20
        assert rows["p/v (structural)"]["after_reset"]["checkpoint"] is None
        (entry,) = headline(compare(results))
        assert entry["ours_after"] == {
            "count": 1,
            "growth": round(500 / 3),
            "kept": 140,
            "checkpoint": 40,
            "before": 500,
        }
        assert entry["peer_after"]["kept"] == 70
        assert entry["peer_after"]["growth"] == round((200 + 200 + 30) / 3)
        (line,) = [x for x in headline_lines(results) if x.startswith("- p/v")]
        assert "the peer wins on s" in line
        assert "why: the peer keeps less after each compaction, a shorter verbatim tail" in line
        assert "keeps 140 message tokens (40 of Checkpoint, 100 of verbatim tail)" in line
        assert "the peer's 70 (its summary and tail), +70 per request" in line
        assert "B's request holds 500 tokens, the peer's 520" in line
        # Running sum of B minus the peer: -20, -40, -60, 0, +130.
        assert entry["running_delta"] == {"low": -60, "high": 130}
        assert "swings between -60 and +130 tokens within a session" in line

    def test_why_names_the_checkpoint_when_the_peer_keeps_as_much_verbatim(self):
        """B keeps more only by its Checkpoint: the sentence says so, not "shorter tail"."""
        after = {"count": 2, "growth": 10, "before": 500}
        ours = {**after, "kept": 140, "checkpoint": 40}  # 100 verbatim
        for peer_kept, lead in [
            (70, "a shorter verbatim tail than B's"),
            (120, "though not less verbatim: B's verbatim tail alone is no longer than the peer's"),
            (140, "not by keeping less after a compaction"),
        ]:
            text = why({"ours_after": ours, "peer_after": {**after, "kept": peer_kept}})
            assert text.startswith("; why: ")
            assert lead in text, text

    def test_a_peer_without_prefix_series_has_no_sawtooth(self):
        """An old peers.json without reused_prefix_tokens gives no why-sentence, no error."""
        results = _results(
            [_run("B", [200, 100], [0, 0], compacted=[1])], [_peer("p", [50, 60], [0, 0])]
        )
        (entry,) = headline(compare(results))
        assert entry["peer_after"]["count"] == 0
        (line,) = [x for x in headline_lines(results) if x.startswith("- p/v")]
        assert "the peer wins on s" in line
        assert "right after a compaction" not in line

    def test_unmatched_peers_stay_out(self):
        """The headline compares only peers at the matched budget."""
        results = _results([_run("B", [10], [0])], [_peer("q", [10], [0], budget=None)])
        assert headline(compare(results)) == []


class TestGap:
    def test_causes_partition_the_gap(self):
        """Compaction first, then a mode change, else granularity; shares sum to the gap."""
        run = _run(
            "B",
            [100, 200, 300, 400],
            [0, 150, 100, 390],
            compacted=[2],
            modes=["agent", "plan", "plan", "plan"],
        )
        assert [cause(i, frozenset({2}), run["per_request"]["mode"]) for i in range(4)] == [
            "granularity",
            "mode switch",
            "compaction",
            "granularity",
        ]
        g = gap_by_cause([run], "B", "deepseek")
        assert g["points"]["mode switch"] == pytest.approx(100 * 49 / 1000)
        assert g["points"]["compaction"] == pytest.approx(100 * 199 / 1000)
        assert sum(g["points"][c] for c in CAUSES) == pytest.approx(g["gap_points"])


class TestBlind:
    def test_the_summary_is_the_peers_line_whatever_the_span(self):
        """The narrative is the peers' content-blind text; other sections are left to the code."""
        span = SummaryInput(messages=(), seqs=(), previous=None, todos=(), budget_tokens=10)
        out = BlindSummarizer().summarize(span)
        assert out == {NARRATIVE_SECTIONS[0]: STRUCTURAL_SUMMARY}
        assert CONTENT_BLIND_SUMMARY == STRUCTURAL_SUMMARY  # the peers' text, byte for byte
        assert blind_summarizer({}).name == "content-blind"
        assert dict(BLIND_RUNS) == {"B:blind": "B", "A:blind": "A"}

    def test_b_keeps_every_task_with_a_blind_summary_and_a_does_not(self):
        """With the same blind summary, B still shows every unfinished todo; A loses some."""
        payloads = generate(4, 0)
        # A window where A's cuts fall past a todo_write (with cuts inside a turn and the latest
        # tool rounds kept verbatim, at 12,000 tokens every cut of this session kept the list).
        policy = CompactionPolicy(window_tokens=16_000)
        b = replay(payloads, STRATEGIES["B"], policy=policy, summarizer=blind_summarizer)
        a = replay(payloads, STRATEGIES["A"], policy=policy, summarizer=blind_summarizer)
        assert b.compactions >= 1
        assert b.retention == 1.0
        assert b.request_retention == 1.0
        assert a.retention < 1.0
        assert a.request_retention < 1.0


class TestOutputTokens:
    def test_counts_each_assistant_message_serialized(self):
        """Output tokens are the assistant messages' canonical lines, nothing else."""
        tok = get_tokenizer()
        payloads = [
            Message(role="user", content="hello there"),
            Message(role="assistant", content="Sure, reading the file."),
        ]
        line = dumps(openai_message(payloads[1])) + "\n"
        assert output_tokens(payloads, tok) == len(tok.encode(line))

    def test_same_payloads_same_count(self):
        """Counting is deterministic."""
        tok = get_tokenizer()
        payloads = generate(2, 1)
        assert output_tokens(payloads, tok) == output_tokens(copy.deepcopy(payloads), tok)


class TestReportSections:
    def test_usage_section_lists_each_disagreement(self):
        """Per kind of request the totals; every request where model and provider differ."""
        rows = [
            {"kind": "grew", "gap_s": 10.0, "tokens": 100, "real": 90, "model": 90},
            {"kind": "after-gap", "gap_s": 400.0, "tokens": 120, "real": 30, "model": 0},
        ]
        check = {
            "files": {
                "x.jsonl": {
                    "rows": rows,
                    "by_kind": {
                        "grew": {
                            "calls": 1,
                            "tokens": 100,
                            "real": 90,
                            "model": 90,
                            "model_no_expiry": 90,
                            "exact": 1,
                        },
                        "after-gap": {
                            "calls": 1,
                            "tokens": 120,
                            "real": 30,
                            "model": 0,
                            "model_no_expiry": 100,
                            "exact": 0,
                        },
                    },
                }
            },
            "pooled": {
                "calls": 2,
                "real_hit_rate": 0.55,
                "model_hit_rate": 0.41,
                "model_no_expiry_hit_rate": 0.86,
                "exact_share": 0.5,
            },
        }
        text = "\n".join(usage_section({"usage_check": check}))
        assert "| x | 1 | after-gap | 400.0 | 120 | 30 | 0 |" in text
        assert "| x | 0 | grew" not in text
        assert "50.0% of calls match" in text

    def test_headline_names_the_sessions_a_peer_wins(self):
        """The report's headline says where a peer sends fewer tokens."""
        results = _results(
            [_run("B", [2000, 2000], [0, 1900])], [_peer("cheap", [1000, 1000], [0, 900])]
        )
        text = "\n".join(headline_lines(results))
        assert "cheap/v (structural)" in text
        assert "the peer wins on s" in text
