"""Oversized tool outputs: whole in the log, head and tail in the context, decided on append."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from strategies import clip_texts

from compaction import (
    CompactionPolicy,
    ConfigError,
    FunctionCall,
    LogError,
    LogFormatError,
    Message,
    MessageAdded,
    Session,
    ToolCall,
    compact,
    get_tokenizer,
    read_events,
)
from compaction.events import ClipData
from compaction.tokens import TiktokenTokenizer, count_message
from compaction.views.clipping import clip_tool_output, fits_unread, shown_message

TOK = get_tokenizer()


class CountingTokenizer(TiktokenTokenizer):
    """The default tokenizer, recording each text it is asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return super().count(text)


class PlainTokenizer:
    """A tokenizer of no known kind: one token per character, plus one (never byte-bounded)."""

    name = "plain"

    def encode(self, text: str) -> list[int]:
        return [0, *map(ord, text)]

    def count(self, text: str) -> int:
        return len(text) + 1


def call(call_id: str = "c1") -> Message:
    fn = FunctionCall(name="bash", arguments='{"cmd": "cat big.log"}')
    return Message(role="assistant", tool_calls=(ToolCall(id=call_id, function=fn),))


def result(text: str, call_id: str = "c1") -> Message:
    return Message(role="tool", tool_call_id=call_id, content=text)


BIG = "START of the log\n" + "".join(f"line {i}: value={i * 7}\n" for i in range(3000)) + "END ok\n"


class TestClip:
    def test_at_the_cap_untouched_one_over_clipped(self) -> None:
        """A result of exactly cap tokens enters whole; one token more is clipped."""
        text = "word " * 300
        n = TOK.count(text)
        assert clip_tool_output(result(text), TOK, n).clip is None
        assert clip_tool_output(result(text), TOK, n - 1).clip is not None

    def test_head_and_tail_within_the_cap(self) -> None:
        """The model sees the start and the end, the note between, within the cap."""
        clipped = clip_tool_output(result(BIG), TOK, 500)
        assert clipped.clip is not None
        assert clipped.content == BIG  # the message recorded keeps the whole text
        shown = shown_message(clipped, 57)
        text = shown.text()
        assert text.startswith("START of the log\n")
        assert text.endswith("END ok\n")
        assert TOK.count(text) <= 500
        assert text[: clipped.clip.head_chars] == BIG[: clipped.clip.head_chars]
        assert (
            text[len(text) - clipped.clip.tail_chars :] == BIG[len(BIG) - clipped.clip.tail_chars :]
        )

    def test_note_says_how_much_and_how_to_get_it(self) -> None:
        """One line: tokens and characters left out, the seq, the command that prints it."""
        clipped = clip_tool_output(result(BIG), TOK, 400)
        assert clipped.clip is not None
        notes = [
            ln for ln in shown_message(clipped, 57).text().split("\n") if ln.startswith("[...")
        ]
        assert len(notes) == 1
        left = len(BIG) - clipped.clip.head_chars - clipped.clip.tail_chars
        assert f"{clipped.clip.omitted_tokens} tokens ({left} characters)" in notes[0]
        assert "event 57: `harness log LOG --seq 57` prints it" in notes[0]
        assert clipped.clip.omitted_tokens > TOK.count(BIG) - 400

    @pytest.mark.parametrize(
        "message",
        [
            Message(role="user", content=BIG),
            Message(role="assistant", content=BIG),
            Message(role="system", content=BIG),
        ],
    )
    def test_only_tool_results(self, message: Message) -> None:
        """Only tool results are clipped."""
        assert clip_tool_output(message, TOK, 100) is message

    @pytest.mark.parametrize(
        ("clip", "match"),
        [
            (ClipData(head_chars=5, tail_chars=5, omitted_tokens=1), "more characters"),
            (ClipData(head_chars=1, tail_chars=0, omitted_tokens=1), "only tool messages"),
        ],
    )
    def test_hostile_clip_rejected(self, clip: ClipData, match: str) -> None:
        """A clip that shows more than the text, or sits on a non-tool message, is refused."""
        role = "tool" if "more" in match else "user"
        extra = {"tool_call_id": "c1"} if role == "tool" else {}
        with pytest.raises(ValidationError, match=match):
            Message(role=role, content="short", clip=clip, **extra)


class TestCountedOnce:
    @pytest.mark.parametrize(
        ("text", "cap"),
        [
            ("x" * 100, 100),  # exactly cap bytes
            ("é" * 50, 100),  # 2 bytes a character: exactly cap bytes
            ("x" * 25, 100),  # a quarter of the cap in characters: not even encoded
            ("", 0),
        ],
    )
    def test_at_most_cap_bytes_is_not_tokenized(self, text: str, cap: int) -> None:
        """A result of at most cap UTF-8 bytes is under the cap: it enters whole, uncounted."""
        tok = CountingTokenizer()
        assert clip_tool_output(result(text), tok, cap).clip is None
        assert tok.counted == []

    @pytest.mark.parametrize(("text", "cap"), [("x" * 101, 100), ("é" * 51, 101)])
    def test_one_byte_over_is_counted(self, text: str, cap: int) -> None:
        """One byte over the cap, the text is counted (once) to decide."""
        tok = CountingTokenizer()
        assert clip_tool_output(result(text), tok, cap).clip is None  # few tokens: fits
        assert tok.counted == [text]

    def test_an_unknown_tokenizer_is_always_asked(self) -> None:
        """A tokenizer that may give more tokens than bytes is counted, and its count decides."""
        assert not fits_unread("x" * 10, PlainTokenizer(), 1000)
        assert clip_tool_output(result("x" * 10), PlainTokenizer(), 10).clip is not None
        assert clip_tool_output(result("x" * 10), PlainTokenizer(), 11).clip is None

    @given(clip_texts, st.integers(0, 30_000))
    @settings(max_examples=40, deadline=None)
    def test_what_fits_unread_fits(self, text: str, cap: int) -> None:
        """Whatever the shortcut lets through takes at most cap tokens, counted the slow way."""
        if fits_unread(text, TOK, cap):
            assert len(TOK.encode(text)) <= cap
        assert fits_unread(text, TOK, cap) == (len(text.encode("utf-8", "surrogatepass")) <= cap)


