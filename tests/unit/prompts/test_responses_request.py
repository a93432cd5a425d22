"""The OpenAI Responses request: SDK types, the stable-prefix layout, server-side compaction."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from contracts.sdk_shapes import problems

from compaction import (
    CheckpointData,
    CompactionPolicy,
    FunctionCall,
    ImagePart,
    Message,
    Session,
    TextPart,
    ToolCall,
)
from compaction.events import ImageURL
from prompts import (
    BUILTIN_MODES,
    Environment,
    PromptBuilder,
    ToolCatalog,
    anthropic_request,
    dumps,
    load_tools,
    record_server_compaction,
    responses_input,
    responses_request,
)

AGENT, PLAN = BUILTIN_MODES["agent"], BUILTIN_MODES["plan"]
EXAMPLE_TOOLS = Path(__file__).resolve().parents[3] / "prompts" / "examples" / "coding_tools.json"
BUILDER = PromptBuilder(
    ToolCatalog(load_tools(EXAMPLE_TOOLS)),
    environment=Environment(date="2026-11-30", cwd="/repo"),
)


def _call(call_id: str, name: str, arguments: str) -> ToolCall:
    return ToolCall(id=call_id, function=FunctionCall(name=name, arguments=arguments))


def conversation(session: Session) -> None:
    """A turn with a checkpoint, a system note, an image, parallel tool calls and results."""
    session.start_turn("Fix the failing test", mode="agent")
    session.add_message({"role": "assistant", "content": "Old work, to be compacted."})
    session.append(
        CheckpointData(
            text="## Goal\nFix the failing test",
            first_seq=1,
            last_seq=3,
            tokens_before=100,
            tokens_after=20,
            summarizer="template",
        )
    )
    session.add_message(Message(role="system", content="Note from the operator."))
    image = ImagePart(image_url=ImageURL(url="data:image/png;base64,iVBORw0KGgo="))
    session.add_message(
        Message(role="user", content=(TextPart(text="Here is the screenshot"), image))
    )
    session.add_message(
        Message(
            role="assistant",
            content="Reading the test.",
            tool_calls=(
                _call("call_1", "read_file", '{"path": "tests/test_x.py"}'),
                _call("call_2", "grep", "not json"),
            ),
        )
    )
    session.add_message(Message(role="tool", tool_call_id="call_1", content="def test_x(): ..."))
    session.add_message(Message(role="tool", tool_call_id="call_2", content=""))
    session.add_message({"role": "assistant", "content": "Done: the test passes."})


@pytest.fixture
def session(log_path: Path) -> Iterator[Session]:
    with Session(log_path) as s:
        conversation(s)
        yield s


def create_params() -> Any:
    """The openai SDK's ResponseCreateParamsNonStreaming."""
    module = pytest.importorskip("openai.types.responses.response_create_params")
    return module.ResponseCreateParamsNonStreaming


class TestShape:
    def test_validates_against_the_sdk(self, session: Session) -> None:
        """The request validates as the openai SDK's ResponseCreateParamsNonStreaming."""
        request = responses_request(BUILDER, AGENT, session, model="gpt-test")
        assert problems(create_params(), json.loads(json.dumps(request))) == []

    def test_server_side_compaction_validates(self, session: Session) -> None:
        """compact_threshold adds context_management the SDK accepts."""
        request = responses_request(BUILDER, AGENT, session, model="m", compact_threshold=9000)
        assert request["context_management"] == [{"type": "compaction", "compact_threshold": 9000}]
        assert problems(create_params(), request) == []

    def test_anthropic_compaction_edit_validates(self, session: Session) -> None:
        """compact_trigger adds the compact_20260112 edit the beta SDK accepts."""
        module = pytest.importorskip("anthropic.types.beta.message_create_params")
        request = anthropic_request(
            BUILDER, AGENT, session, model="m", max_tokens=10, compact_trigger=60000
        )
        edit = {"type": "compact_20260112", "trigger": {"type": "input_tokens", "value": 60000}}
        assert request["context_management"] == {"edits": [edit]}
        assert problems(module.MessageCreateParamsNonStreaming, request) == []

    @pytest.mark.parametrize(
        ("mutate", "match"),
        [
            (
                lambda r: r["input"].append({"type": "message", "role": "robot", "content": ""}),
                "robot",
            ),
            (lambda r: r["input"].append({"type": "function_call", "name": "x"}), "missing"),
            (lambda r: r["tools"][0].pop("strict"), "strict"),
            (lambda r: r.update(messages=[]), "unknown key 'messages'"),
        ],
    )
    def test_the_check_rejects_bad_requests(
        self, session: Session, mutate: Any, match: str
    ) -> None:
        """The SDK shape check finds a bad role, a missing key, a dropped field, a wrong key."""
        request = responses_request(BUILDER, AGENT, session, model="m")
        mutate(request)
        found = problems(create_params(), request)
        assert any(match in p for p in found), found


