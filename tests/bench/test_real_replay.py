"""Real transcripts replayed under every strategy: names, records, and todo retention under A."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.replay import real_transcripts
from compaction import CompactionPolicy, TodoItem
from compaction.importers import load
from harness.simulation import STRATEGIES, log_payloads, replay
from harness.simulation._context_strategies import recorded_todos

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (
            '{"todos": [{"content": "Fix it", "status": "in_progress", "activeForm": "Fixing"}]}',
            (TodoItem(content="Fix it", status="in_progress"),),
        ),
        (
            '{"todos": [{"content": "a", "status": "pending"}, {"content": "b", "status": "x"}]}',
            (),  # a status the tool refuses: no list was written
        ),
        ('{"todos": "nope"}', ()),
        ("not json", ()),
        ('{"items": []}', ()),
        (
            '{"plan": [{"step": "Fix it", "status": "in_progress"}], "explanation": "go"}',
            (TodoItem(content="Fix it", status="in_progress"),),
        ),
        (
            '{"todos": [{"description": "a", "status": "pending"},'
            ' {"description": "b", "status": "cancelled"}]}',
            (TodoItem(content="a", status="pending"),),
        ),
    ],
)
def test_recorded_todos_reads_other_agents_lists(arguments, expected):
    """Content and status are read from another agent's todo call; the rest is left out."""
    assert recorded_todos(arguments) == expected


def test_a_checks_calls_on_an_imported_todowrite_session():
    """Under A (no todo events), the list of Claude Code's TodoWrite calls is still checked."""
    payloads = log_payloads(load(FIXTURES / "claude_code_small.jsonl"))
    assert any(
        c.function.name == "TodoWrite"
        for p in payloads
        for c in (getattr(p, "tool_calls", None) or ())
    )
    result = replay(payloads, STRATEGIES["A"], policy=CompactionPolicy(window_tokens=30_000))
    assert result.todo_checks > 0


def test_codex_update_plan_is_scored_as_the_todo_list():
    """On a Codex session B keeps every open step in sight; A's checks read update_plan calls."""
    payloads = log_payloads(load(FIXTURES / "codex_small.jsonl"))
    assert any(
        c.function.name == "update_plan"
        for p in payloads
        for c in (getattr(p, "tool_calls", None) or ())
    )
    policy = CompactionPolicy(window_tokens=30_000)
    b = replay(payloads, STRATEGIES["B"], policy=policy)
    a = replay(payloads, STRATEGIES["A"], policy=policy)
    assert b.todo_checks > 0
    assert b.request_retention == 1.0
    assert a.todo_checks > 0
    assert a.request_retention == 1.0  # nothing compacted: the calls are all in sight


def test_peer_payloads_turn_update_plan_into_todo_write():
    """The peers get Codex's plan as a todo_write call with content and status."""
    payloads = real_transcripts.peer_payloads(log_payloads(load(FIXTURES / "codex_small.jsonl")))
    calls = [c for p in payloads for c in (getattr(p, "tool_calls", None) or ())]
    assert not any(c.function.name == "update_plan" for c in calls)
    writes = [json.loads(c.function.arguments) for c in calls if c.function.name == "todo_write"]
    assert writes
    assert all(set(t) == {"content", "status"} for w in writes for t in w["todos"])


def test_every_real_session_is_named_by_its_source():
    """Session names start `real-` and name the agent; each maps to a distinct file."""
    names = list(real_transcripts.REAL_SESSIONS)
    assert all(n.startswith("real-") for n in names)
    assert len(set(real_transcripts.REAL_SESSIONS.values())) == len(names)
    for name, file in real_transcripts.REAL_SESSIONS.items():
        agent = file.split("_")[0]
        assert agent.replace("-2.1", "") in name


def test_run_records_every_run_and_prices_it(tmp_path):
    """A run replays the chosen session under each run, priced at every provider."""
    folder = tmp_path / "t"
    folder.mkdir()
    name = "real-swe-agent-gpt4-pydicom-1458"
    target = folder / real_transcripts.REAL_SESSIONS[name]
    target.write_bytes((FIXTURES / "swe_agent_small.traj").read_bytes())
    runs = ["B", "A", "none"]
    results = real_transcripts.run(window=12_000, folder=folder, sessions=[name], runs=runs)
    assert [r["strategy"] for r in results["records"]] == runs
    assert results["budget"] == int(0.8 * 12_000)  # the matched budget, not B's default threshold
    for r in results["records"]:
        assert r["session"] == name
        assert r["requests"] > 0
        assert set(r["cost"]) == {"deepseek", "openai", "anthropic"}
        assert all(c["usd"] > 0 for c in r["cost"].values())
    text = "\n".join(real_transcripts.markdown(results))
    assert f"`{name}` | B |" in text
    json.dumps(results)


def test_missing_transcript_is_a_reason_not_an_error(tmp_path):
    """A transcript that is not there gives a reason in the results and the report."""
    results = real_transcripts.run(window=12_000, folder=tmp_path, runs=["B"])
    assert results["records"] == []
    assert set(results["missing"]) == set(real_transcripts.REAL_SESSIONS)
    assert "Skipped:" in "\n".join(real_transcripts.markdown(results))


def test_a_codex_transcript_is_picked_up_by_its_name(tmp_path):
    """A ``codex*.jsonl`` file in the folder is a session of its own, replayed and exported."""
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "codex_someone_1a2b_small.jsonl").write_bytes(
        (FIXTURES / "codex_small.jsonl").read_bytes()
    )
    named = real_transcripts.sessions_in(folder)
    assert named["real-codex-someone-1a2b-small"] == "codex_someone_1a2b_small.jsonl"
    assert set(named) - {"real-codex-someone-1a2b-small"} == set(real_transcripts.REAL_SESSIONS)
    results = real_transcripts.run(window=12_000, folder=folder, runs=["B"])
    assert [r["session"] for r in results["records"]] == ["real-codex-someone-1a2b-small"]
    assert results["records"][0]["requests"] > 0
    [path] = real_transcripts.write_exchanges(tmp_path / "x", folder=folder)
    assert path.name == "real-codex-someone-1a2b-small.json"
