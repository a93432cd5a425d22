"""Cache-aware clearing: only after the cache expired, or when it pays back; notes name the seq."""

from __future__ import annotations

from pathlib import Path

import pytest
from contracts.sdk_shapes import problems

from compaction import ConfigError, Session, get_tokenizer
from compaction.backends import ClearingPolicy, ToolResultClearer
from compaction.backends._clearing import (
    CACHE_LIFETIMES,
    ResultSlot,
    clearable,
    cleared_note,
    clearing_due,
)
from harness.simulation import AnthropicCache, DeepSeekCache, OpenAICache
from prompts import BUILTIN_MODES, PromptBuilder, anthropic_request, clear_tool_uses_edit

POLICY = ClearingPolicy(keep_calls=2, ttl_seconds=300.0)
SLOTS = [ResultSlot(seq=5, tokens=1000, offset=100), ResultSlot(seq=9, tokens=500, offset=1200)]


class TestRule:
    @pytest.mark.parametrize(
        ("gap", "expected"),
        [
            (None, (5, 9)),
            (0.0, ()),
            (299.0, ()),
            (300.0, ()),
            (300.5, (5, 9)),
            (7200.0, (5, 9)),
        ],
    )
    def test_clears_only_once_the_cache_expired(
        self, gap: float | None, expected: tuple[int, ...]
    ) -> None:
        """A gap longer than the lifetime (or no earlier request) clears; a shorter one never."""
        due = clearing_due(POLICY, SLOTS, gap_seconds=gap, request_tokens=5000, note_tokens=30)
        assert due == expected

    def test_nothing_to_save_clears_nothing(self) -> None:
        """Results no larger than the note are never replaced by it."""
        small = [ResultSlot(seq=3, tokens=20, offset=0)]
        assert (
            clearing_due(POLICY, small, gap_seconds=None, request_tokens=100, note_tokens=30) == ()
        )
        assert clearing_due(POLICY, [], gap_seconds=None, request_tokens=100, note_tokens=30) == ()

    @pytest.mark.parametrize("payback", [1, 2, 15, 16, 52, 53])
    def test_pays_back_within_the_stated_calls(self, payback: int) -> None:
        """Warm cache: clear when re-sending the tail costs no more than the reads it saves."""
        policy = ClearingPolicy(keep_calls=2, ttl_seconds=300.0, payback_calls=payback)
        # Independent arithmetic: saved = (1000-30) + (500-30) = 1440 tokens; the tail after the
        # first cleared result, once cleared, is 10000 - 100 - 1440 = 8460 tokens, re-sent at
        # 1.0 instead of 0.1 (0.9 each): 7614; each later call reads 1440 fewer cached tokens
        # at 0.1: 144. 7614 / 144 = 52.9 calls: no horizon under 53 pays back.
        due = clearing_due(policy, SLOTS, gap_seconds=10.0, request_tokens=10_000, note_tokens=30)
        assert due == ((5, 9) if payback >= 53 else ())
        # A short tail: 1740 - 100 - 1440 = 200 re-sent, 180 one-off, 144 a call: 1.25 calls.
        due = clearing_due(policy, SLOTS, gap_seconds=10.0, request_tokens=1740, note_tokens=30)
        assert due == ((5, 9) if payback >= 2 else ())
        # 4040 - 100 - 1440 = 2500 re-sent: 2250 one-off / 144 = 15.6 calls.
        due = clearing_due(policy, SLOTS, gap_seconds=10.0, request_tokens=4040, note_tokens=30)
        assert due == ((5, 9) if payback >= 16 else ())

    def test_anthropic_write_surcharge_counts(self) -> None:
        """A write at 1.25 makes the same clearing take longer to pay back than at 1.0."""
        cheap = ClearingPolicy(payback_calls=2, write_price=1.0)
        dear = ClearingPolicy(payback_calls=2, write_price=1.25)
        for policy, expected in ((cheap, (5, 9)), (dear, ())):
            # 260 re-sent: 260 * 0.9 = 234 <= 288 at 1.0; 260 * 1.15 = 299 > 288 at 1.25.
            due = clearing_due(policy, SLOTS, gap_seconds=1.0, request_tokens=1800, note_tokens=30)
            assert due == expected

    def test_breakpoint_caches_resend_the_whole_conversation(self) -> None:
        """With Anthropic's breakpoints, a clearing re-sends everything after the system prompt."""
        prefix = ClearingPolicy(payback_calls=2)
        breakpoints = ClearingPolicy(payback_calls=2, reuse="breakpoints")
        # prefix: 1740 - 100 - 1440 = 200 re-sent (180 <= 288); breakpoints: 300 (270 <= 288);
        # at 1840 tokens: 300 re-sent (270) against 400 (360 > 288).
        for tokens, expected in ((1740, ((5, 9), (5, 9))), (1840, ((5, 9), ()))):
            got = tuple(
                clearing_due(p, SLOTS, gap_seconds=1.0, request_tokens=tokens, note_tokens=30)
                for p in (prefix, breakpoints)
            )
            assert got == expected
        assert ClearingPolicy.for_provider("anthropic").reuse == "breakpoints"
        assert ClearingPolicy.for_provider("openai").reuse == "prefix"

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"keep_calls": -1}, "keep_calls must be >= 1, not -1"),
            ({"keep_calls": 0}, "keep_calls must be >= 1, not 0"),
            ({"ttl_seconds": 0}, "ttl_seconds must be > 0"),
            ({"payback_calls": 0}, "payback_calls must be >= 1"),
            ({"cached_price": 2.0}, "cached_price must be in"),
            ({"cached_price": 0.5, "write_price": 0.2}, "write_price >= cached_price"),
        ],
    )
    def test_bad_policies_are_rejected(self, kwargs: dict[str, float], match: str) -> None:
        """A bad value names itself."""
        with pytest.raises(ConfigError, match=match):
            ClearingPolicy(**kwargs)  # type: ignore[arg-type]

    def test_lifetimes_match_the_cache_models(self) -> None:
        """The provider lifetimes are the ones the benchmark's cache models expire entries at."""
        assert {
            "openai": OpenAICache().ttl_seconds,
            "anthropic": AnthropicCache().ttl_seconds,
            "deepseek": DeepSeekCache().ttl_seconds,
        } == CACHE_LIFETIMES
        assert ClearingPolicy.for_provider("anthropic").write_price == 1.25
        with pytest.raises(ConfigError, match="no cache lifetime known for 'gemini'"):
            ClearingPolicy.for_provider("gemini")


