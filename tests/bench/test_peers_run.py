from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peers import run as run_module
from benchmarks.peers.run import (
    ENVS,
    PEERS,
    RESULTS_FORMAT,
    PeerSpec,
    default_sessions,
    markdown_table,
    plan,
    run_peers,
    summary_table,
    write_results,
)
from benchmarks.peers.venvs import MARKER, PeerEnv, ensure_venv, find_python, is_ready
from benchmarks.replay import real_transcripts
from compaction.importers import load
from harness.simulation import log_payloads


class TestPlan:
    def test_one_job_per_peer_variant_summarizer_session(self, tmp_path: Path):
        """Every combination is planned once, peers in declaration order."""
        sessions = [tmp_path / "a.json", tmp_path / "b.json"]
        jobs = plan(sessions)
        expected = sum(len(p.variants) * len(p.summarizers) for p in PEERS) * len(sessions)
        assert len(jobs) == expected
        assert len({(j.peer.name, j.variant, j.summarizer, j.session) for j in jobs}) == expected
        assert jobs[0].peer.name == PEERS[0].name

    def test_quick_keeps_the_copying_summarizer(self, tmp_path: Path):
        """Quick runs one job per peer: its first variant, its last summarizer.

        The last summarizer is copy-todos (or none); a variant named with --variant still runs.
        """
        jobs = plan([tmp_path / "a.json"], quick=True)
        assert [(j.peer.name, j.variant, j.summarizer) for j in jobs] == [
            (p.name, p.variants[0], p.summarizers[-1]) for p in PEERS
        ]
        assert {j.summarizer for j in jobs} == {"copy-todos", "none"}
        named = plan([tmp_path / "a.json"], quick=True, variants=["tail-tokens"])
        assert [(j.peer.name, j.variant) for j in named] == [
            ("langchain-summarization", "tail-tokens")
        ]

    def test_only_limits_the_peers(self, tmp_path: Path):
        """`only` plans just the named peers; an unknown name is refused."""
        jobs = plan([tmp_path / "a.json"], only=["deepagents"])
        assert {j.peer.name for j in jobs} == {"deepagents"}
        with pytest.raises(ValueError, match="unknown peers"):
            plan([tmp_path / "a.json"], only=["nope"])
        jobs = plan([tmp_path / "a.json"], only=["openhands-condenser"], variants=["tokens"])
        assert {(j.peer.name, j.variant) for j in jobs} == {("openhands-condenser", "tokens")}

    def test_langchain_runs_a_token_sized_tail(self):
        """LangChain's summarization runs on its defaults and with a tail sized in tokens."""
        lc = next(p for p in PEERS if p.name == "langchain-summarization")
        assert {"defaults", "tail-tokens"} <= set(lc.variants)

    def test_every_peer_names_a_known_env(self):
        """Each peer runs in a declared venv."""
        assert {p.env for p in PEERS} <= set(ENVS)


class TestDefaultSessions:
    def test_quick_writes_one_exchange_file(self, tmp_path: Path):
        """The quick generated set is one short session, written in the exchange format."""
        [path] = default_sessions(tmp_path, quick=True, which="synthetic")
        doc = json.loads(path.read_text(encoding="utf-8"))
        assert doc["format"] == "context-harness/session-exchange"
        assert doc["meta"]["name"] == path.stem
        assert doc["unfinished"]

    def test_quick_run_replays_the_short_real_transcript(self, tmp_path: Path):
        """A quick run's sessions: the short generated one, then the short real transcript.

        The transcript is named for where it came from and carries the tools our replay of it
        sends; every peer has a job on it.
        """
        folder = real_transcripts.TRANSCRIPTS
        if not (
            folder / real_transcripts.REAL_SESSIONS[real_transcripts.QUICK_SESSIONS[0]]
        ).is_file():
            pytest.skip(f"the shared transcripts are not in {folder}")
        synthetic, real = default_sessions(tmp_path, quick=True)
        assert synthetic.stem == "synthetic-t4-s0"
        assert real.stem == "real-swe-agent-gpt4-pydicom-1458"
        doc = json.loads(real.read_text(encoding="utf-8"))
        assert doc["meta"] == {"name": real.stem, "source": "swe-agent_gpt4_pydicom-1458.traj"}
        source = folder / doc["meta"]["source"]
        payloads = log_payloads(load(source))
        assert doc["tools"] == real_transcripts.session_tools(payloads)
        called = {
            c["function"]["name"]
            for t in doc["turns"]
            for m in t["messages"]
            for c in m.get("tool_calls") or ()
        }
        assert called <= {spec["function"]["name"] for spec in doc["tools"]}
        jobs = plan([synthetic, real], quick=True)
        assert {j.peer.name for j in jobs if j.session == real} == {p.name for p in PEERS}

    def test_real_only_set(self, tmp_path: Path):
        """`which="real"` writes no generated session."""
        paths = default_sessions(tmp_path, quick=True, which="real")
        assert all(p.stem.startswith("real-") for p in paths)


