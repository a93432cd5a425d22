"""The token scale: provider prompt tokens per counted token, learned from `usage/report` events."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_runner import run_cli

from compaction import (
    CheckpointData,
    CompactionPolicy,
    Message,
    Session,
    UsageReportData,
    maybe_compact,
)
from compaction.views import scaled_tokens
from compaction.views.token_scale import MIN_PAIRS, SCALE_BOUNDS


def report(prompt: int, model: str = "m1", purpose: str = "turn") -> UsageReportData:
    return UsageReportData(purpose=purpose, model=model, prompt_tokens=prompt, completion_tokens=5)


def play(
    session: Session,
    calls: int,
    scale: float,
    *,
    reply_first: bool = False,
    model: str = "m1",
    outliers: int = 0,
    noise: int = 0,
) -> None:
    """Log `calls` agent calls whose provider prompt grows `scale` times the counted context."""
    session.start_turn("read every file and report")
    for i in range(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        answer = {"role": "assistant", "content": f"step {i} " * 20, "tool_calls": [call]}
        if reply_first:
            reply = session.add_message(answer)
            counted = session.context_tokens - session.event_tokens(reply.seq)
        else:
            counted = session.context_tokens
        prompt = 900 + round(scale * counted) + (50_000 if i < outliers else 0)
        prompt += noise if i % 2 else -noise  # a provider's report off by as much either way
        session.append(report(prompt, model))
        if not reply_first:
            session.add_message(answer)
        session.add_message({"role": "tool", "tool_call_id": f"c{i}", "content": "line\n" * 40})


class TestLearning:
    @pytest.mark.parametrize("reply_first", [False, True])
    def test_scale_is_the_provider_growth_per_counted_token(
        self, tmp_path: Path, reply_first: bool
    ) -> None:
        """A provider that counts 1.25x the local tokens gives a scale of 1.25, either log order."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 20, 1.25, reply_first=reply_first)
            assert session.token_scale == pytest.approx(1.25, abs=0.01)

    def test_unknown_until_enough_reports(self, tmp_path: Path) -> None:
        """Fewer than MIN_PAIRS consecutive calls teach nothing: the scale stays None."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, MIN_PAIRS, 1.4)  # MIN_PAIRS calls make MIN_PAIRS - 1 pairs
            assert session.token_scale is None
            play(session, 1, 1.4)
            assert session.token_scale is not None

    def test_outliers_do_not_move_the_median(self, tmp_path: Path) -> None:
        """A few calls with a wildly larger prompt (a cache rewrite, a retry) barely move it."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 30, 1.3, outliers=3)
            assert session.token_scale == pytest.approx(1.3, abs=0.02)

    def test_a_compaction_breaks_the_pair(self, tmp_path: Path) -> None:
        """The prompt shrinks across a checkpoint: that pair is no sample."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 3, 1.2)
            before = len(session._scale.samples)
            session.append(
                CheckpointData(
                    text="x",
                    first_seq=1,
                    last_seq=session.applied_seq,
                    tokens_before=1,
                    tokens_after=1,
                    summarizer="extractive",
                )
            )
            session.append(report(10))
            assert len(session._scale.samples) == before

    def test_scale_follows_the_newest_model(self, tmp_path: Path) -> None:
        """Samples are per model: a new model starts unknown, its own reports teach it."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 12, 1.25, model="claude")
            assert session.token_scale is not None
            session.append(report(1, model="gpt"))
            assert session.token_scale is None

    def test_summary_calls_do_not_count(self, tmp_path: Path) -> None:
        """A summarizer's usage report (another request entirely) is no agent call."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 2, 1.25)
            n = len(session._scale.samples)
            session.append(report(999_999, purpose="summary"))
            assert len(session._scale.samples) == n

    def test_scale_is_clamped(self, tmp_path: Path) -> None:
        """A log claiming 10x is clamped to the upper bound."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 12, 10.0)
            assert session.token_scale == SCALE_BOUNDS[1]

    def test_raw_counts_stay_raw(self, tmp_path: Path) -> None:
        """Learning a scale changes no count the session reports; scaled_tokens converts."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 12, 1.5)
            raw = session.context_tokens
            assert session.usage.context_tokens == raw
            scale = session.token_scale
            assert scale is not None
            assert scaled_tokens(raw, scale) == round(raw * scale)
            assert scaled_tokens(raw, None) == raw


class TestTrigger:
    def test_maybe_compact_counts_in_provider_tokens(self, tmp_path: Path) -> None:
        """A context under the raw trigger but over it in provider tokens is compacted."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 14, 1.5)
            raw = session.context_tokens
            policy = CompactionPolicy(window_tokens=int(raw / 0.8 * 1.2), threshold=0.8)
            assert not policy.should_compact(raw)
            result = maybe_compact(session, policy)
            assert result is not None
            after = scaled_tokens(result.data.tokens_after, session.token_scale)
            assert after <= policy.window_tokens

    def test_policy_in_counted_tokens(self) -> None:
        """The window and the reserve shrink by the scale; None leaves the policy as it is."""
        policy = CompactionPolicy(window_tokens=200_000, output_reserve=8_000)
        assert policy.in_counted_tokens(None) is policy
        scaled = policy.in_counted_tokens(1.25)
        assert (scaled.window_tokens, scaled.output_reserve) == (160_000, 6_400)


