"""Session core: append + view update per event as the log grows, and token-counting overhead.

Two figures, each with the target issue 2 sets:

- **Append + views, per event**, at 10^3, 10^4, 10^5 and 10^6 events: `Session.append` writes the
  line and updates every view (todos, latest todos, context, usage with its token count). Every
  size runs with ``sync="batch"`` inside one ``batch()`` block, so the sizes compare like for like
  (an fsync per append costs the disk's latency, not the core's; it is reported separately at the
  smallest size). Target: per-event cost at 10^6 within 1.5x of 10^3. The events cycle through a
  small agent turn (request, tool call, tool output, todo/write, answer, turn end).
- **Token counting**: `Tokenizer.count` against calling tiktoken's ``encode_ordinary`` directly
  on the same texts (the message texts of a generated 12-turn session). Target: within 1.3x.

Run: ``python -m benchmarks.speed.session_core`` (writes ``benchmarks/results/core.json`` and
``core.md``). ``--sizes 1000 10000`` for a quick run; see ``--help``.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from benchmarks import CHECKOUT
from compaction import (
    EventData,
    FunctionCall,
    Message,
    Session,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnEndData,
    TurnStartData,
    get_tokenizer,
)
from compaction.stores import SyncPolicy
from compaction.tokens import message_text

ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "core.json"
DEFAULT_SIZES = (1_000, 10_000, 100_000, 1_000_000)
SCALING_TARGET = 1.5
clock = time.process_time
"""Timings are this process's CPU time: the machine is shared, and waiting for a core that
another process holds is not a cost of the code measured. Wall time is reported beside it."""
TOKENS_TARGET = 1.3

_SOURCE = "\n".join(
    f"    def handler_{i}(self, request):\n        return self.route(request, retries={i})"
    for i in range(8)
)


def turn_payloads() -> list[EventData]:
    """Return one small agent turn, the cycle every size appends."""
    call = ToolCall(
        id="call_1", function=FunctionCall(name="read_file", arguments='{"path": "app/cli.py"}')
    )
    return [
        TurnStartData(mode="agent"),
        Message(role="user", content="Add a --verbose flag to the CLI and cover it with a test."),
        Message(role="assistant", content="I'll read the CLI first.", tool_calls=(call,)),
        Message(role="tool", tool_call_id="call_1", content=_SOURCE),
        TodoWriteData(
            todos=(
                TodoItem(content="Read the CLI", status="completed"),
                TodoItem(content="Add the --verbose flag", status="in_progress"),
                TodoItem(content="Write a test for it", status="pending"),
            )
        ),
        Message(role="assistant", content="The flag is wired into the parser; tests next."),
        TurnEndData(),
    ]


def bench_append(n: int, workdir: Path, *, sync: SyncPolicy = "batch") -> dict[str, Any]:
    """Append `n` events through a Session; return per-event figures (microseconds).

    Besides the run's average it times blocks of `min(1000, n // 10)` events, and reports the
    median block cost among the first ten and the last ten blocks: the marginal cost of an append
    while the log is short and once it is long, which a busy machine disturbs less than a mean.
    """
    path = workdir / f"append-{n}-{sync}.jsonl"
    path.unlink(missing_ok=True)
    payloads = turn_payloads()
    cycle = len(payloads)
    block = max(1, min(1_000, n // 10))
    marks: list[float] = []
    with Session(path, sync=sync) as session:
        gc.collect()
        wall = time.perf_counter()
        start = clock()
        with session.batch() if sync == "batch" else nullcontext():
            for i in range(n):
                session.append(payloads[i % cycle])
                if (i + 1) % block == 0:
                    marks.append(clock())
        elapsed = clock() - start
        wall = time.perf_counter() - wall
        assert session.applied_seq == n
        context_tokens = session.context_tokens
    size = path.stat().st_size
    path.unlink()
    blocks = [(b - a) / block * 1e6 for a, b in zip([start, *marks], marks, strict=False)]
    return {
        "events": n,
        "sync": sync,
        "cpu_seconds": round(elapsed, 4),
        "wall_seconds": round(wall, 4),
        "us_per_event": round(elapsed / n * 1e6, 3),
        "wall_us_per_event": round(wall / n * 1e6, 3),
        "block_events": block,
        "us_per_event_first_blocks": round(statistics.median(blocks[:10]), 3),
        "us_per_event_last_blocks": round(statistics.median(blocks[-10:]), 3),
        "log_bytes": size,
        "context_tokens": context_tokens,
    }


def bench_tokens(texts: Sequence[str], runs: int = 7) -> dict[str, Any]:
    """Time Tokenizer.count against tiktoken's encode_ordinary on the same texts."""
    import tiktoken

    tok = get_tokenizer("o200k_base")  # installs the bundled encoding files first
    encode = tiktoken.get_encoding("o200k_base").encode_ordinary

    def direct() -> float:
        start = clock()
        for text in texts:
            len(encode(text))
        return clock() - start

    def ours() -> float:
        start = clock()
        for text in texts:
            tok.count(text)
        return clock() - start

    assert [tok.count(t) for t in texts] == [len(encode(t)) for t in texts]
    direct(), ours()  # warm up
    # Interleaved, best of each: a busy machine slows both sides alike.
    pairs = [(direct(), ours()) for _ in range(runs)]
    t_direct, t_ours = min(p[0] for p in pairs), min(p[1] for p in pairs)
    return {
        "texts": len(texts),
        "characters": sum(len(t) for t in texts),
        "tokens": sum(tok.count(t) for t in texts),
        "tiktoken_seconds": round(t_direct, 5),
        "tokenizer_seconds": round(t_ours, 5),
        "ratio": round(t_ours / t_direct, 3),
    }


