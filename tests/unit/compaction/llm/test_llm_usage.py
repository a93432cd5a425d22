"""Provider usage: reading DeepSeek and OpenAI usage objects, and the `usage/report` view."""

from __future__ import annotations

from pathlib import Path

import pytest

from compaction import (
    Message,
    Session,
    UsageReportData,
    UsageReported,
    check_log,
    dump_event,
    parse_event,
)
from compaction.llm._usage import read_usage
from compaction.views import UsageProjection
from compaction.views._projection import fold


class TestReadUsage:
    def test_deepseek(self) -> None:
        """DeepSeek's prompt_cache_hit_tokens is the cached figure."""
        usage = read_usage(
            {
                "prompt_tokens": 1000,
                "completion_tokens": 50,
                "prompt_cache_hit_tokens": 896,
                "prompt_cache_miss_tokens": 104,
            }
        )
        assert (usage.prompt_tokens, usage.cached_tokens) == (1000, 896)
        assert usage.cache_field == "prompt_cache_hit_tokens"
        assert usage.cache_hit_share == pytest.approx(0.896)

    def test_openai(self) -> None:
        """OpenAI's prompt_tokens_details.cached_tokens is the cached figure."""
        usage = read_usage(
            {
                "prompt_tokens": 2048,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 1024},
            }
        )
        assert (usage.cached_tokens, usage.completion_tokens) == (1024, 9)
        assert usage.cache_field == "prompt_tokens_details.cached_tokens"

    @pytest.mark.parametrize(
        "raw",
        [
            {"prompt_tokens": 10},
            {"prompt_tokens": 10, "prompt_tokens_details": None},
            {"prompt_tokens": 10, "prompt_cache_hit_tokens": "5"},
            {"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": -1}},
            {"prompt_tokens": 10, "prompt_cache_hit_tokens": True},
        ],
    )
    def test_missing_or_bad_cache_figure(self, raw: dict[str, object]) -> None:
        """No usable cache figure stays None, never a guessed 0."""
        usage = read_usage(raw)
        assert (usage.prompt_tokens, usage.cached_tokens, usage.cache_hit_share) == (10, None, None)


def report(purpose: str, prompt: int, cached: int | None, completion: int = 5) -> UsageReportData:
    return UsageReportData(
        purpose=purpose,
        model="m",
        prompt_tokens=prompt,
        completion_tokens=completion,
        cached_tokens=cached,
    )


class TestUsageReportEvent:
    def test_round_trip(self) -> None:
        """A usage/report event dumps to one line and parses back equal."""
        event = UsageReported(seq=3, data=report("summary", 100, 64))
        line = dump_event(event)
        assert '"type":"usage/report"' in line
        assert parse_event(line) == event

    @pytest.mark.parametrize(
        ("data", "match"),
        [
            (
                {"purpose": "summary", "model": "m", "prompt_tokens": -1, "completion_tokens": 0},
                "greater than or equal to 0",
            ),
            ({"purpose": "summary", "model": "m", "prompt_tokens": 1}, "completion_tokens"),
            (
                {
                    "purpose": "summary",
                    "model": "m",
                    "prompt_tokens": 1,
                    "completion_tokens": 1,
                    "cost": 3,
                },
                "Extra inputs",
            ),
        ],
    )
    def test_rejects_bad_payloads(self, data: dict[str, object], match: str) -> None:
        """Negative counts, missing counts and extra fields are not a valid usage/report."""
        with pytest.raises(ValueError, match=match):
            UsageReported.model_validate({"seq": 1, "data": data})


class TestProviderUsageView:
    def test_totals_by_purpose(self, log_path: Path) -> None:
        """usage/report events sum into provider totals, overall and per purpose."""
        with Session(log_path) as session:
            session.start_turn("hello")
            session.append(report("turn", 1000, 0))
            session.append(report("summary", 1200, 1152, completion=80))
            session.append(report("summary", 300, None, completion=20))
            usage = session.usage
        assert usage.provider.requests == 3
        assert usage.provider.prompt_tokens == 2500
        assert usage.provider.cached_tokens == 1152
        assert usage.provider.requests_without_cache_figure == 1
        summary = usage.provider_by_purpose["summary"]
        assert (summary.requests, summary.prompt_tokens, summary.completion_tokens) == (
            2,
            1500,
            100,
        )
        assert summary.cache_hit_share == pytest.approx(1152 / 1500)
        assert list(usage.provider_by_purpose) == ["summary", "turn"]

    def test_costs_no_context(self, log_path: Path) -> None:
        """A usage/report never enters the model's context nor its token count."""
        with Session(log_path) as session:
            session.start_turn("hello")
            before = (session.context, session.context_tokens)
            session.append(report("summary", 10, 0))
            assert (session.context, session.context_tokens) == before
            assert session.usage.per_event[-1] == 0
            events = list(session.events())
        check_log(events)

    def test_replay_equals_live(self, log_path: Path) -> None:
        """Folding the log again gives the same provider totals as the live session."""
        with Session(log_path) as session:
            session.add_message(Message(role="user", content="x"))
            session.append(report("summary", 640, 576))
            live = session.usage
            replayed = fold(UsageProjection(session.tokenizer), session.events())
        assert replayed == live
        assert replayed.provider.cache_hit_share == pytest.approx(0.9)
