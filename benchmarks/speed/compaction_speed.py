"""Compaction benchmark: speed against one tiktoken pass, and the tokens each compaction removes.

For each target size (10^4 to 10^6 tokens by default) it generates a seeded synthetic session
(`harness.simulation._sessions`), loads it as a live `compaction.Session`, and measures:

- **speed**: one `compact()` (extractive summarizer, dry run, so it can repeat) on the whole
  session with the default policy and a window sized so the session sits exactly at the 0.8
  trigger, against one tiktoken ``encode_ordinary`` pass over the same text (every message of
  the context, as counted). Best of ``--repeat`` runs each. Target: under 2x.
- **reduction, single**: the share of the context that compaction removed. Target: >= 75%.
- **reduction, agent loop**: the session replayed event by event into a fresh log with a window
  of a quarter of the session (at least 8,192 tokens) and the default policy, compacting
  whenever the context reaches the trigger just before the model would be called (before an
  assistant message is appended); every compaction's reduction is recorded (min, median, max).

Run ``python -m benchmarks.speed.compaction_speed`` (see ``benchmarks/README.md``); results go to
``benchmarks/results/compaction.json`` (sorted keys; timings vary by machine, token figures
do not).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import RESULTS
from compaction import (
    CompactionPolicy,
    EventData,
    Message,
    Session,
    compact,
    count_message,
    get_tokenizer,
)
from compaction.tokens import message_text
from compaction.views import checkpoint_message_for
from harness.simulation import generate

DEFAULT_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
TOKENS_PER_TURN = 7_000
"""About what one turn of `harness.simulation._sessions` weighs in o200k tokens."""
RESULTS_FILE = RESULTS / "compaction.json"
SPEED_TARGET = 2.0
REDUCTION_TARGET = 0.75


def is_model_call(payload: EventData) -> bool:
    """Tell whether appending this payload means the model was called (an assistant message)."""
    return isinstance(payload, Message) and payload.role == "assistant"


def session_payloads(target: int, seed: int) -> tuple[list[EventData], int]:
    """Return the shortest prefix of a generated session holding `target` message tokens.

    Generates enough turns (`TOKENS_PER_TURN` is an estimate, so a margin is added) and cuts
    at the first point past the target where the model would be called next (the next payload
    is an assistant message), as an agent loop compacts; returns the payloads and the turns.
    """
    tokenizer = get_tokenizer()
    turns = max(2, round(target / TOKENS_PER_TURN * 1.3) + 1)
    payloads = generate(turns, seed)
    total = 0
    for i, payload in enumerate(payloads):
        if isinstance(payload, Message):
            total += count_message(tokenizer, payload)
        if total >= target and i + 1 < len(payloads) and is_model_call(payloads[i + 1]):
            return payloads[: i + 1], turns
    return payloads, turns


def best_time(fn: Callable[[], object], repeat: int) -> float:
    """Return the fastest of `repeat` timed calls of `fn`."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def measure_single(session: Session, repeat: int) -> dict[str, Any]:
    """Time one compaction of the whole session against one tiktoken pass over its text."""
    tokens = session.context_tokens
    policy = CompactionPolicy(window_tokens=math.ceil(tokens / 0.8), threshold=0.8)
    text = "\n".join(message_text(m) for m in session.context.as_messages())
    tokenizer = session.tokenizer
    tiktoken_s = best_time(lambda: tokenizer.encode(text), repeat)
    result = compact(session, policy, dry_run=True)
    compact_s = best_time(lambda: compact(session, policy, dry_run=True), repeat)
    return {
        "tokens": tokens,
        "characters": len(text),
        "window_tokens": policy.window_tokens,
        "tiktoken_seconds": round(tiktoken_s, 4),
        "compact_seconds": round(compact_s, 4),
        "time_ratio": round(compact_s / tiktoken_s, 3),
        "tokens_after": result.tokens_after,
        "checkpoint_tokens": count_message(tokenizer, checkpoint_message_for(result.data.text)),
        "reduction": round(result.reduction, 4),
        "replaced_messages": result.replaced_messages,
        "kept_messages": result.kept_messages,
    }


