"""`harness bench --transcript FILE`: your own transcript under B, no compaction and the peers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_cli

from benchmarks.replay import own_transcript

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
FIELDS = {
    "strategy",
    "summed_input_tokens",
    "cost",
    "cost_without_summaries",
    "compactions",
    "request_retention",
    "task_retention",
    "todo_checks",
}


def replay_json(tmp_path: Path, path: Path | str, *more: str) -> dict[str, Any]:
    """Run the command with no peer environment present; return its JSON."""
    env = {"HARNESS_PEERS_VENVS": str(tmp_path / "no-venvs")}
    done = run_cli("bench", "--transcript", FIXTURES / path, "--json", *more, env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout)
    return result


class TestTranscriptReplay:
    @pytest.mark.parametrize("name", ["claude_code_small.jsonl", "codex_small.jsonl"])
    def test_one_record_per_design_with_the_committed_fields(self, tmp_path, name):
        """B and none each give a run with the results' fields; absent peers are named, skipped."""
        result = replay_json(tmp_path, name)
        runs = {r["strategy"]: r for r in result["runs"]}
        assert list(runs) == ["B", "none"]
        for r in runs.values():
            assert set(r) >= FIELDS
            assert r["summed_input_tokens"] > 0
            assert set(r["cost"]) == {"deepseek", "openai", "anthropic"}
            assert r["requests"] == runs["B"]["requests"] > 0
        assert runs["B"]["summed_input_tokens"] <= runs["none"]["summed_input_tokens"]
        labels = {f"{p}/{v} ({s})" for p, v, s in own_transcript.PEER_RUNS}
        assert set(result["skipped"]) == labels
        assert all("absent" in why for why in result["skipped"].values())

    def test_claude_code_lists_in_sight_without_compaction(self, tmp_path):
        """With nothing compacted every design sees the list: a refused TodoWrite changes none."""
        runs = {r["strategy"]: r for r in replay_json(tmp_path, "claude_code_small.jsonl")["runs"]}
        assert runs["none"]["todo_checks"] > 0
        assert runs["none"]["request_retention"] == 1.0
        assert runs["B"]["task_retention"] == 1.0

    def test_codex_plan_is_scored(self, tmp_path):
        """Codex's update_plan is the todo list: checked on every call, kept in sight by B."""
        runs = {r["strategy"]: r for r in replay_json(tmp_path, "codex_small.jsonl")["runs"]}
        assert runs["B"]["todo_checks"] > 0
        assert runs["B"]["request_retention"] == 1.0

    def test_a_small_window_compacts(self, tmp_path, transcripts):
        """--window sets the budget; B compacts where no compaction does not."""
        path = transcripts / "swe-agent_gpt4_pydicom-1458.traj"
        result = replay_json(tmp_path, path, "--window", "12000")
        runs = {r["strategy"]: r for r in result["runs"]}
        assert result["budget"] == 9_600
        assert runs["B"]["compactions"] > 0
        assert runs["none"]["compactions"] == 0
        assert runs["B"]["summed_input_tokens"] < runs["none"]["summed_input_tokens"]

    def test_table_names_every_design(self, tmp_path):
        """Without --json: one table row per design, retention as a share of the calls checked."""
        env = {"HARNESS_PEERS_VENVS": str(tmp_path / "no-venvs")}
        done = run_cli("bench", "--transcript", FIXTURES / "codex_small.jsonl", env=env)
        assert done.returncode == 0, done.stderr
        rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
        assert [r.split(" | ")[0] for r in rows[1:]] == ["| B", "| none"]
        assert "100.0% of" in rows[1]
        assert "Skipped langchain-summarization/tail-tokens (copy-todos)" in done.stdout

    @pytest.mark.parametrize(
        ("args", "said"),
        [
            (["--transcript", "no-such-file.jsonl"], "no such transcript file"),
            (["--transcript", str(FIXTURES / "codex_small.jsonl"), "--window", "10"], "--window"),
            (["--window", "9000"], "--window goes with --transcript"),
        ],
    )
    def test_bad_input_is_one_line(self, args, said):
        """A missing file or a bad window is one line naming the fix, never a traceback."""
        done = run_cli("bench", *args)
        assert done.returncode != 0
        assert said in done.stderr
        assert "Traceback" not in done.stderr
