"""CI smoke run of benchmarks/speed/session_core.py at tiny sizes: it runs and writes results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.speed import session_core


class TestBenchCoreSmoke:
    def test_tiny_run_writes_results(self, tmp_path: Path) -> None:
        """main() at 50 and 200 events writes core.json and core.md of the documented shape."""
        out = tmp_path / "core.json"
        status = session_core.main(
            ["--sizes", "200", "--sizes", "50", "--turns", "1", "--out", str(out),
             "--workdir", str(tmp_path)]
        )  # fmt: skip
        assert status == 0
        doc = json.loads(out.read_text(encoding="utf-8"))
        assert set(doc) == {"benchmark", "command", "machine", "append", "tokens"}
        append = doc["append"]
        assert [r["events"] for r in append["per_size"]] == [50, 200]
        for row in append["per_size"]:
            assert row["sync"] == "batch"
            assert row["us_per_event"] > 0
            assert row["log_bytes"] > 0
            assert row["context_tokens"] > 0
        assert append["sync_always_smallest"]["sync"] == "always"
        assert append["target_ratio"] == 1.5
        assert isinstance(append["meets_target"], bool)
        assert append["ratio_largest_vs_smallest"] > 0
        tokens = doc["tokens"]
        assert tokens["target_ratio"] == 1.3
        assert tokens["session_texts"]["texts"] > 0
        assert tokens["session_texts"]["tokens"] > 0
        assert isinstance(tokens["meets_target"], bool)
        md = out.with_suffix(".md").read_text(encoding="utf-8")
        assert md.startswith("# Session core benchmark")
        assert "| 200 |" in md
        assert [p.name for p in tmp_path.iterdir() if p.suffix == ".jsonl"] == []
