"""Clearing old tool results, per provider: tokens, cost and cache hits against no clearing.

Sessions are the seeded real-shaped ones of `harness.simulation._sessions` (agent turns of tool
calls: files read, tests run, todo lists written rarely). The gaps between their model calls are
real ones: each is drawn (seeded) from the gaps measured in the shared Claude Code transcripts'
timestamps (`benchmarks.replay.transcript_gaps`): a call inside a turn takes a gap measured after a
tool result, a turn's first call one measured after a message the user sent. Where the
transcripts are absent (``--transcripts`` or ``$HARNESS_TRANSCRIPTS``, default
``../shared/transcripts``) a seeded synthetic distribution stands in and the results say so:
5-45 s within a turn; between turns 30 s (35%), 3 min (25%), 7 min (20%), 25 min (12%) or
90 min (8%). Each model call
sends the whole context so far (no compaction, to isolate clearing), and each strategy decides
which old tool results it sends as one-line notes instead:

- ``none``: nothing is cleared.
- ``naive``: every call clears each tool result older than `KEEP` calls (what a clearing that
  ignores the cache does).
- ``cache-aware``: `compaction.backends.ToolResultClearer` with the provider's lifetime: clear
  only after a gap longer than the cache lifetime (the prefix has expired anyway).
- ``cache-aware+payback``: the same, and also while the cache is warm when the cache model
  shows the clearing pays back within `PAYBACK_CALLS` calls.
- ``server-side`` (Anthropic only): ``clear_tool_uses_20250919`` as the server applies it: once
  the input passes its trigger, every tool result but the latest `KEEP` goes, when at least
  ``clear_at_least`` tokens would.

Each request is fed to the provider's cache model (`harness.simulation` OpenAI, Anthropic,
DeepSeek, with their lifetimes and the request times) and priced with the committed price table.
Run ``python -m benchmarks.features.result_clearing``; results go to
``benchmarks/results/clearing.json`` and ``clearing.md`` (a pure function of the seeds and the
transcripts: no clock is read).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from benchmarks import RESULTS, SHARED_TRANSCRIPTS
from benchmarks.replay.transcript_gaps import GapPools, gap_pools
from compaction import ContextWindow, Message, Tokenizer, count_message, get_tokenizer
from compaction.backends import (
    ClearingPolicy,
    ToolResultClearer,
    cleared_window,
)
from harness.simulation import (
    AnthropicCache,
    DeepSeekCache,
    OpenAICache,
    default_prices,
    generate,
    pack,
)
from prompts import BUILTIN_MODES, PromptBuilder, dumps, responses_request

KEEP = 3
"""Tool results among the latest this many are never cleared."""
PAYBACK_CALLS = 20
"""The payback horizon of ``cache-aware+payback``."""
SERVER_TRIGGER = 30_000
"""``clear_tool_uses_20250919`` trigger, input tokens."""
SERVER_CLEAR_AT_LEAST = 5_000
"""``clear_tool_uses_20250919`` ``clear_at_least``, tokens."""
DEFAULT_SEEDS = (0, 1, 2, 3)
DEFAULT_TURNS = 24
TURN_GAPS = ((30.0, 0.35), (180.0, 0.25), (420.0, 0.20), (1500.0, 0.12), (5400.0, 0.08))
"""Seconds between turns, with their probabilities."""
CACHES = {"openai": OpenAICache, "anthropic": AnthropicCache, "deepseek": DeepSeekCache}
OUT = RESULTS / "clearing.json"
TRANSCRIPTS = SHARED_TRANSCRIPTS
"""Where the real transcripts are when no ``--transcripts`` or ``$HARNESS_TRANSCRIPTS`` says."""


class Strategy(Protocol):
    """Decides the context each call sends."""

    def view(self, window: ContextWindow, *, at: float) -> ContextWindow:
        """Return the context to send at `at`."""
        ...


class NoClearing:
    """Sends every tool result."""

    def view(self, window: ContextWindow, *, at: float) -> ContextWindow:
        """Return the window unchanged."""
        return window


@dataclass
class ServerSideClearing:
    """Anthropic's ``clear_tool_uses_20250919`` as the server applies it."""

    tokenizer: Tokenizer
    cleared: set[int] = field(default_factory=set)
    counts: dict[tuple[int, bool], int] = field(default_factory=dict)

    def size(self, seq: int, message: Message) -> int:
        """Return the tokens of a message as shown (cleared or not), counted once."""
        key = (seq, seq in self.cleared)
        if key not in self.counts:
            self.counts[key] = count_message(self.tokenizer, message)
        return self.counts[key]

    def view(self, window: ContextWindow, *, at: float) -> ContextWindow:
        """Clear all but the latest `KEEP` results once the input passes the trigger."""
        shown = cleared_window(window, self.cleared)
        sizes = [self.size(s, m) for s, m in zip(shown.seqs, shown.messages, strict=True)]
        if sum(sizes) <= SERVER_TRIGGER:
            return shown
        tools = [s for s, m in zip(shown.seqs, shown.messages, strict=True) if m.role == "tool"]
        old = [s for s in tools[: max(len(tools) - KEEP, 0)] if s not in self.cleared]
        size = dict(zip(shown.seqs, sizes, strict=True))
        if sum(size[s] for s in old) >= SERVER_CLEAR_AT_LEAST:
            self.cleared.update(old)
        return cleared_window(window, self.cleared)


