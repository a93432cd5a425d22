"""Every numeric limit behind a published figure or a guarantee, tested exactly at its boundary.

A limit pinned by an example far from it pins nothing (a 200-token example gives 192 for units of
64, 32 and 16 alike); each test here puts the input on the limit, and one token either side.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compaction import CompactionPolicy, Session, call_tool, render_checkpoint
from compaction.checkpoint import Checkpoint, encode_item, escape_narrative
from compaction.cuts import select_cut
from compaction.llm import ChatClient, ChatConfig
from compaction.llm.client import ChatAnswer
from compaction.summarizers import OpenAISummarizer
from harness.simulation import PROVIDER_MODELS, AnthropicCache, DeepSeekCache, OpenAICache
from harness.simulation._cache_models import VLLMCache, replay_hits


def shared(prefix: int, total: int | None = None) -> list[list[int]]:
    """Two requests sharing exactly `prefix` leading tokens (then diverging)."""
    total = total or prefix + 50
    first = list(range(total))
    second = [*range(prefix), *range(10**6, 10**6 + total - prefix)]
    return [first, second]


class TestPublishedDefaults:
    def test_the_four_models_and_their_parameters(self) -> None:
        """The report's models use the documented defaults, in report order."""
        assert [m.name for m in PROVIDER_MODELS] == ["deepseek", "openai", "anthropic", "vllm"]
        deepseek, openai, anthropic, vllm = PROVIDER_MODELS
        assert isinstance(deepseek, DeepSeekCache)
        assert deepseek.unit == 64
        assert isinstance(openai, OpenAICache)
        assert (openai.minimum, openai.step) == (1024, 128)
        assert isinstance(anthropic, AnthropicCache)
        assert (anthropic.min_tokens, anthropic.max_breakpoints) == (1024, 4)
        assert isinstance(vllm, VLLMCache)
        assert vllm.block_size == 16


class TestDeepSeekUnit:
    @pytest.mark.parametrize(
        ("prefix", "hit"),
        [(15, 0), (16, 0), (32, 0), (48, 0), (63, 0), (64, 64), (65, 64), (127, 64), (128, 128)],
    )
    def test_default_unit_is_exactly_64(self, prefix: int, hit: int) -> None:
        """Hits come in whole 64-token units: 48 shared tokens give 0 (16 or 32 would not)."""
        assert replay_hits(DeepSeekCache(), shared(prefix)) == [0, hit]


class TestOpenAIMinimumAndStep:
    @pytest.mark.parametrize(
        ("prefix", "hit"),
        [(1023, 0), (1024, 1024), (1025, 1024), (1151, 1024), (1152, 1152), (1279, 1152)],
    )
    def test_minimum_1024_then_steps_of_128(self, prefix: int, hit: int) -> None:
        """Nothing below 1,024 shared tokens; exactly 1,024 hits; then 128-token steps."""
        assert replay_hits(OpenAICache(), shared(prefix)) == [0, hit]


class TestAnthropicMinimum:
    @pytest.mark.parametrize(("mark", "hit"), [(1023, 0), (1024, 1024), (1025, 1025)])
    def test_breakpoint_caches_from_1024_tokens(self, mark: int, hit: int) -> None:
        """A breakpoint 1,023 tokens in writes nothing; at 1,024 and beyond it is read back."""
        first = list(range(mark))
        hits = replay_hits(AnthropicCache(), [first, [*first, 7, 8]], [[mark], [mark + 2]])
        assert hits == [0, hit]

    def test_four_breakpoints_allowed_five_refused(self) -> None:
        """Exactly four breakpoints pass; a fifth raises."""
        sim = AnthropicCache().simulator()
        assert sim.serve(list(range(100)), [10, 20, 30, 40]) == 0
        with pytest.raises(ValueError, match="Anthropic allows 4"):
            sim.serve(list(range(100)), [10, 20, 30, 40, 50])


class TestVLLMBlock:
    @pytest.mark.parametrize(("prefix", "hit"), [(15, 0), (16, 16), (31, 16), (32, 32)])
    def test_full_16_token_blocks(self, prefix: int, hit: int) -> None:
        """Only full 16-token blocks of the shared prefix hit."""
        assert replay_hits(VLLMCache(), shared(prefix)) == [0, hit]

    @pytest.mark.parametrize(("length", "hit"), [(16, 0), (17, 16), (32, 16), (33, 32)])
    def test_identical_request_recomputes_its_last_token(self, length: int, hit: int) -> None:
        """Repeating a request of exactly one block hits nothing: the last token is recomputed."""
        request = list(range(length))
        assert replay_hits(VLLMCache(), [request, request]) == [0, hit]