class TestRunPeers:
    def test_missing_venvs_are_skipped_with_a_reason(self, tmp_path: Path):
        """Without venvs and without permission to install, every peer is skipped, none faked."""
        [session] = default_sessions(tmp_path, quick=True, which="synthetic")
        records = run_peers(
            [session], tmp_path / "out", quick=True, install=False, venv_root=tmp_path / "none"
        )
        assert records
        assert {r["status"] for r in records} == {"skipped"}
        assert all(r["reason"] and "metrics" not in r for r in records)
        doc = json.loads((tmp_path / "out" / "peers.json").read_text(encoding="utf-8"))
        assert doc["format"] == RESULTS_FORMAT
        assert doc["records"] == records

    def test_peer_without_driver_is_skipped(self, tmp_path: Path, monkeypatch):
        """A peer with no driver is skipped, naming the Python it needs."""
        [session] = default_sessions(tmp_path, quick=True, which="synthetic")
        spec = PeerSpec("x", "openhands", None, ("default",), ("structural",))
        monkeypatch.setattr(run_module, "PEERS", (spec,))
        [record] = run_peers([session], tmp_path / "out", install=False)
        assert record["status"] == "skipped"
        assert record["peer"] == "x"
        assert "Python >= 3.12" in record["reason"] or "no driver" in record["reason"]

    def test_only_keeps_the_other_peers_records(self, tmp_path: Path):
        """Rerunning one peer keeps the others' records from peers.json at the same budget."""
        [session] = default_sessions(tmp_path, quick=True, which="synthetic")
        out = tmp_path / "out"
        earlier = {"peer": "langchain-trim", "variant": "default", "session": "s", "status": "ok"}
        write_results([earlier], out / "peers.json", budget=24_000)
        records = run_peers(
            [session],
            out,
            quick=True,
            install=False,
            venv_root=tmp_path / "none",
            only=["deepagents"],
        )
        assert records[0] == earlier
        assert {r["peer"] for r in records[1:]} == {"deepagents"}
        write_results([earlier], out / "peers.json", budget=10)
        with pytest.raises(ValueError, match="budget 10"):
            run_peers(
                [session], out, install=False, venv_root=tmp_path / "none", only=["deepagents"]
            )

    def test_a_rerun_variant_keeps_the_peers_other_variants(self, tmp_path: Path):
        """Rerunning one variant replaces its records only: the same peer's others stay."""
        [session] = default_sessions(tmp_path, quick=True, which="synthetic")
        out = tmp_path / "out"
        name = session.stem
        oh = {"peer": "openhands-condenser", "summarizer": "copy-todos"}  # --quick's summarizer
        other = {**oh, "variant": "defaults", "session": name, "ok": 1}
        stale = {**oh, "variant": "tokens", "session": name, "ok": 0}
        elsewhere = {**oh, "variant": "tokens", "session": "s", "ok": 2}
        write_results([other, stale, elsewhere], out / "peers.json", budget=24_000)
        records = run_peers(
            [session],
            out,
            quick=True,
            install=False,
            venv_root=tmp_path / "none",
            only=["openhands-condenser"],
            variants=["tokens"],
        )
        assert other in records
        assert stale not in records
        assert elsewhere in records  # a session the rerun did not take keeps its record
        rerun = [
            r
            for r in records
            if r["peer"] == "openhands-condenser"
            and r["variant"] == "tokens"
            and r["session"] == name
        ]
        assert len(rerun) == 1


class TestWriteResults:
    def test_sorted_and_stable(self, tmp_path: Path):
        """The same records give the same bytes."""
        records = [{"peer": "p", "status": "skipped", "reason": "r"}]
        a = write_results(records, tmp_path / "a.json", budget=10).read_bytes()
        b = write_results(records, tmp_path / "b.json", budget=10).read_bytes()
        assert a == b
        assert json.loads(a)["budget"] == 10


