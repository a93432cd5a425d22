"""Run the peers' drivers: the jobs of one peer configuration in one process, then score them.

A job is one (peer, variant, summarizer, session). The jobs that differ only in their session run
in one driver process (`benchmarks.peers.drivers.batch`), so the peer's framework is imported
once per configuration, not once per session; each job still gets its own record, scored here
with the benchmark's tokenizer. A job whose driver failed, or whose process timed out, becomes a
``failed`` record with the reason; no number is made up.

Invariants: records come back in job order; a batch's jobs are its configuration's, in order.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.peers.drivers.batch import error_path
from benchmarks.peers.metrics import load_exchange_dict, load_record, score
from benchmarks.peers.peer_sessions import session_name
from benchmarks.splits import split_of
from compaction import Tokenizer

__all__ = [
    "DRIVER_ENV",
    "DRIVER_TIMEOUT_S",
    "UNBUDGETED",
    "Job",
    "PeerSpec",
    "base_record",
    "batches",
    "run_batch",
]

DRIVER_TIMEOUT_S = 900
"""Seconds one job may take; a batch of n jobs may take n times as long."""
UNBUDGETED: frozenset[tuple[str, str]] = frozenset({("openhands-condenser", "defaults")})
"""Configurations that do not trigger on tokens (OpenHands' default: 240 events): their records
carry no budget, so the report labels them instead of comparing them at the matched budget."""
REPO_ROOT = Path(__file__).resolve().parents[2]
DRIVER_ENV = {
    "PYTHONHASHSEED": "0",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "OPENHANDS_SUPPRESS_BANNER": "1",
}
"""Set for every driver: fixed hashing; LiteLLM (under OpenHands) reads its bundled model cost
map instead of fetching one at import, and OpenHands prints no banner."""


@dataclass(frozen=True)
class PeerSpec:
    """A peer: the venv it runs in, its driver module, its variants and summarizers."""

    name: str
    env: str
    driver: str | None
    """Module under `benchmarks.peers.drivers`, or None when no driver exists yet."""
    variants: tuple[str, ...]
    summarizers: tuple[str, ...]


@dataclass(frozen=True)
class Job:
    """One driver run."""

    peer: PeerSpec
    variant: str
    summarizer: str
    session: Path


def base_record(job: Job) -> dict[str, Any]:
    """Return the fields that name a job's record."""
    return {
        "peer": job.peer.name,
        "variant": job.variant,
        "summarizer": job.summarizer,
        "session": session_name(job.session),
        "split": split_of(session_name(job.session)),
    }


def batches(jobs: Sequence[Job]) -> list[list[Job]]:
    """Group `jobs` by peer configuration (all but the session), in first-appearance order."""
    groups: dict[tuple[str, str, str], list[Job]] = {}
    for job in jobs:
        groups.setdefault((job.peer.name, job.variant, job.summarizer), []).append(job)
    return list(groups.values())


def _args(job: Job, out: Path, budget: int) -> list[str]:
    return [
        *("--session", str(job.session), "--out", str(out), "--budget", str(budget)),
        *("--variant", job.variant, "--summarizer", job.summarizer),
    ]


def _out(job: Job, out_dir: Path) -> Path:
    record = base_record(job)
    stem = "-".join([job.peer.name, job.variant, job.summarizer, record["session"]])
    return out_dir / f"{stem}.json"


def run_batch(
    jobs: Sequence[Job], python: Path, out_dir: Path, budget: int, tokenizer: Tokenizer
) -> list[dict[str, Any]]:
    """Run one configuration's jobs in one driver process; return their records, in order."""
    outs = [_out(job, out_dir) for job in jobs]
    jobs_file = outs[0].with_name(outs[0].stem + ".jobs.json")
    jobs_file.write_text(json.dumps([_args(j, o, budget) for j, o in zip(jobs, outs, strict=True)]))
    driver = jobs[0].peer.driver
    cmd = [str(python), "-m", "benchmarks.peers.drivers.batch", str(driver), str(jobs_file)]
    env = {**os.environ, **DRIVER_ENV, "PYTHONPATH": str(REPO_ROOT)}
    timeout = DRIVER_TIMEOUT_S * len(jobs)
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env=env, check=False
        )
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        crashed = f"driver exited {done.returncode}: {tail}"
    except subprocess.TimeoutExpired:
        crashed = f"driver timed out ({timeout} s for {len(jobs)} sessions)"
        tail = ""
    pairs = zip(jobs, outs, strict=True)
    return [_record(job, out, (crashed, tail), budget, tokenizer) for job, out in pairs]


def _record(
    job: Job, out: Path, crashed: tuple[str, str], budget: int, tokenizer: Tokenizer
) -> dict[str, Any]:
    """Score one job's record, or say why it has none (`crashed`: the process's end, its tail)."""
    record = base_record(job)
    if error_path(out).is_file():
        reason = f"{error_path(out).read_text('utf-8')}: {crashed[1]}"
        return {**record, "status": "failed", "reason": reason}
    if not out.is_file():
        return {**record, "status": "failed", "reason": crashed[0]}
    driver = load_record(out)
    metrics = score(driver, load_exchange_dict(job.session), tokenizer)
    return {
        **record,
        "status": "ok",
        "versions": driver.versions,
        "budget": None if (job.peer.name, job.variant) in UNBUDGETED else budget,
        "metrics": metrics.model_dump(),
    }
