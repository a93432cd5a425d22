"""`harness bench [--quick] [--out DIR]`: run the checkout's benchmark suite and write the report.

`harness bench --transcript FILE [--window N] [--json]` replays one transcript of your own
under B, no compaction and each peer whose environment exists
(`benchmarks.replay.own_transcript`), and prints tokens, cost per provider, compactions and
every-call retention of open todos and tasks.

The suite (`benchmarks/`) is not part of the installed library: it lives in a checkout of the
repository. The command finds it beside the `harness` package (an editable install) or in the
working folder or one of its parents, imports it only when the command runs, and says plainly
where to run it from otherwise.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import sys
import tempfile
from pathlib import Path
from types import ModuleType

from compaction import ConfigError
from harness.commands.extras import require
from harness.output import HelpFormatter, examples, print_json, progress

SUITE_MARKER = Path("benchmarks") / "report" / "results_report.py"
"""The file that marks a checkout's benchmark suite."""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `bench` command."""
    p = sub.add_parser(
        "bench",
        formatter_class=HelpFormatter,
        epilog=examples(
            "harness bench --quick --out /tmp/bench",
            "harness bench --report-only",
            "harness bench --transcript ~/.claude/projects/x/session.jsonl",
            "harness bench --transcript rollout.jsonl --window 60000 --json",
        ),
        help="run the benchmarks (from a checkout): token savings, prefix-cache hits, throughput",
        description=(
            "Replay the seeded benchmark sessions under every strategy (A: todo list as a "
            "message, B: this toolkit, C: todo list in the system prompt, the mode-switch "
            "variants, no compaction), count the cache hits of the DeepSeek, OpenAI, Anthropic "
            "and vLLM cache models, measure throughput from 10^3 to 10^6 events, read the "
            "peers' results (peers.json) if present, and write results.json, report.md and PNG "
            "charts to DIR. --quick runs one short session and small sizes (under two "
            "minutes) and, without --out, writes to a fresh temporary folder (printed), "
            "never to the committed benchmarks/results/; only a full run rewrites those. "
            "The suite lives in a checkout of the repository (benchmarks/), not in the installed "
            "package: run it from the checkout."
        ),
    )
    _add_options(p)
    p.set_defaults(func=run)


def _add_options(p: argparse.ArgumentParser) -> None:
    """Add the `bench` options."""
    p.add_argument("--quick", action="store_true", help="a short run for CI")
    p.add_argument(
        "--out",
        type=Path,
        default=None,
        metavar="DIR",
        help=(
            "output folder (default: the checkout's benchmarks/results/ for a full run or "
            "--report-only, a fresh temporary folder for --quick)"
        ),
    )
    p.add_argument(
        "--peers",
        type=Path,
        default=None,
        metavar="FILE",
        help="peers' results (default: DIR/peers.json, else benchmarks/results/peers.json)",
    )
    p.add_argument("--json", action="store_true", help="print the written files' paths as JSON")
    p.add_argument(
        "--jobs",
        type=int,
        default=1,
        metavar="N",
        help="replay N runs at once, in separate processes (same figures; default 1)",
    )
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        default=None,
        metavar="EVENTS",
        help="throughput sizes in events (default: the run's, 10^3 to 10^6 for the full run)",
    )
    p.add_argument(
        "--report-only",
        action="store_true",
        help="rewrite report.md and the charts from DIR/results.json, re-reading the peers",
    )
    _add_transcript_options(p)


def _add_transcript_options(p: argparse.ArgumentParser) -> None:
    """Add `--transcript` and `--window`: replay one transcript of your own."""
    p.add_argument(
        "--transcript",
        type=Path,
        default=None,
        metavar="FILE",
        help=(
            "replay this transcript (Claude Code, Codex, Gemini CLI, SWE-agent, OpenAI "
            "messages) under B, no compaction and each peer whose environment exists, and "
            "print tokens, cost per provider, compactions and every-call retention"
        ),
    )
    p.add_argument(
        "--window",
        type=int,
        default=None,
        metavar="N",
        help="with --transcript: the context window (default 30,000; compaction at 0.8 of it)",
    )


def find_checkout(start: Path | None = None) -> Path | None:
    """Return the checkout that holds the benchmark suite, or None when there is none.

    Looks beside the installed `harness` package first (an editable install from a checkout),
    then in `start` (default: the working folder) and its parents.
    """
    here = Path(__file__).resolve().parents[2]
    origin = (start or Path.cwd()).resolve()
    for folder in (here, origin, *origin.parents):
        if (folder / SUITE_MARKER).is_file():
            return folder
    return None