class TestMarkdownTable:
    def test_ok_and_skipped_rows(self):
        """An ok record shows its figures; a skipped one its reason; columns line up."""
        metrics = {
            "requests": 3,
            "final_input_tokens": 1200,
            "summed_input_tokens": 3000,
            "peak_input_tokens": 1500,
            "unfinished_at_latest_status": 2,
            "unfinished_total": 3,
            "todo_retention_rate": 0.5,
            "first_request_kept": True,
            "prefix_reuse_rate": 0.25,
            "cache_hit_rate": {"deepseek": 0.1, "openai": 0.2, "anthropic": 0.3, "vllm": 0.4},
            "wall_time_s": 1.25,
        }
        base = {"peer": "p", "variant": "v", "summarizer": "s", "session": "x"}
        table = markdown_table(
            [
                {**base, "status": "ok", "metrics": metrics},
                {**base, "status": "skipped", "reason": "no Python"},
            ]
        )
        lines = table.splitlines()
        assert len(lines) == 4
        assert len({line.count("|") for line in lines}) == 1
        assert "| 1,200 | 3,000 | 1,500 | 2/3 | 50.0% | - | kept | 25.0% |" in lines[2]
        assert "10.0%/20.0%/30.0%/40.0%" in lines[2]
        assert "skipped: no Python" in lines[3]

    def test_summary_pools_sessions(self):
        """The summary pools sessions per peer configuration and leaves out skipped records."""
        metrics = {
            "summed_input_tokens": 100,
            "prompt_tokens": [40, 60],
            "reused_prefix_tokens": [0, 30],
            "cache_hit_tokens": {"deepseek": [0, 10], "openai": [0, 0], "anthropic": [0, 20]}
            | {"vllm": [0, 30]},
            "final_input_tokens": 60,
            "peak_input_tokens": 60,
            "unfinished_at_latest_status": 1,
            "unfinished_total": 2,
            "todo_retention_rate": 0.5,
            "todo_checks": 4,
            "first_request_kept": False,
        }
        base = {"peer": "p", "variant": "v", "summarizer": "s", "status": "ok"}
        b_metrics = {**metrics, "todo_retention_rate": 0.25, "task_checks": 4}
        b_metrics |= {"task_retention_rate": 0.75, "summary_calls": 3}
        records: list[dict[str, Any]] = [
            {**base, "session": "a", "metrics": metrics},
            {**base, "session": "b", "metrics": b_metrics},
            {**base, "session": "c", "status": "skipped", "reason": "r"},
        ]
        [row] = summary_table(records).splitlines()[2:]
        assert row == (
            "| p | v | s | 2 | 200 | 60 | 60 | 2/4 | 25.0% | 37.5% | 75.0% | 0/2 | 50.0% "
            "| 10.0%/0.0%/20.0%/30.0% | 3 |"
        )


class TestVenvs:
    def test_marker_must_match_pins(self, tmp_path: Path):
        """A venv counts as ready only when its marker lists exactly the pins."""
        env = PeerEnv("e", ("a==1",))
        (tmp_path / "e").mkdir()
        assert not is_ready(env, tmp_path)
        (tmp_path / "e" / MARKER).write_text(json.dumps({"requirements": ["a==1"]}))
        assert is_ready(env, tmp_path)
        assert not is_ready(PeerEnv("e", ("a==2",)), tmp_path)

    def test_no_install_gives_a_reason(self, tmp_path: Path):
        """An absent venv is not created when installing is off; the reason says so."""
        status = ensure_venv(PeerEnv("e", ("a==1",)), tmp_path, install=False)
        assert status.python is None
        assert status.reason is not None
        assert "not allowed" in status.reason

    def test_too_new_python_is_not_found(self, tmp_path: Path):
        """Asking for a Python newer than any gives None, and ensure_venv explains it."""
        assert find_python((3, 99)) is None
        status = ensure_venv(PeerEnv("e", ("a==1",), min_python=(3, 99)), tmp_path)
        assert status.python is None
        assert status.reason is not None
        assert "Python >= 3.99" in status.reason

    def test_this_python_is_found(self):
        """The running interpreter satisfies its own version."""
        assert find_python(sys.version_info[:2]) is not None


class TestKeptRecords:
    def test_a_rerun_of_one_summarizer_keeps_the_others(self, tmp_path: Path) -> None:
        """Rerunning `--summarizer copy-todos` replaces only those records, not `structural`'s."""
        from benchmarks.peers.results_file import kept_records, record_key, write_results

        def rec(summarizer: str, session: str) -> dict[str, object]:
            return {"peer": "p", "variant": "v", "summarizer": summarizer, "session": session}

        old = [rec("structural", "s1"), rec("copy-todos", "s1"), rec("structural", "s2")]
        write_results(old, tmp_path / "peers.json", budget=24_000)
        kept = kept_records(tmp_path / "peers.json", 24_000, {record_key(rec("copy-todos", "s1"))})
        assert [record_key(r) for r in kept] == [record_key(old[0]), record_key(old[2])]
