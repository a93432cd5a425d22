"""Smoke test of the peers through their real loops, in their own venvs.

Runs when the LangChain and deepagents venvs are ready (created once by
``python -m benchmarks.peers.run``; the OpenHands one too where a Python >= 3.12 exists);
otherwise it is skipped, unless ``HARNESS_PEERS_SMOKE=1`` allows it to create them with pip from
the package index (two to six minutes), which CI does not do by default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.peers.run import ENVS, PEERS
from benchmarks.peers.venvs import default_root, is_ready

REPO = Path(__file__).resolve().parents[2]
SMOKE_ENV = "HARNESS_PEERS_SMOKE"


@pytest.mark.slow
def test_quick_run_through_real_loops(tmp_path: Path):
    """Each installable peer replays the quick session and compacts; the others say why not."""
    ready = {name for name in ENVS if is_ready(ENVS[name], default_root())}
    install = os.environ.get(SMOKE_ENV) == "1"
    if not {"langchain", "deepagents"} <= ready and not install:
        pytest.skip(
            f"peer venvs absent under {default_root()}; set {SMOKE_ENV}=1 to create them with "
            "pip (needs the package index, about two minutes)"
        )
    cmd = [sys.executable, "-m", "benchmarks.peers.run", "--quick", "--out", str(tmp_path)]
    done = subprocess.run(
        [*cmd, *([] if install else ["--no-install"])],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "peers.json").read_text(encoding="utf-8"))
    ok = [r for r in doc["records"] if r["status"] == "ok"]
    expected = {p.name for p in PEERS if p.driver is not None and (install or p.env in ready)}
    assert {r["peer"] for r in ok} >= expected
    for record in ok:
        m = record["metrics"]
        assert m["requests"] == len(m["prompt_tokens"]) > 10
        assert m["summed_input_tokens"] == sum(m["prompt_tokens"])
        assert m["final_input_tokens"] <= m["peak_input_tokens"]
        if record["session"].startswith("synthetic"):  # a real transcript may hold no todos
            assert m["unfinished_total"] > 0
    assert any(r["session"].startswith("real-") for r in ok), "no real transcript replayed"
    # OpenHands' default variant only condenses past 240 events, more than the quick session.
    compacted = {r["peer"] for r in ok if r["metrics"]["rewrites"] >= 1}
    assert compacted == {r["peer"] for r in ok}, "some peer never compacted or trimmed"
    for record in doc["records"]:
        assert record["status"] in {"ok", "skipped"}
        if record["status"] == "skipped":
            assert record["reason"]
