"""Every summary call priced: its request in, its summary out, under each provider's cache model.

A design that summarizes with a model pays for one more request at each compaction: the span
and the design's own summary prompt in, a summary out. This module turns those calls into a
block every result record carries, and prices a run with and without them:

- **Input.** The summary request as it was really sent: a peer driver records the prompt its
  framework sends its summarizer model (`benchmarks.peers.drivers._common.Recorder.summaries`:
  LangChain's and deepagents' ``SummarizationMiddleware`` prompt with the messages, OpenHands'
  ``LLMSummarizingCondenser`` prompt), B's LLM summarizer's call is the agent's own request plus
  one instruction (`harness.simulation.replay`'s ``summary_calls``). Each is serialized like any
  request and fed, in order, to the same provider cache models as the session's calls, so a call
  that replays the cached prefix (B's) is priced as cached and one that starts a new prompt (the
  peers') as a miss.
- **Output.** None of the peers' summary prompts asks for a length (LangChain's asks for four
  sections, OpenHands' for a state summary), so a summary's length is taken from the real
  recorded summaries of the shared transcripts: Claude Code's own compaction summaries (the user
  records marked ``isCompactSummary``), `RECORDED_SUMMARY_TOKENS` tokens on average (5 summaries
  in 3 sessions, ``o200k_base``: 2,350 to 3,579). Every model summary, B's included, is priced at
  that length; the fake summarizers' short texts only shape what the context carries afterwards.
- **No call.** B's extractive summarizer and the content-blind runs make no call: 0.
- **Price.** A summary request is a one-off: nothing after it reuses it, so it is sent without a
  cache write of its own (`SUMMARY_INPUT_PRICING`). Its tokens the provider's cache serves are
  priced as cache hits; the rest as plain input at every provider: Anthropic bills a cache write
  (1.25x input) only for a prefix a request marks with ``cache_control``, OpenAI and DeepSeek
  never bill writes apart from input (their pricing pages: Anthropic's prompt-caching page,
  OpenAI's prompt-caching guide, DeepSeek's Models & Pricing, cache hit / cache miss). The
  session's own requests keep their cache-write pricing (the agent loop's breakpoints).

Invariants: a block is plain data; the cost with summaries is the cost of the session's requests
and the summary requests together, each priced as one request, plus both outputs.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from compaction import Tokenizer
from harness.simulation import (
    BLIND_RUNS,
    STRATEGIES,
    PriceTable,
    Strategy,
    SummarizerFor,
    SummaryCallRecord,
    blind_summarizer,
    session_cost,
)

SUMMARY_INPUT_PRICING = (
    "a summary call's uncached input is priced as plain input at every provider (no cache write: "
    "Anthropic bills a write only for a prefix marked with cache_control, which a one-off call "
    "need not mark; OpenAI and DeepSeek bill no write); its cached tokens as cache hits"
)
"""How a one-off summary call's input is priced (the report says it beside the cost)."""
_NO_WRITE = 1 << 62
"""A `session_cost` write minimum no request reaches: every uncached token a plain miss."""

RECORDED_SUMMARY_TOKENS = 2_969
"""Mean length, in ``o200k_base`` tokens, of Claude Code's compaction summaries recorded in the
shared transcripts (`recorded_summaries`; a test checks the figure against them)."""

SummaryBlock = dict[str, Any]
"""``{"calls", "prompt_tokens": [...], "hits": {model: [...]}, "input_tokens",
"output_tokens"}``."""

__all__ = [
    "LLM_RUNS",
    "RECORDED_SUMMARY_TOKENS",
    "SUMMARY_INPUT_PRICING",
    "SummaryBlock",
    "costs_with_summaries",
    "empty_block",
    "from_replay",
    "from_series",
    "record_fields",
    "recorded_summaries",
    "run_names",
    "run_summarizer",
    "strategy_of",
]


def recorded_summaries(folder: Path, tokenizer: Tokenizer) -> list[int]:
    """Return the token length of every Claude Code compaction summary in `folder`'s ``*.jsonl``.

    A record is a summary when it carries ``isCompactSummary``; its text is its message content
    (a string, or the text blocks). Lines holding two JSON objects are split; unreadable lines are
    skipped.
    """
    sizes: list[int] = []
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            for part in line.replace("}{", "}\n{").splitlines():
                try:
                    record = json.loads(part)
                except ValueError:
                    continue
                if not isinstance(record, dict) or not record.get("isCompactSummary"):
                    continue
                content = (record.get("message") or {}).get("content")
                if isinstance(content, list):
                    content = "".join(
                        str(b.get("text", "")) for b in content if isinstance(b, dict)
                    )
                sizes.append(len(tokenizer.encode(str(content or ""))))
    return sizes