class TestLogCommand:
    def test_json_reports_null_then_the_scale(self, tmp_path: Path) -> None:
        """`harness log --json` has token_scale: null with no reports, the number once learned."""
        log = tmp_path / "s.jsonl"
        with Session(log) as session:
            session.add_message(Message(role="user", content="hi"))
        first = run_cli("log", str(log), "--json")
        assert json.loads(first.stdout)["token_scale"] is None
        with Session(log) as session:
            play(session, 12, 1.25)
            session.end_turn()
        done = run_cli("log", str(log), "--json")
        assert json.loads(done.stdout)["token_scale"] == pytest.approx(1.25, abs=0.01)
        text = run_cli("log", str(log))
        assert "token scale: 1.2" in text.stdout

    def test_claude_code_transcript_scale(self, tmp_path: Path, transcripts: Path) -> None:
        """A real Claude Code session's provider counts run ~1.2-1.4x o200k's."""
        src = transcripts / "claude-code_entire-cli_cd95adddad32_3compactions.jsonl"
        log = tmp_path / "cc.jsonl"
        run_cli("import", "auto", str(src), "-o", str(log))
        scale = json.loads(run_cli("log", str(log), "--json").stdout)["token_scale"]
        assert 1.15 < scale < 1.45


class TestRobustness:
    def test_symmetric_noise_does_not_push_the_scale_up(self, tmp_path: Path) -> None:
        """Reports off by +-N (half the pairs shrink): the median of every pair stays at 1.25."""
        with Session(tmp_path / "s.jsonl") as session:
            play(session, 21, 1.25, noise=300)
            assert session.token_scale is not None
            assert abs(session.token_scale - 1.25) < 0.05

    def test_a_turn_in_another_mode_breaks_the_pair(self, tmp_path: Path) -> None:
        """A new system prompt between two calls: no sample spans it."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("one", mode="agent")
            session.append(report(1_000))
            session.add_message({"role": "assistant", "content": "a " * 400})
            session.start_turn("two", mode="plan")
            session.append(report(9_000))  # the plan prompt is far longer: not a token scale
            samples = session._scale_p.view(session._scale).samples
        assert samples == ()

    def test_a_report_counts_only_up_to_its_context_seq(self, tmp_path: Path) -> None:
        """Messages after the report's context_seq belong to the next call's span."""
        with Session(tmp_path / "s.jsonl") as session:
            session.start_turn("go")
            session.append(report(1_000))
            first = session.add_message({"role": "assistant", "content": "a " * 100})
            later = session.add_message({"role": "assistant", "content": "b " * 100})
            data = report(1_200).model_copy(update={"context_seq": first.seq})
            session.append(data)
            samples = session._scale_p.view(session._scale).samples
        assert [s.seqs for s in samples] == [(first.seq,)]
        assert later.seq not in samples[0].seqs