class TestSession:
    def test_log_whole_view_clipped(self, log_path: Path) -> None:
        """The log keeps the result whole; the context view and token count see it clipped."""
        with Session(log_path, tool_output_cap=300) as s:
            s.start_turn("read the log")
            s.add_message(call())
            event = s.add_message(result(BIG))
            assert isinstance(event, MessageAdded)
            assert event.data.content == BIG
            shown = s.context.messages[-1]
            assert shown.clip is None
            assert "harness log LOG --seq 4" in shown.text()
            assert s.context_tokens < 400
            assert s.event(4).data == event.data
        on_disk = [e for e in read_events(log_path) if e.seq == 4]
        assert on_disk[0].data.content == BIG  # type: ignore[union-attr]

    def test_decided_when_appended(self, log_path: Path) -> None:
        """Reopening with another cap (or none) shows the same bytes: the decision is recorded."""
        with Session(log_path, tool_output_cap=300) as s:
            s.start_turn("read")
            s.add_message(call())
            s.add_message(result(BIG))
            s.add_message(call("c2"))
            s.add_message(result("small", "c2"))
            before = s.context
        for cap in (None, 50, 100_000):
            with Session(log_path, tool_output_cap=cap) as again:
                assert again.context == before

    def test_no_cap_keeps_everything(self, log_path: Path) -> None:
        """tool_output_cap=None appends results unclipped."""
        with Session(log_path, tool_output_cap=None) as s:
            s.add_message(call())
            s.add_message(result(BIG))
            assert s.context.messages[-1].content == BIG

    def test_default_cap_is_a_tenth_of_the_default_window(self, log_path: Path) -> None:
        """The default cap is CompactionPolicy().tool_output_tokens (12,800 tokens)."""
        assert Session(log_path).tool_output_cap == CompactionPolicy().tool_output_tokens == 12_800

    def test_bad_cap(self, log_path: Path) -> None:
        """A cap below one token is a ConfigError."""
        with pytest.raises(ConfigError, match="tool_output_cap must be a positive integer"):
            Session(log_path, tool_output_cap=0)

    def test_event_out_of_range(self, log_path: Path) -> None:
        """Session.event of an unknown seq names the range."""
        with Session(log_path) as s:
            s.start_turn("x")
            with pytest.raises(LogError, match=r"no event with seq 9 \(the log holds 1..2\)"):
                s.event(9)

    def test_hostile_clip_in_a_log_line(self, log_path: Path) -> None:
        """A log line whose clip shows more than its text is a format error naming the line."""
        log_path.write_text(
            '{"v":1,"seq":1,"type":"message","data":{"role":"tool","tool_call_id":"c",'
            '"content":"abc","clip":{"head_chars":9,"tail_chars":0,"omitted_tokens":0}}}\n'
        )
        with pytest.raises(LogFormatError, match=":1: invalid event"):
            Session(log_path)


class TestCompactionFits:
    def test_huge_output_then_compaction_fits_the_window(self, log_path: Path) -> None:
        """A result several times the window: clipped on append, the request fits after."""
        policy = CompactionPolicy(window_tokens=8_192)
        fixed = 2_500
        with Session(log_path, tool_output_cap=policy.tool_output_tokens) as s:
            s.start_turn("read the logs")
            for n in range(12):
                s.add_message(call(f"c{n}"))
                s.add_message(result(BIG, f"c{n}"))
            assert s.usage.total_tokens > 8_000
            r = compact(s, policy, fixed_tokens=fixed)
            assert fixed + s.context_tokens + policy.output_reserve <= policy.window_tokens
            assert r.kept_messages >= 2  # the latest round stays, clipped
            assert "harness log LOG --seq" in s.context.messages[-1].text()


class TestTokenizedOnce:
    """A tool result the clip check tokenizes is not tokenized again by the usage view."""

    def test_usage_view_reuses_the_check(self, log_path: Path) -> None:
        """A result over the cap in bytes but not in tokens is counted whole once, not twice."""
        lines = "".join(f"line {i}: some output\n" for i in range(2_000))
        tok = CountingTokenizer()
        with Session(log_path, tokenizer=tok, tool_output_cap=len(lines) // 2) as s:
            s.append(result(lines))
            tokens = s.context_tokens
        assert sum(map(len, tok.counted)) < len(lines) * 1.05
        with Session(log_path, tokenizer=TiktokenTokenizer()) as again:
            assert again.context_tokens == tokens  # a fresh count of the whole message

    def test_clipped_result_counts_as_shown(self, log_path: Path) -> None:
        """A clipped result costs what the model sees, as a fresh count of the shown message."""
        lines = "".join(f"row {i}: value {i * 7}\n" for i in range(3_000))
        with Session(log_path, tool_output_cap=500) as s:
            event = s.append(result(lines))
            assert isinstance(event, MessageAdded)
            assert event.data.clip is not None
            fresh = count_message(TiktokenTokenizer(), shown_message(event.data, event.seq))
            assert s.event_tokens(event.seq) == fresh
