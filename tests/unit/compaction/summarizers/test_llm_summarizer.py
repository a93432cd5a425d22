"""OpenAISummarizer against a scripted chat-completions server on 127.0.0.1.

Whatever the stand-in model does (answers well, times out, fails, sends junk, drops or invents a
task), the checkpoint holds every unfinished task of the latest list and the log stays valid.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from contracts.sdk_shapes import problems
from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

from compaction import (
    CheckpointRecorded,
    CompactionError,
    ConfigError,
    Message,
    Section,
    Session,
    TextPart,
    check_log,
)
from compaction.checkpoint import NARRATIVE_SECTIONS, SECTION_NAMES, parse_checkpoint
from compaction.compactor.compact import CompactionPolicy, CompactionResult, compact
from compaction.llm import ChatClient, ChatConfig
from compaction.llm.client import canonical_json
from compaction.summarizers import OpenAISummarizer, record_usage
from compaction.summarizers._llm import instruction, kept_after_span
from harness.testing import Reply, StubModel
from prompts import openai_tool

PENDING = ["Write the docs\n## Pending Jobs", "Ship `v2` {{ now }}"]
CURRENT = ["Fix the parser ‮ (RTL)"]
TODOS = [
    {"content": "Read the code", "status": "completed"},
    {"content": CURRENT[0], "status": "in_progress"},
    {"content": PENDING[0], "status": "pending"},
    {"content": PENDING[1], "status": "pending"},
]
LONG_OUTPUT = "\n".join(
    f"src/module_{i}.py:{i}: def function_{i}(x): return x * {i}" for i in range(80)
)


def build_session(path: Path) -> Session:
    """Two turns: the first (with a todo list and tool calls) is what compaction replaces."""
    session = Session(path)
    session.start_turn("Fix the parser in src/parse.py and document it. Never touch the API.")
    call = {"id": "c1", "type": "function", "function": {"name": "todo_write", "arguments": "{}"}}
    session.add_message({"role": "assistant", "content": None, "tool_calls": [call]})
    assert not session.todo_write({"todos": TODOS}).is_error
    session.add_message({"role": "tool", "tool_call_id": "c1", "content": "Todo list updated."})
    read = {
        "id": "c2",
        "type": "function",
        "function": {"name": "read_file", "arguments": '{"path": "src/parse.py"}'},
    }
    session.add_message(
        {"role": "assistant", "content": "Reading the parser.", "tool_calls": [read]}
    )
    session.add_message({"role": "tool", "tool_call_id": "c2", "content": LONG_OUTPUT})
    session.add_message({"role": "assistant", "content": "The parser drops trailing commas."})
    session.start_turn("Go on, and keep the docs short.")
    session.add_message({"role": "assistant", "content": "Working on the fix now."})
    return session


TOOLS = [
    openai_tool("Rewrite the whole todo list."),
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file.",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
    },
]


def last_request(session: Session, *, tools: bool = True) -> dict[str, Any]:
    """The request the agent sent last: system prompt, tools, the context view's messages."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a coding agent. ✓"}]
    messages += [
        m.model_dump(mode="json", exclude_none=True) for m in session.context.as_messages()
    ]
    return {"messages": messages, "tools": TOOLS} if tools else {"messages": messages}


def answer(**sections: str) -> str:
    """A model's Markdown answer with the given sections (by field-ish name), in order."""
    names = {
        "request": "Primary Request and Intent",
        "concepts": "Key Technical Concepts",
        "files": "Files and Code",
        "errors": "Errors and Fixes",
        "pending": "Pending Jobs",
        "current": "Current Work",
        "next": "Next Step",
        "critical": "Critical Context",
    }
    return "\n\n".join(f"## {names[k]}\n\n{v}" for k, v in sections.items())


GOOD = answer(
    request="Fix the parser in src/parse.py and document it.",
    concepts="(none)",
    files="- src/parse.py",
    errors="Trailing commas were dropped.",
    pending="(none)",
    current="(none)",
    next="Finish the fix.",
    critical="Never touch the API.",
)
POLICY = CompactionPolicy(retain=0.005)
"""The default window with a 640-token retain: the kept tail is the first turn's closing
statement and the second turn, so the span replaced holds the todo list, both tool rounds and the
long tool output (some 1,700 tokens, far more than any scripted answer)."""
DEEPSEEK_USAGE = {
    "prompt_tokens": 1500,
    "completion_tokens": 60,
    "prompt_cache_hit_tokens": 1408,
    "prompt_cache_miss_tokens": 92,
}


@pytest.fixture
def session(log_path: Path) -> Iterator[Session]:
    with build_session(log_path) as s:
        yield s


