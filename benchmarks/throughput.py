"""Throughput and scaling: the toolkit's cost per event from 10^3 to 10^6 events.

For each size N, the events are the payloads of a generated 40-turn session, cycled until there
are N of them (the same mix of user requests, tool calls with large outputs and todo writes at
every size). Measured, each on its own:

- **append + views**: appending the N events to a fresh `compaction.Session` (``sync="batch"``,
  one lock and one fsync per 1,000 events), which also updates the todos, context and usage
  views (the usage view tokenizes each message once): time per event;
- **reopen**: reading the log back into a new `Session` (parse, check, fold every view);
- **raw tiktoken**: `encode_ordinary` over the text of the same messages, the floor any token
  accounting must pay; every time above is also given as a ratio to it;
- **token count**: `Session.context_tokens` at the end (O(1): mean over 1,000 reads);
- **compaction**: one forced `compaction.compact` over the whole context (default policy), with
  its time as a ratio to raw tiktoken over the same messages;
- **request assembly**: `prompts.openai_request` over the compacted context (mean of 20);
- **peak memory** (`tracemalloc`) of append + views and of reopen, in a second, traced pass
  (tracing slows Python down, so times come from the untraced pass).

Invariants: measurements never change what they measure (each runs on its own fresh log in a
temporary folder, removed afterwards); sizes run in increasing order.
"""

from __future__ import annotations

import itertools
import statistics
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypeVar

from compaction import (
    CompactionPolicy,
    EventData,
    Message,
    Session,
    Tokenizer,
    compact,
    get_tokenizer,
    message_text,
)
from harness.simulation import ENVIRONMENT, generate, user_tools
from prompts import PromptBuilder, ToolCatalog, get_mode, openai_request

FULL_SIZES: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES: tuple[int, ...] = (1_000, 2_000)
BATCH = 1_000
"""Events appended per locked write (and per fsync)."""
_READS = 1_000

T = TypeVar("T")


@dataclass(frozen=True)
class ScalePoint:
    """The measurements at one log size."""

    events: int
    log_bytes: int
    message_tokens: int
    """Tokens of every message appended (the context had nothing been compacted)."""
    append_us: float
    """Append + views, microseconds per event."""
    reopen_us: float
    """Reading the log back into a Session, microseconds per event."""
    tiktoken_us: float
    """Raw tiktoken over the same messages' text, microseconds per event."""
    append_ratio: float
    """Append + views time over raw tiktoken time."""
    reopen_ratio: float
    """Reopen time over raw tiktoken time."""
    context_tokens_ns: float
    """One read of `Session.context_tokens`, nanoseconds."""
    compaction_s: float
    """One forced compaction of the whole context, seconds."""
    compaction_ratio: float
    """Compaction time over raw tiktoken time on the same messages."""
    compaction_reduction: float
    """Share of the context the compaction removed."""
    assembly_ms: float
    """One `openai_request` over the compacted context, milliseconds."""
    append_peak_mb: float | None
    """Peak traced memory of append + views, MiB (None when not traced)."""
    reopen_peak_mb: float | None
    """Peak traced memory of reopen, MiB (None when not traced)."""


def events_of(n: int, seed: int = 0) -> list[EventData]:
    """Return `n` event payloads: a generated 40-turn session, cycled."""
    return list(itertools.islice(itertools.cycle(generate(40, seed)), n))


def _timed(fn: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - start


def _peak(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def append_all(path: Path, events: Sequence[EventData], tokenizer: Tokenizer) -> Session:
    """Append `events` to a new log at `path` in batches; return the open session.

    The usage view is folded before returning (a `Session` counts tokens on first use), so the
    time includes tokenizing each message once and a later `context_tokens` read is O(1).
    """
    session = Session(path, tokenizer=tokenizer, sync="batch")
    for i in range(0, len(events), BATCH):
        with session.batch():
            session.append_many(events[i : i + BATCH])
    _ = session.context_tokens
    return session


def _reopen(path: Path, tokenizer: Tokenizer) -> int:
    """Read the log back into a new session and fold every view, token counts included."""
    with Session(path, tokenizer=tokenizer, sync="batch") as again:
        return again.context_tokens


def measure(n: int, *, tokenizer: Tokenizer | None = None, trace: bool = True) -> ScalePoint:
    """Measure every cost at one size (see the module docstring)."""
    tok = tokenizer or get_tokenizer()
    events = events_of(n)
    texts = [message_text(e) for e in events if isinstance(e, Message)]
    with tempfile.TemporaryDirectory(prefix="harness-scale-") as tmp:
        log = Path(tmp) / "timed.jsonl"
        session, append_s = _timed(lambda: append_all(log, events, tok))
        with session:
            _, reopen_s = _timed(lambda: _reopen(log, tok))
            tokens, tiktoken_s = _timed(lambda: sum(len(tok.encode(t)) for t in texts))
            read_s = _timed(lambda: [session.context_tokens for _ in range(_READS)])[1]
            result, compaction_s = _timed(lambda: compact(session, CompactionPolicy(), force=True))
            builder = PromptBuilder(ToolCatalog(user_tools()), environment=ENVIRONMENT)
            mode = get_mode("agent")
            assembly = [
                _timed(lambda: openai_request(builder, mode, session))[1] for _ in range(20)
            ]
            log_bytes = log.stat().st_size
        append_peak = reopen_peak = None
        if trace:
            traced = Path(tmp) / "traced.jsonl"
            append_peak = _peak(lambda: append_all(traced, events, tok).close())
            reopen_peak = _peak(lambda: _reopen(traced, tok))
    per = 1e6 / n
    return ScalePoint(
        events=n,
        log_bytes=log_bytes,
        message_tokens=tokens,
        append_us=append_s * per,
        reopen_us=reopen_s * per,
        tiktoken_us=tiktoken_s * per,
        append_ratio=append_s / tiktoken_s,
        reopen_ratio=reopen_s / tiktoken_s,
        context_tokens_ns=read_s / _READS * 1e9,
        compaction_s=compaction_s,
        compaction_ratio=compaction_s / tiktoken_s,
        compaction_reduction=result.reduction,
        assembly_ms=statistics.mean(assembly) * 1e3,
        append_peak_mb=append_peak,
        reopen_peak_mb=reopen_peak,
    )


def run(
    sizes: Sequence[int] = FULL_SIZES,
    *,
    trace_up_to: int = 1_000_000,
    progress: Callable[[str], None] | None = None,
) -> list[dict[str, Any]]:
    """Measure every size in increasing order; return one plain dict per size.

    Args:
        sizes: numbers of events.
        trace_up_to: largest size whose peak memory is traced (the traced pass doubles the
            time of a size).
        progress: called with a line after each size.
    """
    out = []
    for n in sorted(sizes):
        point = measure(n, trace=n <= trace_up_to)
        out.append(asdict(point))
        if progress:
            progress(
                f"{n:>9,} events: append+views {point.append_us:.0f} µs/event "
                f"({point.append_ratio:.1f}x tiktoken), reopen {point.reopen_us:.0f} µs/event"
            )
    return out
