"""The LLM summarizer in a replay: how much of each summary call a provider serves from cache.

`summary_cache_run` replays a generated session with strategy B (`harness.simulation.replay`),
and compacts with `compaction.llm.OpenAISummarizer` talking over real HTTP to a scripted stand-in
model on 127.0.0.1 (`harness.testing._model_server`). Each summary call replays the request the
model would receive at that point, plus one instruction message, so under a prefix cache nearly all
of it is a hit. The report gives, per call and in total, the prompt tokens, the tokens a cache model
serves (DeepSeek's by default) and the ideal: every token but the new ones (the instruction, and
the tool results appended since the previous model call, which no cache has seen yet).

Run it: ``python -m benchmarks.replay.summary_cache [--turns N] [--seed S] [--window W]`` prints the
report as JSON.

Invariants: nothing leaves the machine (the model is the stub on loopback); the same arguments
give the same figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compaction import CompactionPolicy, SummaryInput, Tokenizer, get_tokenizer
from compaction.llm import ChatClient, ChatConfig
from compaction.summarizers import OpenAISummarizer
from harness.simulation import (
    STRATEGIES,
    CacheModel,
    DeepSeekCache,
    SummarizerFor,
    SummaryCallRecord,
    generate,
    replay,
)
from harness.testing import Reply, Script, StubModel

ANSWER_SECTIONS: tuple[tuple[str, str], ...] = (
    ("Primary Request and Intent", "{request}"),
    ("Key Technical Concepts", "(none)"),
    ("Files and Code", "(none)"),
    ("Errors and Fixes", "(none)"),
    ("Next Step", "Carry on with the item in progress."),
    ("Critical Context", "(none)"),
)
"""The stand-in model's answer: a short Checkpoint (data, not prompt text)."""


def stand_in_answer(request: Mapping[str, Any]) -> Reply:
    """Answer a summary request with a short Checkpoint quoting the first user request."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    first = str(users[0].get("content") or "") if users else ""
    first = " ".join(first.split())[:200]
    text = "\n\n".join(
        f"## {name}\n\n{body.format(request=first)}" for name, body in ANSWER_SECTIONS
    )
    return Reply(text)


class RecordingSummarizer:
    """Wraps a summarizer and records whether each call's answer was used."""

    def __init__(self, inner: OpenAISummarizer, outcomes: list[str]) -> None:
        self.inner = inner
        self.outcomes = outcomes

    @property
    def name(self) -> str:
        """The wrapped summarizer's name."""
        return self.inner.name

    @property
    def last_body(self) -> dict[str, Any] | None:
        """The body of the wrapped summarizer's latest call."""
        return self.inner.last_body

    def summarize(self, span: SummaryInput) -> Mapping[str, str]:
        """Summarize with the wrapped summarizer; record ``ok`` or why it failed."""
        try:
            out = self.inner.summarize(span)
        except Exception as exc:
            self.outcomes.append(f"{type(exc).__name__}: {exc}")
            raise
        self.outcomes.append("ok")
        return out


def openai_summarizers(
    client: ChatClient, tokenizer: Tokenizer, outcomes: list[str]
) -> SummarizerFor:
    """Return a `replay` summarizer factory: an `OpenAISummarizer` over each request."""

    def make(request: dict[str, Any]) -> RecordingSummarizer:
        return RecordingSummarizer(OpenAISummarizer(client, request, tokenizer=tokenizer), outcomes)

    return make


@dataclass(frozen=True)
class SummaryCacheReport:
    """The summary calls of one replay, under one cache model."""

    model: str
    calls: tuple[SummaryCallRecord, ...]
    outcomes: tuple[str, ...] = field(default=())
    """Per summary call: ``ok`` when its answer was used, else why it fell back."""
    requests: int = 0
    """Requests of the replayed session (summary calls excluded)."""
    compactions: int = 0
    """Compactions of the replay (each one a summary call, or a fallback before any call)."""
    retention: float = 1.0
    """Share of unfinished todos present at their latest status after each compaction."""

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens of every summary call."""
        return sum(c.prompt_tokens for c in self.calls)

    @property
    def hit_tokens(self) -> int:
        """Tokens the cache model served, over every summary call."""
        return sum(c.hits[self.model] for c in self.calls)

    @property
    def ideal_tokens(self) -> int:
        """Tokens served had everything but the new messages hit, over every summary call."""
        return sum(c.ideal for c in self.calls)

    @property
    def hit_share(self) -> float:
        """Cache-hit share of the summary calls' prompt tokens (0 with no call)."""
        return self.hit_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    @property
    def ideal_share(self) -> float:
        """The ideal share: everything but the new messages."""
        return self.ideal_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def as_json(self) -> dict[str, Any]:
        """Return the report as JSON data."""
        return {
            "cache_model": self.model,
            "requests": self.requests,
            "compactions": self.compactions,
            "todo_retention": self.retention,
            "summary_calls": len(self.calls),
            "answers_used": self.outcomes.count("ok"),
            "outcomes": list(self.outcomes),
            "prompt_tokens": self.prompt_tokens,
            "hit_tokens": self.hit_tokens,
            "ideal_tokens": self.ideal_tokens,
            "hit_share": round(self.hit_share, 4),
            "ideal_share": round(self.ideal_share, 4),
            "per_call": [
                {
                    "before_request": c.before,
                    "prompt_tokens": c.prompt_tokens,
                    "hit_tokens": c.hits[self.model],
                    "ideal": c.ideal,
                }
                for c in self.calls
            ],
        }


def summary_cache_run(
    turns: int = 12,
    seed: int = 0,
    *,
    window: int = 32_000,
    cache: CacheModel | None = None,
    tokenizer: Tokenizer | None = None,
    script: Script = stand_in_answer,
) -> SummaryCacheReport:
    """Replay a generated session, summarizing each compaction with the stand-in model.

    Args:
        turns: user requests in the generated session.
        seed: the session's seed.
        window: the context window of the compaction policy, in tokens (small, to compact often).
        cache: the provider cache model reported on (default DeepSeek, 64-token units).
        tokenizer: serializes requests to tokens (default ``o200k_base``).
        script: how the stand-in model answers (default: a short valid Checkpoint).
    """
    cache = cache or DeepSeekCache()
    tok = tokenizer or get_tokenizer()
    outcomes: list[str] = []
    with StubModel([script]) as stub:
        config = ChatConfig(stub.base_url, "stand-in", api_key_env="HARNESS_NO_KEY", timeout=30.0)
        result = replay(
            generate(turns, seed),
            STRATEGIES["B"],
            policy=CompactionPolicy(window_tokens=window),
            tokenizer=tok,
            models=[cache],
            summarizer=openai_summarizers(ChatClient(config), tok, outcomes),
        )
    return SummaryCacheReport(
        model=cache.name,
        calls=tuple(result.summary_calls),
        outcomes=tuple(outcomes),
        requests=len(result.records),
        compactions=result.compactions,
        retention=result.retention,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Print the summary calls' cache figures of one replay as JSON."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.replay.summary_cache")
    parser.add_argument("--turns", type=int, default=12)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--window", type=int, default=32_000)
    parser.add_argument("--unit", type=int, default=64, help="DeepSeek cache unit, in tokens")
    args = parser.parse_args(argv)
    report = summary_cache_run(
        args.turns, args.seed, window=args.window, cache=DeepSeekCache(unit=args.unit)
    )
    sys.stdout.write(json.dumps(report.as_json(), indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
