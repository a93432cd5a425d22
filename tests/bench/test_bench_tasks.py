"""CI smoke run of benchmarks/speed/task_writers.py at tiny sizes: it runs and writes results."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.speed import task_writers
from compaction import TaskUpdated, read_events


class TestBenchTasksSmoke:
    def test_tiny_run_writes_results(self, tmp_path: Path) -> None:
        """main() with 1 and 2 writers of 5 updates writes tasks.json of the documented shape."""
        out = tmp_path / "tasks.json"
        argv = ["--writers", "1", "2", "--updates", "5", "--out", str(out)]
        assert task_writers.main([*argv, "--workdir", str(tmp_path)]) == 0
        doc = json.loads(out.read_text(encoding="utf-8"))
        assert doc["benchmark"] == "tasks"
        assert doc["sync"] == "always"
        assert doc["single_process_appends_per_second"] > 0
        assert [r["writers"] for r in doc["writers"]] == [1, 2]
        for row in doc["writers"]:
            assert row["updates"] == row["writers"] * 5
            assert row["updates_per_second"] > 0
            assert row["ratio_to_appends"] > 0
            assert row["retries"] == 0, "each writer has its own task: no stale update"

    def test_shared_tasks_retry_stale_updates(self, tmp_path: Path) -> None:
        """With shared tasks every update still lands; stale ones are retried, not lost."""
        path = tmp_path / "s.jsonl"
        result = task_writers.run_writers(path, 2, 10, shared=1)
        assert result.updates == 20
        versions = [e.data.task.version for e in read_events(path) if isinstance(e, TaskUpdated)]
        assert versions == list(range(2, 22))
