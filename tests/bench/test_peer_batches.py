"""One driver process per peer configuration: the batch entry point and the runner's grouping."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

from benchmarks.peers import driver_batches
from benchmarks.peers.driver_batches import Job, PeerSpec, batches, run_batch
from benchmarks.peers.drivers import batch
from compaction import get_tokenizer

FAKE = "benchmarks.peers.drivers.fake_for_tests"
SPEC = PeerSpec("fake", "none", "fake_for_tests", ("a", "b"), ("s",))


def _fake_driver(monkeypatch: pytest.MonkeyPatch, seen: list[list[str]]) -> None:
    """Install a driver module whose `main` records its argv and fails on session ``bad``."""

    def main() -> None:
        args = sys.argv[1:]
        seen.append(args)
        session = args[args.index("--session") + 1]
        if session == "bad":
            raise RuntimeError("the framework broke")
        if session == "exit":
            raise SystemExit(2)
        batch.out_path(args).write_text(json.dumps({"session": session}), encoding="utf-8")

    module = types.ModuleType(FAKE)
    module.main = main  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, FAKE, module)


def _jobs_file(tmp_path: Path, sessions: list[str]) -> Path:
    jobs = [["--session", s, "--out", str(tmp_path / f"{s}.json")] for s in sessions]
    path = tmp_path / "jobs.json"
    path.write_text(json.dumps(jobs), encoding="utf-8")
    return path


class TestBatchEntry:
    def test_runs_every_job_in_order_with_its_own_argv(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        seen: list[list[str]] = []
        _fake_driver(monkeypatch, seen)
        monkeypatch.setattr(sys, "argv", ["keep"])
        status = batch.main(["fake_for_tests", str(_jobs_file(tmp_path, ["one", "two"]))])
        assert status == 0
        assert [a[1] for a in seen] == ["one", "two"]
        assert json.loads((tmp_path / "two.json").read_text("utf-8")) == {"session": "two"}

    def test_a_failed_job_says_why_and_the_next_still_runs(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        seen: list[list[str]] = []
        _fake_driver(monkeypatch, seen)
        monkeypatch.setattr(sys, "argv", ["keep"])
        jobs = _jobs_file(tmp_path, ["bad", "exit", "good"])
        assert batch.main(["fake_for_tests", str(jobs)]) == 1
        assert len(seen) == 3
        err = batch.error_path(tmp_path / "bad.json").read_text("utf-8")
        assert err == "RuntimeError: the framework broke"
        assert batch.error_path(tmp_path / "exit.json").read_text("utf-8") == "driver exited 2"
        assert (tmp_path / "good.json").is_file()
        assert not batch.error_path(tmp_path / "good.json").exists()


class TestGrouping:
    def test_one_batch_per_configuration_in_first_seen_order(self, tmp_path: Path) -> None:
        a, b = tmp_path / "a.json", tmp_path / "b.json"
        jobs = [Job(SPEC, "a", "s", a), Job(SPEC, "b", "s", a), Job(SPEC, "a", "s", b)]
        assert batches(jobs) == [[jobs[0], jobs[2]], [jobs[1]]]

    def test_a_process_that_cannot_start_fails_each_job(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A driver module that does not exist: every job of the batch is `failed`, with why."""
        monkeypatch.setattr(driver_batches, "session_name", lambda path: path.stem)
        missing = PeerSpec("fake", "none", "no_such_driver", ("a",), ("s",))
        jobs = [Job(missing, "a", "s", tmp_path / f"{n}.json") for n in ("x", "y")]
        records = run_batch(jobs, Path(sys.executable), tmp_path, 1000, get_tokenizer())
        assert [r["session"] for r in records] == ["x", "y"]
        assert {r["status"] for r in records} == {"failed"}
        assert all("no_such_driver" in r["reason"] for r in records)
