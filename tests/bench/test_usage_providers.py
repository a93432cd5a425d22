"""benchmarks/replay/usage_providers: Codex and Gemini CLI usage read and checked per provider."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.replay.usage_providers import (
    check_providers,
    read_codex_calls,
    read_gemini_calls,
)


def codex_rollout(path: Path) -> Path:
    """Three model calls (one repeated count), a compaction before the third."""

    def count(ts: int, prompt: int, cached: int, total: int) -> dict[str, object]:
        usage = {"input_tokens": prompt, "cached_input_tokens": cached, "output_tokens": 10}
        info = {"last_token_usage": usage, "total_token_usage": {"input_tokens": total}}
        payload = {"type": "token_count", "info": info}
        return {"timestamp": f"2026-02-01T11:00:{ts:02d}Z", "type": "event_msg", "payload": payload}

    records = [
        count(1, 3000, 0, 3000),
        count(2, 3000, 0, 3000),  # Codex repeats a count when nothing new was used
        count(5, 3500, 2944, 6500),
        {"timestamp": "2026-02-01T11:00:06Z", "type": "compacted", "payload": {"message": "s"}},
        count(9, 1500, 1024, 8000),
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_codex_calls_are_read_once_each(tmp_path: Path) -> None:
    """The prompt holds the cached tokens; a repeated count is one call; compactions marked."""
    calls = read_codex_calls(codex_rollout(tmp_path / "rollout-1.jsonl"))
    assert [(c.total, c.read, c.after_compaction) for c in calls] == [
        (3000, 0, False),
        (3500, 2944, False),
        (1500, 1024, True),
    ]


def test_gemini_calls_skip_aborted_answers(tmp_path: Path) -> None:
    """Each answer's tokens: input holds cached; an answer with no input billed is left out."""
    doc = {
        "messages": [
            {"type": "user", "timestamp": "2026-01-15T20:51:48Z", "content": "hi"},
            {"type": "gemini", "timestamp": "2026-01-15T20:51:52Z",
             "tokens": {"input": 12207, "cached": 2558, "output": 105}},
            {"type": "gemini", "timestamp": "2026-01-15T20:52:25Z",
             "tokens": {"input": 0, "cached": 0, "output": 0}},
        ]
    }  # fmt: skip
    path = tmp_path / "gemini-cli_x.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert [(c.total, c.read) for c in read_gemini_calls(path)] == [(12207, 2558)]


def test_every_provider_is_reported(tmp_path: Path) -> None:
    """Predicted beside served for each provider found, in its own row."""
    codex_rollout(tmp_path / "rollout-1.jsonl")
    report = check_providers(tmp_path)
    assert set(report) == {"anthropic", "openai", "gemini"}
    openai = report["openai"]
    assert (openai["files"], openai["calls"]) == (1, 3)
    assert openai["served_hit_rate"] == round((2944 + 1024) / 8000, 4)
    assert 0 < openai["predicted_hit_rate"] <= openai["prefix_bound_hit_rate"]
    assert report["anthropic"]["files"] == 0