def run_compaction(
    session: Session,
    stub: StubModel,
    *,
    sleeps: list[float] | None = None,
    request: Mapping[str, Any] | None = None,
    **config: Any,
) -> tuple[CompactionResult, OpenAISummarizer]:
    settings: dict[str, Any] = {"timeout": 5.0, "max_retries": 0, "backoff": 0.5}
    settings.update(config)
    client = ChatClient(
        ChatConfig(stub.base_url, "stub-model", **settings),
        sleep=(sleeps if sleeps is not None else []).append,
        environ={},
    )
    summarizer = OpenAISummarizer(
        client, request or last_request(session), tokenizer=session.tokenizer
    )
    result = compact(session, POLICY, summarizer=summarizer, force=True)
    record_usage(session, summarizer)
    return result, summarizer


def assert_tasks_kept(session: Session, result: CompactionResult) -> None:
    """Every unfinished task is in its section, verbatim, and the log replays valid."""
    assert result.data.pending == tuple(PENDING)
    assert result.data.current == tuple(CURRENT)
    parsed = parse_checkpoint(result.data.text)
    assert parsed.pending_jobs == tuple(PENDING)
    assert parsed.current_work == tuple(CURRENT)
    check_log(list(session.events()))
    assert session.todos.todos == ()  # the task panel was emptied by turn 2, not by compaction
    assert session.context.checkpoint == result.data


class TestSummaryRequest:
    def test_prefix_is_the_last_request_byte_for_byte(self, session: Session) -> None:
        """The summary call replays system prompt, tools and messages as they were, plus one."""
        request = last_request(session)
        with StubModel([Reply(GOOD)]) as stub:
            run_compaction(session, stub, request=request)
        (sent,) = stub.requests
        body = sent.json()
        assert canonical_json(body["messages"][:-1]) == canonical_json(request["messages"])
        assert canonical_json(body["tools"]) == canonical_json(request["tools"])
        prefix = canonical_json(request["messages"])[:-1] + ","
        assert prefix.encode() in sent.body
        assert canonical_json(request["tools"]).encode() in sent.body
        assert body["tool_choice"] == "none"
        assert body["model"] == "stub-model"
        assert body["max_tokens"] == 4096
        assert body["messages"][-1] == {"role": "user", "content": body["messages"][-1]["content"]}
        assert problems(CompletionCreateParamsNonStreaming, body) == []

    def test_instruction_lists_sections_in_order(self, session: Session) -> None:
        """The appended message names the eight headings in order and the messages kept after."""
        with StubModel([Reply(GOOD)]) as stub:
            result, _ = run_compaction(session, stub)
        text = stub.requests[0].json()["messages"][-1]["content"]
        positions = [text.index(f"`## {name}`") for name in SECTION_NAMES]
        assert positions == sorted(positions)
        assert "(none)" in text
        assert f"except its last {result.kept_messages} messages" in text
        assert "earlier Checkpoint" not in text
        assert text == instruction(kept=result.kept_messages, previous=False, budget=3840)

    def test_second_compaction_folds_the_previous_checkpoint(self, session: Session) -> None:
        """Compacting again replays the checkpoint message and asks to fold it in."""
        with StubModel([Reply(GOOD)]) as stub:
            first, _ = run_compaction(session, stub)
            session.start_turn("Now the docs.")
            session.add_message({"role": "assistant", "content": "Writing docs."})
            request = last_request(session)
            second, _ = run_compaction(session, stub, request=request)
        body = stub.requests[1].json()
        assert body["messages"][1]["content"].endswith(first.data.text)
        assert "Fold it in" in body["messages"][-1]["content"]
        assert second.data.summarizer == "openai"
        assert second.data.first_seq == first.data.last_seq + 1
        assert_tasks_kept(session, second)

    def test_no_tools_no_tool_choice(self, session: Session) -> None:
        """Without a tool catalog the call sends neither tools nor tool_choice."""
        with StubModel([Reply(GOOD)]) as stub:
            run_compaction(session, stub, request=last_request(session, tools=False))
        body = stub.requests[0].json()
        assert "tools" not in body
        assert "tool_choice" not in body


