from __future__ import annotations

import json

import pytest

from benchmarks.replay.usage_check import UsageCall, check, kind, pooled, read_calls


def _assistant(mid, at, read, write, inp, *, ttl="5m", sidechain=False):
    creation = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    creation[f"ephemeral_{ttl}_input_tokens"] = write
    return {
        "type": "assistant",
        "isSidechain": sidechain,
        "timestamp": f"2026-01-01T00:{at // 60:02d}:{at % 60:02d}.000Z",
        "message": {
            "id": mid,
            "usage": {
                "input_tokens": inp,
                "cache_creation_input_tokens": write,
                "cache_read_input_tokens": read,
                "cache_creation": creation,
                "output_tokens": 5,
            },
        },
    }


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


class TestRead:
    def test_one_call_per_message_id_main_thread_only(self, tmp_path):
        """Records of one API message count once; sub-agent calls and unbilled calls are skipped."""
        path = _write(
            tmp_path / "s.jsonl",
            [
                _assistant("a", 0, 0, 3000, 10),
                _assistant("a", 0, 0, 3000, 10),
                _assistant("b", 30, 3000, 200, 5, sidechain=True),
                _assistant("c", 60, 0, 0, 0),
                {"type": "system", "subtype": "compact_boundary"},
                _assistant("d", 90, 2000, 500, 3, ttl="1h"),
            ],
        )
        calls = read_calls(path)
        assert [(c.read, c.write, c.after_compaction, c.ttl) for c in calls] == [
            (0, 3000, False, 300.0),
            (2000, 500, True, 3600.0),
        ]

    def test_two_objects_on_one_line_are_both_read(self, tmp_path):
        """A line holding two records with no newline between them loses neither."""
        a, b = _assistant("a", 0, 0, 3000, 10), _assistant("b", 20, 3000, 100, 4)
        path = tmp_path / "s.jsonl"
        path.write_text(json.dumps(a) + json.dumps(b) + "\n", encoding="utf-8")
        assert len(read_calls(path)) == 2


class TestCheck:
    def test_rolling_breakpoint_and_expiry(self):
        """A grown request reads what the previous wrote; past 5 minutes it reads nothing."""
        calls = [
            UsageCall(0.0, 10, 3000, 0, 1, 300.0, False),
            UsageCall(60.0, 5, 200, 3000, 1, 300.0, False),
            UsageCall(500.0, 5, 3300, 0, 1, 300.0, False),
        ]
        rows = check(calls)["rows"]
        assert [r["kind"] for r in rows] == ["first", "grew", "after-gap"]
        assert [r["model"] for r in rows] == [0, 3000, 0]
        assert [r["model_no_expiry"] for r in rows] == [0, 3000, 3200]

    def test_after_compaction_the_fixed_prefix_is_read(self):
        """After the agent's compaction only the system prompt and tools hit."""
        calls = [
            UsageCall(0.0, 10, 2000, 1500, 1, 300.0, False),
            UsageCall(30.0, 10, 500, 3500, 1, 300.0, False),
            UsageCall(60.0, 10, 900, 1500, 1, 300.0, True),
        ]
        out = check(calls)
        assert out["fixed_prefix"] == 1500
        assert [r["model"] for r in out["rows"]] == [0, 3500, 1500]  # the first: an empty cache

    def test_kind_boundaries(self):
        """A gap of exactly the lifetime is still a grown request; one second more is a gap."""
        first = UsageCall(0.0, 1, 1, 1, 1, 300.0, False)
        assert kind(UsageCall(300.0, 1, 1, 2, 1, 300.0, False), first) == "grew"
        assert kind(UsageCall(301.0, 1, 1, 2, 1, 300.0, False), first) == "after-gap"


class TestRealTranscripts:
    def test_model_with_expiry_tracks_the_provider(self, transcripts):
        """On a real Claude Code session most calls match exactly; expiry explains the gaps."""
        name = "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
        checked = {name: check(read_calls(transcripts / name))}
        p = pooled(checked)
        assert p["exact_share"] > 0.85
        assert abs(p["model_hit_rate"] - p["real_hit_rate"]) < 0.01
        assert p["model_no_expiry_hit_rate"] > p["real_hit_rate"] + 0.01
        gaps = [r for e in checked.values() for r in e["rows"] if r["kind"] == "after-gap"]
        assert gaps
        assert sum(r["real"] for r in gaps) < 0.2 * sum(r["tokens"] for r in gaps)
        assert pytest.approx(sum(r["model"] for r in gaps)) == 0
