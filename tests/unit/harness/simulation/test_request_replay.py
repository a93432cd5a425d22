from __future__ import annotations

import itertools
from typing import Any, cast

import pytest

from benchmarks.peers.metrics import serialize as peers_serialize
from compaction import CompactionPolicy, Message, get_tokenizer
from harness.simulation import (
    ENVIRONMENT,
    STRATEGIES,
    Strategy,
    generate,
    log_payloads,
    replay,
    serialize,
    user_tools,
    write_session,
)
from harness.simulation._request_replay import anthropic_offsets
from prompts import CacheBreakpoint, PromptBuilder, ToolCatalog, get_mode, openai_request

POLICY = CompactionPolicy(window_tokens=8000)


@pytest.fixture(scope="module")
def payloads():
    return generate(6, 0)


@pytest.fixture(scope="module")
def runs(payloads):
    return {name: replay(payloads, s, policy=POLICY) for name, s in STRATEGIES.items()}


class TestSerialize:
    def test_same_bytes_as_the_peers_scorer(self, log_path):
        """Our canonical lines join into exactly what the peers' scorer tokenizes."""
        with write_session(log_path, 3, 1) as session:
            builder = PromptBuilder(ToolCatalog(user_tools()), environment=ENVIRONMENT)
            req = openai_request(builder, get_mode("agent"), session)
        messages = [Message.model_validate(m) for m in req["messages"]]
        ours = "".join(serialize(req))
        assert ours.endswith("}\n")
        assert ours.rstrip("\n") == peers_serialize(messages, req["tools"]).rstrip("\n")

    def test_tools_first_then_one_line_per_message(self, log_path):
        """The first line is the tool catalog; each message has its own line."""
        req = {"tools": [{"b": 1, "a": 2}], "messages": [{"role": "system", "content": "x"}]}
        assert serialize(req) == ['[{"a":2,"b":1}]\n', '{"content":"x","role":"system"}\n']


class TestReplay:
    def test_one_record_per_assistant_message_plus_the_owed_call(self, payloads, runs):
        """Every assistant message is a call; a session cut mid-work adds the next call."""
        calls = sum(1 for p in payloads if isinstance(p, Message) and p.role == "assistant")
        assert len(runs["B"].records) == calls + 1

    def test_compacts_and_keeps_every_unfinished_todo(self, runs):
        """B compacts at least once and keeps 100% of unfinished todos after each compaction."""
        b = runs["B"]
        assert b.compactions >= 1
        assert sum(r.compacted for r in b.records) == b.compactions
        assert b.expected > 0
        assert b.retention == 1.0
        assert b.request_retention == 1.0

    def test_hits_bounded_by_prompt_and_ideal(self, runs):
        """No model serves more than the prompt, nor more than the ideal."""
        for result in runs.values():
            for r in result.records:
                assert 0 <= r.ideal <= r.prompt_tokens
                for hit in r.hits.values():
                    assert 0 <= hit <= r.ideal

    def test_compaction_saves_tokens(self, runs):
        """Every compacting strategy sends fewer tokens than the baseline."""
        base = runs["none"].total_prompt_tokens
        for name in ("A", "B", "C"):
            assert runs[name].total_prompt_tokens < base
        assert runs["none"].compactions == 0

    def test_system_injection_loses_cache_hits(self, runs):
        """C's rewritten system prompt costs cache hits that B keeps."""
        for model in ("deepseek", "openai", "anthropic", "vllm"):
            assert runs["C"].total_hits(model) < runs["B"].total_hits(model)

    def test_append_only_requests_hit_the_whole_previous_request(self, payloads):
        """Without compaction and with mode messages, each request extends the one before."""
        strategy = Strategy("t", "append only", switch="message", compaction=False)
        records = replay(payloads, strategy, policy=POLICY).records
        for before, after in itertools.pairwise(records):
            assert after.ideal == before.prompt_tokens
            assert after.hits["anthropic"] == before.prompt_tokens

    def test_deterministic(self, payloads, runs):
        """The same session and strategy give the same records."""
        again = replay(payloads, STRATEGIES["B"], policy=POLICY)
        assert again.records == runs["B"].records


@pytest.mark.transcripts
class TestImportedSession:
    def test_real_claude_code_session(self, transcripts):
        """A real Claude Code session, imported, replays under B with every todo kept."""
        from compaction.importers import load

        path = transcripts / "claude-code_entire-cli_f839a29c35ef_ends-with-pending.jsonl"
        payloads = log_payloads(load(path))
        result = replay(payloads, STRATEGIES["B"], policy=CompactionPolicy(window_tokens=30_000))
        assert result.compactions >= 1
        assert result.expected > 0
        assert result.retention == 1.0
        assert result.request_retention == 1.0
        for r in result.records:
            assert all(0 <= hit <= r.ideal <= r.prompt_tokens for hit in r.hits.values())

    def test_log_payloads_drop_checkpoints(self, log_path):
        """Payloads read back from a log leave its checkpoints out and keep everything else."""
        from compaction import CheckpointData, read_events

        with write_session(log_path, 2, 0) as session:
            session.append(
                CheckpointData(
                    text="x",
                    first_seq=1,
                    last_seq=2,
                    tokens_before=1,
                    tokens_after=1,
                    summarizer="t",
                )
            )
        payloads = log_payloads(read_events(log_path))
        assert payloads == generate(2, 0)


class _Spy:
    """An Anthropic cache model that records the breakpoints each request came with."""

    name = "anthropic"

    def __init__(self) -> None:
        self.marks: list[list[int]] = []

    def simulator(self):
        spy = self

        class _Sim:
            def serve(self, tokens, breakpoints=()):
                spy.marks.append(list(breakpoints))
                return 0

        return _Sim()


class TestAnthropicBreakpoints:
    def test_marks_come_from_the_builders_request(self, payloads):
        """Each request's marks: the end of the system line and the end of the request.

        The system line is the one of the request the builder made (the session's first
        mode, since a switch appends a mode message), never assumed from the turn's mode.
        """
        spy = _Spy()
        result = replay(payloads, STRATEGIES["B"], policy=POLICY, models=[cast(Any, spy)])
        builder = PromptBuilder(ToolCatalog(user_tools()), environment=ENVIRONMENT)
        tokenizer = get_tokenizer()
        system_end = {
            mode: sum(len(tokenizer.encode(line)) for line in lines[:2])
            for mode in ("agent", "plan")
            for lines in [serialize(openai_request(builder, get_mode(mode)))]
        }
        assert len(spy.marks) == len(result.records) > 3
        # A mode switch appends a mode message: the system line stays the first turn's mode's.
        prompt_mode = result.records[0].mode
        for marks, record in zip(spy.marks, result.records, strict=True):
            assert marks == [system_end[prompt_mode], record.prompt_tokens]

    def test_offsets_map_sections_to_lines(self):
        """A tools, a system and two message breakpoints land at the ends of their lines."""
        marks = [
            CacheBreakpoint("tools", 0),
            CacheBreakpoint("system", 0),
            CacheBreakpoint("messages", 0),
            CacheBreakpoint("messages", 1, 2),
        ]
        # lines: tools 10, system 20, one log system message 5, conversation 7, 8, 9
        offsets = anthropic_offsets(marks, [1, 2], [10, 20, 5, 7, 8, 9], system_lines=2)
        assert offsets == [10, 35, 50, 59]