class TestCompactionLimits:
    @pytest.mark.parametrize(("tokens", "due"), [(7_999, False), (8_000, True), (8_001, True)])
    def test_trigger_at_exactly_the_threshold(self, tokens: int, due: bool) -> None:
        """Compaction is due from exactly threshold x window tokens."""
        policy = CompactionPolicy(window_tokens=10_000, threshold=0.8, output_reserve=0)
        assert policy.trigger_tokens == 8_000
        assert policy.should_compact(tokens) is due

    @pytest.mark.parametrize(
        ("fixed", "context", "due"),
        [(0, 6_999, False), (0, 7_000, True), (500, 6_499, False), (500, 6_500, True)],
    )
    def test_output_reserve_lowers_the_trigger(self, fixed: int, context: int, due: bool) -> None:
        """The whole request counts: due once fixed + context + reserve reaches threshold x window.

        0.9 x 10,000 = 9,000 tokens of request, 2,000 of them reserved for the answer: the
        fixed part and the context together may reach 7,000 (not min(9,000, 10,000 - 2,000)).
        """
        policy = CompactionPolicy(window_tokens=10_000, threshold=0.9, output_reserve=2_000)
        assert policy.trigger_tokens == 9_000 - 2_000
        assert (fixed + context + policy.output_reserve >= 9_000) is due
        assert policy.should_compact(context, fixed_tokens=fixed) is due

    @pytest.mark.parametrize(
        ("retain", "cut"),
        [(0, 4), (19, 4), (20, 3), (21, 3), (29, 3), (30, 2), (31, 2), (39, 2), (40, 1), (41, 1)],
    )
    def test_kept_tail_fits_exactly_the_retain_budget(self, retain: int, cut: int) -> None:
        """A tail of exactly `retain_tokens` is kept; one token less and the cut moves later.

        Without tool calls every position may be cut (before a user message, before an assistant
        message, after the last one), so the kept tail is the longest suffix within the budget:
        20 tokens from cut 3, 30 from cut 2, 40 from cut 1; nothing fits, only the empty tail at
        cut 4. (The compactor passes `select_cut` the smaller of retain and the room left beside
        the Checkpoint; here the budget is given directly.)
        """
        from compaction import Message

        messages = [
            Message(role="user", content="a"),
            Message(role="assistant", content="b"),
            Message(role="user", content="c"),
            Message(role="assistant", content="d"),
        ]
        tokens = [10, 10, 10, 20]
        longest = min(k for k in range(1, len(tokens) + 1) if sum(tokens[k:]) <= retain)
        assert longest == cut
        assert select_cut(messages, tokens, retain) == cut


class TestTodoWriteLimits:
    def test_parallel_in_progress_is_off_by_default(self, log_path: Path) -> None:
        """The public todo_write, Session.todo_write and the agent mode reject two in progress."""
        two = json.dumps(
            {
                "todos": [
                    {"content": "a", "status": "in_progress"},
                    {"content": "b", "status": "in_progress"},
                ]
            }
        )
        with Session(log_path) as session:
            for result in (
                call_tool(session, "todo_write", two),
                session.todo_write(two),
                session.todo_write(two, mode="agent"),
            ):
                assert result.is_error
                assert "in_progress" in result.content
            assert session.latest_todos == ()
            assert not session.todo_write(two, allow_parallel_in_progress=True).is_error
            assert len(session.latest_todos) == 2

    @pytest.mark.parametrize(("problems", "listed"), [(20, 20), (21, 20)])
    def test_at_most_20_problems_listed(self, log_path: Path, problems: int, listed: int) -> None:
        """Up to 20 violations are listed one by one; beyond, the rest is counted."""
        todos = [{"content": f"t{i}", "status": "done"} for i in range(problems)]
        with Session(log_path) as session:
            result = session.todo_write(json.dumps({"todos": todos}))
        lines = [line for line in result.content.splitlines() if line.startswith("- todos[")]
        assert len(lines) == listed
        assert ("more problems" in result.content) is (problems > listed)

    @pytest.mark.parametrize(("length", "cut"), [(80, False), (81, True)])
    def test_quoted_values_cut_after_80_characters(
        self, log_path: Path, length: int, cut: bool
    ) -> None:
        """A bad value of 80 characters is quoted whole; 81 are cut with an ellipsis."""
        status = "x" * length
        args = json.dumps({"todos": [{"content": "a", "status": status}]})
        with Session(log_path) as session:
            result = session.todo_write(args)
        assert result.is_error
        assert (json.dumps(status) in result.content) is not cut
        assert ("x" * 77 + "..." in result.content) is cut


