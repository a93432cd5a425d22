"""Throughput and scaling: the toolkit's CPU cost per event from 10^3 to 10^6 events.

The events at every size are unique text (`benchmarks.speed.throughput_corpus.events_of`): the
messages of the shared real transcripts, then a generated session, cycled until there are N of
them, each copy's messages made unique and its system messages left out (one session, one
system prompt, whatever N).

Each figure is this process's CPU time (`time.process_time`), and each cost is a ratio to a raw
tiktoken pass (`encode_ordinary`) over the same text, measured beside it: the phases interleave
(tiktoken, append, tiktoken, reopen, compaction, tiktoken over its span), so the machine's load
moves both sides of a ratio alike. The load average before and after each size is kept with it.

- **append + views**: appending the N events to a fresh `compaction.Session` in batches of
  1,000 (``sync="batch"``), then reading `context_tokens` (the usage view tokenizes each message);
- **reopen**: reading the log back into a new `Session`, folding every view and every count;
- **compaction**: one forced `compaction.compact` of the context, over raw tiktoken on its span;
- **peak memory** of reopen per event (`tracemalloc`, a separate pass up to `trace_up_to`);
- **reopen peak RSS** (JSONL, every size): a fresh process opens the timed log (ending in the
  forced compaction), reads its context, todos, tasks, then `context_tokens`, then appends one
  message and makes `maybe_compact`'s check; its peak resident memory at each (`reopen_rss`).

Stores: the JSONL file always; SQLite and PostgreSQL (a throwaway local server,
`harness.testing._postgres_server`, fsync on) on request. PostgreSQL's server runs in its own
process, so its CPU is not in this process's figures; the wall time is given beside.

Run: ``python -m benchmarks.speed.throughput`` (``--quick``, ``--sizes``, ``--stores``).

Invariants: measurements never change what they measure (each runs on its own fresh log in a
temporary folder, removed afterwards); sizes run in increasing order; no message text of one
copy of the corpus is the text of a message in another copy.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from benchmarks import CHECKOUT
from benchmarks.speed.reopen_memory import reopen_rss
from benchmarks.speed.throughput_corpus import TRANSCRIPTS as TRANSCRIPTS
from benchmarks.speed.throughput_corpus import events_of as events_of
from benchmarks.speed.throughput_phases import BATCH as BATCH
from benchmarks.speed.throughput_phases import (
    MIN_TIMED_EVENTS,
    Opener,
    opener,
    raw_pass,
    reopen_count,
    rounds_for,
    timed_append,
    timed_call,
)
from benchmarks.speed.throughput_phases import append_all as append_all
from benchmarks.speed.throughput_phases import fresh_tokenizer as fresh_tokenizer
from benchmarks.speed.throughput_report import GOALS as GOALS
from benchmarks.speed.throughput_report import STORES as STORES
from benchmarks.speed.throughput_report import goals_met as goals_met
from benchmarks.speed.throughput_report import machine
from benchmarks.speed.throughput_report import merge as merge
from compaction import CompactionPolicy, EventData, Message, Session, Tokenizer, compact
from compaction.tokens import message_text
from harness.simulation import ENVIRONMENT, user_tools
from prompts import PromptBuilder, ToolCatalog, get_mode, openai_request

ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "throughput.json"
FULL_SIZES: tuple[int, ...] = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES: tuple[int, ...] = (500, 1_000)
"""The sizes of `harness bench --quick` (a smoke run: two sizes, the cost per event compared)."""
_READS = 1_000

T = TypeVar("T")


@dataclass(frozen=True)
class ScalePoint:
    """The measurements at one log size, in one store."""

    events: int
    store: str
    log_bytes: int
    message_tokens: int
    """Tokens of every message appended (the context had nothing been compacted)."""
    append_us: float
    """Append + views, CPU microseconds per event."""
    reopen_us: float
    """Reading the log back into a Session, CPU microseconds per event."""
    tiktoken_us: float
    """Raw tiktoken over the same messages' text, CPU microseconds per event (mean of two)."""
    append_ratio: float
    """Append + views CPU time over raw tiktoken CPU time."""
    reopen_ratio: float
    """Reopen CPU time over raw tiktoken CPU time."""
    context_tokens_ns: float
    """One read of `Session.context_tokens`, nanoseconds."""
    compaction_s: float
    """One forced compaction of the whole context, CPU seconds."""
    compaction_ratio: float
    """Compaction CPU time over raw tiktoken CPU time on the messages it replaced."""
    compaction_reduction: float
    """Share of the context the compaction removed."""
    assembly_ms: float
    """One `openai_request` over the compacted context, CPU milliseconds (mean of 20)."""
    append_wall_s: float
    """Wall time of append + views, seconds (includes a database server's work)."""
    reopen_wall_s: float
    """Wall time of reopen, seconds."""
    append_peak_mb: float | None
    """Peak traced memory of append + views, MiB (None when not traced)."""
    reopen_peak_mb: float | None
    """Peak traced memory of reopen, MiB (None when not traced)."""
    reopen_peak_bytes_per_event: float | None
    """Peak traced memory of reopen over the number of events, bytes."""
    load_before: float
    """The machine's 1-minute load average when this size started."""
    load_after: float
    """The same, when it ended."""
    rounds: int = 1
    """Rounds the append was timed over (each a fresh log and tokenizer; figures are means)."""
    reopen_rss_mb: float | None = None
    """Peak RSS of a fresh process reopening the log (ending in a compaction) and reading its
    context, todos and tasks, MiB (JSONL only; None elsewhere)."""
    reopen_usage_rss_mb: float | None = None
    """The same, once it also read `context_tokens` (the checkpoint's record: no tokenizer)."""
    reopen_append_rss_mb: float | None = None
    """The same, once it also appended a message and made `maybe_compact`'s check (tokenizer)."""


