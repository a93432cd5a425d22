"""Reopen with and without the collector paused, alternately: the A/B behind `collector_paused`.

Appends 30,000 events of the throughput benchmark's text to a log, then reopens it four times,
alternating the paused fold with a plain one (`collector_paused` swapped for a pass-through),
each as a ratio of CPU times to a raw tiktoken pass over the same messages taken just before.

Run: ``python scripts/gc_pause_ab.py [EVENTS]`` (from the checkout).

Invariants: both variants read the same log with a fresh tokenizer (an empty count memo).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from scripts/: the checkout

import compaction.session.live_views as session_module
import compaction.stores.sources as sources
from benchmarks.speed.throughput_corpus import events_of
from benchmarks.speed.throughput_phases import append_all, fresh_tokenizer, raw_pass
from compaction import Message, Session
from compaction.tokens import message_text


def plain(events: Iterator[object]) -> Iterator[object]:
    """Yield the events with the collector left as it is (the fold before the pause)."""
    yield from events


def main() -> int:
    """Print the reopen's ratio to raw tiktoken, paused and plain, twice each."""
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30_000
    events = events_of(n)
    texts = [message_text(e) for e in events if isinstance(e, Message)]
    paused = sources.collector_paused
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "a.jsonl"
        append_all(log, events, fresh_tokenizer()).close()
        for label in ("paused", "plain", "paused", "plain"):
            fold = paused if label == "paused" else plain
            sources.collector_paused = session_module.collector_paused = fold  # type: ignore[assignment,attr-defined]
            start = time.process_time()
            raw_pass(fresh_tokenizer(), texts)
            raw = time.process_time() - start
            start = time.process_time()
            with Session(log, tokenizer=fresh_tokenizer(), sync="batch") as again:
                _ = again.context_tokens
            print(f"{n:,} events, reopen {label}: {(time.process_time() - start) / raw:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
