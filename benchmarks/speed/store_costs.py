"""A store's own CPU cost per event: appending lines and reading them back, beside raw tiktoken.

What the throughput benchmark's append and reopen spend in the store, apart from the fold
they share: `EventStore.append` of the corpus's events in batches of `BATCH` (``sync="batch"``),
then `EventStore.read` of the whole session (each row parsed into its event). Each is a ratio
to a raw tiktoken pass over the same messages' text measured just before it, in this process's
CPU time (`time.process_time`); the stores take turns round after round (each round a new
session), so the machine's load moves every store alike, and the median of the rounds is kept
with the load average before and after. PostgreSQL's server work is in its own process, out of
these figures.

Run: ``python -m benchmarks.speed.store_costs --events 10000 --rounds 5 --stores jsonl sqlite
postgres``.

Invariants: each round appends to a new session of a store in a temporary folder (or a
throwaway server), removed afterwards; a read must give back every event appended.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from functools import partial
from pathlib import Path
from typing import Any

from benchmarks.speed.throughput_corpus import TRANSCRIPTS, events_of
from benchmarks.speed.throughput_phases import (
    BATCH,
    fresh_tokenizer,
    raw_pass,
    store_url,
    timed_call,
)
from compaction import EventData, EventStore, Message, open_store
from compaction.tokens import message_text

STORES = ("jsonl", "sqlite", "postgres")


@contextmanager
def _stores(names: Sequence[str], folder: Path) -> Iterator[dict[str, EventStore]]:
    """Open each named store in `folder` (PostgreSQL on a throwaway server, fsync on)."""
    with ExitStack() as stack:
        opened: dict[str, EventStore] = {}
        for name in names:
            opened[name] = store = open_store(store_url(name, folder, stack), sync="batch")
            stack.callback(store.close)
        yield opened


def _append(store: EventStore, session: str, events: Sequence[EventData]) -> None:
    for i in range(0, len(events), BATCH):
        store.append(session, events[i : i + BATCH])


def _count(store: EventStore, session: str) -> int:
    return sum(1 for _ in store.read(session))


def _raw_s(texts: Sequence[str]) -> float:
    """CPU seconds of tiktoken over every text once, with a fresh tokenizer (no memo)."""
    return timed_call(partial(raw_pass, fresh_tokenizer(), texts))[1]


def measure(
    n: int, rounds: int, stores: Sequence[str], *, transcripts: Path | None = TRANSCRIPTS
) -> dict[str, Any]:
    """Return each store's append and read ratios to raw tiktoken, per round and the medians."""
    events = events_of(n, transcripts=transcripts)
    texts = [message_text(e) for e in events if isinstance(e, Message)]
    ratios: dict[str, dict[str, list[float]]] = {s: {"append": [], "read": []} for s in stores}
    load_before = os.getloadavg()[0]
    with (
        tempfile.TemporaryDirectory(prefix="harness-store-costs-") as tmp,
        _stores(stores, Path(tmp)) as opened,
    ):
        for k in range(rounds):
            for name, store in opened.items():
                raw = _raw_s(texts)
                append_s = timed_call(partial(_append, store, f"round-{k}", events))[1]
                read, read_s = timed_call(partial(_count, store, f"round-{k}"))[:2]
                if read != n:
                    raise AssertionError(f"{name}: read {read} events of {n}")
                ratios[name]["append"].append(append_s / raw)
                ratios[name]["read"].append(read_s / raw)
    return {
        "events": n,
        "rounds": rounds,
        "load": [load_before, os.getloadavg()[0]],
        "stores": {
            name: {
                **{f"{phase}_ratio": statistics.median(v) for phase, v in r.items()},
                **{f"{phase}_rounds": v for phase, v in r.items()},
            }
            for name, r in ratios.items()
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and print the figures as JSON (``--out`` writes them to a file as well)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.speed.store_costs")
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--stores", nargs="+", choices=STORES, default=list(STORES))
    parser.add_argument("--generated-only", action="store_true", help="leave the transcripts out")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    figures = measure(
        args.events,
        args.rounds,
        args.stores,
        transcripts=None if args.generated_only else TRANSCRIPTS,
    )
    text = json.dumps(figures, indent=1, sort_keys=True)
    print(text)
    if args.out is not None:
        args.out.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