def measure_loop(payloads: Sequence[EventData], tokens: int, path: Path) -> dict[str, Any]:
    """Replay a session with compaction before each model call; return every reduction."""
    policy = CompactionPolicy(window_tokens=max(8_192, tokens // 4))
    reductions: list[float] = []
    start = time.perf_counter()
    with Session(path, sync="batch") as session, session.batch():
        for payload in payloads:
            if is_model_call(payload) and policy.should_compact(session.context_tokens):
                reductions.append(compact(session, policy).reduction)
            session.append(payload)
        peak = session.context_tokens
    return {
        "window_tokens": policy.window_tokens,
        "compactions": len(reductions),
        "reduction_min": round(min(reductions), 4) if reductions else None,
        "reduction_median": round(statistics.median(reductions), 4) if reductions else None,
        "reduction_max": round(max(reductions), 4) if reductions else None,
        "context_tokens_at_end": peak,
        "seconds": round(time.perf_counter() - start, 3),
    }


def run(sizes: Sequence[int], *, repeat: int = 5, seed: int = 0) -> dict[str, Any]:
    """Run the benchmark for each target size; return the results object."""
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in sizes:
            payloads, turns = session_payloads(size, seed)
            log = Path(tmp) / f"s{size}.jsonl"
            start = time.perf_counter()
            with Session(log, sync="batch") as session:
                with session.batch():
                    session.append_many(payloads)
                load_s = time.perf_counter() - start
                single = measure_single(session, repeat)
            loop = measure_loop(payloads, single["tokens"], Path(tmp) / f"loop{size}.jsonl")
            rows.append(
                {
                    "target_tokens": size,
                    "turns_generated": turns,
                    "payloads": len(payloads),
                    "seed": seed,
                    "append_and_count_seconds": round(load_s, 3),
                    "single": single,
                    "loop": loop,
                }
            )
    results: dict[str, Any] = {
        "benchmark": "compaction",
        "summarizer": "extractive",
        "tokenizer": "tiktoken:o200k_base",
        "policy": {
            "threshold": CompactionPolicy().threshold,
            "retain": CompactionPolicy().retain,
            "output_reserve": 0,
            "summary_share": 0.03,
        },
        "targets": {"time_ratio_below": SPEED_TARGET, "reduction_at_least": REDUCTION_TARGET},
        "python": platform.python_version(),
        "sizes": rows,
        "met": {
            "speed": all(r["single"]["time_ratio"] < SPEED_TARGET for r in rows),
            "reduction": all(
                r["single"]["reduction"] >= REDUCTION_TARGET
                and (r["loop"]["reduction_min"] or 1.0) >= REDUCTION_TARGET
                for r in rows
            ),
        },
    }
    return results


def main(argv: Sequence[str] | None = None) -> int:
    """Run from the command line; print a table and write the JSON results."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.compaction_speed")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(DEFAULT_SIZES))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS_FILE)
    args = parser.parse_args(argv)
    results = run(args.sizes, repeat=args.repeat, seed=args.seed)
    sizes = " ".join(str(n) for n in args.sizes)
    results["command"] = (
        f"python -m benchmarks.speed.compaction_speed --sizes {sizes} --repeat {args.repeat} "
        f"--seed {args.seed}"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    for row in results["sizes"]:
        s, lp = row["single"], row["loop"]
        print(
            f"{s['tokens']:>9} tokens: compact {s['compact_seconds']:.3f}s vs tiktoken "
            f"{s['tiktoken_seconds']:.3f}s = {s['time_ratio']:.2f}x; reduction {s['reduction']:.1%}"
            f"; loop ({lp['window_tokens']}-token window) {lp['compactions']} compactions, "
            f"reduction min {lp['reduction_min']} median {lp['reduction_median']}"
        )
    print(f"targets met: {results['met']}; written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
