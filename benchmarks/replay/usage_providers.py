"""Predicted against served for every provider with real usage: Codex (OpenAI) and Gemini CLI.

Claude Code sessions are checked with the Anthropic model (`usage_check.check`); Codex rollouts
record ``cached_input_tokens`` in each ``token_count`` event, Gemini CLI sessions a ``cached``
count in each answer's ``tokens``. Both bill the OpenAI way (the prompt holds the cached
tokens, nothing is written), and are rebuilt as the Anthropic calls are (a request that grew
extends the previous one). Each is set beside `OpenAICache`'s prediction and the exact-prefix
bound (the tokens a request shares with the one before: the most any prefix cache serves).

Invariants: reading and checking are pure functions of the files.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks.replay.usage_check import (
    _WIDTH,
    FIVE_MINUTES,
    UsageCall,
    _int,
    _Rebuilder,
    _records,
    _seconds,
    check,
    fixed_prefix,
    kind,
    read_calls,
)
from harness.simulation import CacheModel, OpenAICache


def _openai_call(at: float, prompt: int, cached: int, output: int, after: bool) -> UsageCall:
    """A call billed the OpenAI way: the prompt holds the cached tokens (nothing is written)."""
    cached = min(cached, prompt)
    return UsageCall(
        at=at,
        input=prompt - cached,
        write=0,
        read=cached,
        output=output,
        ttl=FIVE_MINUTES,
        after_compaction=after,
    )


def read_codex_calls(path: Path) -> list[UsageCall]:
    """Read a Codex rollout's model calls: ``token_count`` events (``last_token_usage``).

    ``input_tokens`` is the whole prompt, of which ``cached_input_tokens`` came from the cache;
    a count Codex repeats (the same ``total_token_usage``) is one call, read once; a
    ``compacted`` record marks the next call as after a compaction.
    """
    calls: list[UsageCall] = []
    last_total: object = None
    boundary = False
    for r in _records(path):
        payload = r.get("payload")
        if r.get("type") == "compacted":
            boundary = True
            continue
        if r.get("type") != "event_msg" or not isinstance(payload, dict):
            continue
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if not isinstance(info, dict):
            continue
        last, at = info.get("last_token_usage"), _seconds(r.get("timestamp"))
        if not isinstance(last, dict) or at is None or info.get("total_token_usage") == last_total:
            continue
        last_total = info.get("total_token_usage")
        prompt = _int(last.get("input_tokens"))
        if prompt:
            cached, output = _int(last.get("cached_input_tokens")), _int(last.get("output_tokens"))
            calls.append(_openai_call(at, prompt, cached, output, boundary))
            boundary = False
    return calls


def read_gemini_calls(path: Path) -> list[UsageCall]:
    """Read a Gemini CLI session's model calls: each ``gemini`` message's ``tokens``.

    ``input`` is the whole prompt, of which ``cached`` came from the cache (Gemini's implicit
    caching); a message with no input billed (an aborted call) holds nothing.
    """
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    messages = doc.get("messages") if isinstance(doc, dict) else None
    calls: list[UsageCall] = []
    for m in messages if isinstance(messages, list) else []:
        tokens = m.get("tokens") if isinstance(m, dict) else None
        at = _seconds(m.get("timestamp")) if isinstance(m, dict) else None
        if m.get("type") != "gemini" or not isinstance(tokens, dict) or at is None:
            continue
        prompt = _int(tokens.get("input"))
        if prompt:
            cached, output = _int(tokens.get("cached")), _int(tokens.get("output"))
            calls.append(_openai_call(at, prompt, cached, output, False))
    return calls


def _shared(before: bytes, tokens: bytes) -> int:
    """Return how many packed bytes two requests share from the start (whole tokens)."""
    end = min(len(before), len(tokens))
    return next(
        (i for i in range(0, end, _WIDTH) if before[i : i + _WIDTH] != tokens[i : i + _WIDTH]), end
    )


def check_prefix_cache(calls: Sequence[UsageCall], model: CacheModel) -> dict[str, Any]:
    """Feed rebuilt requests to a prefix-cache model (OpenAI's rules); set it beside the served.

    Requests are rebuilt as for Anthropic (`_Rebuilder`): a request that grew extends the
    previous one; after a compaction (or a shrink) only the fixed prefix is shared. Rows hold
    the model's hit with the call's timestamp (``model``) and the most any exact prefix cache
    could serve (``bound``: the tokens shared with the previous request).
    """
    fixed = fixed_prefix(calls)
    rebuild = _Rebuilder(fixed)
    timed = model.simulator()
    rows: list[dict[str, Any]] = []
    previous: UsageCall | None = None
    for call in calls:
        k = kind(call, previous)
        before = rebuild.previous
        tokens = rebuild.request(call, rewrite=k in ("after-compaction", "shrank"))
        shared = next(
            (
                i
                for i in range(0, min(len(before), len(tokens)), _WIDTH)
                if before[i : i + _WIDTH] != tokens[i : i + _WIDTH]
            ),
            min(len(before), len(tokens)),
        )
        rows.append(
            {
                "kind": k,
                "gap_s": round(call.at - previous.at, 1) if previous else None,
                "tokens": call.total,
                "real": call.read,
                "model": timed.serve(tokens, (), call.at),
                "bound": shared // _WIDTH,
            }
        )
        previous = call
    return {"fixed_prefix": fixed, "rows": rows}


PROVIDERS: dict[str, tuple[str, Callable[[Path], list[UsageCall]]]] = {
    "anthropic": ("claude-code*.jsonl", read_calls),
    "openai": ("rollout-*.jsonl", read_codex_calls),
    "gemini": ("gemini-cli*.json", read_gemini_calls),
}
"""Provider -> (the recorded sessions' file pattern, the reader of their calls)."""


def check_providers(folder: Path) -> dict[str, Any]:
    """Predicted against served, per provider with recorded usage in `folder` (and its subfolders).

    Anthropic with `AnthropicCache` (as `check`); OpenAI (Codex rollouts) and Gemini (Gemini CLI
    sessions) with `OpenAICache`'s rules (1,024-token minimum, 128-token steps, 5 minutes): the
    toolkit has no Gemini model of its own, so its row measures how far OpenAI's rules and the
    exact-prefix bound are from what Gemini served.
    """
    out: dict[str, Any] = {}
    for provider, (pattern, reader) in PROVIDERS.items():
        files: dict[str, Any] = {}
        for path in sorted(folder.rglob(pattern)):
            calls = reader(path)
            if calls:
                files[path.name] = (
                    check(calls)
                    if provider == "anthropic"
                    else check_prefix_cache(calls, OpenAICache())
                )
        rows = [r for entry in files.values() for r in entry["rows"]]
        tokens = sum(r["tokens"] for r in rows) or 1
        out[provider] = {
            "files": len(files),
            "calls": len(rows),
            "served_hit_rate": round(sum(r["real"] for r in rows) / tokens, 4),
            "predicted_hit_rate": round(sum(r["model"] for r in rows) / tokens, 4),
            "exact_share": round(sum(r["model"] == r["real"] for r in rows) / (len(rows) or 1), 4),
        }
        if provider != "anthropic":
            out[provider]["prefix_bound_hit_rate"] = round(
                sum(r["bound"] for r in rows) / tokens, 4
            )
    return out