def load_suite(
    start: Path | None = None, module_name: str = "benchmarks.report.results_report"
) -> ModuleType:
    """Import a module of the checkout's suite (default the report's), or raise a ConfigError."""
    checkout = find_checkout(start)
    if checkout is None:
        raise ConfigError(
            "the benchmark suite (benchmarks/) is not installed with the package; it runs from "
            "a checkout of the repository: clone it, run `pip install -e '.[dev]'` there and "
            f"run `harness bench` from its folder (looked beside the package and in {Path.cwd()})"
        )
    if str(checkout) not in sys.path:
        sys.path.insert(0, str(checkout))
    module = importlib.import_module(module_name)
    found = Path(module.__file__ or "").resolve()
    if not found.is_relative_to(checkout):
        raise ConfigError(
            f"`benchmarks` resolves to {found}, not to the checkout's {checkout / 'benchmarks'}: "
            "another installed distribution uses that name; run `harness bench` from the checkout"
        )
    return module


def _peers_path(args: argparse.Namespace, out: Path, default_out: Path) -> Path:
    if args.peers is not None:
        return Path(args.peers)
    local = out / "peers.json"
    return local if local.is_file() else default_out / "peers.json"


def output_folder(args: argparse.Namespace, default_out: Path) -> Path:
    """Return where the run writes: `--out`, a fresh temp folder for `--quick`, else the default.

    A quick run never writes into the committed results: without `--out` it gets a new folder
    under the system's temporary directory (`harness-bench-quick-*`), which the command prints.
    """
    if args.out is not None:
        return Path(args.out)
    if args.quick and not args.report_only:
        return Path(tempfile.mkdtemp(prefix="harness-bench-quick-"))
    return default_out


def writable_folder(folder: Path) -> None:
    """Make the output folder and check it takes a file, before the run, not after it.

    Raises:
        OSError: the folder cannot be made or written (the CLI's exit 3).
    """
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".harness-bench-probe-"):
        pass


def run(args: argparse.Namespace) -> int:
    """Run the benchmark and print where the report is (or replay one transcript).

    The extras the suite needs are checked first.
    """
    require("httpx", "the benchmark suite")
    if args.transcript is not None:
        return run_transcript(args)
    if args.window is not None:
        raise ConfigError("--window goes with --transcript (the full run's window is fixed)")
    suite = load_suite()
    out = output_folder(args, suite.DEFAULT_OUT)
    writable_folder(out)
    config = suite.BenchConfig.quick_run() if args.quick else suite.BenchConfig.full()
    if args.sizes:
        config = dataclasses.replace(config, scale_sizes=tuple(args.sizes))
    peers = _peers_path(args, out, suite.DEFAULT_OUT)
    with progress("benchmark", show=not args.report_only) as update:

        def say(line: str) -> None:
            update(description=line)

        if args.report_only:
            try:
                results = suite.reread(out, peers)
            except (OSError, ValueError) as exc:
                raise ConfigError(
                    f"--report-only needs an earlier run's results.json: {exc}"
                ) from exc
        else:
            results = suite.run_bench(
                config, peers_path=peers, progress=say, jobs=max(1, args.jobs)
            )
        paths = suite.write_report(results, out)
    note = results.get("charts_note")
    if note:
        print(note, file=sys.stderr)
    if args.json:
        print_json({"out": str(out), **{name: str(path) for name, path in paths.items()}})
        return 0
    print(f"out: {out}")
    for name, path in paths.items():
        print(f"{name}: {path}")
    return 0


def run_transcript(args: argparse.Namespace) -> int:
    """Replay one transcript under B, no compaction and the peers present; print the figures."""
    path = Path(args.transcript)
    if not path.is_file():
        raise ConfigError(f"{path}: no such transcript file; give the path of a session file")
    window = args.window if args.window is not None else 30_000
    if window < 1_000:
        raise ConfigError(f"--window {window}: give a window of at least 1,000 tokens")
    own = load_suite(module_name="benchmarks.replay.own_transcript")
    with progress("replay", show=not args.json) as update:
        result = own.run(path, window=window, progress=lambda line: update(description=line))
    if args.json:
        print_json(result)
    else:
        print(own.markdown(result), end="")
    return 0
