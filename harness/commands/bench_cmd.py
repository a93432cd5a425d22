"""`harness bench [--quick] [--out DIR]`: run the benchmarks and write the report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from benchmarks.report import DEFAULT_OUT, BenchConfig, reread, run_bench, write_report
from compaction.errors import ConfigError


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `bench` command."""
    p = sub.add_parser(
        "bench",
        help="run the benchmarks: token savings, prefix-cache hits, throughput",
        description=(
            "Replay the seeded benchmark sessions under every strategy (A: todo list as a "
            "message, B: this toolkit, C: todo list in the system prompt, the mode-switch "
            "variants, no compaction), count the cache hits of the DeepSeek, OpenAI, Anthropic "
            "and vLLM cache models, measure throughput from 10^3 to 10^6 events, read the "
            "peers' results (peers.json) if present, and write results.json, report.md and PNG "
            "charts to DIR. --quick runs one short session and small sizes (under two minutes)."
        ),
    )
    p.add_argument("--quick", action="store_true", help="a short run for CI")
    p.add_argument(
        "--out",
        type=Path,
        default=DEFAULT_OUT,
        metavar="DIR",
        help="output folder (default: benchmarks/results/)",
    )
    p.add_argument(
        "--peers",
        type=Path,
        default=None,
        metavar="FILE",
        help="peers' results (default: DIR/peers.json, else benchmarks/results/peers.json)",
    )
    p.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite report.md and the charts from DIR/results.json, re-reading the peers",
    )
    p.set_defaults(func=run)


def _peers_path(args: argparse.Namespace) -> Path:
    if args.peers is not None:
        return Path(args.peers)
    local = Path(args.out) / "peers.json"
    return local if local.is_file() else DEFAULT_OUT / "peers.json"


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print where the report is."""
    config = BenchConfig.quick_run() if args.quick else BenchConfig.full()
    started = time.perf_counter()

    def say(line: str) -> None:
        print(f"[{time.perf_counter() - started:6.1f}s] {line}", file=sys.stderr, flush=True)

    if args.report_only:
        try:
            results = reread(Path(args.out), _peers_path(args))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--report-only needs an earlier run's results.json: {exc}") from exc
    else:
        results = run_bench(config, peers_path=_peers_path(args), progress=say)
    paths = write_report(results, Path(args.out))
    note = results.get("charts_note")
    if note:
        print(note, file=sys.stderr)
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0