def strategies(provider: str, tokenizer: Tokenizer) -> dict[str, Strategy]:
    """Return the strategies compared for `provider`."""
    out: dict[str, Strategy] = {
        "none": NoClearing(),
        "naive": ToolResultClearer(ClearingPolicy(keep_calls=KEEP, ttl_seconds=1e-9), tokenizer),
        "cache-aware": ToolResultClearer(
            ClearingPolicy.for_provider(provider, keep_calls=KEEP), tokenizer
        ),
        "cache-aware+payback": ToolResultClearer(
            ClearingPolicy.for_provider(provider, keep_calls=KEEP, payback_calls=PAYBACK_CALLS),
            tokenizer,
        ),
    }
    if provider == "anthropic":
        out["server-side"] = ServerSideClearing(tokenizer)
    return out


@dataclass(frozen=True)
class Call:
    """One model call of a session: when, the context before it, the answer's tokens."""

    at: float
    window: ContextWindow
    output_tokens: int


def gap_of(rng: random.Random, pools: GapPools | None, *, new_turn: bool) -> float:
    """Return the seconds before a call: a real gap of its kind, or the synthetic stand-in."""
    if pools is not None:
        return rng.choice(pools.between if new_turn else pools.within)
    if new_turn:
        gaps, weights = zip(*TURN_GAPS, strict=True)
        return rng.choices(gaps, weights)[0]
    return rng.uniform(5.0, 45.0)


def calls_of(
    seed: int, turns: int, tokenizer: Tokenizer, pools: GapPools | None = None
) -> list[Call]:
    """Return the model calls of one seeded session, with their times."""
    rng = random.Random(seed)
    payloads = generate(turns=turns, seed=seed)
    messages: list[Message] = []
    seqs: list[int] = []
    out: list[Call] = []
    now, new_turn = 0.0, True
    for seq, payload in enumerate(payloads, start=1):
        if not isinstance(payload, Message):
            new_turn = new_turn or type(payload).__name__ == "TurnStartData"
            continue
        if payload.role == "assistant":
            now += gap_of(rng, pools, new_turn=new_turn)
            new_turn = False
            window = ContextWindow(messages=tuple(messages), seqs=tuple(seqs))
            out.append(Call(now, window, count_message(tokenizer, payload)))
        elif payload.role == "user":
            new_turn = True
        messages.append(payload)
        seqs.append(seq)
    return out


@dataclass
class Ids:
    """Stable token ids per message version: the same message always gets the same ids."""

    tokenizer: Tokenizer
    known: dict[tuple[int, str], list[int]] = field(default_factory=dict)
    next_id: int = 1

    def of(self, seq: int, message: Message) -> list[int]:
        """Return the ids of `message` (a note and the result it replaces differ)."""
        key = (seq, message.text()[:64])
        if key not in self.known:
            n = count_message(self.tokenizer, message)
            self.known[key] = list(range(self.next_id, self.next_id + n))
            self.next_id += n
        return self.known[key]


def fixed_ids(tokenizer: Tokenizer) -> list[int]:
    """Return the ids of the fixed prefix: the agent mode's instructions and tools."""
    request = responses_request(PromptBuilder(), BUILTIN_MODES["agent"])
    return [t + 3_000_000_000 for t in tokenizer.encode(dumps(request))]


def replay(
    provider: str, calls: Sequence[Call], strategy: Strategy, ids: Ids, fixed: list[int]
) -> dict[str, float]:
    """Return the totals of one provider and strategy over one session's calls."""
    price = default_prices().providers[provider]
    cache = CACHES[provider]().simulator()
    sent = hits = cost = 0.0
    for call in calls:
        window = strategy.view(call.window, at=call.at)
        tokens = list(fixed)
        for seq, message in zip(window.seqs, window.messages, strict=True):
            tokens += ids.of(seq, message)
        hit = cache.serve(pack(tokens), (len(fixed), len(tokens)), call.at)
        miss = len(tokens) - hit
        sent, hits = sent + len(tokens), hits + hit
        rate = price.cache_write if price.writes else price.input_miss
        cost += (hit * price.cache_hit + miss * rate + call.output_tokens * price.output) / 1e6
    return {"input_tokens": sent, "cache_hit_tokens": hits, "cost_usd": cost}