def _peak(fn: Callable[[], object]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _load() -> float:
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0


class _LiveCosts(NamedTuple):
    """What a live session costs at one size: reopen, reads, one compaction, request assembly."""

    reopen_s: float
    reopen_wall: float
    read_s: float
    """Wall seconds of `_READS` reads of `Session.context_tokens`."""
    compaction_s: float
    span_s: float
    """A raw tiktoken pass over the span the compaction replaced."""
    reduction: float
    assembly_s: float
    """CPU seconds of 20 request assemblies."""


def timed_reopen(open_: Opener, rounds: int) -> tuple[float, float]:
    """Return the mean CPU and wall seconds of `rounds` reopens of the ``timed`` log.

    Each reopen counts with a fresh tokenizer (`reopen_count`), so no round's counts are memo hits
    of an earlier one; a small size's single reopen is as noisy as its single append was.
    """
    rounds = max(1, rounds)
    cpu = wall = 0.0
    for _ in range(rounds):
        _, c, w = timed_call(lambda: reopen_count(open_, "timed"))
        cpu, wall = cpu + c, wall + w
    return cpu / rounds, wall / rounds


def _live_costs(session: Session, tok: Tokenizer, open_: Opener, rounds: int = 1) -> _LiveCosts:
    """Measure the live session's costs, in this order: reopen, reads, compaction, assembly.

    Reopen is timed over `rounds` rounds (the append's), its figure their mean.
    """
    reopen_s, reopen_wall = timed_reopen(open_, rounds)
    read_s = timed_call(lambda: [session.context_tokens for _ in range(_READS)])[2]
    before = [m for m in session.context.messages if m.role != "system"]
    result, compaction_s, _ = timed_call(lambda: compact(session, CompactionPolicy(), force=True))
    span = [message_text(m) for m in before[: result.replaced_messages]]
    span_s = timed_call(lambda: raw_pass(tok, span))[1]
    builder = PromptBuilder(ToolCatalog(user_tools()), environment=ENVIRONMENT)
    mode = get_mode("agent")
    assembly_s = timed_call(lambda: [openai_request(builder, mode, session) for _ in range(20)])[1]
    return _LiveCosts(
        reopen_s, reopen_wall, read_s, compaction_s, span_s, result.reduction, assembly_s
    )


def _peaks(tmp: Path, events: Sequence[EventData], open_: Opener) -> tuple[float, float]:
    """Return the traced peak MiB of appending the events to a fresh log, then of reopening it."""
    traced = tmp / "traced.jsonl"
    append_peak = _peak(lambda: append_all(traced, events, fresh_tokenizer(), open_).close())
    return append_peak, _peak(lambda: reopen_count(open_, "traced"))


def measure(
    n: int,
    *,
    store: str = "jsonl",
    trace: bool = True,
    transcripts: Path | None = TRANSCRIPTS,
    min_timed: int = MIN_TIMED_EVENTS,
) -> ScalePoint:
    """Measure every cost at one size in one store (see the module docstring).

    The append counts with a fresh tokenizer (remembering no count of an earlier size, store or
    round) and is timed over `rounds_for(n, min_timed)` rounds, and so is the reopen; the
    compaction then counts with the session's own, as a live session does.
    """
    events = events_of(n, transcripts=transcripts)
    texts = [message_text(e) for e in events if isinstance(e, Message)]
    text_chars = sum(map(len, texts))
    load_before = _load()
    with (
        tempfile.TemporaryDirectory(prefix="harness-scale-") as tmp,
        opener(store, Path(tmp)) as open_,
    ):
        timed = timed_append(Path(tmp), events, texts, open_, rounds_for(n, min_timed))
        appended = _Appended(timed.tokens, timed.append_s, timed.append_wall, timed.raw_s)
        texts.clear()  # a second copy of every text: not kept through reopen and compaction
        with timed.session as session:
            live = _live_costs(session, fresh_tokenizer(), open_, timed.rounds)
        log = Path(tmp) / "timed.jsonl"
        log_bytes = log.stat().st_size if log.exists() else text_chars
        peaks = _peaks(Path(tmp), events, open_) if trace else (None, None)
        rss = reopen_rss(log) if log.exists() else (None, None, None)
    point = _point(n, store, log_bytes, appended, live, peaks, (load_before, _load()))
    views, counted, more = rss
    point = replace(point, reopen_rss_mb=views, reopen_usage_rss_mb=counted)
    return replace(point, rounds=timed.rounds, reopen_append_rss_mb=more)


class _Appended(NamedTuple):
    """What appending one size cost, beside the raw tiktoken pass over the same text."""

    tokens: int
    append_s: float
    append_wall: float
    raw_s: float
    """Raw tiktoken over every message, CPU seconds (mean of the passes before and after)."""


def _point(
    n: int,
    store: str,
    log_bytes: int,
    a: _Appended,
    live: _LiveCosts,
    peaks: tuple[float | None, float | None],
    load: tuple[float, float],
) -> ScalePoint:
    """Return the figures of one size in one store, per event and as ratios to raw tiktoken."""
    per = 1e6 / n
    reopen_peak = peaks[1]
    return ScalePoint(
        events=n,
        store=store,
        log_bytes=log_bytes,
        message_tokens=a.tokens,
        append_us=a.append_s * per,
        reopen_us=live.reopen_s * per,
        tiktoken_us=a.raw_s * per,
        append_ratio=a.append_s / a.raw_s,
        reopen_ratio=live.reopen_s / a.raw_s,
        context_tokens_ns=live.read_s / _READS * 1e9,
        compaction_s=live.compaction_s,
        compaction_ratio=live.compaction_s / live.span_s if live.span_s else 0.0,
        compaction_reduction=live.reduction,
        assembly_ms=live.assembly_s / 20 * 1e3,
        append_wall_s=a.append_wall,
        reopen_wall_s=live.reopen_wall,
        append_peak_mb=peaks[0],
        reopen_peak_mb=reopen_peak,
        reopen_peak_bytes_per_event=reopen_peak * 2**20 / n if reopen_peak else None,
        load_before=load[0],
        load_after=load[1],
    )


def run(
    sizes: Sequence[int] = FULL_SIZES,
    *,
    stores: Sequence[str] = ("jsonl",),
    trace_up_to: int = 100_000,
    progress: Callable[[str], None] | None = None,
    transcripts: Path | None = TRANSCRIPTS,
    warm_up: bool = True,
    on_point: Callable[[list[dict[str, Any]]], None] | None = None,
    min_timed: int = MIN_TIMED_EVENTS,
) -> list[dict[str, Any]]:
    """Measure every size (increasing) in every store; return one plain dict per point.

    Args:
        sizes: numbers of events.
        stores: names from `STORES`.
        trace_up_to: largest size whose peak memory is traced (the traced pass doubles the
            time of a size).
        progress: called with a line after each point.
        transcripts: the folder of real transcripts whose messages come first (None: the
            generated session alone).
        warm_up: measure 200 events first and drop the figures.
        on_point: called with the points measured so far after each one (to save them, so a
            run stopped at 10^6 keeps the smaller sizes).
        min_timed: a size under this many events has its append timed over several rounds
            (`benchmarks.speed.throughput_phases.rounds_for`).
    """
    if warm_up:  # imports, encodings, first-call paths: not a cost of the first size
        measure(200, store="jsonl", trace=False, transcripts=transcripts, min_timed=0)
    out = []
    for n in sorted(sizes):
        for store in stores:
            trace = n <= trace_up_to
            point = measure(
                n, store=store, trace=trace, transcripts=transcripts, min_timed=min_timed
            )
            out.append(asdict(point))
            if on_point:
                on_point(out)
            if progress:
                progress(
                    f"{n:>9,} events, {store}: append+views {point.append_ratio:.2f}x tiktoken, "
                    f"reopen {point.reopen_ratio:.2f}x, compaction {point.compaction_ratio:.2f}x "
                    f"(load {point.load_before:.1f}-{point.load_after:.1f})"
                )
    return out


def _parser() -> argparse.ArgumentParser:
    """The command line's options."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.throughput")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--stores", nargs="+", choices=STORES, default=["jsonl"])
    parser.add_argument("--quick", action="store_true", help="10^3 and 2x10^3, JSONL: a smoke")
    parser.add_argument("--trace-up-to", type=int, default=100_000)
    parser.add_argument(
        "--min-timed-events",
        type=int,
        default=MIN_TIMED_EVENTS,
        help="time a smaller size's append over rounds adding up to this many events",
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    parser.add_argument("--generated-only", action="store_true", help="leave the transcripts out")
    parser.add_argument("--no-warm-up", action="store_true", help="skip the dropped first run")
    parser.add_argument("--no-chart", action="store_true", help="write the JSON only")
    parser.add_argument(
        "--merge", action="store_true", help="keep the other sizes and stores of the out file"
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark from the command line; write the results and the chart."""
    args = _parser().parse_args(argv)
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    stores = ["jsonl"] if args.quick else args.stores
    old: list[dict[str, Any]] = []
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text(encoding="utf-8"))["points"]
    results: dict[str, Any] = {"machine": machine(), "goals": GOALS, "points": old}

    def save(points: list[dict[str, Any]]) -> None:
        results["points"] = merge(old, points)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(results, indent=1, sort_keys=True) + "\n"
        args.out.write_text(text, encoding="utf-8")

    save(
        run(
            sizes,
            stores=stores,
            trace_up_to=args.trace_up_to,
            progress=lambda line: print(line, flush=True),
            transcripts=None if args.generated_only else args.transcripts,
            warm_up=not args.no_warm_up,
            on_point=save,
            min_timed=args.min_timed_events,
        )
    )
    if args.no_chart:
        return 0
    try:
        from benchmarks.speed.throughput_report import draw_chart

        draw_chart(results, args.out.with_suffix(".png"))
    except ImportError:
        print("matplotlib is not installed: no chart drawn")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
