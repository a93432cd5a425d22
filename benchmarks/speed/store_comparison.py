"""Session stores side by side: JSONL, SQLite and PostgreSQL, measured in one run.

Figures, for each backend, with every ratio taken against JSONL in the same run:

- **Appends per second at 10^3..10^6 events**: the session is first filled to N events (appends
  of 1,000 events each, whose rate is reported as the bulk rate), then a window of single-event
  durable appends is timed on top of it (fsync per append for JSONL, ``synchronous=FULL`` for
  SQLite, a committed transaction on a server with fsync on for PostgreSQL). So the figure says
  what one durable append costs once the session holds N events.
- **Reopen time at each size**: stream and parse every event of the session back.
- **Concurrent appends**: 1, 4 and 16 processes appending single events to one session at once;
  total appends per second.
- **Memory while reading**: tracemalloc's peak while streaming the whole session, at each size
  (streaming: it stays flat as the session grows).

The PostgreSQL server is a throwaway one started from the operating system's binaries
(`harness.testing._postgres_server`), on 127.0.0.1, with fsync on.

Run: ``python -m benchmarks.speed.store_comparison`` (full: 10^3..10^6; writes
``benchmarks/results/stores.json`` and ``stores.md``); ``--quick`` stops at 10^5 with smaller
windows.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import cycle, islice
from pathlib import Path
from typing import Any, Protocol

from benchmarks import CHECKOUT
from compaction import (
    EventData,
    EventStore,
    FunctionCall,
    Message,
    TodoItem,
    TodoWriteData,
    ToolCall,
    TurnEndData,
    TurnStartData,
    open_store,
)
from harness.testing import LocalPostgres, ServerUnavailable, start_postgres


class EventLike(Protocol):
    """A process-shared start signal (`multiprocessing.Event`)."""

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal is set."""


ROOT = CHECKOUT
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "stores.json"
FULL_SIZES = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SIZES = (1_000, 10_000, 100_000)
BACKENDS = ("jsonl", "sqlite", "postgres")
FILL_CHUNK = 1_000


def payloads() -> list[EventData]:
    """One small agent turn, cycled to any length (about 260 bytes an event on average)."""
    call = ToolCall(id="call_1", function=FunctionCall(name="read_file", arguments='{"p":"a.py"}'))
    return [
        TurnStartData(),
        Message(role="user", content="Fix the failing test in tests/test_retry.py"),
        Message(role="assistant", content="Reading the test first.", tool_calls=(call,)),
        Message(role="tool", tool_call_id="call_1", content="def test_retry():\n    ...\n" * 8),
        TodoWriteData(
            todos=(
                TodoItem(content="Read the failing test", status="completed"),
                TodoItem(content="Fix the retry loop", status="in_progress"),
                TodoItem(content="Run the suite", status="pending"),
            )
        ),
        Message(role="assistant", content="The retry loop never backs off; fixing it."),
        TurnEndData(),
    ]


def events(n: int) -> Iterator[EventData]:
    """The first `n` payloads of the cycled turn."""
    return islice(cycle(payloads()), n)


@contextmanager
def backend_url(name: str, workdir: Path, pg_url: str | None) -> Iterator[str]:
    """Yield a fresh, empty store URL of this backend."""
    if name == "jsonl":
        yield f"jsonl:///{workdir / f'jsonl-{time.monotonic_ns()}'}"
    elif name == "sqlite":
        yield f"sqlite:///{workdir / f'sqlite-{time.monotonic_ns()}.db'}"
    else:
        assert pg_url is not None, "the run starts one new server, used by this backend only"
        yield pg_url


def fill(store: EventStore, session: str, upto: int) -> float:
    """Append events in chunks until the session holds `upto`; return events per second."""
    first = have = store.last_seq(session)
    start = time.perf_counter()
    while have < upto:
        n = min(FILL_CHUNK, upto - have)
        store.append(session, list(events(n)), expected_seq=have)
        have += n
    took = time.perf_counter() - start
    return round((have - first) / took, 1) if took else 0.0