def run(seeds: Sequence[int], turns: int, transcripts: Path | None = None) -> dict[str, Any]:
    """Return the benchmark's results: per provider and strategy, summed over the sessions.

    Args:
        seeds: one session per seed.
        turns: turns per session.
        transcripts: the folder of real transcripts the gaps are measured from (None, or one
            without Claude Code transcripts: the synthetic gaps).
    """
    tokenizer = get_tokenizer("o200k_base")
    fixed = fixed_ids(tokenizer)
    pools = gap_pools(transcripts) if transcripts is not None else None
    sessions = [calls_of(seed, turns, tokenizer, pools) for seed in seeds]
    rows: dict[str, dict[str, dict[str, float]]] = {}
    for provider in CACHES:
        totals: dict[str, dict[str, float]] = {}
        for calls in sessions:
            ids = Ids(tokenizer)
            for name, strategy in strategies(provider, tokenizer).items():
                row = replay(provider, calls, strategy, ids, fixed)
                into = totals.setdefault(name, dict.fromkeys(row, 0.0))
                for key, value in row.items():
                    into[key] += value
        base = totals["none"]
        for row in totals.values():
            row["cache_hit_rate"] = round(row["cache_hit_tokens"] / row["input_tokens"], 4)
            row["tokens_vs_none"] = round(row["input_tokens"] / base["input_tokens"] - 1, 4)
            row["cost_vs_none"] = round(row["cost_usd"] / base["cost_usd"] - 1, 4)
            row["cost_usd"] = round(row["cost_usd"], 4)
        rows[provider] = totals
    gaps = [b.at - a.at for calls in sessions for a, b in itertools.pairwise(calls)]
    return {
        "seeds": list(seeds),
        "turns": turns,
        "calls": sum(len(c) for c in sessions),
        "keep_calls": KEEP,
        "payback_calls": PAYBACK_CALLS,
        "gap_source": pools.summary() if pools else {"source": "synthetic"},
        "gaps_over_5_min": sum(g > 300 for g in gaps),
        "gaps_over_60_min": sum(g > 3600 for g in gaps),
        "providers": rows,
    }


def markdown(doc: dict[str, Any]) -> str:
    """Return the results as a Markdown table."""
    lines = [
        "# Clearing old tool results: per provider, against no clearing",
        "",
        f"{doc['calls']} model calls over {len(doc['seeds'])} sessions of {doc['turns']} turns "
        f"(gaps over 5 min: {doc['gaps_over_5_min']}, over 60 min: {doc['gaps_over_60_min']}); "
        f"keep {doc['keep_calls']} latest results; payback horizon {doc['payback_calls']} calls.",
        "",
        gap_line(doc["gap_source"]),
        "",
        "| provider | strategy | input tokens | vs none | cache hits | hit rate | cost USD "
        "| vs none |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for provider, rows in doc["providers"].items():
        for name, r in rows.items():
            lines.append(
                f"| {provider} | {name} | {r['input_tokens']:,.0f} | {r['tokens_vs_none']:+.1%} "
                f"| {r['cache_hit_tokens']:,.0f} | {r['cache_hit_rate']:.1%} | {r['cost_usd']:.4f} "
                f"| {r['cost_vs_none']:+.1%} |"
            )
    return "\n".join(lines) + "\n"


def gap_line(source: dict[str, Any]) -> str:
    """Return the sentence saying where the gaps between calls came from."""
    if source["source"] != "transcripts":
        return "Gaps between calls: the seeded synthetic distribution (no transcripts found)."
    w, b = source["within_turn"], source["between_turns"]
    return (
        f"Gaps between calls drawn from {w['count'] + b['count']} gaps measured in "
        f"{len(source['files'])} real Claude Code transcripts: within a turn median "
        f"{w['median_s']} s, p90 {w['p90_s']} s, max {w['max_s']} s ({w['count']} gaps); "
        f"between turns median {b['median_s']} s, p90 {b['p90_s']} s, max {b['max_s']} s "
        f"({b['count']} gaps)."
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark, write the JSON and Markdown results, print the table."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.features.result_clearing", description=__doc__
    )
    parser.add_argument("--seeds", type=int, nargs="+", default=list(DEFAULT_SEEDS))
    parser.add_argument("--turns", type=int, default=DEFAULT_TURNS)
    parser.add_argument("--out", type=Path, default=OUT, help="results JSON path")
    parser.add_argument(
        "--transcripts",
        type=Path,
        default=Path(os.environ.get("HARNESS_TRANSCRIPTS") or TRANSCRIPTS),
        help="folder of real transcripts to measure the gaps from ($HARNESS_TRANSCRIPTS)",
    )
    args = parser.parse_args(argv)
    doc = run(args.seeds, args.turns, args.transcripts)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    table = markdown(doc)
    args.out.with_suffix(".md").write_text(table, encoding="utf-8")
    print(table, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
