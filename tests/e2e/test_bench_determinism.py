"""Same input, same bytes: a benchmark replay does not depend on the hash seed or the process.

Two runs of B on the same session once differed by 27 tokens out of 6.66M: the extractive
summarizer counted Key Technical Concepts over sets of strings, whose iteration order follows
``PYTHONHASHSEED``, so ties came out in another order in another process (each ``harness
bench`` run has its own seed). These tests read the long session's terms, and replay the quick
session, in fresh interpreters under different seeds and compare every figure, per-request
series included (wall time aside).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.report.results_report import BenchConfig, replay_one

pytestmark = pytest.mark.slow  # two replays of the quick session in fresh interpreters

ROOT = Path(__file__).resolve().parents[2]
RUNS = ("B", "B:blind")
CODE = (
    "import json, sys\n"
    "from benchmarks.report.results_report import BenchConfig, replay_one\n"
    "config = BenchConfig.quick_run()\n"
    "(turns, seed), = config.sessions\n"
    "out = {}\n"
    "for name in sys.argv[1:]:\n"
    "    run = replay_one(config, turns, seed, name)\n"
    "    run.pop('seconds')\n"
    "    out[name] = run\n"
    "print(json.dumps(out, sort_keys=True))\n"
)


TERMS = (
    "from compaction import Message\n"
    "from compaction.summarizers.facts import read_span\n"
    "from harness.simulation import generate\n"
    "print(read_span([p for p in generate(24, 2) if isinstance(p, Message)]).terms)\n"
)


def run_code(code: str, hash_seed: str, *args: str) -> str:
    """Run `code` in a fresh interpreter under `hash_seed`; return what it printed."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_key_concepts_of_the_long_session_do_not_follow_the_hash_seed() -> None:
    """The cause of the 27 tokens: with sets, these terms tied in another order under seed 3."""
    first, second = run_code(TERMS, "0"), run_code(TERMS, "3")
    assert first.count("'") > 100  # dozens of terms, so ties exist
    assert first == second


def replay_in_process(hash_seed: str) -> str:
    """Replay `RUNS` on the quick session in a fresh interpreter; return the figures as JSON."""
    return run_code(CODE, hash_seed, *RUNS)


def test_replays_are_byte_identical_under_two_hash_seeds_and_in_this_process() -> None:
    """Two fresh interpreters under different seeds, and this process, give the same figures.

    (The in-process replay was a test of its own, with a third fresh interpreter to compare to.)
    """
    first, second = replay_in_process("0"), replay_in_process("1")
    runs = json.loads(first)
    assert set(runs) == set(RUNS)
    assert all(run["compactions"] >= 1 for run in runs.values())  # the summarizer ran
    assert first == second
    config = BenchConfig.quick_run()
    ((turns, seed),) = config.sessions
    here = {}
    for name in RUNS:
        run = replay_one(config, turns, seed, name)
        run.pop("seconds")
        here[name] = run
    assert json.dumps(here, sort_keys=True) + "\n" == first
