"""Summary calls priced: the request in under the provider's cache model, a summary out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.peers.drivers._common import Recorder
from benchmarks.peers.metrics import DriverRecord, score
from benchmarks.replay import real_transcripts, summary_pricing
from benchmarks.replay.summary_pricing import (
    RECORDED_SUMMARY_TOKENS,
    costs_with_summaries,
    from_series,
    recorded_summaries,
)
from benchmarks.report.comparison import peer_row, strategy_row
from compaction import CompactionPolicy, get_tokenizer
from harness.simulation import PROVIDER_MODELS, default_prices, generate, replay

MODELS = [m.name for m in PROVIDER_MODELS]


def test_totals_include_the_summary_calls() -> None:
    """With summaries, a run costs its requests plus each summary request and output.

    Each summary request is priced as a request of its own, its uncached input as plain input
    at every provider (a one-off call writes no cache, Anthropic included); without, the
    session alone.
    """
    table = default_prices()
    prompts, hits = [5_000, 6_000], {m: [0, 4_000] for m in MODELS}
    block = from_series([7_000], {m: [0] for m in MODELS}, output_per_call=500)
    with_calls, without = costs_with_summaries(table, prompts, hits, 300, block)
    bare, _ = costs_with_summaries(table, prompts, hits, 300, None)
    for name, price in table.providers.items():
        assert without[name] == bare[name]
        assert with_calls[name]["output"] == 800
        added = with_calls[name]["usd"] - without[name]["usd"]
        # an uncached 7,000-token request: plain input, never a cache write
        assert added == pytest.approx((7_000 * price.input_miss + 500 * price.output) / 1e6)
        assert with_calls[name]["write"] == without[name]["write"]
    assert any(p.writes for p in table.providers.values())  # Anthropic: the case that differs


def test_a_cached_prefix_summary_is_priced_as_cached() -> None:
    """A summary call whose prefix the cache served costs the hit rate for those tokens."""
    table = default_prices()
    prompts, hits = [5_000], {m: [0] for m in MODELS}
    cold = from_series([6_000], {m: [0] for m in MODELS}, output_per_call=0)
    warm = from_series([6_000], {m: [5_000] for m in MODELS}, output_per_call=0)
    cold_cost, _ = costs_with_summaries(table, prompts, hits, 0, cold)
    warm_cost, _ = costs_with_summaries(table, prompts, hits, 0, warm)
    for name, price in table.providers.items():
        assert warm_cost[name]["hit"] == 5_000
        assert warm_cost[name]["usd"] < cold_cost[name]["usd"]
        saved = cold_cost[name]["usd"] - warm_cost[name]["usd"]
        assert saved == pytest.approx(5_000 * (price.input_miss - price.cache_hit) / 1e6)


def test_b_llm_summary_calls_replay_the_cached_prefix() -> None:
    """B's LLM summarizer makes one call per compaction; a prefix cache serves most of it.

    The record's cost with summaries is its requests' plus those calls'; B's extractive run
    makes none.
    """
    tok = get_tokenizer()
    policy = CompactionPolicy(window_tokens=12_000)
    rows = {}
    for run in ("B", "B:llm"):
        with summary_pricing.run_summarizer(run, tok) as summarizer:
            result = replay(
                generate(4, 0),
                summary_pricing.strategy_of(run),
                policy=policy,
                tokenizer=tok,
                summarizer=summarizer,
            )
        block = summary_pricing.from_replay(result.summary_calls, MODELS)
        run_data = {
            "strategy": run,
            "compactions": result.compactions,
            "request_retention": result.request_retention,
            "retention": {"rate": result.retention, "kept": 0, "expected": 0},
            "summary": block,
            "per_request": {
                "prompt_tokens": [r.prompt_tokens for r in result.records],
                "fixed_tokens": [r.fixed_tokens for r in result.records],
                "hits": {m: [r.hits[m] for r in result.records] for m in MODELS},
                "compacted": [r.index for r in result.records if r.compacted],
            },
        }
        rows[run] = (result, strategy_row(run_data, 1_000, default_prices()))
    b_result, b_row = rows["B"]
    llm_result, llm_row = rows["B:llm"]
    assert b_result.compactions > 0
    assert b_row["summary_calls"] == 0
    assert b_row["cost"] == b_row["cost_without_summaries"]
    assert llm_row["summary_calls"] == llm_result.compactions == len(llm_result.summary_calls)
    assert llm_row["summary_output_tokens"] == llm_row["summary_calls"] * RECORDED_SUMMARY_TOKENS
    assert llm_row["summary_input_tokens"] == sum(c.prompt_tokens for c in llm_result.summary_calls)
    for call in llm_result.summary_calls:
        assert call.hits["deepseek"] > call.prompt_tokens // 2  # the agent's request, cached
    for name in llm_row["cost"]:
        assert llm_row["cost"][name]["usd"] > llm_row["cost_without_summaries"][name]["usd"]
        assert llm_row["cost"][name]["output"] == 1_000 + llm_row["summary_output_tokens"]


def _peer_record(summary_after: int) -> DriverRecord:
    recorder = Recorder()
    tools = [{"type": "function", "function": {"name": "t"}}]
    agent = [{"role": "system", "content": "sys " * 400}, {"role": "user", "content": "go"}]
    recorder.record(agent, tools)
    recorder.record([*agent, {"role": "assistant", "content": "done " * 50}], tools)
    summary = [{"role": "user", "content": "Summarize this conversation:\n" + "x " * 900}]
    recorder.requests, later = recorder.requests[:summary_after], recorder.requests[summary_after:]
    recorder.record_summary(summary)
    recorder.requests += later
    data = {
        "peer": "p",
        "variant": "v",
        "summarizer": "structural",
        "budget": 100,
        "wall_time_s": 0.1,
        "versions": {},
        "summary_calls": recorder.summary_calls,
        "summaries": recorder.summaries,
        "messages": recorder.messages,
        "tools": recorder.tools,
        "requests": recorder.requests,
    }
    return DriverRecord.model_validate(data)


def test_a_peer_summary_request_is_scored_and_priced() -> None:
    """A peer's recorded summary prompt is scored like a request and priced in its record.

    It is fed to the caches in order; the agent requests' figures do not change.
    """
    tok = get_tokenizer()
    record = _peer_record(summary_after=1)
    metrics = score(record, {"turns": []}, tok)
    assert metrics.summary_calls == 1
    assert len(metrics.summary_prompt_tokens) == 1
    assert metrics.summary_prompt_tokens[0] > 900
    assert metrics.summary_input_tokens == metrics.summary_prompt_tokens[0]
    assert metrics.summary_output_tokens == RECORDED_SUMMARY_TOKENS
    # a new prompt: nothing of it was cached before
    assert all(h == [0] for h in metrics.summary_hit_tokens.values())
    bare = score(_peer_record(summary_after=2), {"turns": []}, tok)
    assert bare.prompt_tokens == metrics.prompt_tokens
    row = peer_row(
        {
            "status": "ok",
            "peer": "p",
            "variant": "v",
            "summarizer": "s",
            "metrics": metrics.model_dump(),
        },
        100,
        default_prices(),
    )
    assert row is not None
    assert row["summary_calls"] == 1
    for name, cost in row["cost"].items():
        assert cost["usd"] > row["cost_without_summaries"][name]["usd"]


def test_recorded_summary_length_is_measured_from_the_transcripts() -> None:
    """The priced summary length is the mean of Claude Code's recorded compaction summaries."""
    folder = real_transcripts.TRANSCRIPTS
    if not folder.is_dir():
        pytest.skip(f"the shared transcripts are not in {folder}")
    sizes = recorded_summaries(folder, get_tokenizer())
    assert len(sizes) >= 3
    assert round(sum(sizes) / len(sizes)) == RECORDED_SUMMARY_TOKENS


def test_recorded_summaries_reads_split_lines(tmp_path: Path) -> None:
    """Two objects on one line are both read; records without the marker are not summaries."""
    a = {"isCompactSummary": True, "message": {"content": "one two three"}}
    b = {"isCompactSummary": True, "message": {"content": [{"type": "text", "text": "four"}]}}
    c = {"type": "user", "message": {"content": "not a summary"}}
    (tmp_path / "s.jsonl").write_text(
        json.dumps(a) + json.dumps(b) + "\n" + json.dumps(c) + "\nnot json\n", encoding="utf-8"
    )
    tok = get_tokenizer()
    assert recorded_summaries(tmp_path, tok) == [
        len(tok.encode("one two three")),
        len(tok.encode("four")),
    ]