class TestLayout:
    def test_instructions_are_the_system_prompt(self, session: Session) -> None:
        """Instructions hold the built system prompt; tools the catalog, in order."""
        request = responses_request(BUILDER, AGENT, session)
        assert request["instructions"] == BUILDER.system_prompt(AGENT)
        assert [t["name"] for t in request["tools"]] == [t.name for t in BUILDER.tools(AGENT)]
        assert all(t["type"] == "function" for t in request["tools"])

    def test_input_follows_the_context_view(self, session: Session) -> None:
        """System messages, then the checkpoint, then the kept messages, calls then results."""
        items = responses_request(BUILDER, AGENT, session)["input"]
        assert items[0] == {
            "type": "message",
            "role": "system",
            "content": "Note from the operator.",
        }
        assert items[1]["role"] == "user"
        assert items[1]["content"].endswith("## Goal\nFix the failing test")
        kinds = [i["type"] for i in items]
        first_call = kinds.index("function_call")
        assert kinds[first_call : first_call + 4] == [
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
        ]
        call = items[first_call]
        assert call == {
            "type": "function_call",
            "call_id": "call_1",
            "name": "read_file",
            "arguments": '{"path": "tests/test_x.py"}',
        }
        assert items[first_call + 3] == {
            "type": "function_call_output",
            "call_id": "call_2",
            "output": "",
        }
        image = items[2]["content"]
        assert image == [
            {"type": "input_text", "text": "Here is the screenshot"},
            {
                "type": "input_image",
                "image_url": "data:image/png;base64,iVBORw0KGgo=",
                "detail": "auto",
            },
        ]

    def test_stable_prefix_across_turns(self, session: Session) -> None:
        """A later request's instructions and tools are byte-identical; its input extends."""
        before = responses_request(BUILDER, AGENT, session)
        session.add_message({"role": "user", "content": "one more thing"})
        after = responses_request(BUILDER, AGENT, session)
        assert dumps(after["tools"]) == dumps(before["tools"])
        assert after["instructions"] == before["instructions"]
        assert after["input"][: len(before["input"])] == before["input"]

    def test_tools_identical_across_modes(self) -> None:
        """The stable tool strategy keeps the catalog byte-identical in plan and agent modes."""
        agent = responses_request(BUILDER, AGENT)
        plan = responses_request(BUILDER, PLAN)
        assert dumps(agent["tools"]) == dumps(plan["tools"])
        assert agent["input"] == []

    def test_deterministic(self, session: Session) -> None:
        """The same log gives the same bytes."""
        assert dumps(responses_request(BUILDER, AGENT, session)) == dumps(
            responses_request(BUILDER, AGENT, session)
        )

    def test_assistant_with_only_calls_has_no_message_item(self) -> None:
        """An assistant turn made only of tool calls becomes only function_call items."""
        message = Message.model_validate(
            {
                "role": "assistant",
                "tool_calls": [{"id": "c", "function": {"name": "f", "arguments": "{}"}}],
            }
        )
        assert [i["type"] for i in responses_input([message])] == ["function_call"]


class TestServerSide:
    def test_an_answer_with_an_item_is_recorded_as_a_checkpoint(self, session: Session) -> None:
        """A Responses answer carrying a compaction item is recorded, with the code-owned lists."""
        session.todo_write({"todos": [{"content": "Ship it", "status": "in_progress"}]})
        item = {"type": "compaction", "id": "cmp_9", "encrypted_content": "server-side"}
        answer: dict[str, Any] = {
            "object": "response",
            "model": "gpt-test",
            "output": [item],
            "usage": {"input_tokens": 900, "output_tokens": 50},
        }
        result = record_server_compaction(
            session, answer, policy=CompactionPolicy(window_tokens=8000)
        )
        assert result is not None
        assert result.event is not None
        data = result.event.data
        assert data.provider is not None
        assert data.provider.item == item
        assert data.provider.usage == {"input_tokens": 900, "output_tokens": 50}
        assert data.current == ("Ship it",)
        assert session.context.messages == ()
        request = responses_request(BUILDER, AGENT, session)
        assert request["input"][1] == item
        assert '- "Ship it"' in request["input"][2]["content"]

    def test_an_anthropic_block_is_recorded(self, session: Session) -> None:
        """A messages answer opening with a compaction block is recorded as the anthropic item."""
        answer = {
            "type": "message",
            "content": [
                {"type": "compaction", "content": "Summary."},
                {"type": "text", "text": "Hi"},
            ],
            "stop_reason": "end_turn",
        }
        result = record_server_compaction(session, answer)
        assert result is not None
        assert result.event is not None
        assert result.event.data.provider is not None
        assert result.event.data.provider.backend == "anthropic"
        request = anthropic_request(BUILDER, AGENT, session, max_tokens=5)
        assert request["messages"][0]["content"][0] == {"type": "compaction", "content": "Summary."}

    @pytest.mark.parametrize(
        "answer",
        [
            {"output": [{"type": "message", "content": []}]},
            {"output": [{"type": "compaction", "encrypted_content": ""}]},
            {"content": [{"type": "compaction", "content": None}]},
            {"content": "compaction"},
            {},
        ],
    )
    def test_an_answer_without_an_item_records_nothing(
        self, session: Session, answer: dict[str, Any]
    ) -> None:
        """No item (or an empty or failed one): nothing is appended."""
        seq = session.applied_seq
        assert record_server_compaction(session, answer) is None
        assert session.applied_seq == seq