def tool_turns(session: Session, calls: int, start: int = 0) -> None:
    """`calls` tool calls numbered from `start`, each with a large result."""
    if start == 0:
        session.start_turn("Survey the repository")
    for i in range(start, start + calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read", "arguments": "{}"}}
        session.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
        session.add_message(
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"file {i} " * 300}
        )


class TestClearer:
    def test_quick_calls_clear_nothing_then_a_long_gap_clears(self, log_path: Path) -> None:
        """Calls seconds apart keep every result; after an hour the old ones become notes."""
        with Session(log_path) as session:
            tool_turns(session, 5)
            clearer = ToolResultClearer(POLICY, get_tokenizer("o200k_base"))
            clearer.view(session.context, at=0.0)  # the first request: nothing was cached
            first = set(clearer.cleared)
            tool_turns(session, 1, start=5)
            quick = clearer.view(session.context, at=20.0)
            assert clearer.cleared == first
            tool_turns(session, 1, start=6)
            late = clearer.view(session.context, at=3620.0)
        tool_seqs = [s for s, m in zip(late.seqs, late.messages, strict=True) if m.role == "tool"]
        assert clearer.cleared == set(tool_seqs[:-2])
        assert first <= clearer.cleared
        for seq, message in zip(late.seqs, late.messages, strict=True):
            if seq in clearer.cleared:
                assert message.content == cleared_note(seq)
                assert f"harness log LOG --seq {seq}" in message.text()
                assert "\n" not in message.text()
        assert late.messages[-1].text().startswith("file 6")
        assert len(quick.messages) == len(late.messages) - 2

    def test_cleared_stays_cleared(self, log_path: Path) -> None:
        """Once cleared, a result stays a note on every later request (the prefix never flips)."""
        with Session(log_path) as session:
            tool_turns(session, 4)
            clearer = ToolResultClearer(POLICY, get_tokenizer("o200k_base"))
            clearer.view(session.context, at=0.0)
            cleared = set(clearer.cleared)
            assert cleared
            for t in range(1, 6):
                view = clearer.view(session.context, at=float(t))
                notes = {s for s, m in zip(view.seqs, view.messages, strict=True) if s in cleared}
                assert all(
                    m.content == cleared_note(s)
                    for s, m in zip(view.seqs, view.messages, strict=True)
                    if s in notes
                )

    def test_the_request_carries_the_note(self, log_path: Path) -> None:
        """The Anthropic request built from a cleared view carries the note as the tool result."""
        with Session(log_path) as session:
            tool_turns(session, 4)
            clearer = ToolResultClearer(POLICY, get_tokenizer("o200k_base"))
            view = clearer.view(session.context, at=0.0)
        request = anthropic_request(PromptBuilder(), BUILTIN_MODES["agent"], view)
        results = [
            b for m in request["messages"] for b in m["content"] if b.get("type") == "tool_result"
        ]
        first = min(clearer.cleared)
        assert results[0]["content"][0]["text"] == cleared_note(first)


