"""Smoke test of the compaction benchmark: it runs, on a small session, and writes its results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.speed import compaction_speed
from harness.simulation import generate


class TestBenchCompaction:
    def test_prefix_reaches_target_before_a_model_call(self) -> None:
        """The session prefix holds at least the target tokens and stops before a model call."""
        payloads, turns = compaction_speed.session_payloads(5_000, seed=0)
        full = generate(turns, 0)
        assert payloads == full[: len(payloads)]
        assert compaction_speed.is_model_call(full[len(payloads)])

    def test_main_writes_results(self, tmp_path: Path) -> None:
        """One small size runs end to end; the JSON has the figures the README quotes."""
        out = tmp_path / "compaction.json"
        assert compaction_speed.main(["--sizes", "12000", "--repeat", "1", "--out", str(out)]) == 0
        results = json.loads(out.read_text())
        (row,) = results["sizes"]
        single, loop = row["single"], row["loop"]
        assert single["tokens"] >= 12_000
        assert single["tiktoken_seconds"] > 0
        assert single["compact_seconds"] > 0
        assert 0 < single["reduction"] < 1
        assert single["tokens_after"] < single["tokens"]
        assert loop["compactions"] >= 1
        assert loop["reduction_min"] <= loop["reduction_median"] <= loop["reduction_max"]
        assert set(results["met"]) == {"speed", "reduction"}