def timed_appends(store: EventStore, session: str, count: int) -> float:
    """Append `count` single events, each durable on return; return appends per second."""
    items = list(events(count))
    start = time.perf_counter()
    for item in items:
        store.append(session, [item])
    return round(count / (time.perf_counter() - start), 1)


def reopen_seconds(url: str, session: str) -> tuple[float, int]:
    """Open the store anew and stream every event back; return (seconds, events)."""
    start = time.perf_counter()
    store = open_store(url)
    try:
        n = sum(1 for _ in store.read(session))
    finally:
        store.close()
    return round(time.perf_counter() - start, 3), n


def read_peak_kib(url: str, session: str) -> float:
    """Tracemalloc's peak (KiB) while streaming the whole session."""
    store = open_store(url)
    try:
        tracemalloc.start()
        for _ in store.read(session):
            pass
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        store.close()
    return round(peak / 1024, 1)


def _writer(url: str, count: int, go: EventLike) -> None:
    """Append `count` events to the store at `url` once `go` is set (one writer process)."""
    store = open_store(url)
    items = list(events(count))
    go.wait()
    for item in items:
        store.append("concurrent", [item])
    store.close()


def concurrent_rate(url: str, procs: int, per_proc: int) -> float:
    """Total single-event appends per second with `procs` processes on one session."""
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    workers = [ctx.Process(target=_writer, args=(url, per_proc, go)) for _ in range(procs)]
    for w in workers:
        w.start()
    start = time.perf_counter()
    go.set()
    for w in workers:
        w.join()
    took = time.perf_counter() - start
    assert all(w.exitcode == 0 for w in workers)
    store = open_store(url)
    try:
        assert store.delete("concurrent")
    finally:
        store.close()
    return round(procs * per_proc / took, 1)


def bench_backend(
    name: str, sizes: Sequence[int], window: int, per_proc: int, workdir: Path, pg: str | None
) -> dict[str, Any]:
    """Every figure for one backend."""
    per_size = []
    with backend_url(name, workdir, pg) as url:
        store = open_store(url)
        try:
            for n in sizes:
                bulk = fill(store, "s", n - window)
                rate = timed_appends(store, "s", window)
                reopen, count = reopen_seconds(url, "s")
                assert count == n
                per_size.append(
                    {
                        "events": n,
                        "bulk_events_per_s": bulk,
                        "appends_per_s": rate,
                        "reopen_s": reopen,
                        "reopen_us_per_event": round(reopen / n * 1e6, 2),
                        "read_peak_kib": read_peak_kib(url, "s"),
                    }
                )
                print(f"{name} {n}: {per_size[-1]}", file=sys.stderr, flush=True)
        finally:
            store.close()
        concurrent = {str(p): concurrent_rate(url, p, per_proc) for p in (1, 4, 16)}
        print(f"{name} concurrent: {concurrent}", file=sys.stderr, flush=True)
    return {"per_size": per_size, "concurrent_appends_per_s": concurrent}


def ratios(results: dict[str, Any]) -> dict[str, Any]:
    """Each backend's figures divided by JSONL's, from this run."""
    base = results["jsonl"]
    out: dict[str, Any] = {}
    for name in results:
        if name == "jsonl":
            continue
        mine = results[name]
        out[f"{name}_vs_jsonl"] = {
            "appends_per_s": [
                round(m["appends_per_s"] / b["appends_per_s"], 3)
                for m, b in zip(mine["per_size"], base["per_size"], strict=True)
            ],
            "reopen_s": [
                round(m["reopen_s"] / b["reopen_s"], 3) if b["reopen_s"] else None
                for m, b in zip(mine["per_size"], base["per_size"], strict=True)
            ],
            "concurrent_appends_per_s": {
                p: round(mine["concurrent_appends_per_s"][p] / r, 3)
                for p, r in base["concurrent_appends_per_s"].items()
            },
        }
    return out


