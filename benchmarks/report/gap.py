"""Where a strategy's cache hits fall short of the ideal, request by request, by cause.

The ideal hit of a request (`harness.simulation._request_replay`) is every token but the messages
new since the previous request. A provider's model serves less for three reasons, told apart per
request:

- ``compaction``: the request right after a compaction (the context after the system prompt was
  rewritten);
- ``mode switch``: the first request in a new mode (a rebuilt system prompt moves the prefix);
- ``granularity``: every other request, where the provider's rounding is all that is lost
  (DeepSeek's 64-token units, OpenAI's 128-token steps, Anthropic's breakpoints, vLLM's blocks).

`gap_by_cause` pools the sessions of one strategy and returns each cause's share of the summed
input tokens, in points of hit rate; the shares add up to the gap between the ideal and the
model's hit rate.

Invariants: the causes partition the requests; a pure function of the run's per-request series.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

CAUSES: tuple[str, ...] = ("compaction", "mode switch", "granularity")


def cause(index: int, compacted: frozenset[int], modes: Sequence[str]) -> str:
    """Return why request `index` may fall short of its ideal."""
    if index in compacted:
        return "compaction"
    if index and modes[index] != modes[index - 1]:
        return "mode switch"
    return "granularity"


def gap_by_cause(runs: Sequence[Mapping[str, Any]], strategy: str, model: str) -> dict[str, Any]:
    """Pool a strategy's runs; return its hit and ideal rates and the gap's points by cause."""
    lost = dict.fromkeys(CAUSES, 0)
    prompt = hits = ideal = 0
    requests = dict.fromkeys(CAUSES, 0)
    for run in runs:
        if run["strategy"] != strategy:
            continue
        per = run["per_request"]
        compacted = frozenset(per["compacted"])
        for i, (p, h, best) in enumerate(
            zip(per["prompt_tokens"], per["hits"][model], per["ideal"], strict=True)
        ):
            why = cause(i, compacted, per["mode"])
            lost[why] += best - h
            requests[why] += 1
            prompt, hits, ideal = prompt + p, hits + h, ideal + best
    total = prompt or 1
    return {
        "model": model,
        "hit_rate": hits / total,
        "ideal_rate": ideal / total,
        "gap_points": 100 * (ideal - hits) / total,
        "points": {c: 100 * lost[c] / total for c in CAUSES},
        "requests": requests,
    }