class TestLoneSurrogates:
    def test_todo_write_rejects_a_lone_surrogate(self, log_path: Path) -> None:
        """Content holding a lone surrogate is a model error, shown escaped; nothing is written."""
        args = '{"todos": [{"content": "half \\ud83d emoji", "status": "pending"}]}'
        with Session(log_path) as session:
            result = session.todo_write(args)
            assert result.is_error
            assert "todos[0].content must be valid Unicode text" in result.content
            result.content.encode("utf-8")  # printable
            assert session.applied_seq == 0
        assert not log_path.exists() or log_path.read_bytes() == b""

    def test_bad_key_with_a_lone_surrogate_prints(self, log_path: Path) -> None:
        """An unknown field whose name holds a lone surrogate is refused in printable text."""
        args = '{"todos": [{"content": "a", "status": "pending", "\\udc00x": 1}]}'
        with Session(log_path) as session:
            result = session.todo_write(args)
        assert result.is_error
        result.content.encode("utf-8")
        assert "todos[0] must be valid Unicode text" in result.content

    def test_checkpoint_escapes_a_recorded_lone_surrogate(self) -> None:
        r"""A recorded item with a lone surrogate renders as a \uXXXX escape, printable."""
        line = encode_item("cut \ud83d here")
        assert line == '- "cut \\ud83d here"'
        line.encode("utf-8")


class TestCheckpointEscapes:
    @pytest.mark.parametrize(
        ("char", "escape"),
        [
            ("\u200b", "\\u200b"),  # zero-width space
            ("\u200f", "\\u200f"),  # right-to-left mark, the top of the 200b-200f range
            ("\u2028", "\\u2028"),  # line separator
            ("\u2029", "\\u2029"),  # paragraph separator
            ("\u202e", "\\u202e"),  # right-to-left override, the top of 2028-202e
            ("\u2060", "\\u2060"),  # word joiner
            ("\ufeff", "\\ufeff"),  # BOM
        ],
    )
    def test_invisible_characters_are_escaped(self, char: str, escape: str) -> None:
        """Each invisible or line-breaking character, at the ends of its range, is escaped."""
        assert encode_item(f"a{char}b") == f'- "a{escape}b"'

    @pytest.mark.parametrize("char", ["\u200a", "\u2010", "\u2027", "\u202f", "\ufefe"])
    def test_neighbours_of_the_ranges_stay_as_they_are(self, char: str) -> None:
        """Visible characters just outside the escaped ranges are written as they are."""
        assert encode_item(f"a{char}b") == f'- "a{char}b"'

    @pytest.mark.parametrize(
        ("line", "escaped"),
        [
            ("===", "\\==="),
            ("=", "\\="),
            ("===   ", "\\===   "),
            ("  ---", "  \\---"),
            ("== =", "== ="),  # not a setext underline: stays as is
            ("=== x", "=== x"),
            ("(none)", "\\(none)"),
            ("(none) ", "(none) "),
        ],
    )
    def test_setext_and_none_lines(self, line: str, escaped: str) -> None:
        """Setext underlines and an exact (none) are escaped; near misses are not."""
        assert escape_narrative(line) == escaped

    def test_setext_underline_cannot_make_a_heading(self) -> None:
        """A narrative line of === under text never turns into a section heading."""
        text = render_checkpoint(Checkpoint(next_step="Pending Jobs\n===", key_concepts="x\n---"))
        assert "\n===" not in text
        assert "\n---" not in text


class TestLLMAnswerSize:
    def summarizer(self) -> OpenAISummarizer:
        class CharTokenizer:
            name = "chars"

            def encode(self, text: str) -> list[int]:
                return [ord(c) for c in text]

            def count(self, text: str) -> int:
                return len(text)

        client = ChatClient(ChatConfig(base_url="http://127.0.0.1:9/v1", model="m"))
        return OpenAISummarizer(client, {"messages": []}, tokenizer=CharTokenizer())

    @pytest.mark.parametrize(("size", "accepted"), [(99, True), (100, True), (101, False)])
    def test_answer_up_to_the_span_size(self, size: int, accepted: bool) -> None:
        """An answer as large as the span it replaces is accepted; one token more is refused."""
        from compaction import CompactionError

        answer = ChatAnswer(
            content="## Next Step\n\n" + "x" * size, finish_reason="stop", usage=None
        )
        summarizer = self.summarizer()
        if accepted:
            assert summarizer.read_answer(answer, 100)["Next Step"] == "x" * size
        else:
            with pytest.raises(CompactionError, match="larger than the span"):
                summarizer.read_answer(answer, 100)