def run(
    sizes: Sequence[int],
    *,
    window: int,
    per_proc: int,
    backends: Sequence[str] = BACKENDS,
    command: str = "",
) -> dict[str, Any]:
    """Run every backend in one run; return the results document."""
    results: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="bench-stores-") as tmp:
        server: LocalPostgres | None = None
        if "postgres" in backends:
            try:
                server = start_postgres(durable=True)
            except ServerUnavailable as exc:
                skipped["postgres"] = str(exc)
        try:
            for name in backends:
                if name in skipped:
                    continue
                pg = server.url if server else None
                results[name] = bench_backend(name, sizes, window, per_proc, Path(tmp), pg)
        finally:
            if server is not None:
                server.stop()
    return {
        "benchmark": "stores",
        "command": command,
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "platform": platform.platform(),
        },
        "sizes": list(sizes),
        "durable_append_window": window,
        "concurrent_appends_per_process": per_proc,
        "backends": results,
        "ratios": ratios(results) if "jsonl" in results else {},
        "skipped": skipped,
    }


def markdown(doc: dict[str, Any]) -> str:
    """Render the results as a Markdown report (`stores.md`)."""
    names = list(doc["backends"])
    lines = [
        "# Session stores benchmark",
        "",
        f"Command: `{doc['command']}` (Python {doc['machine']['python']}, "
        f"{doc['machine']['cpus']} CPUs). Durable single-event appends timed over "
        f"{doc['durable_append_window']} appends on top of a session of N events; reopen = "
        "stream and parse every event; memory = tracemalloc peak while streaming.",
        "",
        "| backend | events | durable appends/s | bulk events/s | reopen s | µs/event | "
        "read peak KiB |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name in names:
        for r in doc["backends"][name]["per_size"]:
            lines.append(
                f"| {name} | {r['events']:,} | {r['appends_per_s']} | {r['bulk_events_per_s']} | "
                f"{r['reopen_s']} | {r['reopen_us_per_event']} | {r['read_peak_kib']} |"
            )
    lines += [
        "",
        f"Concurrent single-event appends to one session, total appends/s "
        f"({doc['concurrent_appends_per_process']} per process):",
        "",
        "| backend | 1 process | 4 processes | 16 processes |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name in names:
        c = doc["backends"][name]["concurrent_appends_per_s"]
        lines.append(f"| {name} | {c['1']} | {c['4']} | {c['16']} |")
    lines += ["", "Ratios to JSONL from the same run (above 1: faster appends, slower reopen):", ""]
    for key, r in doc["ratios"].items():
        lines.append(
            f"- {key}: durable appends/s {r['appends_per_s']}; reopen time {r['reopen_s']}; "
            f"concurrent appends/s {r['concurrent_appends_per_s']}"
        )
    for name, why in doc.get("skipped", {}).items():
        lines.append(f"- {name} skipped: {why}")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None, *, say: Callable[[str], None] = print) -> int:
    """Parse arguments, run, write the JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.speed.store_comparison", description=__doc__
    )
    parser.add_argument("--quick", action="store_true", help="sizes up to 10^5, small windows")
    parser.add_argument("--sizes", type=int, nargs="+", help="session sizes (events)")
    parser.add_argument("--backends", nargs="+", choices=BACKENDS, default=list(BACKENDS))
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results file")
    parser.add_argument(
        "--report-only", action="store_true", help="rewrite the .md from an earlier --out JSON"
    )
    args = parser.parse_args(argv)
    if args.report_only:
        doc = json.loads(args.out.read_text())
        args.out.with_suffix(".md").write_text(markdown(doc))
        say(f"stores: {args.out.with_suffix('.md')}")
        return 0
    sizes = args.sizes or (QUICK_SIZES if args.quick else FULL_SIZES)
    window, per_proc = (100, 50) if args.quick else (300, 150)
    command = "python -m benchmarks.speed.store_comparison" + (" --quick" if args.quick else "")
    if args.sizes:
        command += " --sizes " + " ".join(map(str, sizes))
    doc = run(sizes, window=min(window, min(sizes)), per_proc=per_proc,
              backends=args.backends, command=command)  # fmt: skip
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    args.out.with_suffix(".md").write_text(markdown(doc))
    say(f"stores: {args.out} and {args.out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
