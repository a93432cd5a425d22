"""The Anthropic cache model against real usage: recorded Claude Code sessions, request by request.

A Claude Code transcript records, for each model call of the main thread, when it was made and
what the provider billed: ``input_tokens`` (after the last cache breakpoint),
``cache_creation_input_tokens`` (written) and ``cache_read_input_tokens`` (served from cache),
with the write's lifetime (``ephemeral_5m`` or ``ephemeral_1h``). `read_calls` reads those calls
(one per API message id; sub-agent calls, ``isSidechain``, are left out) and marks the ones that
follow one of Claude Code's own compactions (a ``compact_boundary`` record).

The request bytes are not in a transcript, so `check` rebuilds each request as token ids of the
provider's own length (read + written + input): a request that grew extends the previous one; the
first request after a compaction (or one that shrank) shares only the fixed prefix (system prompt
and tools) with it, taken from the provider's own report where it gives one (the first call's
cache read, when the system prompt was already cached; else the smallest read after a
compaction). Each rebuilt request is fed to `AnthropicCache` with the call's timestamp, once
with the lifetime the call's own writes used (5 minutes or 1 hour) and once without expiry, and
the model's hit is set beside the provider's ``cache_read_input_tokens``. Breakpoints sit where
the usage shows them: the end of the fixed prefix, and the end of what the request read and wrote
(``input_tokens`` are the tokens after the last breakpoint).

`main` (``python -m benchmarks.replay.usage_check``) sets predicted against served for every
provider with recorded usage in the transcripts folder (`benchmarks.replay.usage_providers`:
Anthropic from Claude Code, OpenAI from Codex's ``cached_input_tokens``, Gemini from Gemini
CLI's cache counts) and writes ``benchmarks/results/usage_check.json``.

What it tests: the rolling breakpoint (a request reads everything the previous one wrote), the
fixed prefix at compactions, and expiry between calls more than a lifetime apart; not how Claude
Code's bytes tokenize.

Invariants: reading and checking are pure functions of the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from harness.simulation import AnthropicCache, pack

_INPUT_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
_WIDTH = 4
"""Bytes per packed token id."""
FIVE_MINUTES = 300.0
ONE_HOUR = 3600.0


@dataclass(frozen=True)
class UsageCall:
    """One main-thread model call with the usage the provider reported."""

    at: float
    """Seconds since the epoch (the record's timestamp)."""
    input: int
    write: int
    read: int
    output: int
    ttl: float
    """The lifetime of this call's cache writes: 300 s, or 3,600 s for ``ephemeral_1h``."""
    after_compaction: bool
    """One of the agent's own compactions came between this call and the one before."""

    @property
    def total(self) -> int:
        """Input tokens of the request: read + written + uncached."""
        return self.input + self.write + self.read

    @property
    def cached_end(self) -> int:
        """Where the request's last cache breakpoint ends: what it read plus what it wrote."""
        return self.read + self.write


def _records(path: Path) -> Iterator[dict[str, Any]]:
    decoder = json.JSONDecoder()
    with path.open(encoding="utf-8") as f:
        for line in f:
            text, pos = line.strip(), 0
            while pos < len(text):  # a line may hold two objects with no newline between them
                try:
                    value, end = decoder.raw_decode(text, pos)
                except ValueError:
                    break
                if isinstance(value, dict):
                    yield value
                pos = end
                while pos < len(text) and text[pos].isspace():
                    pos += 1


def _seconds(stamp: object) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def read_calls(path: Path) -> list[UsageCall]:
    """Read the main-thread model calls of a Claude Code transcript, with their usage."""
    calls: dict[str, UsageCall] = {}
    boundary = False
    for r in _records(path):
        if r.get("type") == "system" and r.get("subtype") == "compact_boundary":
            boundary = True
            continue
        message = r.get("message")
        if r.get("type") != "assistant" or r.get("isSidechain") or not isinstance(message, dict):
            continue
        usage, at, key = message.get("usage"), _seconds(r.get("timestamp")), message.get("id")
        if not isinstance(usage, dict) or at is None or not isinstance(key, str):
            continue
        if not any(_int(usage.get(k)) for k in _INPUT_KEYS):
            continue  # a call that was never billed (an aborted request) holds nothing
        if key in calls:  # one API message is split into a record per content block
            old = calls[key]
            output = max(old.output, _int(usage.get("output_tokens")))
            calls[key] = UsageCall(**{**asdict(old), "output": output})
            continue
        creation = usage.get("cache_creation")
        long = isinstance(creation, dict) and _int(creation.get("ephemeral_1h_input_tokens")) > 0
        calls[key] = UsageCall(
            at=at,
            input=_int(usage.get("input_tokens")),
            write=_int(usage.get("cache_creation_input_tokens")),
            read=_int(usage.get("cache_read_input_tokens")),
            output=_int(usage.get("output_tokens")),
            ttl=ONE_HOUR if long else FIVE_MINUTES,
            after_compaction=boundary,
        )
        boundary = False
    return sorted(calls.values(), key=lambda c: c.at)


def fixed_prefix(calls: Sequence[UsageCall]) -> int:
    """Return the fixed prefix's length as the provider reported it (0 when it never did)."""
    if calls and calls[0].read:
        return calls[0].read
    after = [c.read for c in calls[1:] if c.after_compaction and c.read]
    return min(after, default=0)


@dataclass
class _Rebuilder:
    """Rebuilds each request as packed token ids: shared prefixes as the usage shows them."""

    fixed: int
    previous: bytes = b""
    fresh: int = 1_000_000

    def request(self, call: UsageCall, rewrite: bool) -> bytes:
        keep = self.previous[: self.fixed * _WIDTH] if rewrite else self.previous
        if not keep and self.fixed:
            keep = pack(range(self.fixed))  # the system prompt and tools: the same ids always
        keep = keep[: call.total * _WIDTH]
        tokens = keep + pack(range(self.fresh, self.fresh + call.total - len(keep) // _WIDTH))
        self.fresh += call.total
        self.previous = tokens
        return tokens


def kind(call: UsageCall, previous: UsageCall | None) -> str:
    """Classify a call: first, after-compaction, shrank, after-gap (past its lifetime), grew."""
    if previous is None:
        return "first"
    if call.after_compaction:
        return "after-compaction"
    if call.total < previous.total:
        return "shrank"
    if call.at - previous.at > previous.ttl:
        return "after-gap"
    return "grew"


def check(calls: Sequence[UsageCall]) -> dict[str, Any]:
    """Feed the rebuilt requests to the Anthropic model with and without expiry; compare.

    Returns per-request rows (kind, gap in seconds, request tokens, provider read, model read
    with expiry, model read without) and totals per kind.
    """
    fixed = fixed_prefix(calls)
    rebuild = _Rebuilder(fixed)
    ttl = max((c.ttl for c in calls), default=FIVE_MINUTES)
    timed = AnthropicCache(ttl_seconds=ttl).simulator()
    timeless = AnthropicCache(ttl_seconds=None).simulator()
    rows: list[dict[str, Any]] = []
    previous: UsageCall | None = None
    for call in calls:
        k = kind(call, previous)
        tokens = rebuild.request(call, rewrite=k in ("after-compaction", "shrank"))
        marks = sorted({m for m in (fixed, call.cached_end) if 0 < m <= call.total})
        rows.append(
            {
                "kind": k,
                "gap_s": round(call.at - previous.at, 1) if previous else None,
                "tokens": call.total,
                "real": call.read,
                "model": timed.serve(tokens, marks, call.at),
                "model_no_expiry": timeless.serve(tokens, marks),
            }
        )
        previous = call
    return {"fixed_prefix": fixed, "ttl_s": ttl, "rows": rows, "by_kind": _by_kind(rows)}


def _by_kind(rows: Sequence[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    for r in rows:
        acc = out.setdefault(
            r["kind"],
            {"calls": 0, "tokens": 0, "real": 0, "model": 0, "model_no_expiry": 0, "exact": 0},
        )
        acc["calls"] += 1
        for key in ("tokens", "real", "model", "model_no_expiry"):
            acc[key] += r[key]
        acc["exact"] += r["model"] == r["real"]
    return out


def check_transcripts(folder: Path) -> dict[str, Any]:
    """Check every Claude Code transcript in `folder`; return one entry per file, by name."""
    out: dict[str, Any] = {}
    for path in sorted(folder.glob("claude-code*.jsonl")):
        calls = read_calls(path)
        if calls:
            out[path.name] = check(calls)
    return out


def pooled(checked: dict[str, Any]) -> dict[str, float]:
    """Pool every file's rows: real hit rate, the model's with and without expiry, exact share."""
    rows = [r for entry in checked.values() for r in entry["rows"]]
    tokens = sum(r["tokens"] for r in rows) or 1
    return {
        "calls": len(rows),
        "real_hit_rate": sum(r["real"] for r in rows) / tokens,
        "model_hit_rate": sum(r["model"] for r in rows) / tokens,
        "model_no_expiry_hit_rate": sum(r["model_no_expiry"] for r in rows) / tokens,
        "exact_share": sum(r["model"] == r["real"] for r in rows) / (len(rows) or 1),
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Print predicted against served per provider; write ``results/usage_check.json``."""
    import argparse
    import os

    from benchmarks import CHECKOUT
    from benchmarks.replay.usage_providers import check_providers

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = os.environ.get("HARNESS_TRANSCRIPTS") or str(
        CHECKOUT.parent / "shared" / "transcripts"
    )
    parser.add_argument("--transcripts", type=Path, default=Path(default))
    parser.add_argument(
        "--out", type=Path, default=CHECKOUT / "benchmarks" / "results" / "usage_check.json"
    )
    args = parser.parse_args(argv)
    result = {"folder": args.transcripts.name, "providers": check_providers(args.transcripts)}
    for provider, row in result["providers"].items():
        print(f"{provider:<10} {row}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