def empty_block(models: Sequence[str]) -> SummaryBlock:
    """Return the block of a run that made no summary call."""
    return from_series([], {m: [] for m in models})


def from_series(
    prompts: Sequence[int],
    hits: Mapping[str, Sequence[int]],
    output_per_call: int = RECORDED_SUMMARY_TOKENS,
) -> SummaryBlock:
    """Return the block of summary calls given their prompt tokens and hits per cache model."""
    return {
        "calls": len(prompts),
        "prompt_tokens": list(prompts),
        "hits": {m: list(h) for m, h in hits.items()},
        "input_tokens": sum(prompts),
        "output_tokens": len(prompts) * output_per_call,
    }


def from_replay(calls: Sequence[SummaryCallRecord], models: Sequence[str]) -> SummaryBlock:
    """Return the block of a replay's summary calls (`ReplayResult.summary_calls`)."""
    return from_series(
        [c.prompt_tokens for c in calls], {m: [c.hits[m] for c in calls] for m in models}
    )


def record_fields(block: Mapping[str, Any] | None) -> dict[str, int]:
    """Return the three fields every result record carries (0 without a block)."""
    block = block or {}
    return {
        "summary_calls": int(block.get("calls", 0)),
        "summary_input_tokens": int(block.get("input_tokens", 0)),
        "summary_output_tokens": int(block.get("output_tokens", 0)),
    }


def costs_with_summaries(
    table: PriceTable,
    prompts: Sequence[int],
    hits: Mapping[str, Sequence[int]],
    output: int,
    block: Mapping[str, Any] | None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the run's cost per provider with its summary calls, and without them.

    Each summary request is priced as one more request under the provider's cache model (its
    hits are the ones the cache served it in sequence), its uncached input as plain input
    (`SUMMARY_INPUT_PRICING`); its output adds to the session's.
    """
    block = block or {}
    extra = list(block.get("prompt_tokens") or ())
    extra_hits: Mapping[str, Sequence[int]] = block.get("hits") or {}
    extra_out = int(block.get("output_tokens", 0))
    with_calls: dict[str, Any] = {}
    without: dict[str, Any] = {}
    for name, price in table.providers.items():
        served = list(hits[price.cache_model])
        agent = session_cost(price, prompts, served, output)
        without[name] = agent.as_dict()
        more = list(extra_hits.get(price.cache_model) or [0] * len(extra))
        calls = session_cost(price, extra, more, extra_out, write_min=_NO_WRITE)
        with_calls[name] = {
            "miss": agent.miss + calls.miss,
            "hit": agent.hit + calls.hit,
            "write": agent.write,
            "output": agent.output + calls.output,
            "usd": round(agent.usd + calls.usd, 6),
        }
    return with_calls, without


LLM_RUNS: tuple[tuple[str, str], ...] = (("B:llm", "B"),)
"""Runs whose compactions B's LLM summarizer writes (`compaction.summarizers.OpenAISummarizer`
over HTTP to the scripted stand-in model on loopback, `benchmarks.replay.summary_cache`): its call
replays the agent's cached request plus one instruction. (run name, strategy it runs)."""


def run_names() -> list[str]:
    """Return every run: the strategies, the content-blind runs, then the LLM-summarizer runs."""
    return [*STRATEGIES, *(run for run, _ in BLIND_RUNS), *(run for run, _ in LLM_RUNS)]


def strategy_of(run: str) -> Strategy:
    """Return the strategy a run replays."""
    return STRATEGIES[{**dict(BLIND_RUNS), **dict(LLM_RUNS)}.get(run, run)]


@contextmanager
def run_summarizer(run: str, tokenizer: Tokenizer) -> Iterator[SummarizerFor | None]:
    """Yield the summarizer factory of a run.

    The blind one, B's LLM one (a stub served for the duration), or None (the compactor's
    extractive summarizer).
    """
    if run in dict(BLIND_RUNS):
        yield blind_summarizer
    elif run in dict(LLM_RUNS):
        from benchmarks.replay.summary_cache import openai_summarizers, stand_in_answer
        from compaction.llm import ChatClient, ChatConfig
        from harness.testing import StubModel

        with StubModel([stand_in_answer]) as stub:
            config = ChatConfig(
                stub.base_url, "stand-in", api_key_env="HARNESS_NO_KEY", timeout=60.0
            )
            yield openai_summarizers(ChatClient(config), tokenizer, [])
    else:
        yield None