def _call(call_id: str, name: str = "read") -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def parallel_turn(session: Session, turn: int, width: int, name: str = "read") -> list[int]:
    """One assistant message with `width` parallel calls, then their results; their seqs."""
    calls = [_call(f"t{turn}c{k}", name) for k in range(width)]
    session.add_message({"role": "assistant", "content": None, "tool_calls": calls})
    return [
        session.add_message(
            {"role": "tool", "tool_call_id": call["id"], "content": f"out {turn}.{k} " * 300}
        ).seq
        for k, call in enumerate(calls)
    ]


def expired_view(session: Session, keep_calls: int) -> set[int]:
    """What a clearer clears on a first request (nothing cached): every result it may."""
    clearer = ToolResultClearer(ClearingPolicy(keep_calls=keep_calls), get_tokenizer())
    clearer.view(session.context, at=0.0)
    return clearer.cleared


class TestWhatMayBeCleared:
    @pytest.mark.parametrize("keep", [1, 2, 3, 5])
    def test_keep_calls_counts_turns_not_results(self, log_path: Path, keep: int) -> None:
        """A turn of 6 parallel calls counts once: the latest `keep` turns stay whole."""
        with Session(log_path) as session:
            session.start_turn("Survey")
            turns = [parallel_turn(session, t, width=6 if t % 2 else 1) for t in range(8)]
            session.add_message({"role": "assistant", "content": "Done."})
            cleared = expired_view(session, keep)
        assert cleared == {seq for t in turns[:-keep] for seq in t}

    def test_the_newest_parallel_turn_is_never_cleared(self, log_path: Path) -> None:
        """The 6 results the model has not answered yet stay whole (issue 39: 3 of 6 were)."""
        with Session(log_path) as session:
            session.start_turn("Survey")
            older = [parallel_turn(session, t, width=1) for t in range(4)]
            newest = parallel_turn(session, 4, width=6)
            cleared = expired_view(session, keep_calls=3)
        assert not cleared & set(newest)
        assert cleared == {seq for t in older[:2] for seq in t}

    def test_results_no_answer_follows_are_never_cleared(self, log_path: Path) -> None:
        """Results after the last assistant message (a user spoke, no answer yet) stay whole."""
        with Session(log_path) as session:
            session.start_turn("Survey")
            old = [parallel_turn(session, t, width=1) for t in range(3)]
            session.add_message({"role": "user", "content": "and also this"})
            window = session.context
        assert clearable(window, keep_calls=1) == {old[0][0], old[1][0]}
        assert clearable(window, keep_calls=1).isdisjoint(old[2])

    def test_the_only_board_is_never_cleared(self, log_path: Path) -> None:
        """The newest `task_list` result (the board's only copy) stays; an older one may go."""
        with Session(log_path) as session:
            session.start_turn("Survey")
            first_board = parallel_turn(session, 0, width=1, name="task_list")
            reads = [parallel_turn(session, t, width=1) for t in range(1, 4)]
            only = expired_view(session, keep_calls=1)
            board = parallel_turn(session, 4, width=1, name="task_list")
            more = [parallel_turn(session, t, width=1) for t in range(5, 7)]
            session.add_message({"role": "assistant", "content": "Done."})
            window = session.context
        assert first_board[0] not in only
        assert only == {seq for t in reads[:-1] for seq in t}
        later = clearable(window, keep_calls=1)
        assert first_board[0] in later
        assert board[0] not in later
        assert later == {first_board[0], *(s for t in reads + more[:-1] for s in t)}


def test_clear_tool_uses_edit_validates() -> None:
    """The server-side clear_tool_uses_20250919 edit is what the beta SDK accepts."""
    types = pytest.importorskip("anthropic.types.beta.message_create_params")
    edit = clear_tool_uses_edit(keep=3, trigger_tokens=30_000, clear_at_least=5_000)
    request = anthropic_request(
        PromptBuilder(), BUILTIN_MODES["agent"], model="m", max_tokens=5, clear_tool_uses=edit
    )
    request["messages"] = [{"role": "user", "content": "hi"}]
    assert request["context_management"]["edits"] == [edit]
    assert problems(types.MessageCreateParamsNonStreaming, request) == []