def session_texts(turns: int) -> list[str]:
    """Return the message texts of a generated session, as the usage view counts them."""
    from harness.simulation import generate

    return [message_text(p) for p in generate(turns, 0) if isinstance(p, Message)]


def run(sizes: Sequence[int], turns: int, workdir: Path) -> dict[str, Any]:
    """Run every figure; return the results document."""
    bench_append(min(1_000, min(sizes)), workdir)  # warm up imports, tokenizer, pydantic
    scaling = []
    for n in sizes:
        repeats = 5 if n <= 10_000 else 2 if n <= 100_000 else 1
        runs = [bench_append(n, workdir) for _ in range(repeats)]
        scaling.append(min(runs, key=lambda r: r["us_per_event"]))
    smallest, largest = scaling[0], scaling[-1]
    ratio = largest["us_per_event"] / smallest["us_per_event"]
    marginal = largest["us_per_event_last_blocks"] / largest["us_per_event_first_blocks"]
    fsync = bench_append(min(sizes), workdir, sync="always")
    texts = session_texts(turns)
    tokens = bench_tokens(texts)
    short = bench_tokens([t[:40] for t in texts])
    return {
        "benchmark": "core",
        "command": "python -m benchmarks.speed.session_core "
        + " ".join(f"--sizes {n}" for n in sizes),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "append": {
            "per_size": scaling,
            "ratio_largest_vs_smallest": round(ratio, 3),
            "ratio_last_vs_first_blocks_of_largest": round(marginal, 3),
            "target_ratio": SCALING_TARGET,
            "meets_target": ratio < SCALING_TARGET,
            "sync_always_smallest": fsync,
        },
        "tokens": {
            "session_texts": tokens,
            "short_texts": short,
            "target_ratio": TOKENS_TARGET,
            "meets_target": tokens["ratio"] <= TOKENS_TARGET,
        },
    }


def markdown(doc: dict[str, Any]) -> str:
    """Render the results as a short Markdown report."""
    a, t = doc["append"], doc["tokens"]
    lines = [
        "# Session core benchmark",
        "",
        f"Command: `{doc['command']}` (Python {doc['machine']['python']}, "
        f"{doc['machine']['cpus']} CPUs).",
        "",
        "## Append + view update per event (sync='batch', one batch block; CPU time)",
        "",
        "| events | µs/event (run) | first blocks | last blocks | CPU s | wall s | log bytes |",
        "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in a["per_size"]:
        lines.append(
            f"| {r['events']:,} | {r['us_per_event']} | {r['us_per_event_first_blocks']} | "
            f"{r['us_per_event_last_blocks']} | {r['cpu_seconds']} | {r['wall_seconds']} | "
            f"{r['log_bytes']:,} |"
        )
    verdict = "meets" if a["meets_target"] else "MISSES"
    lines += [
        "",
        f"Largest vs smallest: **{a['ratio_largest_vs_smallest']}x** "
        f"(target < {a['target_ratio']}x: {verdict}). Within the largest run, the median cost "
        f"of the last ten blocks vs the first ten: "
        f"{a['ratio_last_vs_first_blocks_of_largest']}x.",
        "First/last blocks: median µs/event of the first and last ten blocks of "
        "min(1000, n/10) events in the run.",
        f"With sync='always' (an fsync per append) at {a['sync_always_smallest']['events']:,} "
        f"events: {a['sync_always_smallest']['wall_us_per_event']} µs/event of wall time "
        f"({a['sync_always_smallest']['us_per_event']} µs of CPU): the disk's fsync latency.",
        "",
        "## Token counting: Tokenizer.count vs tiktoken encode_ordinary (o200k_base)",
        "",
        "| texts | characters | tiktoken CPU s | Tokenizer CPU s | ratio |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in ("session_texts", "short_texts"):
        r = t[name]
        lines.append(
            f"| {name.replace('_', ' ')} ({r['texts']}) | {r['characters']:,} | "
            f"{r['tiktoken_seconds']} | {r['tokenizer_seconds']} | {r['ratio']}x |"
        )
    verdict = "meets" if t["meets_target"] else "MISSES"
    lines += ["", f"Target on session texts: within {t['target_ratio']}x ({verdict}).", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write the JSON and Markdown results."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed.session_core", description=__doc__
    )
    parser.add_argument(
        "--sizes",
        type=int,
        action="append",
        help="event counts to append (repeatable; default 10^3 10^4 10^5 10^6)",
    )
    parser.add_argument("--turns", type=int, default=12, help="turns of the token-count corpus")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSON path")
    parser.add_argument("--workdir", type=Path, help="where the logs are written (default: tmp)")
    args = parser.parse_args(argv)
    sizes = sorted(args.sizes or DEFAULT_SIZES)
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        doc = run(sizes, args.turns, Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(markdown(doc), encoding="utf-8")
    print(markdown(doc))
    return 0


if __name__ == "__main__":
    sys.exit(main())