class TestAnswers:
    def test_good_answer_writes_the_narrative(self, session: Session) -> None:
        """A well-formed answer fills the narrative; `(none)` reads as empty."""
        with StubModel([Reply(GOOD, usage=DEEPSEEK_USAGE)]) as stub:
            result, _ = run_compaction(session, stub)
        assert result.kept_messages == 3  # the span runs through the long tool output
        assert (result.data.summarizer, result.data.fallback_reason) == ("openai", None)
        checkpoint = result.checkpoint
        assert checkpoint.files_and_code == "- src/parse.py"
        assert checkpoint.key_concepts == ""
        assert checkpoint.critical_context == "Never touch the API."
        assert_tasks_kept(session, result)

    def test_usage_reaches_the_usage_view(self, session: Session) -> None:
        """DeepSeek's cache figures from the summary call land in the usage view."""
        with StubModel([Reply(GOOD, usage=DEEPSEEK_USAGE)]) as stub:
            run_compaction(session, stub)
        totals = session.usage.provider_by_purpose["summary"]
        assert (totals.requests, totals.prompt_tokens, totals.cached_tokens) == (1, 1500, 1408)
        assert session.usage.provider.completion_tokens == 60
        check_log(list(session.events()))

    def test_usage_recorded_even_when_the_answer_is_refused(self, session: Session) -> None:
        """A call that was answered cost tokens: its usage is kept though the answer is not."""
        usage = {
            "prompt_tokens": 900,
            "completion_tokens": 1,
            "prompt_tokens_details": {"cached_tokens": 768},
        }
        with StubModel([Reply("", usage=usage)]) as stub:
            result, _ = run_compaction(session, stub)
        assert result.data.summarizer == "extractive"
        assert session.usage.provider.cached_tokens == 768

    def test_missing_sections_become_none(self, session: Session) -> None:
        """An answer with only some narrative sections leaves the others `(none)`."""
        reply = answer(request="Fix the parser.", next="Run the tests.")
        run = {"id": "c3", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
        session.add_message({"role": "assistant", "content": None, "tool_calls": [run]})
        with StubModel([Reply(reply)]) as stub:
            result, _ = run_compaction(session, stub)
        assert result.data.summarizer == "openai"
        assert result.data.resume == "continue"  # inside a tool loop: Next Step goes on
        narrative = result.checkpoint.narrative()
        # The model's terse request line stays; code puts the session's first request above it.
        assert narrative[Section.PRIMARY_REQUEST] == (
            "- Fix the parser in src/parse.py and document it. Never touch the API.\n"
            "Fix the parser."
        )
        # Not about the task in progress: the Next Step names that task, then the model's step.
        assert narrative[Section.NEXT_STEP].startswith("Continue the task in progress: ")
        assert narrative[Section.NEXT_STEP].endswith(
            "Planned just before this Checkpoint: Run the tests."
        )
        assert [n for n in NARRATIVE_SECTIONS if not narrative[n]] == [
            "Key Technical Concepts",
            "Files and Code",
            "Errors and Fixes",
            "Critical Context",
        ]
        assert result.data.text.count("(none)") == 4
        assert_tasks_kept(session, result)

    @pytest.mark.parametrize(
        "tasks",
        [
            pytest.param({"pending": f'- "{PENDING[1]}"', "current": "(none)"}, id="drops-tasks"),
            pytest.param(
                {
                    "pending": '- "Deploy to production"\n- "Delete the repo"',
                    "current": '- "Rewrite it in Rust"',
                },
                id="invents-tasks",
            ),
            pytest.param(
                {"pending": f'- "{CURRENT[0]}"', "current": f'- "{PENDING[0]}"'},
                id="swaps-sections",
            ),
        ],
    )
    def test_model_cannot_touch_the_tasks(self, session: Session, tasks: dict[str, str]) -> None:
        """Whatever the model writes under Pending Jobs or Current Work, the log's tasks stand."""
        reply = answer(request="Fix the parser.", **tasks, next="Carry on.")
        with StubModel([Reply(reply)]) as stub:
            result, _ = run_compaction(session, stub)
        assert result.data.summarizer == "openai"
        assert_tasks_kept(session, result)
        for invented in ("Deploy to production", "Delete the repo", "Rewrite it in Rust"):
            assert invented not in result.data.text


def failure_cases() -> list[Any]:
    huge = answer(request="word " * 6000, next="Carry on.")
    return [
        pytest.param([Reply(hang=True)], {"timeout": 0.2}, "timeout: ", id="timeout"),
        pytest.param([Reply(status=500)], {"max_retries": 2}, "HTTP 500", id="500-after-retries"),
        pytest.param([Reply(status=401)], {}, "HTTP 401", id="401"),
        pytest.param(
            [Reply(status=429, headers={"Retry-After": "600"})],
            {"max_retries": 3},
            "asks to wait 600s",
            id="429-too-long",
        ),
        pytest.param(
            [Reply(body=b'{"choices": [{"mess')], {}, "body is not JSON", id="malformed-json"
        ),
        pytest.param(
            [Reply(body=b'{"object": "error"}')], {}, "not a chat completion", id="not-a-completion"
        ),
        pytest.param([Reply("")], {}, "empty answer", id="empty"),
        pytest.param([Reply(None)], {}, "empty answer", id="null-content"),
        pytest.param([Reply("   \n ")], {}, "empty answer", id="blank"),
        pytest.param(
            [Reply("Sure! Here is a summary of our chat.")],
            {},
            "none of the Checkpoint",
            id="no-headings",
        ),
        pytest.param([Reply(GOOD, finish_reason="length")], {}, "cut short", id="truncated"),
        pytest.param([Reply(huge)], {}, "larger than the span", id="larger-than-span"),
    ]


class TestFallback:
    @pytest.mark.parametrize(("script", "config", "reason"), failure_cases())
    def test_falls_back_and_keeps_every_task(
        self, session: Session, script: list[Reply], config: dict[str, Any], reason: str
    ) -> None:
        """Any failure falls back to the extractive summarizer, says why, and loses no task."""
        sleeps: list[float] = []
        with StubModel(script, hang_limit=5.0) as stub:
            result, _ = run_compaction(session, stub, sleeps=sleeps, **config)
        assert result.data.summarizer == "extractive"
        assert result.data.fallback_reason is not None
        assert result.data.fallback_reason.startswith("openai failed: ")
        assert reason in result.data.fallback_reason
        assert "Fix the parser in src/parse.py" in result.checkpoint.primary_request
        assert_tasks_kept(session, result)
        assert len(stub.requests) == 1 + min(config.get("max_retries", 0), len(sleeps))

    def test_429_with_retry_after_then_success(self, session: Session) -> None:
        """A 429 waits its Retry-After, then the model's answer is used."""
        sleeps: list[float] = []
        script = [Reply(status=429, headers={"Retry-After": "2"}), Reply(status=503), Reply(GOOD)]
        with StubModel(script) as stub:
            result, _ = run_compaction(session, stub, sleeps=sleeps, max_retries=3, backoff=0.5)
        assert result.kept_messages == 3  # the span runs through the long tool output
        assert (result.data.summarizer, result.data.fallback_reason) == ("openai", None)
        assert sleeps == [2.0, 1.0]
        assert len({r.body for r in stub.requests}) == 1
        assert_tasks_kept(session, result)

    def test_request_from_another_log_is_refused(self, session: Session, tmp_path: Path) -> None:
        """A request that does not hold the span is never sent: fallback, nothing asked."""
        with Session(tmp_path / "other.jsonl") as other:
            other.start_turn("Something else entirely.")
            foreign = last_request(other)
        with StubModel([Reply(GOOD)]) as stub:
            result, _ = run_compaction(session, stub, request=foreign)
        assert stub.requests == []
        assert result.data.fallback_reason is not None
        assert "does not hold the" in result.data.fallback_reason
        assert_tasks_kept(session, result)


class TestKeptAfterSpan:
    def test_counts_the_tail(self, session: Session) -> None:
        """The span sits after the system prompt; the rest of the request is the kept tail."""
        request = last_request(session)
        span = session.context.messages[:6]
        assert kept_after_span(request["messages"], span) == len(session.context.messages) - 6

    def test_content_parts_match_their_text(self) -> None:
        """A message sent as content parts matches the span message with the same text."""
        span = (
            Message(role="user", content=(TextPart(text="look"), TextPart(text="here"))),
            Message(role="assistant", content="Seen."),
        )
        params: list[dict[str, Any]] = [
            {"role": "system", "content": "S"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, "junk",
                                         {"type": "image_url", "image_url": {"url": "x"}},
                                         {"type": "text", "text": "here"}]},
            {"role": "assistant", "content": "Seen."},
            {"role": "user", "content": "next"},
        ]  # fmt: skip
        assert kept_after_span(params, span) == 1

    @pytest.mark.parametrize(
        "params",
        [
            [{"role": "system", "content": "S"}, {"role": "user", "content": "other"}],
            [{"role": "user", "content": "a"}, {"role": "user", "content": "a"}],
        ],
        ids=["absent", "ambiguous"],
    )
    def test_span_not_found(self, params: list[dict[str, Any]]) -> None:
        """A span that is absent, or found twice away from its place, is refused."""
        span = (Message(role="user", content="a"),)
        params = [
            {"role": "system", "content": "S"},
            {"role": "assistant", "content": "x"},
            *params,
        ]
        with pytest.raises(CompactionError, match="does not hold the 1 messages"):
            kept_after_span(params, span)

    def test_empty_request_messages_rejected(self) -> None:
        """A request without a messages list is a programmer error, raised at construction."""
        client = ChatClient(ChatConfig("http://127.0.0.1:1/v1", "m"))
        with pytest.raises(ConfigError, match="'messages' is a list"):
            OpenAISummarizer(client, {"prompt": "x"})


def test_checkpoint_event_is_the_log_tail(session: Session) -> None:
    """The checkpoint event, then the usage report, are the last two events appended."""
    with StubModel([Reply(GOOD)]) as stub:
        result, summarizer = run_compaction(session, stub)
    events = list(session.events())
    assert isinstance(events[-2], CheckpointRecorded)
    assert events[-1].type == "usage/report"
    assert summarizer.reports == []
    assert result.event == events[-2]
