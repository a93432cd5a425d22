"""The real-loop benchmark: a smoke run, and the generated long turn it relies on."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from benchmarks.replay import real_loop
from compaction import (
    CompactionPolicy,
    EventData,
    Message,
    Session,
    UsageReportData,
    get_tokenizer,
)
from prompts import PromptBuilder, ToolCatalog


class TestLongTurn:
    def test_one_turn_of_a_hundred_rounds(self) -> None:
        """One request, 100 tool rounds, some outputs larger than the 8,192-token window."""
        payloads = real_loop.long_turn(0)
        users = [p for p in payloads if isinstance(p, Message) and p.role == "user"]
        rounds = [p for p in payloads if isinstance(p, Message) and p.tool_calls]
        assert len(users) == 1
        assert len(rounds) == 100
        tok = get_tokenizer()
        sizes = [
            tok.count(p.text()) for p in payloads if isinstance(p, Message) and p.role == "tool"
        ]
        assert max(sizes) > 8_192
        assert real_loop.long_turn(0) == payloads  # seeded


class TestQuickRun:
    def test_never_over_the_window_tail_kept_tasks_kept(
        self, tmp_path: Path, transcripts: Path
    ) -> None:
        """--quick: no call over the window, a tail whenever one fitted, every task carried."""
        out = tmp_path / "real_loop.json"
        assert (
            real_loop.main(["--quick", "--out", str(out), "--transcripts", str(transcripts)]) == 0
        )
        doc = json.loads(out.read_text())
        assert set(doc["windows"]) == {"8192", "32000"}
        compactions = 0
        for window, sources in doc["windows"].items():
            for source in ("transcripts", "generated"):
                s = sources[source]
                assert s["sessions"] == 1
                assert s["calls"] > 0
                assert s["calls_over_window"] == 0
                assert s["peak_request_tokens"] <= int(window)
                assert s["tail_kept_when_one_fitted"] in (None, 1.0)
                assert s["task_retention"] in (None, 1.0)
                compactions += s["compactions"]
        assert doc["windows"]["8192"]["generated"]["compactions"] > 0
        assert doc["windows"]["8192"]["generated"]["task_retention"] == 1.0
        assert doc["tool_catalog_tokens"] > 2_000
        assert compactions > 0
        # Every format imports now (the Gemini CLI one included), so no transcript is skipped.
        assert doc["skipped_transcripts"] == {}
        assert all(v > 0 for v in doc["b_summed_input_tokens"]["sessions"].values())


class TestSharedTaskRetention:
    def test_retention_counts_shared_tasks(self, tmp_path: Path, transcripts: Path) -> None:
        """On the shared TaskCreate/TaskUpdate session, retention checks the shared tasks too."""
        folder = tmp_path / "one"
        folder.mkdir()
        name = "claude-code-2.1_entire-cli_64-df6ebeea39_taskcreate-taskupdate.jsonl"
        (folder / name).symlink_to(transcripts / name)
        out = tmp_path / "real_loop.json"
        args = ["--quick", "--out", str(out), "--transcripts", str(folder)]
        assert real_loop.main(args) == 0
        small = json.loads(out.read_text())["windows"]["8192"]["transcripts"]
        assert small["compactions"] > 0
        assert small["shared_tasks_checked"] > 0
        assert small["task_retention"] == 1.0


class TestLearnedScale:
    def test_trigger_follows_the_scale_maybe_compact_applies(self, tmp_path: Path) -> None:
        """Usage reports that teach a scale move the trigger; the loop neither crashes nor skips."""
        reported = 0
        payloads: list[EventData] = []
        for p in real_loop.long_turn(0):
            payloads.append(p)
            if isinstance(p, Message) and p.role == "tool":
                reported += 1  # the provider counts almost nothing: the scale clamps to 0.5
                payloads.append(
                    UsageReportData(
                        purpose="turn", model="m", prompt_tokens=reported, completion_tokens=1
                    )
                )
        builder = PromptBuilder(ToolCatalog.from_file(real_loop.CATALOG))
        result = real_loop.run_loop("scaled", payloads, 8_192, builder, tmp_path)
        plain = real_loop.run_loop("plain", real_loop.long_turn(0), 8_192, builder, tmp_path)
        assert result.compactions > 0
        assert result.compactions < plain.compactions  # the scaled trigger fires later
        assert result.calls == plain.calls


def _learn_scale(session: Session, scale: float, calls: int = 12) -> None:
    """Log `calls` agent calls whose provider prompt grows `scale` times the counted context."""
    session.start_turn("read every file")
    for i in range(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        prompt = 900 + round(scale * session.context_tokens)
        session.append(
            UsageReportData(purpose="turn", model="m", prompt_tokens=prompt, completion_tokens=5)
        )
        session.add_message({"role": "assistant", "content": f"step {i}", "tool_calls": [call]})
        session.add_message({"role": "tool", "tool_call_id": f"c{i}", "content": "line\n" * 40})


class TestTailFitted:
    def test_measured_in_the_counted_tokens_maybe_compact_used(self, tmp_path: Path) -> None:
        """The check measures with the policy maybe_compact compacted with.

        With a learned scale of 2, a tail within the provider's retain but not within the
        counted one did not fit.
        """
        builder = PromptBuilder(ToolCatalog(()))
        policy = CompactionPolicy(window_tokens=10_000)  # retain: 500 tokens, 250 counted at 2x
        messages = [
            Message(role="assistant", content="x"),
            Message(role="user", content="please go on"),
        ]
        done = SimpleNamespace(data=SimpleNamespace(text="# Checkpoint\n\n(short)"))
        fits = {}
        for scale in (None, 2.0):
            with Session(tmp_path / f"{scale}.jsonl") as session:
                if scale:
                    _learn_scale(session, scale)
                    assert session.token_scale == pytest.approx(scale, abs=0.05)
                result = real_loop.LoopResult(name="s", window=policy.window_tokens)
                loop = real_loop._Loop(session, policy, builder, 0, result)
                fits[scale] = loop.tail_fitted(messages, [], [100, 400], cast(Any, done))
        assert fits == {None: True, 2.0: False}
